//! One delivery's attempt: load it (counting the attempt), prepare its body (`prepare`),
//! sign, send (the URL rule is checked as it connects), and decide what follows by the retry
//! policy; `finish` frees the lane slot and records the outcome.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::lanes::Waiting;
use super::lanes::{SLOW_AFTER, Signal};
use super::prepare::Prepared;
use super::retry::{self, AttemptResult, Next};
use super::send::{Presented, SendError, Sent};
use super::{Claim, Engine, Work};
use crate::domain::deliveries::attempt_headers;
use crate::domain::egress;
use crate::sign;
use crate::store::StoreError;
use crate::store::queue::attempts::attempt_json;
use crate::store::queue::claim::Member;
use crate::store::queue::row::field;
use crate::store::queue::work::{Outcome, Report};
use crate::trace::TraceContext;

impl Engine {
    /// Starts the attempt of a claimed delivery (its lane slot is already taken).
    pub(super) fn begin(self: &Arc<Self>, webhook: String, waiting: Waiting) {
        tokio::spawn(self.clone().attempt(webhook, waiting));
    }

    async fn attempt(self: Arc<Self>, webhook: String, waiting: Waiting) {
        let Waiting { partition: p, member } = waiting;
        if let Some(until) = self.lanes.paused_until(&webhook) {
            // Paused since it was claimed: back to the queue for the pause's end, unloaded.
            self.release_lane(&webhook, &member.delivery);
            self.give_back(vec![(webhook, Waiting { partition: p, member })], until).await;
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
                    if let Err(e) = self.store.put_back(p, &webhook, &member, until).await {
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
                self.dead_letter(p, &webhook, &member, &reason).await;
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
            fields: Vec::new(),
            proxy_failed: false,
            ordered: false,
        }
    }

    /// The attempt itself: the report of its outcome, and whether the webhook had a
    /// failure streak (a success must end it). `None` when nothing is to be recorded now.
    async fn work(self: &Arc<Self>, webhook_id: &str, member: &Member, work: Work) -> Option<(Report, bool)> {
        let Work { mut loaded, webhook } = work;
        let attempt_no = loaded.attempt.max(1);
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
        let event = loaded.event.take();
        let (body, extra_headers, fields) = match self.prepare(member, &mut loaded, event.as_deref(), &webhook).await {
            Prepared::Send { body, extra_headers, fields } => (body, extra_headers, fields),
            Prepared::Filtered { fields } => {
                let report = Report {
                    fields,
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
                self.dead_letter(p, webhook_id, member, &reason).await;
                return None;
            }
            Prepared::StoreDown => return None,
        };
        let last_place = loaded.last_place.map_or(self.app.config.retry_schedule.len() + 1, |k| k as usize);
        let created_at = event.as_ref().map(|e| e.created_at.as_str()).unwrap_or_default();
        // Signed now, for this attempt (replay protection): the attempt's time is the
        // signature's timestamp, so the row can show the headers as sent.
        let at = crate::time::now_millis();
        let previous = webhook.previous_secret.as_ref().filter(|(_, ends)| *ends > at).map(|(s, _)| s.as_str());
        let secrets = sign::Secrets { current: &webhook.signing_secret, previous };
        let signatures = sign::Signatures::sign(secrets, &member.delivery, at / 1000, body.as_bytes());
        let this = sign::Attempt {
            delivery_id: &member.delivery,
            number: attempt_no as usize,
            event_created_at: created_at,
            signed_at: at / 1000,
        };
        let own_headers: Vec<(String, String)> = match webhook.headers.as_deref() {
            None => Vec::new(),
            Some(text) => match serde_json::from_str::<BTreeMap<String, String>>(text) {
                Ok(map) => map.into_iter().collect(),
                Err(e) => {
                    tracing::error!(webhook_id, error = %e, "the webhook's headers cannot be read; sent without them");
                    Vec::new()
                }
            },
        };
        let trace =
            event.as_ref().map_or_else(|| TraceContext::for_event(&member.event), |e| e.trace_of(&member.event));
        let headers = attempt_headers(this, &signatures, &own_headers, &extra_headers, &trace);
        let signature = Some(signatures.encode());
        let context = egress::key_context(&member.org, webhook_id);
        let presented =
            webhook.client_certificate.as_ref().map(|certificate| Presented { certificate, context: &context });
        self.app.metrics.in_flight.inc();
        let sent =
            self.send_watched(webhook_id, &member.delivery, &webhook.url, &headers, Bytes::from(body), presented).await;
        self.app.metrics.in_flight.dec();
        let created_ms = crate::ids::millis_of(crate::ids::Kind::Delivery, &member.delivery).unwrap_or(at);
        let (result, attempt, cause) = describe(&sent, created_ms, at);
        self.app.metrics.attempt(sent.class(), sent.duration.as_secs_f64());

        let jitter = rand::random::<f64>() * 2.0 - 1.0;
        // Manual extra attempts take no place in the schedule; after one, the retry that
        // was waiting keeps its time.
        let place = attempt_no.saturating_sub(loaded.extra).max(1) as usize;
        let mut fields = fields;
        let signal = match (&sent.result, retry::pause(&result, place, &self.app.config.retry_schedule)) {
            (_, Some(pause)) => Some(Signal::Pause {
                until_ms: crate::time::now_millis() + pause.as_millis() as u64,
                reason: cause.clone().map(|c| format!("{c} with Retry-After")).unwrap_or_default(),
            }),
            (Ok(response), None) if (200..300).contains(&response.status) => Some(Signal::Success),
            (Ok(_), None) => Some(Signal::Failed(cause.clone().unwrap_or_default())),
            (Err(SendError::Blocked(_)), None) => Some(Signal::Failed(cause.clone().unwrap_or_default())),
            // The proxy's failure says nothing of the endpoint.
            (Err(SendError::Proxy(_)), None) => None,
            (Err(_), None) => Some(Signal::NoAnswer(cause.clone().unwrap_or_default())),
        };
        if let Some(signal) = signal {
            self.endpoint_signal(&member.org, webhook_id, signal);
        }
        let outcome = match retry::next(&result, place, last_place, &self.app.config.retry_schedule, jitter) {
            Next::Succeeded => Outcome::Succeeded,
            Next::Gone => Outcome::Gone,
            Next::Failed => Outcome::Failed,
            Next::RetryIn(delay) => {
                let now = crate::time::now_millis();
                Outcome::Retry { due_ms: loaded.kept_due.map_or(now + delay.as_millis() as u64, |kept| kept.max(now)) }
            }
        };
        if loaded.kept_due.is_some() {
            fields.push((field::KEPT_DUE, String::new()));
        }
        if !own_headers.is_empty() {
            // Their names only: the values are the webhook's secrets (contract §8).
            let names: Vec<(&str, &str)> = own_headers.iter().map(|(name, _)| (name.as_str(), "")).collect();
            fields.push((field::WEBHOOK_HEADERS, serde_json::to_string(&names).unwrap_or_default()));
        }
        if let Some(cause) = &cause {
            tracing::warn!(
                delivery_id = %member.delivery,
                webhook_id,
                org_id = %member.org,
                attempt = attempt_no,
                trace_id = %trace.trace_id_hex(),
                %cause,
                next = %next_in_words(&outcome),
                "delivery attempt failed: {cause}"
            );
        }
        let report = Report {
            webhook: webhook_id.to_owned(),
            member: member.clone(),
            outcome,
            attempt: attempt_no,
            attempt_json: Some(attempt),
            signature,
            fields,
            proxy_failed: matches!(sent.result, Err(SendError::Proxy(_))),
            ordered: loaded.ordered,
        };
        Some((report, webhook.failing))
    }
}

impl Engine {
    /// Sends an attempt; past [`SLOW_AFTER`] without an answer it becomes slow: its permit
    /// goes back to the workers and it counts against the slow share until it ends.
    async fn send_watched(
        &self,
        webhook: &str,
        delivery: &str,
        url: &str,
        headers: &[(String, String)],
        body: Bytes,
        presented: Option<Presented<'_>>,
    ) -> Sent {
        let send = self.sender.post(url, headers, body, presented);
        tokio::pin!(send);
        tokio::select! {
            sent = &mut send => sent,
            () = tokio::time::sleep(SLOW_AFTER) => {
                self.became_slow(webhook, delivery);
                send.await
            }
        }
    }
}

/// The policy's view of a send, the attempt as stored, and why it failed (`None` for a
/// 2xx).
fn describe(sent: &Sent, created_ms: u64, at_ms: u64) -> (AttemptResult, String, Option<String>) {
    let duration_ms = sent.duration.as_millis() as u64;
    match &sent.result {
        Ok(response) => {
            let error = (!(200..300).contains(&response.status)).then(|| format!("HTTP {}", response.status));
            (
                AttemptResult::Status { code: response.status, retry_after: response.retry_after.clone() },
                attempt_json(
                    created_ms,
                    at_ms,
                    Some(response.status),
                    duration_ms,
                    error.as_deref(),
                    Some(&response.body),
                ),
                error,
            )
        }
        Err(e) => {
            let error = e.to_string();
            let attempt = attempt_json(created_ms, at_ms, None, duration_ms, Some(&error), None);
            (AttemptResult::NoResponse, attempt, Some(error))
        }
    }
}

/// What happens after a failed attempt, in words for the log.
fn next_in_words(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Retry { due_ms } => {
            let wait = due_ms.saturating_sub(crate::time::now_millis());
            format!("retry in {}", humantime::format_duration(Duration::from_secs(wait.div_ceil(1000))))
        }
        Outcome::Gone => "no retry: 410 Gone switches the webhook off".to_owned(),
        _ => "no retry: the delivery failed for good".to_owned(),
    }
}
