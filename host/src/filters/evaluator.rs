//! Where filters are evaluated: off the threads requests need. A filter the check found
//! cheap (no macro, no pattern, a bound within [`INLINE_NS`] on the largest event — a
//! comparison or two, about what reading the event took) is evaluated where it is asked
//! for; any other goes to this process's threads for tenants' costly work
//! (`crate::offload`: a lower CPU priority, at most half the threads for one organisation).
//! So one tenant's costly filters delay its own publishes and replays, never another
//! tenant's requests; each evaluation is bounded besides by its meter's deadline
//! (`super::meter`).

use std::sync::Arc;

use super::envelope::Envelope;
use super::error::FilterError;
use super::filter::{Compiled, Filter, Selection};
use crate::offload::Offload;

/// Filters of one process: compiled once per text, evaluated as the module says.
#[derive(Debug, Default)]
pub struct Evaluator {
    compiled: Compiled,
    offload: Arc<Offload>,
}

impl Evaluator {
    /// An evaluator with threads of its own.
    pub fn new() -> Evaluator {
        Evaluator::default()
    }

    /// An evaluator on the process's threads for tenants' work.
    pub fn on(offload: Arc<Offload>) -> Evaluator {
        Evaluator { compiled: Compiled::default(), offload }
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

    /// Runs `job` here when `cheap`, else on the tenant threads in `org`'s slot; `None` if
    /// it panicked.
    async fn run<T: Send + 'static>(
        &self,
        org: &str,
        cheap: bool,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        if cheap {
            return std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).ok();
        }
        self.offload.run(org, job).await
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
