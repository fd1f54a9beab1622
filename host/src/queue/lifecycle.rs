//! State changes of deliveries: publish (fan-out), load for an attempt, record an outcome,
//! retry by hand, and what happens to a webhook's deliveries when it is deleted or
//! switched off. Each is one Lua script, so each is all-or-nothing.

use std::time::Duration;

use redis::Value;

use super::{DEAD_LETTER, Entry, GROUP, LOAD, PUBLISH, Queue, RECORD, RETRY, WEBHOOK_OFF};
use crate::ids::{self, Kind};
use crate::store::{Result, StoreError};

/// The result of publishing an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    /// The id was accepted before; nothing new was created.
    Duplicate,
    /// Accepted, with this many deliveries.
    New { deliveries: usize },
}

/// An event to publish.
#[derive(Debug, Clone, Copy)]
pub struct NewEvent<'a> {
    pub org_id: &'a str,
    pub event_id: &'a str,
    /// The envelope JSON, delivered as is (unless plugins change it).
    pub envelope: &'a str,
    pub action: &'a str,
    pub event_created_at: &'a str,
    /// How long the event and its deliveries are kept.
    pub retention: Duration,
    /// The subject as `Type:id` and whether it was deleted: the newest event about each
    /// record is kept (its envelope carries the snapshot) for report exports.
    pub subject: &'a str,
    pub deleted: bool,
    /// The event's time, ms (newer snapshots replace older ones, whatever the arrival order).
    pub event_ms: u64,
}

/// Most record snapshots kept per organisation (the least recently updated go first).
pub const MAX_SNAPSHOTS_PER_ORG: usize = 50_000;
/// Largest event kept as a record's snapshot.
pub const MAX_SNAPSHOT_BYTES: usize = 256 * 1024;

/// A delivery taken for an attempt.
#[derive(Debug)]
pub enum Loaded {
    /// The record expired.
    Missing,
    /// No longer pending (the status it has).
    Done(String),
    /// Another worker holds a live lease on it.
    Busy,
    Ready(Box<Work>),
}

/// What an attempt needs.
#[derive(Debug, Default)]
pub struct Work {
    pub org_id: String,
    pub event_id: String,
    pub attempt_count: usize,
    /// The last attempt number allowed; `None` for the full retry schedule.
    pub attempt_budget: Option<usize>,
    pub event_created_at: String,
    /// Set once plugins have run: the rendered body (`None`: the envelope), extra
    /// headers (JSON pairs) and plugin outcomes (JSON).
    pub body: Option<String>,
    pub headers: Option<String>,
    pub plugins: Option<String>,
    /// `None` when the webhook no longer exists.
    pub webhook: Option<WebhookTarget>,
    /// The event envelope, unless the delivery already has a rendered body.
    pub envelope: Option<String>,
}

/// The webhook fields an attempt needs.
#[derive(Debug, Default)]
pub struct WebhookTarget {
    pub active: bool,
    pub url: String,
    pub signing_secret: String,
    /// Attachments (JSON).
    pub plugins: Option<String>,
    /// The webhook has a failure streak (a success must clear it).
    pub failing: bool,
}

/// What became of a delivery's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    /// The attempt failed and another is due at this time (ms).
    Retry {
        due_ms: u64,
    },
    /// Failed for good (no attempts left, or nothing can be sent).
    Failed,
    /// The endpoint answered 410 Gone: failed, and the webhook is deactivated at once.
    Gone,
    /// A plugin dropped it.
    Filtered,
    /// Its webhook no longer exists.
    Cancelled,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Retry { .. } => "retry",
            Outcome::Failed => "failed",
            Outcome::Gone => "gone",
            Outcome::Filtered => "filtered",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// Everything written with an outcome.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// The stream entry to acknowledge.
    pub entry_id: Option<String>,
    /// The attempt (JSON object), when a request was made or tried.
    pub attempt_json: Option<String>,
    /// The signature header of that request (the other headers follow from the record).
    pub signature: Option<String>,
    /// Extra delivery fields to set (rendered body, plugin outcomes).
    pub fields: Vec<(&'static str, String)>,
    /// The webhook had no failure streak when the delivery was loaded.
    pub webhook_healthy: bool,
}

/// An outcome to record for a delivery.
#[derive(Debug, Clone)]
pub struct Recording {
    pub delivery: String,
    pub outcome: Outcome,
    pub record: Record,
}

