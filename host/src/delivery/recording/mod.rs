//! What follows an attempt: its lane slot frees at once, its outcome is recorded (a row
//! that cannot be read is dead-lettered instead), the webhook's failure streak is kept — a
//! webhook it switches off has its queued deliveries failed — and the delivery's permit
//! comes back. Writes the queue depends on are retried by one rule ([`until_stored`]).

mod endpoint;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::claiming::claimed::Claimed;
use super::claiming::lanes::Signal;
use crate::domain::deliveries::Deliveries;
use crate::domain::notices::{Notice, Notices};
use crate::domain::webhooks::Webhooks;
use crate::metrics::Metrics;
use crate::shared::Arrivals;
use crate::store::core::batch::Batcher;
use crate::store::queue::claim::Member;
use crate::store::queue::endpoint::EndpointStates;
use crate::store::queue::status::Status;
use crate::store::queue::streak::{Deactivated, Streak, StreakRules, Streaks};
use crate::store::queue::work::{Outcome, Recorded, Report, Work};
use crate::store::{Keys, Partition, StoreError};

/// Runs a write the queue depends on until Redis takes it: while Redis cannot serve
/// ([`StoreError::is_unavailable`]: unreachable, loading, busy, out of memory) it tries
/// again, waiting from 100 ms up to 5 s between tries; any other error is returned at once
/// (trying again would not help). `what` and `delivery` name the write in the log. Returns
/// the write's result and how many tries failed first.
async fn until_stored<T, F, Fut>(what: &str, delivery: &str, mut write: F) -> (Result<T, StoreError>, u32)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    let mut wait = Duration::from_millis(100);
    let mut failed: u32 = 0;
    loop {
        match write().await {
            Err(e) if e.is_unavailable() => {
                failed += 1;
                if failed.is_power_of_two() {
                    tracing::warn!(error = %e, delivery_id = %delivery, tries = failed, "cannot {what} yet; retrying");
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            result => return (result, failed),
        }
    }
}

/// The recording part of the engine: outcomes written in batches per partition (group
/// commit), failure streaks, dead letters, what an attempt says of its endpoint.
#[derive(Debug)]
pub(in crate::delivery) struct Recorder {
    doors: RecorderDoors,
    metrics: Arc<Metrics>,
    recorders: Vec<Batcher<Arc<Report>, Result<Recorded, StoreError>>>,
    streak: StreakRules,
    /// Work this process queued (an ordered subject's next).
    arrivals: Arc<Arrivals>,
    /// A webhook switched off ends its deliveries.
    webhooks: Webhooks,
    /// A failed delivery is read to report it ...
    deliveries: Deliveries,
    /// ... and reported (`webhook_delivery_failed`).
    notices: Notices,
}

/// What the recorder writes, over the engine's own connection: outcomes and dead letters,
/// failure streaks, endpoints' states.
#[derive(Debug, Clone)]
pub(in crate::delivery) struct RecorderDoors {
    pub keys: Keys,
    pub work: Work,
    pub streaks: Streaks,
    pub endpoints: EndpointStates,
}

/// What a [`Recorder`] is made of.
#[derive(Debug)]
pub(in crate::delivery) struct RecorderParts {
    pub doors: RecorderDoors,
    pub metrics: Arc<Metrics>,
    pub streak: StreakRules,
    pub arrivals: Arc<Arrivals>,
    pub webhooks: Webhooks,
    pub deliveries: Deliveries,
    pub notices: Notices,
}

/// Most outcomes sent to Redis in one script call.
const BATCH: usize = 64;

impl Recorder {
    /// The recorder (inside the engine's runtime: its batches start here).
    pub(in crate::delivery) fn new(parts: RecorderParts) -> Recorder {
        let RecorderParts { doors, metrics, streak, arrivals, webhooks, deliveries, notices } = parts;
        let recorders = Batcher::per_partition(
            doors.keys.partitions(),
            doors.work.clone(),
            BATCH,
            |work, p, outcomes| async move { work.record(p, &outcomes).await },
        );
        Recorder { metrics, doors, recorders, streak, arrivals, webhooks, deliveries, notices }
    }

    /// What an attempt's end says of its webhook's endpoint: told to the lane through the
    /// attempt's hold, and a change of state kept in the webhook (`endpoint`).
    pub(in crate::delivery) fn endpoint_signal(&self, claimed: &Claimed, signal: Signal) {
        if let Some(change) = claimed.endpoint_signal(signal) {
            endpoint::keep(&self.doors.endpoints, &self.metrics, claimed, change);
        }
    }

    /// Records an outcome. An outcome not recorded would be sent again (a duplicate), so
    /// while Redis cannot take it this keeps trying, holding the delivery (its lease is
    /// renewed meanwhile). A row that cannot be read is dead-lettered; any other failure
    /// leaves the delivery to its lease (it is attempted again). Then the webhook's streak
    /// is kept.
    ///
    /// (Its rare paths — a dead letter, a failure notice, a streak — are boxed where they are
    /// awaited, so that every attempt's future does not carry room for them.)
    pub(in crate::delivery) async fn finish(&self, p: Partition, report: Report, failing: bool) {
        // Shared with the batch, and kept for another try.
        let report = Arc::new(report);
        let delivery = &report.member.delivery;
        let record = || async { self.recorders[usize::from(p.0)].call(report.clone()).await.and_then(|r| r) };
        let recorded = match until_stored("record a delivery outcome", delivery, record).await {
            (Ok(recorded), failed) => {
                if failed > 0 {
                    tracing::info!(delivery_id = %delivery, tries = failed + 1, "recorded the outcome after Redis recovered");
                }
                recorded
            }
            (Err(StoreError::Corrupt { reason, .. }), _) => {
                Box::pin(self.dead_letter(p, &report.webhook, &report.member, &reason)).await;
                return;
            }
            (Err(e), _) => {
                tracing::error!(error = %e, delivery_id = %delivery, "cannot record a delivery outcome; its lease will run out and it is attempted again");
                return;
            }
        };
        if let Recorded::Status(status) = recorded
            && status != Status::Pending
        {
            if report.ordered {
                // Its subject's next may be queued now: look at once, not at the next poll.
                self.arrivals.arrived(p);
            }
            self.metrics.delivery_finished(status.as_str());
            // Retries exhausted: a request was made and no attempt is left (not a delivery
            // that failed because its webhook was switched off).
            if status == Status::Failed && matches!(report.outcome, Outcome::Failed) && report.attempt_json.is_some() {
                Box::pin(self.tell_failed(&report.member.org, delivery)).await;
            }
        }
        if let Some(streak) = streak_of(&report, failing) {
            Box::pin(self.keep_streak(&report, streak)).await;
        }
    }

    /// Adds a recorded attempt to its webhook's failure streak (a success ends one), and
    /// ends the webhook's queued deliveries if that switched it off.
    async fn keep_streak(&self, report: &Report, streak: Streak) {
        let rules = self.streak;
        let (org, webhook) = (&report.member.org, &report.webhook);
        match self.doors.streaks.add_to_streak(org, webhook, streak, rules).await {
            Ok(Some(reason)) => {
                self.metrics.webhook_deactivated(reason.as_str());
                let why = match reason {
                    Deactivated::Gone => "the endpoint answered 410 Gone".to_owned(),
                    Deactivated::Failing => format!(
                        "{} or more failed attempts in a row, failing for at least {} (WEIR_DEACTIVATE_AFTER_FAILURES, WEIR_DEACTIVATE_AFTER)",
                        rules.failures,
                        humantime::format_duration(rules.span)
                    ),
                };
                // (The attempt that tipped it was logged just before, with its cause.)
                tracing::warn!(webhook_id = %webhook, org_id = %org, reason = reason.as_str(), "webhook deactivated: {why}");
                let (org, webhook) = (org.clone(), webhook.clone());
                let webhooks = self.webhooks.clone();
                tokio::spawn(async move {
                    if let Err(e) = crate::domain::webhooks::after_deactivation(&webhooks, &org, &webhook).await {
                        tracing::warn!(error = %e, webhook_id = %webhook, "cannot fail a deactivated webhook's deliveries yet")
                    }
                });
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, webhook_id = %webhook, org_id = %org, "cannot keep the webhook's failure streak")
            }
        }
    }

    /// Tells the organisation that a delivery's retries are exhausted
    /// (`webhook_delivery_failed`).
    async fn tell_failed(&self, org: &str, delivery: &str) {
        match crate::domain::deliveries::find(&self.deliveries, org, delivery).await {
            Ok(d) => self.notices.emit(org, Notice::DeliveryFailed(&d)).await,
            Err(e) => tracing::warn!(error = %e, delivery_id = %delivery, "cannot read a failed delivery to report it"),
        }
    }

    /// Takes a delivery whose row cannot be read out of the queue for good: it becomes
    /// `failed`, with `error` saying why (the deliveries API shows it), and is counted in
    /// `weir_dead_letters_total`. Retried while Redis cannot serve, like an outcome.
    pub(in crate::delivery) async fn dead_letter(&self, p: Partition, webhook: &str, member: &Member, reason: &str) {
        let reason = format!("the delivery record cannot be read: {reason}");
        tracing::error!(delivery_id = %member.delivery, org_id = %member.org, webhook_id = %webhook, %reason, "dead-lettering a delivery");
        let work = &self.doors.work;
        let write = || work.dead_letter(p, webhook, member, &reason);
        match until_stored("dead-letter the delivery", &member.delivery, write).await {
            (Ok(()), _) => {
                self.metrics.dead_letters.inc();
                self.metrics.delivery_finished("failed");
            }
            // Not even that could be written: leave it to its lease for an operator.
            (Err(e), _) => {
                tracing::error!(error = %e, delivery_id = %member.delivery, org_id = %member.org, "cannot dead-letter the delivery")
            }
        }
    }
}

