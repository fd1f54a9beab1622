//! The delivery queue: each partition has, per webhook, a list of its new deliveries and a
//! sorted set of the others, scored by when they are due — retries at their time, those
//! being attempted at the end of their lease — and `ready`, the webhooks that have some,
//! scored by when the next one is due.
//!
//! - **Claim** (`lua/claim.lua`): a worker takes due deliveries of the webhooks it has room
//!   for (no more than its in-flight cap for each), leasing them; the reply names the
//!   webhooks to ask for next. Then `Store::load` (`store::queue::work`) reads what the attempts
//!   need and counts each attempt as it starts.
//! - **Record** (`lua/record.lua`, `store::queue::work`): an outcome ends the delivery (its member
//!   leaves the queue) or schedules its retry (its score becomes the retry's time).
//! - Manual retries and a stopped webhook's pending deliveries: `store::queue::requeue`.
//! - A worker that dies leaves its leases to run out: the members become due again and
//!   any worker claims them ([`Store::renew`] keeps live workers' leases).
//!
//! A queue member is `dlv org evt`: everything needed to find the delivery and its event.

use redis::Value;

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::core::reply::{Named, text};
use crate::store::core::scripts::{CLAIM, RENEW};
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Claims {
    base: Base,
}

impl Claims {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Claims {
        Claims { base: base.clone() }
    }
}

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

/// What a worker claims: due deliveries of the webhooks in `asks` (within each one's limit
/// and `budget` in all), and up to `hints_wanted` webhooks with due deliveries to ask for
/// next — other than `excluded` (those it has no room for now).
#[derive(Debug, Clone, Copy)]
pub struct ClaimRequest<'a> {
    pub asks: &'a [Ask],
    pub excluded: &'a [String],
    pub budget: usize,
    pub hints_wanted: usize,
}

/// What a claim took, and where to look next.
#[derive(Debug, Default)]
pub struct Claimed {
    /// Claimed deliveries, with their webhooks.
    pub deliveries: Vec<(String, Member)>,
    /// Webhooks with deliveries due now (the earliest due first).
    pub hints: Vec<String>,
    /// When the earliest webhook of the partition has something due (ms; now when one has
    /// already), if any has work queued.
    pub next_due: Option<u64>,
}

impl Claims {
    /// Claims due deliveries as `request` asks, leasing them until `lease_until_ms`.
    pub async fn claim(
        &self,
        p: Partition,
        request: &ClaimRequest<'_>,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> Result<Claimed> {
        let ClaimRequest { asks, excluded, budget, hints_wanted } = *request;
        let mut call = CLAIM.call();
        call.key(&self.base.keys().ready(p));
        call.arg(now_ms).arg(lease_until_ms).arg(budget).arg(hints_wanted).arg(excluded.len());
        for webhook in excluded {
            call.arg(webhook);
        }
        for ask in asks {
            call.key(&self.base.keys().webhook_queue(p, &ask.webhook))
                .key(&self.base.keys().webhook_new(p, &ask.webhook));
            call.arg(&ask.webhook).arg(ask.limit);
        }
        let value: Value = call.run(&mut self.base.conn()).await?;
        let mut reply = Named::from_value(value, "claim.lua")?;
        let mut flat = reply.list("claimed").into_iter().filter_map(text);
        let mut deliveries = Vec::new();
        while let (Some(webhook), Some(member)) = (flat.next(), flat.next()) {
            if let Some(member) = Member::parse(&member) {
                deliveries.push((webhook, member));
            }
        }
        Ok(Claimed {
            deliveries,
            hints: reply.list("hints").into_iter().filter_map(text).collect(),
            next_due: reply.int("next_due").and_then(|n| u64::try_from(n).ok()),
        })
    }

    /// Extends the leases of deliveries a live worker holds until `until_ms` (`lua/renew.lua`;
    /// a delivery whose retry was just recorded keeps its retry time).
    pub async fn renew(&self, p: Partition, held: &[(String, Member)], until_ms: u64) -> Result<()> {
        for chunk in held.chunks(500) {
            let mut call = RENEW.call();
            call.arg(until_ms);
            for (webhook, member) in chunk {
                call.key(&self.base.keys().webhook_queue(p, webhook))
                    .key(&self.base.keys().delivery(p, &member.delivery));
                call.arg(member.text());
            }
            let _: i64 = call.run(&mut self.base.conn()).await?;
        }
        Ok(())
    }

    /// Gives claimed deliveries back to their queues, due at `due_ms` (a worker stopping
    /// before it started them).
    pub async fn give_back(&self, p: Partition, held: &[(String, Member)], due_ms: u64) -> Result<()> {
        let mut pipe = redis::pipe();
        for (webhook, member) in held {
            pipe.cmd("ZADD")
                .arg(self.base.keys().webhook_queue(p, webhook))
                .arg("XX")
                .arg(due_ms)
                .arg(member.text())
                .ignore();
            pipe.cmd("ZADD").arg(self.base.keys().ready(p)).arg("LT").arg(due_ms).arg(webhook).ignore();
        }
        pipe.query_async::<()>(&mut self.base.conn()).await?;
        Ok(())
    }

    /// Deliveries queued in every partition: due now (including those being attempted), and
    /// waiting for a retry.
    pub async fn queue_depth(&self) -> Result<(u64, u64)> {
        let now = crate::time::now_millis();
        let (mut due, mut waiting) = (0, 0);
        for p in self.base.keys().partitions() {
            let webhooks: Vec<String> = redis::cmd("ZRANGE")
                .arg(self.base.keys().ready(p))
                .arg(0)
                .arg(-1)
                .query_async(&mut self.base.conn())
                .await?;
            if webhooks.is_empty() {
                continue;
            }
            let mut pipe = redis::pipe();
            for wh in &webhooks {
                let queue = self.base.keys().webhook_queue(p, wh);
                pipe.cmd("LLEN").arg(self.base.keys().webhook_new(p, wh));
                pipe.cmd("ZCOUNT").arg(&queue).arg("-inf").arg(now);
                pipe.cmd("ZCOUNT").arg(&queue).arg(format!("({now}")).arg("+inf");
            }
            let counts: Vec<u64> = self.base.conn().query_reads(&pipe).await?;
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