/// The rules `record` applies.
#[derive(Debug, Clone, Copy)]
pub struct RecordRules {
    pub retention: Duration,
    pub deactivate_after_failures: u32,
    pub deactivate_after: Duration,
}

/// The status a delivery has after `record`, and whether its webhook was deactivated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub status: String,
    pub deactivated: bool,
}

/// Why a retry was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryRefused {
    NotFound,
    WebhookGone,
    Inactive,
    Filtered,
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// A reply as a string, taking its bytes without copying them.
fn into_text(v: Value) -> Option<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b).ok(),
        Value::SimpleString(s) => Some(s),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// The elements of an array reply, as optional strings.
fn texts(v: Value) -> Vec<Option<String>> {
    match v {
        Value::Array(items) => items.into_iter().map(into_text).collect(),
        _ => Vec::new(),
    }
}

/// `load.lua` sends an event envelope once per call: a later `ok` reply about the same
/// event carries the position (1-based) of the earlier one instead. Puts a copy of the
/// envelope in its place; a position that does not point at an envelope becomes nil.
fn share_envelopes(replies: &mut [Value]) {
    const ENVELOPE: usize = 3;
    for i in 0..replies.len() {
        let Value::Array(reply) = &replies[i] else { continue };
        let Some(Value::Int(at)) = reply.get(ENVELOPE) else { continue };
        let shared = usize::try_from(*at)
            .ok()
            .and_then(|at| at.checked_sub(1))
            .filter(|at| *at < i)
            .and_then(|at| match &replies[at] {
                Value::Array(earlier) => earlier.get(ENVELOPE).filter(|e| matches!(e, Value::BulkString(_))).cloned(),
                _ => None,
            })
            .unwrap_or(Value::Nil);
        if let Value::Array(reply) = &mut replies[i] {
            reply[ENVELOPE] = shared;
        }
    }
}

impl Queue {
    /// Accepts an event and fans it out to the organisation's subscribed active webhooks.
    pub async fn publish(&self, event: &NewEvent<'_>) -> Result<Published> {
        // A block of 1024 delivery ids: the script appends two characters (10 bits).
        let base = ids::new_block(Kind::Delivery, 10);
        let base = &base[Kind::Delivery.prefix().len()..][..24];
        let n: i64 = PUBLISH
            .arg(self.store.prefix())
            .arg(event.org_id)
            .arg(event.event_id)
            .arg(event.envelope)
            .arg(event.action)
            .arg(crate::time::now_rfc3339())
            .arg(event.retention.as_millis() as u64)
            .arg(base)
            .arg(event.event_created_at)
            .arg(event.subject)
            .arg("")
            .arg(if event.deleted { "1" } else { "0" })
            .arg(event.event_ms)
            .arg(MAX_SNAPSHOTS_PER_ORG)
            .arg(MAX_SNAPSHOT_BYTES)
            .invoke_async(&mut self.store.conn())
            .await?;
        Ok(match usize::try_from(n) {
            Ok(deliveries) => Published::New { deliveries },
            Err(_) => Published::Duplicate,
        })
    }

    /// Takes deliveries for an attempt each, leasing them until `lease_until_ms`: one
    /// reply per delivery, in order (a corrupt record fails only its own).
    pub async fn load_many(
        &self,
        deliveries: &[String],
        now_ms: u64,
        lease_until_ms: u64,
    ) -> Result<Vec<Result<Loaded>>> {
        let mut invocation = LOAD.prepare_invoke();
        for delivery in deliveries {
            invocation.key(self.delivery_key(delivery));
        }
        let reply: Value = invocation
            .arg(self.store.prefix())
            .arg(now_ms)
            .arg(lease_until_ms)
            .invoke_async(&mut self.store.conn())
            .await?;
        match reply {
            Value::Array(mut items) if items.len() == deliveries.len() => {
                share_envelopes(&mut items);
                Ok(items.into_iter().zip(deliveries).map(|(item, delivery)| self.loaded(delivery, item)).collect())
            }
            _ => Err(StoreError::Corrupt { key: "load".into(), reason: "unexpected reply".into() }),
        }
    }