/// What a recorded attempt adds to its webhook's failure streak: a failed request made
/// one failure (410 Gone one that switches it off), a success after failures ends it;
/// `None` when it changes nothing (the usual success, or no request made).
fn streak_of(report: &Report, failing: bool) -> Option<Streak> {
    let request_made = report.attempt_json.is_some() && !report.not_the_endpoint;
    match report.outcome {
        Outcome::Succeeded if failing => Some(Streak { success_first: true, failures: 0, gone: false }),
        Outcome::Retry { .. } | Outcome::Failed if request_made => Some(Streak { failures: 1, ..Streak::default() }),
        Outcome::Gone => Some(Streak { failures: 1, gone: true, ..Streak::default() }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn unavailable() -> StoreError {
        StoreError::NotReplicated { acked: 0, wanted: 1 }
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_is_tried_again_while_redis_cannot_serve_and_not_after_another_error() {
        let calls = AtomicU32::new(0);
        let (result, failed) = until_stored("test", "dlv_1", || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0..3 => Err(unavailable()),
                n => Ok(n),
            }
        })
        .await;
        assert_eq!((result.ok(), failed), (Some(3), 3), "three unavailable tries, then the write");

        let calls = AtomicU32::new(0);
        let (result, failed) = until_stored("test", "dlv_1", || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(StoreError::Corrupt { key: "k".into(), reason: "unreadable".into() })
        })
        .await;
        assert!(matches!(result, Err(StoreError::Corrupt { .. })));
        assert_eq!((failed, calls.load(Ordering::SeqCst)), (0, 1), "a corrupt row is not tried again");
    }

    fn report(outcome: Outcome, request_made: bool, not_the_endpoint: bool) -> Report {
        Report {
            webhook: "wh_1".into(),
            member: Member { delivery: "dlv_1".into(), org: "org_1".into(), event: "evt".into() },
            outcome,
            attempt: 1,
            attempt_json: request_made.then(|| "{}".to_owned()),
            signature: None,
            changes: crate::store::queue::row::RowChanges::default(),
            not_the_endpoint,
            ordered: false,
        }
    }

    #[test]
    fn only_failed_requests_gone_and_a_first_success_change_a_streak() {
        let one = Streak { failures: 1, ..Streak::default() };
        let retry = Outcome::Retry { due_ms: 5 };
        assert_eq!(streak_of(&report(retry, true, false), false), Some(one));
        assert_eq!(streak_of(&report(Outcome::Failed, true, true), false), None, "the proxy failed, not the endpoint");
        assert_eq!(streak_of(&report(Outcome::Failed, false, false), true), None, "no request was made");
        assert_eq!(streak_of(&report(Outcome::Gone, true, false), false), Some(Streak { gone: true, ..one }));
        assert_eq!(streak_of(&report(Outcome::Succeeded, true, false), false), None, "the usual success");
        assert_eq!(
            streak_of(&report(Outcome::Succeeded, true, false), true),
            Some(Streak { success_first: true, failures: 0, gone: false })
        );
        assert_eq!(streak_of(&report(Outcome::Filtered, false, false), true), None);
    }
}
