//! One delivery's work: load it (counting the attempt), prepare its body (plugins run here,
//! once, before signing), check the URL rule, sign, send — then free the lane slot at once
//! — and record the outcome, keeping the webhook's failure streak.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::lanes::Waiting;
use super::retry::{self, AttemptResult, Next};
use super::send::Sent;
use super::{Claim, Engine, Work, sign};
use crate::plugins::EventMeta;
use crate::plugins::chain::{self, ChainOutcome, PluginRecord, Step};
use crate::store::deliveries::attempt_json;
use crate::store::queue::{Member, Outcome, Recorded, Recording};
use crate::store::webhooks::{Attachment, Streak, StreakRules, WebhookTarget};
use crate::store::{Partition, StoreError};

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
    /// Starts the attempt of a claimed delivery (its lane slot is already taken).
    pub(super) fn begin(self: &Arc<Self>, webhook: String, waiting: Waiting) {
        tokio::spawn(self.clone().attempt(webhook, waiting));
    }

    async fn attempt(self: Arc<Self>, webhook: String, waiting: Waiting) {
        let Waiting { partition: p, member } = waiting;
        let claim = Claim { webhook: webhook.clone(), member: member.clone() };
        let recording = match self.loaders[usize::from(p.0)].call(claim).await {
            Ok(Ok(Some(work))) => self.work(&webhook, &member, work).await,
            // The record is gone: drop the queue member.
            Ok(Ok(None)) => Some((self.recording(&webhook, &member, Outcome::Cancelled, 0), false)),
            Ok(Err(StoreError::Corrupt { reason, .. })) => {
                self.release_lane(&webhook);
                self.dead_letter(p, &webhook, &member, &reason).await;
                self.done(&member.delivery);
                return;
            }
            Ok(Err(e)) | Err(e) => {
                tracing::warn!(error = %e, delivery_id = %member.delivery, org_id = %member.org, "cannot load a delivery; its lease will run out");
                None
            }
        };
        self.release_lane(&webhook);
        if let Some((recording, failing)) = recording {
            self.finish(p, recording, failing).await;
        }
        self.done(&member.delivery);
    }

    /// A recording with no request made.
    fn recording(&self, webhook: &str, member: &Member, outcome: Outcome, attempt: u32) -> Recording {
        Recording {
            webhook: webhook.to_owned(),
            member: member.clone(),
            outcome,
            attempt,
            attempt_json: None,
            signature: None,
            fields: Vec::new(),
        }
    }

    /// The attempt itself: the recording of its outcome, and whether the webhook had a
    /// failure streak (a success must end it). `None` when nothing is to be recorded now.
    async fn work(&self, webhook_id: &str, member: &Member, work: Work) -> Option<(Recording, bool)> {
        let Work { mut loaded, webhook } = work;
        let attempt_no = loaded.attempt.max(1);
        if loaded.status.is_some() {
            // Already final (ended with its webhook, or recorded by an earlier lease holder).
            return Some((self.recording(webhook_id, member, Outcome::Failed, attempt_no), false));
        }
        let Some(webhook) = webhook else {
            return Some((self.recording(webhook_id, member, Outcome::Cancelled, attempt_no), false));
        };
        if !webhook.active {
            return Some((self.recording(webhook_id, member, Outcome::Failed, attempt_no), false));
        }
        let event = loaded.event.take();
        let (body, extra_headers, fields) = match self.prepare(member, &mut loaded, event.as_deref(), &webhook).await {
            Prepared::Send { body, extra_headers, fields } => (body, extra_headers, fields),
            Prepared::Filtered { fields } => {
                let recording =
                    Recording { fields, ..self.recording(webhook_id, member, Outcome::Filtered, attempt_no) };
                return Some((recording, false));
            }
            Prepared::EventMissing => {
                tracing::warn!(delivery_id = %member.delivery, org_id = %member.org, "event envelope expired before delivery");
                return Some((self.recording(webhook_id, member, Outcome::Failed, attempt_no), false));
            }
            Prepared::Corrupt(reason) => {
                let p = self.app.store.keys().partition_of_delivery(&member.delivery)?;
                self.dead_letter(p, webhook_id, member, &reason).await;
                return None;
            }
            Prepared::StoreDown => return None,
        };
        let budget = loaded.budget.map_or(self.app.config.retry_schedule.len() + 1, |b| b as usize);
        let created_at = event.as_ref().map(|e| e.created_at.as_str()).unwrap_or_default();
        // Signed now, for this attempt (replay protection): the attempt's time is the
        // signature's timestamp, so the record can show the headers as sent.
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
        let headers = sign::request_headers(this, &signatures, &extra_headers);
        let signature = Some(signatures.encode());
        self.app.metrics.in_flight.inc();
        let sent = self.sender.post(&webhook.url, &headers, Bytes::from(body)).await;
        self.app.metrics.in_flight.dec();
        let created_ms = crate::ids::millis_of(crate::ids::Kind::Delivery, &member.delivery).unwrap_or(at);
        let (result, attempt, cause) = describe(&sent, created_ms, at);
        self.app.metrics.attempt(sent.class(), sent.duration.as_secs_f64());

        let jitter = rand::random::<f64>() * 2.0 - 1.0;
        // Manual extra attempts take no place in the schedule; after one, the retry that
        // was waiting keeps its time.
        let place = attempt_no.saturating_sub(loaded.extra).max(1) as usize;
        let mut fields = fields;
        let outcome = match retry::next(&result, place, budget, &self.app.config.retry_schedule, jitter) {
            Next::Succeeded => Outcome::Succeeded,
            Next::Gone => Outcome::Gone,
            Next::Failed => Outcome::Failed,
            Next::RetryIn(delay) => {
                let now = crate::time::now_millis();
                Outcome::Retry { due_ms: loaded.kept_due.map_or(now + delay.as_millis() as u64, |kept| kept.max(now)) }
            }
        };
        if loaded.kept_due.is_some() {
            fields.push(("m", String::new()));
        }
        if let Some(cause) = &cause {
            tracing::warn!(
                delivery_id = %member.delivery,
                webhook_id,
                org_id = %member.org,
                attempt = attempt_no,
                %cause,
                next = %next_in_words(&outcome),
                "delivery attempt failed: {cause}"
            );
        }
        let recording = Recording {
            webhook: webhook_id.to_owned(),
            member: member.clone(),
            outcome,
            attempt: attempt_no,
            attempt_json: Some(attempt),
            signature,
            fields,
        };
        Some((recording, webhook.failing))
    }

    /// Runs the webhook's plugins on the first attempt; later attempts send what they
    /// produced then (the same body every time). Any failure to read the attachments, load
    /// or run a plugin follows the attachment's `on_error` (default `drop`): the body is
    /// never sent unfiltered.
    async fn prepare(
        &self,
        member: &Member,
        loaded: &mut crate::store::queue::Loaded,
        event: Option<&crate::store::events::StoredEvent>,
        webhook: &WebhookTarget,
    ) -> Prepared {
        if loaded.plugins.is_some() {
            let extra_headers = match loaded.headers.as_deref() {
                None | Some("") => Vec::new(),
                Some(h) => match serde_json::from_str::<Vec<(String, String)>>(h) {
                    Ok(headers) => headers,
                    Err(e) => {
                        return Prepared::Corrupt(format!("the headers its plugins produced cannot be read: {e}"));
                    }
                },
            };
            let Some(body) = loaded.body.take().or_else(|| event.map(|e| e.envelope.clone())) else {
                return Prepared::EventMissing;
            };
            return Prepared::Send { body, extra_headers, fields: Vec::new() };
        }
        let Some(envelope) = event.map(|e| e.envelope.clone()) else { return Prepared::EventMissing };
        let attachments: Vec<Attachment> = match webhook.plugins.as_deref() {
            None | Some("") => Vec::new(),
            Some(text) => match serde_json::from_str(text) {
                Ok(attachments) => attachments,
                Err(e) => {
                    let error = format!("the webhook's plugin attachments cannot be read ({e}); dropped by default");
                    tracing::error!(delivery_id = %member.delivery, org_id = %member.org, "{error}");
                    let plugins =
                        serde_json::to_string(&[PluginRecord::failed("", error)]).unwrap_or_else(|_| "[]".into());
                    return Prepared::Filtered { fields: vec![("p", plugins)] };
                }
            },
        };
        if attachments.is_empty() {
            return Prepared::Send { body: envelope, extra_headers: Vec::new(), fields: vec![("p", "[]".into())] };
        }
        let mut steps = Vec::with_capacity(attachments.len());
        for attachment in attachments {
            let sha256 = match self.app.plugin_hash(&member.org, &attachment.plugin_id).await {
                Ok(sha) => sha,
                Err(_) => return Prepared::StoreDown,
            };
            let wasm = match &sha256 {
                Some(sha) if !self.app.plugins.is_compiled(sha) => {
                    match self.app.store.get_plugin_wasm(&member.org, &attachment.plugin_id).await {
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
        let (outcome, records) = chain::run(&self.app.plugins, &member.org, steps, Arc::new(meta), &envelope).await;
        let mut fields = vec![("p", serde_json::to_string(&records).unwrap_or_else(|_| "[]".into()))];
        match outcome {
            ChainOutcome::Filtered { .. } => Prepared::Filtered { fields },
            ChainOutcome::Deliver { body, headers } => {
                if !headers.is_empty() {
                    fields.push(("h", serde_json::to_string(&headers).unwrap_or_else(|_| "[]".into())));
                }
                let body = match body {
                    Some(body) => {
                        fields.push(("b", body.clone()));
                        body
                    }
                    None => envelope,
                };
                Prepared::Send { body, extra_headers: headers, fields }
            }
        }
    }

    /// Frees the lane slot of an ended attempt: the next waiting delivery of the webhook
    /// starts at once, and the partitions with more for it are asked for a refill.
    fn release_lane(self: &Arc<Self>, webhook: &str) {
        let freed = self.lanes.release(webhook);
        if let Some(next) = freed.next {
            self.begin(webhook.to_owned(), next);
        }
        for p in freed.refill {
            if let Some(room) = self.room.get(usize::from(p.0)) {
                room.notify_one();
            }
        }
    }

    /// Records an outcome. An outcome not recorded would be sent again (a duplicate), so
    /// while Redis cannot take it (unreachable, loading, busy, out of memory) this keeps
    /// trying, holding the delivery (its lease is renewed meanwhile). Only a record that
    /// cannot be read gives up: it is dead-lettered. Then the webhook's streak is kept.
    async fn finish(&self, p: Partition, recording: Recording, failing: bool) {
        // Shared with the batch, and kept for another try.
        let recording = Arc::new(recording);
        let mut wait = Duration::from_millis(100);
        let mut tries: u32 = 0;
        let recorded = loop {
            let error = match self.recorders[usize::from(p.0)].call(recording.clone()).await {
                Ok(Ok(recorded)) => break recorded,
                Ok(Err(StoreError::Corrupt { reason, .. })) => {
                    self.dead_letter(p, &recording.webhook, &recording.member, &reason).await;
                    return;
                }
                Ok(Err(e)) | Err(e) => e,
            };
            if tries.is_power_of_two() {
                let delivery = &recording.member.delivery;
                tracing::warn!(error = %error, delivery_id = %delivery, tries, "cannot record a delivery outcome yet; retrying");
            }
            tries += 1;
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(5));
        };
        if tries > 0 {
            tracing::info!(delivery_id = %recording.member.delivery, tries, "recorded the outcome after Redis recovered");
        }
        if let Recorded::Status(status) = recorded
            && status != crate::store::deliveries::Status::Pending
        {
            self.app.metrics.delivery_finished(status.as_str());
        }
        self.keep_streak(&recording, failing).await;
    }

    /// Adds a recorded attempt to its webhook's failure streak (a success ends one), and
    /// ends the webhook's queued deliveries if that switched it off.
    async fn keep_streak(&self, recording: &Recording, failing: bool) {
        let request_made = recording.attempt_json.is_some();
        let streak = match recording.outcome {
            Outcome::Succeeded if failing => Streak { success_first: true, failures: 0, gone: false },
            Outcome::Retry { .. } | Outcome::Failed if request_made => Streak { failures: 1, ..Streak::default() },
            Outcome::Gone => Streak { failures: 1, gone: true, ..Streak::default() },
            _ => return,
        };
        let rules =
            StreakRules { failures: self.app.config.deactivate_after_failures, span: self.app.config.deactivate_after };
        let (org, webhook) = (&recording.member.org, &recording.webhook);
        match self.app.store.add_to_streak(org, webhook, streak, rules).await {
            Ok(Some(reason)) => {
                self.app.metrics.webhook_deactivated(&reason);
                let why = match reason.as_str() {
                    "gone" => "the endpoint answered 410 Gone".to_owned(),
                    _ => format!(
                        "{} or more failed attempts in a row, failing for at least {} (WEIR_DEACTIVATE_AFTER_FAILURES, WEIR_DEACTIVATE_AFTER)",
                        rules.failures,
                        humantime::format_duration(rules.span)
                    ),
                };
                // (The attempt that tipped it was logged just before, with its cause.)
                tracing::warn!(webhook_id = %webhook, org_id = %org, %reason, "webhook deactivated: {why}");
                let store = self.app.store.clone();
                let webhook = webhook.clone();
                let app = self.app.clone();
                tokio::spawn(async move {
                    match store.end_pending(&webhook, crate::store::deliveries::Status::Failed).await {
                        Ok(n) => (0..n).for_each(|_| app.metrics.delivery_finished("failed")),
                        Err(e) => {
                            tracing::warn!(error = %e, webhook_id = %webhook, "cannot fail a deactivated webhook's deliveries yet")
                        }
                    }
                });
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, webhook_id = %webhook, org_id = %org, "cannot keep the webhook's failure streak")
            }
        }
    }

    /// Takes a delivery whose record cannot be read out of the queue for good: it becomes
    /// `failed`, with `error` saying why (the deliveries API shows it), and is counted in
    /// `weir_dead_letters_total`. Retried while Redis is unreachable, like an outcome.
    async fn dead_letter(&self, p: Partition, webhook: &str, member: &Member, reason: &str) {
        let reason = format!("the delivery record cannot be read: {reason}");
        tracing::error!(delivery_id = %member.delivery, org_id = %member.org, webhook_id = %webhook, %reason, "dead-lettering a delivery");
        let mut wait = Duration::from_millis(100);
        loop {
            match self.app.store.dead_letter(p, webhook, member, &reason).await {
                Ok(()) => {
                    self.app.metrics.dead_letters.inc();
                    self.app.metrics.delivery_finished("failed");
                    return;
                }
                Err(e) if !e.is_unavailable() => {
                    // Not even that could be written: leave it to its lease for an operator.
                    tracing::error!(error = %e, delivery_id = %member.delivery, org_id = %member.org, "cannot dead-letter the delivery");
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, delivery_id = %member.delivery, org_id = %member.org, "cannot dead-letter yet; retrying");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    /// A held delivery is done with: its permit comes back.
    fn done(&self, delivery: &str) {
        if self.held().remove(delivery).is_some() {
            self.permits.add_permits(1);
            self.freed.notify_waiters();
        }
    }
}

/// The policy's view of a send, and the attempt as stored.
/// The attempt's result, its record, and why it failed (`None` for a 2xx).
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
