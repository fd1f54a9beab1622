//! The delivery queue: each partition has, per webhook, a list of its new deliveries and a
//! sorted set of the others, scored by when they are due — retries at their time, those
//! being attempted at the end of their lease — and `ready`, the webhooks that have some,
//! scored by when the next one is due.
//!
//! - **Claim** (`lua/claim.lua`): a worker takes due deliveries of the webhooks it has room
//!   for (no more than its in-flight cap for each), leasing them; the reply names the
//!   webhooks to ask for next. Then [`Store::load`] reads what the attempts need and counts
//!   each attempt as it starts.
//! - **Record** (`lua/record.lua`): an outcome ends the delivery (its member leaves the
//!   queue) or schedules its retry (its score becomes the retry's time).
//! - A worker that dies leaves its leases to run out: the members become due again and
//!   any worker claims them ([`Store::renew`] keeps live workers' leases).
//!
//! A queue member is `dlv org evt`: everything needed to find the delivery and its event.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use redis::Value;

use super::deliveries::Status;
use super::events::StoredEvent;
use super::keys::Partition;
use super::reply::{self, Record};
use super::scripts::{CLAIM, DEAD_LETTER, DRAIN_NEW, END_PENDING, LOAD, RECORD, RENEW, RETRY};
use super::{Result, Store, StoreError};

/// A queued delivery, as its queue holds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Member {
    pub delivery: String,
    pub org: String,
    pub event: String,
}

impl Member {
    pub fn parse(text: &str) -> Option<Member> {
        let mut parts = text.splitn(3, ' ');
        Some(Member {
            delivery: parts.next()?.to_owned(),
            org: parts.next()?.to_owned(),
            event: parts.next()?.to_owned(),
        })
    }

    pub fn text(&self) -> String {
        format!("{} {} {}", self.delivery, self.org, self.event)
    }
}

/// A webhook a claim asks for, with how many of its deliveries the worker can start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub webhook: String,
    pub limit: usize,
}

/// What a claim took, and where to look next.
#[derive(Debug, Default)]
pub struct Claimed {
    /// Claimed deliveries, with their webhooks.
    pub deliveries: Vec<(String, Member)>,
    /// Webhooks with deliveries due now (the earliest due first).
    pub hints: Vec<String>,
    /// When the earliest webhook of the partition has something due (ms).
    pub next_due: Option<u64>,
}

/// What an attempt needs of a claimed delivery.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// This attempt's number (counted as it starts).
    pub attempt: u32,
    /// The last place in the retry schedule allowed, when a manual retry set one.
    pub budget: Option<u32>,
    /// Manual extra attempts made while the delivery waited for a retry: they take no place
    /// in the schedule (this attempt's place is `attempt - extra`).
    pub extra: u32,
    /// When this attempt is such an extra one: the time the waiting retry was due, which
    /// stays its time if this attempt fails.
    pub kept_due: Option<u64>,
    /// `Some` when the delivery is no longer pending (nothing to do).
    pub status: Option<Status>,
    /// Once plugins have run: the rendered body (`None`: the envelope), extra headers (JSON
    /// pairs) and plugin outcomes (JSON).
    pub body: Option<String>,
    pub headers: Option<String>,
    pub plugins: Option<String>,
    /// The event (shared by every delivery of it in a batch); `None` once expired.
    pub event: Option<Arc<StoredEvent>>,
}

impl Loaded {
    /// A pending delivery whose record holds nothing beyond its attempt count.
    fn plain(attempt: u32, event: Option<Arc<StoredEvent>>) -> Loaded {
        Loaded {
            attempt,
            budget: None,
            extra: 0,
            kept_due: None,
            status: None,
            body: None,
            headers: None,
            plugins: None,
            event,
        }
    }
}

/// What became of an attempt, to record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    /// The attempt failed and another is due at this time (ms).
    Retry {
        due_ms: u64,
    },
    /// Failed for good (no attempts left, or nothing can be sent).
    Failed,
    /// The endpoint answered 410 Gone: failed (the caller switches the webhook off).
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

