//! Where filters are evaluated: off the threads requests need. A filter the check found
//! cheap (no macro, no pattern, a bound within [`INLINE_NS`] on the largest event — a
//! comparison or two, about what reading the event took) is evaluated where it is asked
//! for; any other goes to this process's evaluation threads, at a lower CPU priority
//! (`nice` [`NICE`]), in its organisation's slot (`crate::slots`: at most half the threads
//! for one organisation). So one tenant's costly filters delay its own publishes and
//! replays, never another tenant's requests; each evaluation is bounded besides by its
//! meter's deadline (`super::meter`).

use std::sync::Arc;

use tokio::sync::oneshot;

use super::envelope::Envelope;
use super::error::FilterError;
use super::filter::{Compiled, Filter, Selection};
use crate::slots::Slots;

/// The evaluation threads' nice value: requests and deliveries come first.
const NICE: i32 = 10;

/// Filters of one process: compiled once per text, evaluated as the module says.
pub struct Evaluator {
    compiled: Compiled,
    /// The evaluation threads (`None` if they could not start: Tokio's blocking threads then).
    threads: Option<rayon::ThreadPool>,
    slots: Slots,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator").field("threads", &self.threads.as_ref().map(|t| t.current_num_threads())).finish()
    }
}

impl Default for Evaluator {
    fn default() -> Evaluator {
        Evaluator::new()
    }
}

impl Evaluator {
    /// An evaluator with one thread per core.
    pub fn new() -> Evaluator {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("weir-filter-{i}"))
            .start_handler(|_| lower_priority())
            .build()
            .inspect_err(|e| tracing::warn!(error = %e, "cannot start the filter threads; Tokio's blocking threads evaluate filters"))
            .ok();
        Evaluator { compiled: Compiled::default(), threads: pool, slots: Slots::new(threads, threads.div_ceil(2)) }
    }

    /// The compiled filter of `source` (compiled once).
    pub fn compiled(&self, source: &str) -> Result<Arc<Filter>, FilterError> {
        self.compiled.get(source)
    }

    /// What each of `filters` makes of one event (publishing): `None` stands for a filter
    /// that does not compile, which selects nothing.
    pub async fn select(&self, org: &str, envelope: &str, filters: Vec<Option<Arc<Filter>>>) -> Vec<Selection> {
        let cheap = filters.iter().flatten().all(|f| f.runs_inline());
        let (envelope, n) = (envelope.to_owned(), filters.len());
        let verdicts = self.run(org, cheap, move || {
            let values = Envelope::parse(&envelope);
            filters.iter().map(|f| verdict(f.as_deref(), &values)).collect()
        });
        verdicts.await.unwrap_or_else(|| vec![failed(); n])
    }

    /// What `filter` makes of each event of `envelopes` (replays).
    pub async fn select_each(&self, org: &str, filter: Option<Arc<Filter>>, envelopes: Vec<String>) -> Vec<Selection> {
        let cheap = filter.as_ref().is_some_and(|f| f.runs_inline()) && envelopes.len() <= 1;
        let n = envelopes.len();
        let verdicts = self.run(org, cheap, move || {
            envelopes.iter().map(|e| verdict(filter.as_deref(), &Envelope::parse(e))).collect()
        });
        verdicts.await.unwrap_or_else(|| vec![failed(); n])
    }

    /// What `filter` makes of an event's values, made from `event` (the filter test).
    pub async fn try_on(
        &self,
        org: &str,
        filter: Filter,
        event: impl FnOnce() -> Result<Envelope, String> + Send + 'static,
    ) -> Selection {
        let cheap = filter.runs_inline();
        self.run(org, cheap, move || verdict(Some(&filter), &event())).await.unwrap_or_else(failed)
    }

    /// Runs `job` here when `cheap`, else on the evaluation threads in `org`'s slot;
    /// `None` if it panicked.
    async fn run<T: Send + 'static>(
        &self,
        org: &str,
        cheap: bool,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let job = move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).ok();
        if cheap {
            return job();
        }
        let _slot = self.slots.acquire(org).await;
        let Some(threads) = &self.threads else { return tokio::task::spawn_blocking(job).await.ok().flatten() };
        let (done, answer) = oneshot::channel();
        threads.spawn(move || {
            let _ = done.send(job());
        });
        answer.await.ok().flatten()
    }
}

/// The verdict of an evaluation that failed inside the interpreter.
fn failed() -> Selection {
    Selection::Error("the evaluation failed".to_owned())
}

/// A verdict of `filter` (`None`: one that does not compile) on an event's values.
fn verdict(filter: Option<&Filter>, values: &Result<Envelope, String>) -> Selection {
    match (filter, values) {
        (Some(filter), Ok(values)) => filter.evaluate(values),
        (None, _) => Selection::Error("the filter does not compile".to_owned()),
        (_, Err(e)) => Selection::Error(e.clone()),
    }
}

/// Lowers the calling thread's CPU priority to [`NICE`] (Linux: a thread's own nice value).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority with PRIO_PROCESS and the thread's own id changes only this
    // thread's nice value; it reads no memory of ours.
    #[allow(unsafe_code)]
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, NICE);
    }
}
