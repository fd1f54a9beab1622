//! One delivery's attempt: load it (counting the attempt), prepare its body (`prepare`),
//! sign, send (the URL rule is checked as it connects), and decide what follows by the retry
//! policy; `finish` frees the lane slot and records the outcome.

mod prepare;
mod request;
pub(in crate::delivery) mod retry;

use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;

use self::prepare::Prepared;
use self::request::{Attempt, Request, Traced, describe, next_in_words, signal_of};
use self::retry::Next;
use super::claiming::lanes::{SLOW_AFTER, Waiting};
use super::destination::{Destination, Message, SendError, Sent};
use super::{Claim, Engine, Work};
use crate::domain::egress;
use crate::store::StoreError;
use crate::store::queue::claim::Member;
use crate::store::queue::row::RowChanges;
use crate::store::queue::work::{Loaded, Outcome, Report};
use crate::telemetry::{Answer, AttemptSpan, PluginCall};

impl Engine {
    /// Starts the attempt of a claimed delivery (its lane slot is already taken).
    pub(in crate::delivery) fn begin(self: &Arc<Self>, webhook: String, waiting: Waiting) {
        tokio::spawn(self.clone().attempt(webhook, waiting));
    }

    /// (The rare paths' futures — a pause, a dead letter — are boxed where they are awaited:
    /// a future holds room for the largest of its awaits, and this one is moved into its
    /// task for every delivery.)
    async fn attempt(self: Arc<Self>, webhook: String, waiting: Waiting) {
        let Waiting { partition: p, member } = waiting;
        if let Some(until) = self.lanes.paused_until(&webhook) {
            // Paused since it was claimed: back to the queue for the pause's end, unloaded.
            self.release_lane(&webhook, &member.delivery);
            Box::pin(self.give_back(vec![(webhook, Waiting { partition: p, member })], until)).await;
            return;
        }
        let claim = Claim { webhook: webhook.clone(), member: member.clone() };
        let report = match self.loaders[usize::from(p.0)].call(claim).await {
            Ok(Ok(Some(work))) => {
                let paused = work.webhook.as_ref().and_then(|target| {
                    self.lanes.learned(&webhook, target.rate_limit, &target.endpoint);
                    target.endpoint.paused_at(crate::time::now_millis())
                });
                if let Some(until) = paused {
                    // Another process got the pause: back to the queue, the attempt uncounted.
                    self.release_lane(&webhook, &member.delivery);
                    if let Err(e) = Box::pin(self.store.put_back(p, &webhook, &member, until)).await {
                        tracing::warn!(error = %e, delivery_id = %member.delivery, "cannot put a paused webhook's delivery back; its lease will run out");
                    }
                    self.done(&member.delivery);
                    return;
                }
                self.work(&webhook, &member, work).await
            }
            // The row is gone: drop the queue member.
            Ok(Ok(None)) => Some((self.report(&webhook, &member, Outcome::Cancelled, 0), false)),
            Ok(Err(StoreError::Corrupt { reason, .. })) => {
                self.release_lane(&webhook, &member.delivery);
                Box::pin(self.dead_letter(p, &webhook, &member, &reason)).await;
                self.done(&member.delivery);
                return;
            }
            Ok(Err(e)) | Err(e) => {
                tracing::warn!(error = %e, delivery_id = %member.delivery, org_id = %member.org, "cannot load a delivery; its lease will run out");
                None
            }
        };
        self.release_lane(&webhook, &member.delivery);
        if let Some((report, failing)) = report {
            self.finish(p, report, failing).await;
        }
        self.done(&member.delivery);
    }

    /// A report with no request made.
    fn report(&self, webhook: &str, member: &Member, outcome: Outcome, attempt: u32) -> Report {
        Report {
            webhook: webhook.to_owned(),
            member: member.clone(),
            outcome,
            attempt,
            attempt_json: None,
            signature: None,
            changes: RowChanges::default(),
            proxy_failed: false,
            ordered: false,
        }
    }

    /// The attempt itself: the report of its outcome, and whether the webhook had a
    /// failure streak (a success must end it). `None` when nothing is to be recorded now.
    async fn work(self: &Arc<Self>, webhook_id: &str, member: &Member, work: Work) -> Option<(Report, bool)> {
        let Work { mut loaded, webhook } = work;
        let attempt_no = loaded.attempt.max(1);
        let this = Attempt { webhook_id, member, number: attempt_no };
        let ending =
            |outcome| Report { ordered: loaded.ordered, ..self.report(webhook_id, member, outcome, attempt_no) };
        if loaded.status.is_some() {
            // Already final (ended with its webhook, or recorded by an earlier lease holder).
            return Some((ending(Outcome::Failed), false));
        }
        let Some(webhook) = webhook else {
            return Some((ending(Outcome::Cancelled), false));
        };
        if !webhook.active {
            return Some((ending(Outcome::Failed), false));
        }
        let started = SystemTime::now();
        let event = loaded.event.take();
        let prepared = self.prepare(member, &mut loaded, event.as_deref(), &webhook).await;
        let (body, extra_headers, changes, calls) = match prepared {
            Prepared::Send { body, extra_headers, changes, calls } => (body, extra_headers, changes, calls),
            Prepared::Filtered { changes, calls } => {
                let trace = Traced::of(member, event.as_deref(), &self.telemetry);
                let to = Destination::of(&webhook, "").address();
                self.traced(&this, &trace, to, (started, Answer::NotSent), &calls);
                let report = Report {
                    changes,
                    ordered: loaded.ordered,
                    ..self.report(webhook_id, member, Outcome::Filtered, attempt_no)
                };
                return Some((report, false));
            }
            Prepared::EventMissing => {
                tracing::warn!(delivery_id = %member.delivery, org_id = %member.org, "event envelope expired before delivery");
                return Some((self.report(webhook_id, member, Outcome::Failed, attempt_no), false));
            }
            Prepared::Corrupt(reason) => {
                let p = self.store.keys().partition_of_delivery(&member.delivery)?;
                Box::pin(self.dead_letter(p, webhook_id, member, &reason)).await;
                return None;
            }
            Prepared::StoreDown => return None,
        };
        let trace = Traced::of(member, event.as_deref(), &self.telemetry);
        let request = Request::signed(&this, event.as_deref(), trace, &webhook, (&body, &extra_headers));
        let context = egress::key_context(&member.org, webhook_id);
        let destination = Destination::of(&webhook, &context);
        self.metrics.in_flight.inc();
        let message = Message { headers: &request.headers, body: Bytes::from(body) };
        let sent = self.send_watched(webhook_id, &member.delivery, &destination, message).await;
        self.metrics.in_flight.dec();
        let answer = match &sent.result {
            Ok(answer) => Answer::Status(answer.status()),
            Err(e) => Answer::Unanswered(sent.class(), e.to_string()),
        };
        let to = destination.address();
        self.traced(&this, &request.trace, to, (started, answer), &calls);
        let report = self.judge(&this, &loaded, &request, &sent, changes);
        Some((report, webhook.failing))
    }