/// An outcome to record for a claimed delivery.
#[derive(Debug, Clone)]
pub struct Recording {
    pub webhook: String,
    pub member: Member,
    pub outcome: Outcome,
    /// The attempt's number.
    pub attempt: u32,
    /// The attempt (`deliveries::attempt_json`), when a request was made or tried.
    pub attempt_json: Option<String>,
    /// The signatures of that request (`sign::Signatures::encode`).
    pub signature: Option<Vec<u8>>,
    /// Delivery fields to set (rendered body `b`, extra headers `h`, plugin outcomes `p`).
    pub fields: Vec<(&'static str, String)>,
}

/// The status a delivery has after a recording; `Missing` when its record expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Status(Status),
    Missing,
}

/// Why a manual retry did not queue a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryRefused {
    NotFound,
    WebhookGone,
    Inactive,
    Filtered,
    /// In bulk: not failed.
    Skipped,
}

impl Store {
    /// Claims due deliveries of the webhooks in `asks` (within each one's limit and
    /// `budget` in all), leasing them until `lease_until` (ms).
    pub async fn claim(
        &self,
        p: Partition,
        asks: &[Ask],
        budget: usize,
        hints_wanted: usize,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> Result<Claimed> {
        let mut call = CLAIM.call();
        call.key(&self.keys().ready(p));
        call.arg(now_ms).arg(lease_until_ms).arg(budget).arg(hints_wanted);
        for ask in asks {
            call.key(&self.keys().webhook_queue(p, &ask.webhook)).key(&self.keys().webhook_new(p, &ask.webhook));
            call.arg(&ask.webhook).arg(ask.limit);
        }
        let value: Value = call.run(&mut self.conn()).await?;
        let mut record = Record::from_value(value, "claim")?;
        let mut flat = record.list("claimed").into_iter().filter_map(reply::text);
        let mut deliveries = Vec::new();
        while let (Some(webhook), Some(member)) = (flat.next(), flat.next()) {
            if let Some(member) = Member::parse(&member) {
                deliveries.push((webhook, member));
            }
        }
        Ok(Claimed {
            deliveries,
            hints: record.list("hints").into_iter().filter_map(reply::text).collect(),
            next_due: record.int("next_due").and_then(|n| u64::try_from(n).ok()),
        })
    }

    /// Reads what the attempts of claimed deliveries need, counting each attempt as it
    /// starts (`lua/load.lua`); one reply per delivery, in order (`None` when its record is
    /// gone; a record that cannot be read fails only its own). Events this process has just
    /// published come from memory (`recent`), the others from Redis.
    pub async fn load<M: Borrow<Member>>(&self, p: Partition, members: &[M]) -> Result<Vec<Result<Option<Loaded>>>> {
        let members: Vec<&Member> = members.iter().map(Borrow::borrow).collect();
        let mut events: Vec<(&str, &str, &str)> =
            members.iter().map(|m| (m.org.as_str(), m.event.as_str(), m.delivery.as_str())).collect();
        events.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        events.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
        let mut shared: HashMap<(&str, &str), Option<Arc<StoredEvent>>> = HashMap::new();
        let mut wanted: Vec<(&str, &str)> = Vec::new();
        for (org, event, delivery) in events {
            // Every delivery of one acceptance of an event carries its time.
            let accepted = crate::ids::millis_of(crate::ids::Kind::Delivery, delivery);
            match accepted.and_then(|ms| self.recent.get(org, event, ms)) {
                Some(kept) => {
                    shared.insert((org, event), Some(kept));
                }
                None => wanted.push((org, event)),
            }
        }
        let mut call = LOAD.call();
        for m in &members {
            call.key(&self.keys().delivery(p, &m.delivery));
        }
        for (org, event) in &wanted {
            call.key(&self.keys().event(p, org, event));
        }
        call.arg(members.len()).arg(super::deliveries::PLAIN_RECORD_FIELDS);
        let replies: Vec<Value> = call.run(&mut self.conn()).await?;
        if replies.len() != members.len() + wanted.len() {
            return Err(StoreError::Corrupt { key: self.keys().ready(p), reason: "load: unexpected reply".into() });
        }
        let (records, stored) = replies.split_at(members.len());
        for ((org, event), value) in wanted.into_iter().zip(stored) {
            let decoded = match value {
                Value::BulkString(bytes) => StoredEvent::decode(bytes).map(Arc::new),
                _ => None,
            };
            shared.insert((org, event), decoded);
        }
        Ok(members
            .iter()
            .zip(records)
            .map(|(m, value)| {
                let corrupt =
                    |reason: String| StoreError::Corrupt { key: self.keys().delivery(p, &m.delivery), reason };
                let event = shared.get(&(m.org.as_str(), m.event.as_str())).cloned().flatten();
                let items = match value {
                    // A record holding nothing but its attempt count.
                    Value::Int(n) => {
                        let attempt = u32::try_from(*n).map_err(|_| corrupt(format!("attempt count {n}")))?;
                        return Ok(Some(Loaded::plain(attempt, event)));
                    }
                    Value::Array(items) => items,
                    Value::Nil | Value::Boolean(false) => return Ok(None),
                    other => {
                        let reason = reply::text(other.clone()).unwrap_or_else(|| format!("{other:?}"));
                        return Err(corrupt(reason.strip_prefix("error:").unwrap_or(&reason).to_owned()));
                    }
                };
                let field = |i: usize| items.get(i).cloned().and_then(reply::text).filter(|v| !v.is_empty());
                let attempt =
                    field(0).and_then(|n| n.parse().ok()).ok_or_else(|| corrupt("no attempt count".into()))?;
                let status = match field(1) {
                    None => None,
                    Some(s) => Some(Status::parse(&s).ok_or_else(|| corrupt(format!("unknown status `{s}`")))?),
                };
                Ok(Some(Loaded {
                    attempt,
                    budget: field(2).and_then(|k| k.parse().ok()),
                    status,
                    body: field(3),
                    headers: field(4),
                    plugins: field(5),
                    extra: field(6).and_then(|x| x.parse().ok()).unwrap_or(0),
                    kept_due: field(7).and_then(|m| m.parse().ok()),
                    event,
                }))
            })
            .collect())
    }

    /// Records outcomes of one partition's deliveries, each atomically and in order: one
    /// reply per outcome (a record that cannot be read fails only its own).
    pub async fn record<R: Borrow<Recording>>(&self, p: Partition, outcomes: &[R]) -> Result<Vec<Result<Recorded>>> {
        let outcomes: Vec<&Recording> = outcomes.iter().map(Borrow::borrow).collect();
        let mut call = RECORD.call();
        call.key(&self.keys().ready(p));
        call.arg(crate::time::now_millis()).arg(super::deliveries::PLAIN_RECORD_FIELDS);
        for r in &outcomes {
            call.key(&self.keys().delivery(p, &r.member.delivery)).key(&self.keys().webhook_queue(p, &r.webhook));
            let due = match r.outcome {
                Outcome::Retry { due_ms } => due_ms,
                _ => 0,
            };
            call.arg(r.member.text())
                .arg(&r.webhook)
                .arg(r.outcome.as_str())
                .arg(r.attempt)
                .arg(r.attempt_json.as_deref().unwrap_or(""))
                .arg(r.signature.as_deref().unwrap_or(&[]))
                .arg(due)
                .arg(r.fields.len());
            for (name, value) in &r.fields {
                call.arg(*name).arg(value);
            }
        }
        let statuses: Vec<String> = call.run(&mut self.conn()).await?;
        if statuses.len() != outcomes.len() {
            return Err(StoreError::Corrupt {
                key: self.keys().ready(p),
                reason: "record: one reply per outcome expected".into(),
            });
        }
        Ok(statuses
            .into_iter()
            .zip(outcomes)
            .map(|(status, r)| {
                if let Some(reason) = status.strip_prefix("error:") {
                    return Err(StoreError::Corrupt {
                        key: self.keys().delivery(p, &r.member.delivery),
                        reason: reason.to_owned(),
                    });
                }
                if status == "missing" {
                    return Ok(Recorded::Missing);
                }
                Status::parse(&status).map(Recorded::Status).ok_or_else(|| StoreError::Corrupt {
                    key: self.keys().delivery(p, &r.member.delivery),
                    reason: format!("record: unknown status `{status}`"),
                })
            })
            .collect())
    }

    /// Extends the leases of deliveries a live worker holds until `until_ms` (`lua/renew.lua`;
    /// a delivery whose retry was just recorded keeps its retry time).
    pub async fn renew(&self, p: Partition, held: &[(String, Member)], until_ms: u64) -> Result<()> {
        for chunk in held.chunks(500) {
            let mut call = RENEW.call();
            call.arg(until_ms);
            for (webhook, member) in chunk {
                call.key(&self.keys().webhook_queue(p, webhook)).key(&self.keys().delivery(p, &member.delivery));
                call.arg(member.text());
            }
            let _: i64 = call.run(&mut self.conn()).await?;
        }
        Ok(())
    }

    /// Gives claimed deliveries back to their queues, due at `due_ms` (a worker stopping
    /// before it started them).
    pub async fn give_back(&self, p: Partition, held: &[(String, Member)], due_ms: u64) -> Result<()> {
        let mut pipe = redis::pipe();
        for (webhook, member) in held {
            pipe.cmd("ZADD")
                .arg(self.keys().webhook_queue(p, webhook))
                .arg("XX")
                .arg(due_ms)
                .arg(member.text())
                .ignore();
            pipe.cmd("ZADD").arg(self.keys().ready(p)).arg("LT").arg(due_ms).arg(webhook).ignore();
        }
        pipe.query_async::<()>(&mut self.conn()).await?;
        Ok(())
    }

    /// Fails a delivery whose record cannot be read, with `reason`, and takes it out of its
    /// webhook's queue for good (`lua/dead_letter.lua`).
    pub async fn dead_letter(&self, p: Partition, webhook: &str, member: &Member, reason: &str) -> Result<()> {
        let _: i64 = DEAD_LETTER
            .call()
            .key(&self.keys().delivery(p, &member.delivery))
            .key(&self.keys().webhook_queue(p, webhook))
            .arg(member.text())
            .arg(crate::time::now_millis())
            .arg(reason)
            .arg(&member.org)
            .arg(webhook)
            .run(&mut self.conn())
            .await?;
        Ok(())
    }

    /// Queues one more attempt of each delivery (only `failed` ones when `only_failed`),
    /// all of one organisation whose webhooks the caller found active; one reply each.
    pub async fn retry_deliveries(
        &self,
        org_id: &str,
        deliveries: &[String],
        only_failed: bool,
        retention: Duration,
    ) -> Result<Vec<std::result::Result<(), RetryRefused>>> {
        let mut out: Vec<std::result::Result<(), RetryRefused>> = vec![Err(RetryRefused::NotFound); deliveries.len()];
        let mut by_partition: std::collections::BTreeMap<Partition, Vec<(usize, String, Member)>> = Default::default();
        for (i, id) in deliveries.iter().enumerate() {
            let Some(p) = self.keys().partition_of_delivery(id) else { continue };
            let (org, webhook, event): (Option<String>, Option<String>, Option<String>) = redis::cmd("HMGET")
                .arg(self.keys().delivery(p, id))
                .arg("o")
                .arg("w")
                .arg("e")
                .query_async(&mut self.conn())
                .await?;
            if org.as_deref() != Some(org_id) {
                continue;
            }
            let (Some(webhook), Some(event)) = (webhook, event) else { continue };
            let member = Member { delivery: id.clone(), org: org_id.to_owned(), event };
            by_partition.entry(p).or_default().push((i, webhook, member));
        }
        for (p, items) in by_partition {
            for chunk in items.chunks(200) {
                let mut call = RETRY.call();
                call.key(&self.keys().ready(p));
                call.arg(crate::time::now_millis()).arg(retention.as_millis() as u64).arg(if only_failed {
                    "failed"
                } else {
                    "any"
                });
                for (_, webhook, member) in chunk {
                    call.key(&self.keys().delivery(p, &member.delivery))
                        .key(&self.keys().webhook_queue(p, webhook))
                        .key(&self.keys().event(p, &member.org, &member.event));
                    call.arg(member.text()).arg(webhook);
                }
                let replies: Vec<String> = call.run(&mut self.conn()).await?;
                for ((i, _, _), reply) in chunk.iter().zip(replies) {
                    out[*i] = match reply.as_str() {
                        "queued" => Ok(()),
                        "filtered" => Err(RetryRefused::Filtered),
                        "cancelled" => Err(RetryRefused::WebhookGone),
                        "skipped" => Err(RetryRefused::Skipped),
                        _ => Err(RetryRefused::NotFound),
                    };
                }
                self.acknowledged(&self.keys().ready(p)).await?;
            }
        }
        Ok(out)
    }

    /// Ends every queued delivery of a webhook, in every partition, with `status` (`failed`
    /// when it was deactivated, `cancelled` when it was deleted); how many.
    pub async fn end_pending(&self, webhook: &str, status: Status) -> Result<usize> {
        let mut ended = 0;
        for p in self.keys().partitions() {
            let queue = self.keys().webhook_queue(p, webhook);
            let new = self.keys().webhook_new(p, webhook);
            loop {
                let moved: i64 = DRAIN_NEW
                    .call()
                    .key(&new)
                    .key(&queue)
                    .arg(crate::time::now_millis())
                    .arg(500)
                    .run(&mut self.conn())
                    .await?;
                if moved == 0 {
                    break;
                }
            }
            loop {
                let members: Vec<String> =
                    redis::cmd("ZRANGE").arg(&queue).arg(0).arg(499).query_async(&mut self.conn()).await?;
                let members: Vec<Member> = members.iter().filter_map(|m| Member::parse(m)).collect();
                let mut call = END_PENDING.call();
                call.key(&self.keys().ready(p)).key(&queue);
                call.arg(crate::time::now_millis()).arg(status.as_str()).arg(webhook);
                for m in &members {
                    call.key(&self.keys().delivery(p, &m.delivery));
                    call.arg(m.text());
                }
                let left: i64 = call.run(&mut self.conn()).await?;
                ended += members.len();
                if left == 0 || members.is_empty() {
                    break;
                }
            }
        }
        Ok(ended)
    }

    /// Deliveries queued in every partition: due now (including those being attempted), and
    /// waiting for a retry.
    pub async fn queue_depth(&self) -> Result<(u64, u64)> {
        let now = crate::time::now_millis();
        let (mut due, mut waiting) = (0, 0);
        for p in self.keys().partitions() {
            let webhooks: Vec<String> =
                redis::cmd("ZRANGE").arg(self.keys().ready(p)).arg(0).arg(-1).query_async(&mut self.conn()).await?;
            if webhooks.is_empty() {
                continue;
            }
            let mut pipe = redis::pipe();
            for wh in &webhooks {
                let queue = self.keys().webhook_queue(p, wh);
                pipe.cmd("LLEN").arg(self.keys().webhook_new(p, wh));
                pipe.cmd("ZCOUNT").arg(&queue).arg("-inf").arg(now);
                pipe.cmd("ZCOUNT").arg(&queue).arg(format!("({now}")).arg("+inf");
            }
            let counts: Vec<u64> = self.conn().query_reads(&pipe).await?;
            for triple in counts.chunks(3) {
                due += triple[0] + triple.get(1).copied().unwrap_or(0);
                waiting += triple.get(2).copied().unwrap_or(0);
            }
        }
        Ok((due, waiting))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_name_the_delivery_and_its_event() {
        let m = Member { delivery: "dlv_1".into(), org: "org_1".into(), event: "evt_a b".into() };
        assert_eq!(m.text(), "dlv_1 org_1 evt_a b");
        assert_eq!(Member::parse(&m.text()), Some(m));
        assert_eq!(Member::parse("dlv_1 org_1"), None);
    }
}
