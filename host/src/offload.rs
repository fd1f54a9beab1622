//! Threads for work a tenant can make slow, off the threads requests need: filter
//! evaluations (`crate::filters::Evaluator`) and the reading and compression of a large
//! event (`crate::domain::events`). One pool per process, one thread per core, at a lower
//! CPU priority (`nice` [`NICE`]); each job in its organisation's slot (`crate::slots`: at
//! most half the threads for one organisation). So one tenant's costly work delays its own
//! requests, never another tenant's.

use tokio::sync::oneshot;

use crate::slots::Slots;

/// The threads' nice value: requests and deliveries come first.
const NICE: i32 = 10;

/// Input of this many bytes or more (an event, a JSON body) is read off the thread that
/// answers every tenant's requests: a megabyte is milliseconds of work.
pub(crate) const LARGE_INPUT: usize = 64 * 1024;

/// The process's threads for tenants' costly work.
pub struct Offload {
    /// The threads (`None` if they could not start: Tokio's blocking threads then).
    threads: Option<rayon::ThreadPool>,
    slots: Slots,
}

impl std::fmt::Debug for Offload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offload").field("threads", &self.threads.as_ref().map(|t| t.current_num_threads())).finish()
    }
}

impl Default for Offload {
    fn default() -> Offload {
        Offload::new()
    }
}

impl Offload {
    /// One thread per core.
    pub fn new() -> Offload {
        let pool = niced_pool("weir-tenant", NICE)
            .inspect_err(|e| tracing::warn!(error = %e, "cannot start the tenant work threads; Tokio's blocking threads take it"))
            .ok();
        let threads = cores();
        Offload { threads: pool, slots: Slots::new(threads, threads.div_ceil(2)) }
    }

    /// Runs `job` on the threads, in `org`'s slot; `None` if it panicked.
    pub async fn run<T: Send + 'static>(&self, org: &str, job: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let job = move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).ok();
        let _slot = self.slots.acquire(org).await;
        let Some(threads) = &self.threads else { return tokio::task::spawn_blocking(job).await.ok().flatten() };
        let (done, answer) = oneshot::channel();
        threads.spawn(move || {
            let _ = done.send(job());
        });
        answer.await.ok().flatten()
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// One thread per core, named `{name}-{i}`, each at CPU priority `nice`: the tenant threads
/// here, the plugin compiler's (`crate::plugins`, at 19).
pub(crate) fn niced_pool(name: &'static str, nice: i32) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(cores())
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(move |_| set_nice(nice))
        .build()
}

/// Sets the calling thread's CPU priority (Linux: a thread's own nice value).
fn set_nice(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority with PRIO_PROCESS and the thread's own id changes only this
    // thread's nice value; it reads no memory of ours.
    #[allow(unsafe_code)]
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
}