    /// What an attempt's answer means: the endpoint's signal to its lane, the outcome by the
    /// retry policy, and the report to record.
    fn judge(
        self: &Arc<Self>,
        this: &Attempt<'_>,
        loaded: &Loaded,
        request: &Request,
        sent: &Sent,
        mut changes: RowChanges,
    ) -> Report {
        let Attempt { webhook_id, member, number: attempt_no } = *this;
        let created_ms = crate::ids::millis_of(crate::ids::Kind::Delivery, &member.delivery).unwrap_or(request.at_ms);
        let (result, attempt, cause) = describe(sent, created_ms, request.at_ms);
        self.metrics.attempt(sent.class(), sent.duration.as_secs_f64());
        let schedule = &self.settings.retry_schedule;
        // Manual extra attempts take no place in the schedule; after one, the retry that
        // was waiting keeps its time.
        let place = attempt_no.saturating_sub(loaded.extra).max(1) as usize;
        let last_place = loaded.last_place.map_or(schedule.len() + 1, |k| k as usize);
        if let Some(signal) = signal_of(sent, &result, cause.as_deref(), place, schedule) {
            self.endpoint_signal(&member.org, webhook_id, signal);
        }
        let jitter = rand::random::<f64>() * 2.0 - 1.0;
        let outcome = match retry::next(&result, place, last_place, schedule, jitter) {
            Next::Succeeded => Outcome::Succeeded,
            Next::Gone => Outcome::Gone,
            Next::Failed => Outcome::Failed,
            Next::RetryIn(delay) => {
                let now = crate::time::now_millis();
                Outcome::Retry { due_ms: loaded.kept_due.map_or(now + delay.as_millis() as u64, |kept| kept.max(now)) }
            }
        };
        changes.kept_due_ends = loaded.kept_due.is_some();
        if !request.webhook_header_names.is_empty() {
            // Their names only: the values are the webhook's secrets (contract §8).
            let names: Vec<(&str, &str)> =
                request.webhook_header_names.iter().map(|name| (name.as_str(), "")).collect();
            changes.webhook_headers = Some(serde_json::to_string(&names).unwrap_or_default());
        }
        if let Some(cause) = &cause {
            tracing::warn!(
                delivery_id = %member.delivery,
                webhook_id,
                org_id = %member.org,
                attempt = attempt_no,
                trace_id = %request.trace.context.trace_id_hex(),
                %cause,
                next = %next_in_words(&outcome),
                "delivery attempt failed: {cause}"
            );
        }
        Report {
            webhook: webhook_id.to_owned(),
            member: member.clone(),
            outcome,
            attempt: attempt_no,
            attempt_json: Some(attempt),
            signature: Some(request.signature.clone()),
            changes,
            proxy_failed: matches!(sent.result, Err(SendError::Proxy(_))),
            ordered: loaded.ordered,
        }
    }
}

impl Engine {
    /// Records the attempt's span (and its plugin calls') when traces are exported.
    fn traced(
        &self,
        this: &Attempt<'_>,
        trace: &Traced,
        url: &str,
        (start, answer): (SystemTime, Answer),
        plugins: &[PluginCall],
    ) {
        if !self.telemetry.enabled() {
            return;
        }
        let Attempt { webhook_id, member, number: attempt } = *this;
        self.telemetry.attempt(AttemptSpan {
            trace: &trace.context,
            from_publisher: trace.from_publisher,
            event_id: &member.event,
            delivery_id: &member.delivery,
            webhook_id,
            org_id: &member.org,
            attempt,
            url,
            start,
            end: SystemTime::now(),
            answer,
            plugins,
        });
    }

    /// Sends an attempt; past [`SLOW_AFTER`] without an answer it becomes slow: its permit
    /// goes back to the workers and it counts against the slow share until it ends.
    async fn send_watched(
        &self,
        webhook: &str,
        delivery: &str,
        destination: &Destination<'_>,
        message: Message<'_>,
    ) -> Sent {
        self.destinations.send(destination, message, SLOW_AFTER, || self.became_slow(webhook, delivery)).await
    }
}
