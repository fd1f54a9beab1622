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
    /// The store could not be read.
    StoreDown,
}

impl Engine {
    pub(super) async fn handle(&self, entry: &Entry) -> Handled {
        let loaded = match self.loader.call(entry.delivery.clone()).await.and_then(|loaded| loaded) {
            Ok(loaded) => loaded,
            Err(e) => {
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
            Prepared::Filtered { fields } => {
                return self.finish(entry, Outcome::Filtered, Record { fields, ..record }).await;
            }
            Prepared::EventMissing => {
                tracing::warn!(delivery = %entry.delivery, "event envelope expired before delivery");
                return self.finish(entry, Outcome::Failed, record).await;
            }
            Prepared::StoreDown => return Handled::StoreDown,
        };
        let attempt_no = work.attempt_count + 1;
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
            let extra_headers = work
                .headers
                .as_deref()
                .and_then(|h| serde_json::from_str::<Vec<(String, String)>>(h).ok())
                .unwrap_or_default();
            let Some(body) = work.body.take().or_else(|| work.envelope.take()) else {
                return Prepared::EventMissing;
            };
            return Prepared::Send { body, extra_headers, fields: Vec::new() };
        }
        let Some(envelope) = work.envelope.take() else { return Prepared::EventMissing };
        let attachments: Vec<Attachment> =
            webhook.plugins.as_deref().and_then(|p| serde_json::from_str(p).ok()).unwrap_or_default();
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
        let (outcome, records) = chain::run(&self.app.plugins, steps, Arc::new(meta), &envelope).await;
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

    /// Records an outcome, retrying while Redis is briefly unreachable. If it stays
    /// unreachable the entry is left pending: it will be attempted again (at least once).
    async fn finish(&self, entry: &Entry, outcome: Outcome, record: Record) -> Handled {
        let mut wait = Duration::from_millis(200);
        let recording = Recording { delivery: entry.delivery.clone(), outcome, record };
        for _ in 0..6 {
            match self.recorder.call(recording.clone()).await.and_then(|recorded| recorded) {
                Ok(recorded) => {
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
                Err(StoreError::Unavailable(_)) => {
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                Err(e) => {
                    tracing::error!(error = %e, delivery = %entry.delivery, "cannot record delivery outcome");
                    return Handled::StoreDown;
                }
            }
        }
        Handled::StoreDown
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
