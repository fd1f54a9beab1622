//! What an attempt reads and writes of its delivery: [`Store::load`] reads what it needs
//! (counting the attempt as it starts, `lua/load.lua`), [`Store::record`] writes its outcome
//! (`lua/record.lua`: the delivery ends, or waits for its retry), and [`Store::dead_letter`]
//! takes a delivery whose row cannot be read out of the queue. Loads and recorded outcomes come in
//! batches of a partition's deliveries (group commit, `store::core::batch`).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;

use redis::Value;

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::core::reply::{Named, name_of, text, unexpected};
use crate::store::core::scripts::{DEAD_LETTER, LOAD, PUT_BACK, RECORD};
use crate::store::error::Result;
use crate::store::error::StoreError;
use crate::store::events::stored::StoredEvent;
use crate::store::queue::claim::Member;
use crate::store::queue::row::{PLAIN_ROW_FIELDS, RowChanges, field};
use crate::store::queue::status::Status;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Work {
    base: Base,
}

impl Work {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Work {
        Work { base: base.clone() }
    }
}

/// What an attempt needs of a claimed delivery.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// This attempt's number (counted as it starts).
    pub attempt: u32,
    /// The last place in the retry schedule allowed, when a manual retry set one.
    pub last_place: Option<u32>,
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
    /// It keeps its subject's order (its row has a subject): its end releases the next.
    pub ordered: bool,
}

impl Loaded {
    /// A pending delivery whose row holds nothing beyond its attempt count.
    fn plain(attempt: u32, event: Option<Arc<StoredEvent>>) -> Loaded {
        Loaded {
            attempt,
            last_place: None,
            extra: 0,
            kept_due: None,
            status: None,
            body: None,
            headers: None,
            plugins: None,
            event,
            ordered: false,
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

/// What an attempt reports of a claimed delivery, to record: its outcome and what to write
/// with it.
#[derive(Debug, Clone)]
pub struct Report {
    pub webhook: String,
    pub member: Member,
    pub outcome: Outcome,
    /// The attempt's number.
    pub attempt: u32,
    /// The attempt (`store::queue::attempts::attempt_json`), when a request was made or tried.
    pub attempt_json: Option<String>,
    /// The signatures of that request (`crate::sign::Signatures::encode`).
    pub signature: Option<Vec<u8>>,
    /// What else of its row changes.
    pub changes: RowChanges,
    /// The attempt failed before the endpoint — at the egress proxy, or inside Weir (an
    /// internal error): it never counts toward the webhook's auto-deactivation.
    pub not_the_endpoint: bool,
    /// It keeps its subject's order (its row says so, whatever its webhook's setting is
    /// now): recording its end may queue its subject's next.
    pub ordered: bool,
}

/// The status a delivery has once its outcome is recorded; `Missing` when its row expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Status(Status),
    Missing,
}

impl Loaded {
    /// Reads `load.lua`'s reply for one delivery (`key`: its row, for errors).
    fn decode(value: &Value, event: Option<Arc<StoredEvent>>, key: &str) -> Result<Option<Loaded>> {
        let corrupt = |reason: String| StoreError::Corrupt { key: key.to_owned(), reason };
        let items = match value {
            // A row holding nothing but its attempt count.
            Value::Int(n) => {
                let attempt = u32::try_from(*n).map_err(|_| corrupt(format!("attempt count {n}")))?;
                return Ok(Some(Loaded::plain(attempt, event)));
            }
            Value::Array(items) => items.clone(),
            Value::Nil | Value::Boolean(false) => return Ok(None),
            other => return Err(unexpected("load.lua", format!("{other:?} for a delivery"))),
        };
        let named = Named::from_items(items, "load.lua")?;
        if let Some(why) = named.error() {
            return Err(corrupt(why));
        }
        let number = |name: &str| named.text(name).and_then(|v| v.parse::<u64>().ok());
        let small = |name: &str| number(name).and_then(|n| u32::try_from(n).ok());
        let attempt = small(field::STARTED).ok_or_else(|| corrupt("no attempt count".into()))?;
        let status = match named.text(field::STATUS) {
            None => None,
            Some(s) => Some(Status::parse(&s).ok_or_else(|| corrupt(format!("unknown status `{s}`")))?),
        };
        Ok(Some(Loaded {
            attempt,
            last_place: small(field::LAST_PLACE),
            status,
            body: named.text(field::BODY),
            headers: named.text(field::HEADERS),
            plugins: named.text(field::PLUGINS),
            extra: small(field::EXTRA).unwrap_or(0),
            kept_due: number(field::KEPT_DUE),
            event,
            ordered: named.text(field::SUBJECT).is_some(),
        }))
    }
}

impl Recorded {
    /// Reads `record.lua`'s reply for one outcome (`key`: its row, for errors).
    fn decode(reply: Value, key: &str) -> Result<Recorded> {
        if let Value::Array(items) = reply {
            let named = Named::from_items(items, "record.lua")?;
            let reason = named.error().ok_or_else(|| unexpected("record.lua", "a list that is not an error"))?;
            return Err(StoreError::Corrupt { key: key.to_owned(), reason });
        }
        let name = text(reply).ok_or_else(|| unexpected("record.lua", "a reply that is not a status"))?;
        name_of("record.lua", &name, |n| match n {
            "missing" => Some(Recorded::Missing),
            status => Status::parse(status).map(Recorded::Status),
        })
    }
}

impl Work {
    /// Reads what the attempts of claimed deliveries need, counting each attempt as it
    /// starts (`lua/load.lua`); one reply per delivery, in order (`None` when its row is
    /// gone; a row that cannot be read fails only its own). Events this process has just
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
            match accepted.and_then(|ms| self.base.recent.get(org, event, ms)) {
                Some(kept) => {
                    shared.insert((org, event), Some(kept));
                }
                None => wanted.push((org, event)),
            }
        }
        let mut call = LOAD.call();
        for m in &members {
            call.key(&self.base.keys().delivery(p, &m.delivery));
        }
        for (org, event) in &wanted {
            call.key(&self.base.keys().event(p, org, event));
        }
        call.arg(members.len()).arg(PLAIN_ROW_FIELDS);
        let replies: Vec<Value> = call.run(&mut self.base.conn()).await?;
        if replies.len() != members.len() + wanted.len() {
            return Err(unexpected("load.lua", "one reply per delivery and event expected"));
        }
        let (rows, stored) = replies.split_at(members.len());
        for ((org, event), value) in wanted.into_iter().zip(stored) {
            let decoded = match value {
                Value::BulkString(bytes) => StoredEvent::decode(bytes).map(Arc::new),
                _ => None,
            };
            shared.insert((org, event), decoded);
        }
        Ok(members
            .iter()
            .zip(rows)
            .map(|(m, value)| {
                let event = shared.get(&(m.org.as_str(), m.event.as_str())).cloned().flatten();
                Loaded::decode(value, event, &self.base.keys().delivery(p, &m.delivery))
            })
            .collect())
    }