    /// One delivery's reply of `load.lua` (with its envelope shared in).
    fn loaded(&self, delivery: &str, reply: Value) -> Result<Loaded> {
        let corrupt = |reason: String| StoreError::Corrupt { key: self.delivery_key(delivery), reason };
        let Value::Array(items) = reply else { return Err(corrupt("unexpected load reply".into())) };
        match items.first().and_then(text).as_deref() {
            Some("missing") => Ok(Loaded::Missing),
            Some("busy") => Ok(Loaded::Busy),
            Some("done") => Ok(Loaded::Done(items.get(1).and_then(text).unwrap_or_default())),
            Some("error") => Err(corrupt(items.get(1).and_then(text).unwrap_or_default())),
            Some("ok") if items.len() == 4 => {
                let mut items = items.into_iter().skip(1);
                let (d, w, envelope) = match (items.next(), items.next(), items.next()) {
                    (Some(d), Some(w), Some(e)) => (texts(d), texts(w), into_text(e)),
                    _ => return Err(corrupt("unexpected load reply".into())),
                };
                let at = |v: &[Option<String>], i: usize| v.get(i).cloned().flatten();
                let webhook = at(&w, 1).map(|url| WebhookTarget {
                    active: at(&w, 0).as_deref() == Some("1"),
                    url,
                    signing_secret: at(&w, 2).unwrap_or_default(),
                    plugins: at(&w, 3),
                    failing: at(&w, 4).is_some_and(|c| c != "0"),
                });
                Ok(Loaded::Ready(Box::new(Work {
                    org_id: at(&d, 3).unwrap_or_default(),
                    event_id: at(&d, 4).unwrap_or_default(),
                    attempt_count: at(&d, 5).and_then(|c| c.parse().ok()).unwrap_or(0),
                    attempt_budget: at(&d, 6).and_then(|c| c.parse().ok()),
                    event_created_at: at(&d, 7).unwrap_or_default(),
                    body: at(&d, 8).filter(|b| !b.is_empty()),
                    headers: at(&d, 9),
                    plugins: at(&d, 10),
                    webhook,
                    envelope,
                })))
            }
            _ => Err(corrupt("unexpected load reply".into())),
        }
    }

    /// Records outcomes (and acknowledges their entries), each atomically and in order:
    /// one reply per outcome (a corrupt record fails only its own).
    pub async fn record_many(&self, outcomes: &[Recording], rules: &RecordRules) -> Result<Vec<Result<Recorded>>> {
        let now = crate::time::now_millis();
        let mut invocation = RECORD.key(&self.ready);
        invocation
            .key(&self.scheduled)
            .arg(self.store.prefix())
            .arg(GROUP)
            .arg(now)
            .arg(crate::time::format_millis(now))
            .arg(rules.retention.as_millis() as u64)
            .arg(rules.deactivate_after_failures)
            .arg(rules.deactivate_after.as_millis() as u64);
        for Recording { delivery, outcome, record } in outcomes {
            let (due_ms, due_ts) = match outcome {
                Outcome::Retry { due_ms } => (*due_ms, crate::time::format_millis(*due_ms)),
                _ => (0, String::new()),
            };
            let fields = if record.fields.is_empty() {
                String::new()
            } else {
                let flat: Vec<&str> = record.fields.iter().flat_map(|(k, v)| [*k, v.as_str()]).collect();
                serde_json::to_string(&flat).unwrap_or_default()
            };
            invocation
                .key(self.delivery_key(delivery))
                .arg(record.entry_id.as_deref().unwrap_or(""))
                .arg(outcome.as_str())
                .arg(record.attempt_json.as_deref().unwrap_or(""))
                .arg(record.signature.as_deref().unwrap_or(""))
                .arg(due_ms)
                .arg(due_ts)
                .arg(fields)
                .arg(if record.webhook_healthy { "1" } else { "0" });
        }
        let statuses: Vec<String> = invocation.invoke_async(&mut self.store.conn()).await?;
        if statuses.len() != outcomes.len() {
            return Err(StoreError::Corrupt { key: "record".into(), reason: "unexpected reply".into() });
        }
        Ok(statuses
            .into_iter()
            .zip(outcomes)
            .map(|(status, o)| {
                if let Some(reason) = status.strip_prefix("error:") {
                    return Err(StoreError::Corrupt { key: self.delivery_key(&o.delivery), reason: reason.to_owned() });
                }
                Ok(match status.strip_suffix(":deactivated") {
                    Some(s) => Recorded { status: s.to_owned(), deactivated: true },
                    None => Recorded { status, deactivated: false },
                })
            })
            .collect())
    }

