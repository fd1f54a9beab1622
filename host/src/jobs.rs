//! Background work of one process, run one way: a [`Shutdown`] handle that every worker
//! watches ([`Stopping`]) — the delivery workers, their upkeep and trimming, the export
//! builders, the replays — and one runner for jobs of a lease queue
//! (`crate::store::core::jobs`): claim what is due, work on each job while renewing its
//! lease, and say how it ended.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::store::core::jobs::{JobQueue, Jobs};

/// Tells every worker of the process to stop.
#[derive(Debug)]
pub(crate) struct Shutdown {
    tx: watch::Sender<bool>,
}

/// What a worker watches: whether the process is stopping.
#[derive(Debug, Clone)]
pub(crate) struct Stopping {
    rx: watch::Receiver<bool>,
}

impl Shutdown {
    pub(crate) fn new() -> (Shutdown, Stopping) {
        let (tx, rx) = watch::channel(false);
        (Shutdown { tx }, Stopping { rx })
    }

    /// Every worker watching is told to stop.
    pub(crate) fn stop(&self) {
        let _ = self.tx.send(true);
    }
}

impl Stopping {
    /// Whether the process is stopping (or its [`Shutdown`] was dropped).
    pub(crate) fn is_set(&self) -> bool {
        *self.rx.borrow() || self.rx.has_changed().is_err()
    }

    /// Completes once the process is stopping; `Err` when its [`Shutdown`] was dropped
    /// without stopping (the service's future was dropped: a worker ends at once, leaving
    /// what it held to its leases).
    pub(crate) async fn wait(&mut self) -> Result<(), Dropped> {
        while !*self.rx.borrow() {
            if self.rx.changed().await.is_err() {
                return Err(Dropped);
            }
        }
        Ok(())
    }
}

/// The [`Shutdown`] went away without stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dropped;

/// How a job's turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Nothing is left to do: it leaves the queue.
    Done,
    /// The process is stopping before it finished: due at once for another worker.
    Yielded,
    /// It comes back: due again after this long (a periodic job).
    Again(Duration),
}

/// A kind of background job.
pub(crate) trait Job: Send + Sync + 'static {
    /// Its queue.
    const QUEUE: JobQueue;
    /// How long a claim holds a job (renewed every third of it while it runs).
    const LEASE: Duration;
    /// How often an idle runner looks for due jobs.
    const POLL: Duration;
    /// Most jobs one claim takes.
    const AT_ONCE: usize;
    /// Why a job could not go on now.
    type Error: std::fmt::Display + Send;

    /// Works on job `id` until it is done or the process stops. An error leaves it to its
    /// lease: another worker takes it over when the lease ends.
    fn run(&self, id: &str, stopping: &Stopping) -> impl Future<Output = Result<Ended, Self::Error>> + Send;
}

/// Runs jobs of one kind until the process stops.
pub(crate) async fn run<J: Job>(job: Arc<J>, jobs: Jobs, mut stopping: Stopping) {
    while !stopping.is_set() {
        let claimed = match jobs.claim_jobs(J::QUEUE, J::AT_ONCE, J::LEASE).await {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(error = %e, queue = ?J::QUEUE, "cannot look for background jobs");
                Vec::new()
            }
        };
        if claimed.is_empty() {
            tokio::select! {
                _ = tokio::time::sleep(J::POLL) => {}
                _ = stopping.wait() => {}
            }
            continue;
        }
        for id in claimed {
            let ended = leased(&*job, &jobs, &id, &stopping).await;
            let after = match ended {
                Ok(Ended::Done) => jobs.job_done(J::QUEUE, &id).await,
                Ok(Ended::Yielded) => jobs.renew_job(J::QUEUE, &id, Duration::ZERO).await,
                Ok(Ended::Again(after)) => jobs.renew_job(J::QUEUE, &id, after).await,
                Err(e) => {
                    tracing::warn!(error = %e, queue = ?J::QUEUE, job = %id, "cannot go on with a job now; it will be taken over");
                    Ok(())
                }
            };
            if let Err(e) = after {
                tracing::warn!(error = %e, queue = ?J::QUEUE, job = %id, "cannot note a job's end; it will be looked at again");
            }
        }
    }
}

/// Runs one job, renewing its lease every third of it meanwhile.
async fn leased<J: Job>(job: &J, jobs: &Jobs, id: &str, stopping: &Stopping) -> Result<Ended, J::Error> {
    let running = job.run(id, stopping);
    tokio::pin!(running);
    let every = J::LEASE / 3;
    let mut renew = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            ended = &mut running => return ended,
            _ = renew.tick() => {
                if let Err(e) = jobs.renew_job(J::QUEUE, id, J::LEASE).await {
                    tracing::warn!(error = %e, queue = ?J::QUEUE, job = %id, "cannot renew a job's lease");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_worker_sees_the_stop_and_a_dropped_handle_ends_them() {
        let (shutdown, stopping) = Shutdown::new();
        let mut worker = stopping.clone();
        assert!(!stopping.is_set());
        let waiting = tokio::spawn(async move { worker.wait().await });
        shutdown.stop();
        assert_eq!(waiting.await.unwrap(), Ok(()));
        assert!(stopping.is_set());

        let (shutdown, mut stopping) = Shutdown::new();
        drop(shutdown);
        assert!(stopping.is_set());
        assert_eq!(stopping.wait().await, Err(Dropped));
    }
}