    /// Records outcomes of one partition's deliveries, each atomically and in order: one
    /// reply per outcome (a row that cannot be read fails only its own).
    pub async fn record<R: Borrow<Report>>(&self, p: Partition, outcomes: &[R]) -> Result<Vec<Result<Recorded>>> {
        let outcomes: Vec<&Report> = outcomes.iter().map(Borrow::borrow).collect();
        let mut call = RECORD.call();
        call.key(&self.base.keys().ready(p)).key(&self.base.keys().ended(p));
        let now = crate::time::now_millis();
        call.arg(now).arg(PLAIN_ROW_FIELDS).arg(self.base.history_flag());
        // Each webhook's counts of the day (`store::queue::tally`), once per webhook.
        let mut webhooks: Vec<(&str, &str)> =
            outcomes.iter().map(|r| (r.member.org.as_str(), r.webhook.as_str())).collect();
        webhooks.sort_unstable();
        webhooks.dedup();
        let day = crate::store::core::keys::day_of(now);
        call.arg(webhooks.len()).arg(crate::store::queue::tally::TALLY_TTL_SECS);
        for (org, webhook) in &webhooks {
            call.key(&self.base.keys().webhook_counts(p, org, webhook, day)).arg(*webhook);
        }
        for r in &outcomes {
            call.key(&self.base.keys().delivery(p, &r.member.delivery))
                .key(&self.base.keys().webhook_queue(p, &r.webhook));
            if r.ordered {
                call.keys(self.base.keys().order(p, &r.webhook)).key(&self.base.keys().webhook_new(p, &r.webhook));
            }
            let due = match r.outcome {
                Outcome::Retry { due_ms } => due_ms,
                _ => 0,
            };
            call.arg(if r.ordered { "o" } else { "" })
                .arg(r.member.text())
                .arg(&r.webhook)
                .arg(r.outcome.as_str())
                .arg(r.attempt)
                .arg(r.attempt_json.as_deref().unwrap_or(""))
                .arg(r.signature.as_deref().unwrap_or(&[]))
                .arg(due)
                .arg(r.changes.fields().len());
            for (name, value) in r.changes.fields() {
                call.arg(name).arg(value);
            }
        }
        let replies: Vec<Value> = call.run(&mut self.base.conn()).await?;
        if replies.len() != outcomes.len() {
            return Err(unexpected("record.lua", "one reply per outcome expected"));
        }
        Ok(replies
            .into_iter()
            .zip(outcomes)
            .map(|(reply, r)| Recorded::decode(reply, &self.base.keys().delivery(p, &r.member.delivery)))
            .collect())
    }

    /// Fails a delivery whose row cannot be read, with `reason`, and takes it out of its
    /// webhook's queue for good (`lua/dead_letter.lua`).
    pub async fn dead_letter(&self, p: Partition, webhook: &str, member: &Member, reason: &str) -> Result<()> {
        let _: i64 = DEAD_LETTER
            .call()
            .key(&self.base.keys().delivery(p, &member.delivery))
            .key(&self.base.keys().webhook_queue(p, webhook))
            .keys(self.base.keys().order(p, webhook))
            .key(&self.base.keys().webhook_new(p, webhook))
            .key(&self.base.keys().ready(p))
            .key(&self.base.keys().ended(p))
            .arg(member.text())
            .arg(crate::time::now_millis())
            .arg(reason)
            .arg(&member.org)
            .arg(webhook)
            .arg(self.base.history_flag())
            .run(&mut self.base.conn())
            .await?;
        Ok(())
    }

    /// Puts a loaded delivery that was not attempted back in its webhook's queue, due at
    /// `due_ms`, its attempt uncounted (`lua/put_back.lua`: its webhook is paused).
    pub async fn put_back(&self, p: Partition, webhook: &str, member: &Member, due_ms: u64) -> Result<()> {
        let _: i64 = PUT_BACK
            .call()
            .key(&self.base.keys().ready(p))
            .key(&self.base.keys().webhook_queue(p, webhook))
            .key(&self.base.keys().delivery(p, &member.delivery))
            .arg(member.text())
            .arg(webhook)
            .arg(due_ms)
            .run(&mut self.base.conn())
            .await?;
        Ok(())
    }
}
