//! The compile budget of one process. Compiling a component takes seconds of CPU (an
//! interpreter's, tens) and hundreds of MiB: uploads must not starve requests and
//! deliveries of either.
//!
//! - Compiles run one at a time, on threads of their own at the lowest CPU priority
//!   (`nice` 19): they use cores the service leaves idle, and yield them the moment a
//!   request or a delivery wants one.
//! - An organisation has at most one upload compiling or waiting at a time; a second is
//!   refused at once ([`BudgetError::OrganisationBusy`]), as is any upload beyond
//!   [`MAX_WAITING`] waiting in the process ([`BudgetError::Busy`]).
//! - An upload waits at most [`UPLOAD_WAIT`] for its compile; past it the upload is answered
//!   and the compile's result, when it comes, is dropped (wasmtime cannot stop a compile
//!   midway; it keeps its place in the queue until it ends).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Most uploads waiting for (or in) a compile in one process.
pub(super) const MAX_WAITING: usize = 4;
/// How long an upload waits for its compile (the API's request timeout is 60 s).
pub(super) const UPLOAD_WAIT: Duration = Duration::from_secs(50);

/// Why an upload's compile did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error("another plugin of this organisation is being compiled; upload this one when it is done")]
    OrganisationBusy,
    #[error("the plugin compiler is busy; retry shortly")]
    Busy,
    #[error("compiling the plugin took longer than {}s; nothing was stored", UPLOAD_WAIT.as_secs())]
    TooSlow,
}

/// The compile budget (see the module's rules).
pub(super) struct Budget {
    pool: rayon::ThreadPool,
    /// Held by the compile in progress: one at a time.
    running: Mutex<()>,
    waiting: AtomicUsize,
    organisations: Mutex<HashSet<String>>,
}

/// An upload's place in the budget: its organisation's turn, held until dropped.
pub(super) struct Turn {
    budget: Arc<Budget>,
    org: String,
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.budget.waiting.fetch_sub(1, Ordering::Relaxed);
        self.budget.organisations.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.org);
    }
}

impl Budget {
    pub(super) fn new() -> std::io::Result<Budget> {
        // The lowest CPU priority.
        let pool = crate::offload::niced_pool("weir-compile", 19).map_err(std::io::Error::other)?;
        Ok(Budget { pool, running: Mutex::new(()), waiting: AtomicUsize::new(0), organisations: Mutex::default() })
    }

    /// An upload of `org` may wait for a compile.
    pub(super) fn turn(self: &Arc<Self>, org: &str) -> Result<Turn, BudgetError> {
        let mut organisations = self.organisations.lock().unwrap_or_else(|e| e.into_inner());
        if organisations.contains(org) {
            return Err(BudgetError::OrganisationBusy);
        }
        if self.waiting.load(Ordering::Relaxed) >= MAX_WAITING {
            return Err(BudgetError::Busy);
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        organisations.insert(org.to_owned());
        Ok(Turn { budget: self.clone(), org: org.to_owned() })
    }

    /// Runs `compile` on the compile threads, after the compile before it. Blocking.
    pub(super) fn run<T: Send>(&self, compile: impl FnOnce() -> T + Send) -> T {
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        self.pool.install(compile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_upload_per_organisation_and_a_bounded_queue() {
        let budget = Arc::new(Budget::new().unwrap());
        let a = budget.turn("org_a").unwrap();
        assert_eq!(budget.turn("org_a").err(), Some(BudgetError::OrganisationBusy));
        let others: Vec<Turn> = (1..MAX_WAITING).map(|i| budget.turn(&format!("org_{i}")).unwrap()).collect();
        assert_eq!(budget.turn("org_z").err(), Some(BudgetError::Busy));
        drop(a);
        assert!(budget.turn("org_a").is_ok(), "its turn is free again");
        drop(others);
        assert_eq!(budget.waiting.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn compiles_run_at_the_lowest_priority() {
        let budget = Budget::new().unwrap();
        // SAFETY: getpriority reads this thread's nice value.
        #[allow(unsafe_code)]
        let nice = budget.run(|| unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        });
        assert_eq!(nice, 19);
    }
}
