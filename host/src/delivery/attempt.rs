//! One unit of delivery work: take the delivery, prepare its body (plugins run here, once,
//! before signing), check the URL rule, sign, send, and record the outcome.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;

use super::retry::{self, AttemptResult, Next};
use super::send::Sent;
use super::{Engine, sign};
use crate::plugins::EventMeta;
use crate::plugins::chain::{self, ChainOutcome, Step};
use crate::queue::{Entry, Loaded, Outcome, Record, Recording, WebhookTarget, Work};
use crate::store::StoreError;
use crate::store::webhooks::Attachment;

/// What became of a stream entry.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Handled {
    /// Done with it (recorded, or acknowledged as stale).
    Done,
    /// Someone else holds its lease: leave it for a later takeover.
    Busy,
    /// The store could not be reached; the entry stays pending and will be taken over.
    StoreDown,
}

/// What to do with a delivery once its plugins have run.
enum Prepared {
    /// Send this body with these extra headers; store `fields` (rendered body, headers,
    /// plugin outcomes) with the outcome.
    Send { body: String, extra_headers: Vec<(String, String)>, fields: Vec<(&'static str, String)> },
    /// A plugin dropped it.
    Filtered { fields: Vec<(&'static str, String)> },
    /// The event expired before its first attempt.
    EventMissing,
    /// What an earlier attempt stored cannot be read.
    Corrupt(String),
    /// The store could not be read.
    StoreDown,
}

impl Engine {
    pub(super) async fn handle(&self, entry: &Entry) -> Handled {
        let loaded = match self.loader.call(entry.delivery.clone()).await {
            Ok(Ok(loaded)) => loaded,
            // This record cannot be read: attempting it again would fail again.
            Ok(Err(StoreError::Corrupt { reason, .. })) => return self.dead_letter(entry, &reason).await,
            Ok(Err(e)) | Err(e) => {
                tracing::warn!(error = %e, delivery = %entry.delivery, "cannot load delivery");
                return Handled::StoreDown;
            }
        };
        match loaded {
            Loaded::Missing | Loaded::Done(_) => match self.queue.ack(entry).await {
                Ok(()) => Handled::Done,
                Err(_) => Handled::StoreDown,
            },
            Loaded::Busy => Handled::Busy,
            Loaded::Ready(work) => self.attempt(entry, *work).await,
        }
    }

    async fn attempt(&self, entry: &Entry, mut work: Work) -> Handled {
        let record = Record { entry_id: Some(entry.id.clone()), ..Record::default() };
        let Some(webhook) = work.webhook.take() else {
            return self.finish(entry, Outcome::Cancelled, record).await;
        };
        if !webhook.active {
            return self.finish(entry, Outcome::Failed, record).await;
        }
        let (body, extra_headers, fields) = match self.prepare(&mut work, &webhook).await {
            Prepared::Send { body, extra_headers, fields } => (body, extra_headers, fields),
            Prepared::Corrupt(reason) => return self.dead_letter(entry, &reason).await,
            Prepared::Filtered { fields } => {
                return self.finish(entry, Outcome::Filtered, Record { fields, ..record }).await;
            }
            Prepared::EventMissing => {
                tracing::warn!(delivery = %entry.delivery, "event envelope expired before delivery");
                return self.finish(entry, Outcome::Failed, record).await;
            }
            Prepared::StoreDown => return Handled::StoreDown,
        };
        // `load` counted this attempt as it started, so one made again after a crash says so.
        let attempt_no = work.attempt_count.max(1);
        let budget = work.attempt_budget.unwrap_or(self.app.config.retry_schedule.len() + 1);
        let headers = sign::request_headers(
            body.as_bytes(),
            &webhook.signing_secret,
            &entry.delivery,
            attempt_no,
            &work.event_created_at,
            &extra_headers,
        );
        let signature = headers.iter().find(|(k, _)| k == "x-webhook-signature").map(|(_, v)| v.clone());
        let at = crate::time::now_rfc3339();
        self.app.metrics.in_flight.inc();
        let sent = self.sender.post(&webhook.url, &headers, Bytes::from(body)).await;
        self.app.metrics.in_flight.dec();
        let (result, attempt_json) = describe(&sent, &at);
        self.app
            .metrics
            .attempt(matches!(result, AttemptResult::Status { code: 200..=299, .. }), sent.duration.as_secs_f64());

        let jitter = rand::random::<f64>() * 2.0 - 1.0;
        let outcome = match retry::next(&result, attempt_no, budget, &self.app.config.retry_schedule, jitter) {
            Next::Succeeded => Outcome::Succeeded,
            Next::Gone => Outcome::Gone,
            Next::Failed => Outcome::Failed,
            Next::RetryIn(delay) => Outcome::Retry { due_ms: crate::time::now_millis() + delay.as_millis() as u64 },
        };
        let record =
            Record { attempt_json: Some(attempt_json), signature, fields, webhook_healthy: !webhook.failing, ..record };
        self.finish(entry, outcome, record).await
    }

    /// Runs the webhook's plugins on the first attempt; later attempts send what they
    /// produced then (the same body every time).
    async fn prepare(&self, work: &mut Work, webhook: &WebhookTarget) -> Prepared {
        if work.plugins.is_some() {
            let extra_headers = match work.headers.as_deref() {
                None | Some("") => Vec::new(),
                Some(h) => match serde_json::from_str::<Vec<(String, String)>>(h) {
                    Ok(headers) => headers,
                    Err(e) => {
                        return Prepared::Corrupt(format!("the headers its plugins produced cannot be read: {e}"));
                    }
                },
            };
            let Some(body) = work.body.take().or_else(|| work.envelope.take()) else {
                return Prepared::EventMissing;
            };
            return Prepared::Send { body, extra_headers, fields: Vec::new() };
        }
        let Some(envelope) = work.envelope.take() else { return Prepared::EventMissing };
        let attachments: Vec<Attachment> = match webhook.plugins.as_deref() {
            None | Some("") => Vec::new(),
            Some(text) => match serde_json::from_str(text) {
                Ok(attachments) => attachments,
                // Which plugins should run is unknown: never send the body unfiltered. The
                // default `on_error` applies: the delivery is dropped, with the reason.
                Err(e) => {
                    let error = format!("the webhook's plugin attachments cannot be read ({e}); dropped by default");
                    tracing::error!(event = %work.event_id, "{error}");
                    let record = chain::PluginRecord::failed("", error);
                    let plugins = serde_json::to_string(&[record]).unwrap_or_else(|_| "[]".into());
                    return Prepared::Filtered { fields: vec![("plugins", plugins)] };
                }
            },
        };
        if attachments.is_empty() {
            return Prepared::Send {
                body: envelope,
                extra_headers: Vec::new(),
                fields: vec![("plugins", "[]".into())],
            };
        }
        let mut steps = Vec::with_capacity(attachments.len());
        for attachment in attachments {
            let sha256 = match self.app.plugin_hash(&work.org_id, &attachment.plugin_id).await {
                Ok(sha) => sha,
                Err(_) => return Prepared::StoreDown,
            };
            let wasm = match &sha256 {
                Some(sha) if !self.app.plugins.is_compiled(sha) => {
                    match self.app.store.get_plugin_wasm(&attachment.plugin_id).await {
                        Ok(wasm) => wasm,
                        Err(_) => return Prepared::StoreDown,
                    }
                }
                _ => None,
            };
            steps.push(Step {
                plugin_id: attachment.plugin_id,
                sha256,
                wasm,
                config: attachment.config.to_string(),
                on_error: attachment.on_error,
            });
        }
        let meta = EventMeta::from_envelope(&envelope).unwrap_or_default();
        let (outcome, records) = chain::run(&self.app.plugins, &work.org_id, steps, Arc::new(meta), &envelope).await;
        let mut fields = vec![("plugins", serde_json::to_string(&records).unwrap_or_else(|_| "[]".into()))];
        match outcome {
            ChainOutcome::Filtered { .. } => Prepared::Filtered { fields },
            ChainOutcome::Deliver { body, headers } => {
                if !headers.is_empty() {
                    fields.push(("headers", serde_json::to_string(&headers).unwrap_or_else(|_| "[]".into())));
                }
                let body = match body {
                    Some(body) => {
                        fields.push(("body", body.clone()));
                        body
                    }
                    None => envelope,
                };
                Prepared::Send { body, extra_headers: headers, fields }
            }
        }
    }

    /// Records an outcome. An outcome not recorded would be sent again (a duplicate), so
    /// while Redis cannot take it (unreachable, loading, busy, out of memory) this keeps
    /// trying, holding the entry (its heartbeat goes on, so nobody takes it over). Only a
    /// record that cannot be read gives up: it is dead-lettered.
    async fn finish(&self, entry: &Entry, outcome: Outcome, record: Record) -> Handled {
        let mut wait = Duration::from_millis(100);
        let mut tries: u32 = 0;
        let recording = Recording { delivery: entry.delivery.clone(), outcome, record };
        loop {
            let error = match self.recorder.call(recording.clone()).await {
                Ok(Ok(recorded)) => {
                    if tries > 0 {
                        tracing::info!(delivery = %entry.delivery, tries, "recorded the outcome after Redis recovered");
                    }
                    if recorded.status != "pending" {
                        self.app.metrics.delivery_finished(&recorded.status);
                    }
                    if recorded.deactivated {
                        tracing::info!(webhook = %entry.webhook, "webhook deactivated after failures");
                    }
                    if let Outcome::Retry { due_ms } = outcome {
                        self.retry_scheduled(due_ms);
                    }
                    return Handled::Done;
                }
                Ok(Err(StoreError::Corrupt { reason, .. })) => return self.dead_letter(entry, &reason).await,
                Ok(Err(e)) | Err(e) => e,
            };
            if tries.is_power_of_two() {
                tracing::warn!(error = %error, delivery = %entry.delivery, tries, "cannot record a delivery outcome yet; retrying");
            }
            tries += 1;
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(5));
        }
    }

    /// Takes a delivery whose record cannot be read out of the queue for good: it becomes
    /// `failed`, with `error` saying why (the deliveries API shows it), and is counted in
    /// `weir_dead_letters_total`. Retried while Redis is unreachable, like an outcome.
    async fn dead_letter(&self, entry: &Entry, reason: &str) -> Handled {
        let reason = format!("the delivery record cannot be read: {reason}");
        tracing::error!(delivery = %entry.delivery, webhook = %entry.webhook, %reason, "dead-lettering a delivery");
        let mut wait = Duration::from_millis(100);
        loop {
            match self.queue.dead_letter(entry, &reason, self.app.config.delivery_retention).await {
                Ok(()) => {
                    self.app.metrics.dead_letters.inc();
                    self.app.metrics.delivery_finished("failed");
                    return Handled::Done;
                }
                Err(e @ StoreError::Corrupt { .. }) => {
                    // Not even that could be written: leave it pending for an operator.
                    tracing::error!(error = %e, delivery = %entry.delivery, "cannot dead-letter the delivery");
                    return Handled::StoreDown;
                }
                Err(e) => {
                    tracing::warn!(error = %e, delivery = %entry.delivery, "cannot dead-letter yet; retrying");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

/// The policy's view of a send, and the attempt as recorded (JSON).
fn describe(sent: &Sent, at: &str) -> (AttemptResult, String) {
    let duration_ms = sent.duration.as_millis() as u64;
    match &sent.result {
        Ok(response) => (
            AttemptResult::Status { code: response.status, retry_after: response.retry_after.clone() },
            json!({
                "at": at,
                "status_code": response.status,
                "error": if (200..300).contains(&response.status) { None } else { Some(format!("HTTP {}", response.status)) },
                "duration_ms": duration_ms,
                "response_body": response.body,
            })
            .to_string(),
        ),
        Err(e) => (
            AttemptResult::NoResponse,
            json!({"at": at, "status_code": null, "error": e.to_string(), "duration_ms": duration_ms, "response_body": null})
                .to_string(),
        ),
    }
}