    /// Queues one more attempt of each delivery (only `failed` ones when `only_failed`).
    /// Returns how many were queued, and the reason the last refused one was refused.
    pub async fn retry(
        &self,
        org_id: &str,
        deliveries: &[String],
        only_failed: bool,
        retention: Duration,
    ) -> Result<(usize, Option<RetryRefused>)> {
        let mut queued = 0;
        let mut refused = None;
        for chunk in deliveries.chunks(200) {
            let mut invocation = RETRY.key(&self.ready);
            invocation
                .key(&self.scheduled)
                .arg(self.store.prefix())
                .arg(org_id)
                .arg(crate::time::now_rfc3339())
                .arg(if only_failed { "failed" } else { "any" })
                .arg(retention.as_millis() as u64);
            for d in chunk {
                invocation.arg(d);
            }
            let (n, reason): (usize, String) = invocation.invoke_async(&mut self.store.conn()).await?;
            queued += n;
            refused = match reason.as_str() {
                "not_found" => Some(RetryRefused::NotFound),
                "webhook_gone" => Some(RetryRefused::WebhookGone),
                "inactive" => Some(RetryRefused::Inactive),
                "filtered" => Some(RetryRefused::Filtered),
                _ => refused,
            };
        }
        Ok((queued, refused))
    }

    /// Fails a delivery whose record cannot be read, with `reason`, and takes it out of
    /// the queue (see `lua/dead_letter.lua`).
    pub async fn dead_letter(&self, entry: &Entry, reason: &str, retention: Duration) -> Result<()> {
        let _: i64 = DEAD_LETTER
            .key(&self.ready)
            .key(&self.scheduled)
            .key(self.delivery_key(&entry.delivery))
            .key(self.store.key(&["wh", &entry.webhook]))
            .key(self.store.key(&["wh", &entry.webhook, "pending"]))
            .arg(GROUP)
            .arg(&entry.id)
            .arg(&entry.delivery)
            .arg(&entry.webhook)
            .arg(crate::time::now_rfc3339())
            .arg(reason)
            .arg(retention.as_millis() as u64)
            .invoke_async(&mut self.store.conn())
            .await?;
        Ok(())
    }

    /// Deletes the organisation's webhook and cancels its pending deliveries.
    pub async fn delete_webhook(&self, org_id: &str, webhook: &str) -> Result<bool> {
        self.webhook_off(org_id, webhook, "delete").await
    }

    /// Deactivates the organisation's webhook by hand; its pending deliveries fail.
    pub async fn deactivate_webhook(&self, org_id: &str, webhook: &str) -> Result<bool> {
        self.webhook_off(org_id, webhook, "deactivate").await
    }

    async fn webhook_off(&self, org_id: &str, webhook: &str, mode: &str) -> Result<bool> {
        let done: i64 = WEBHOOK_OFF
            .arg(self.store.prefix())
            .arg(org_id)
            .arg(webhook)
            .arg(crate::time::now_rfc3339())
            .arg(mode)
            .invoke_async(&mut self.store.conn())
            .await?;
        Ok(done == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(envelope: Value) -> Value {
        let s = |t: &str| Value::BulkString(t.as_bytes().to_vec());
        Value::Array(vec![s("ok"), Value::Array(vec![]), Value::Array(vec![]), envelope])
    }

    #[test]
    fn a_repeated_event_gets_a_copy_of_the_first_envelope() {
        let body = Value::BulkString(b"{\"id\":\"evt_1\"}".to_vec());
        let mut replies = vec![
            ok(body.clone()),
            Value::Array(vec![Value::BulkString(b"busy".to_vec())]),
            ok(Value::Int(1)),
            ok(Value::Boolean(false)),
            ok(Value::Int(4)),
            ok(Value::Int(9)),
            ok(Value::Int(6)),
        ];
        share_envelopes(&mut replies);
        assert_eq!(replies[2], ok(body.clone()));
        assert_eq!(replies[3], ok(Value::Boolean(false)));
        // Pointing at a reply without an envelope, past the end, or at itself: nil, never a number.
        assert_eq!(replies[4], ok(Value::Nil));
        assert_eq!(replies[5], ok(Value::Nil));
        assert_eq!(replies[6], ok(Value::Nil));
        assert_eq!(replies[0], ok(body));
    }
}
