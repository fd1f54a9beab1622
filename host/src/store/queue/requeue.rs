//! Changing queued deliveries from outside the workers: one more attempt by hand (one
//! delivery, or every failed one of a webhook: `lua/retry.lua`), and ending a stopped
//! webhook's pending deliveries (`lua/end_pending.lua`).

use std::time::Duration;

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::core::reply::{name_of, unexpected};
use crate::store::core::scripts::{DRAIN_NEW, END_PENDING, RETRY};
use crate::store::error::Result;
use crate::store::queue::claim::Member;
use crate::store::queue::row::field;
use crate::store::queue::status::Status;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Requeue {
    base: Base,
}

impl Requeue {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Requeue {
        Requeue { base: base.clone() }
    }
}

/// What a manual retry of a delivery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retried {
    /// An attempt is queued.
    Queued,
    /// An attempt of it was already queued or in flight: this retry joined it.
    Merged,
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

impl Requeue {
    /// Queues one more attempt of each delivery (only `failed` ones when `only_failed`),
    /// all of one organisation whose webhooks the caller found active; one reply each.
    pub async fn retry_deliveries(
        &self,
        org_id: &str,
        deliveries: &[String],
        only_failed: bool,
        retention: Duration,
    ) -> Result<Vec<std::result::Result<Retried, RetryRefused>>> {
        let mut out: Vec<std::result::Result<Retried, RetryRefused>> =
            vec![Err(RetryRefused::NotFound); deliveries.len()];
        let mut by_partition: std::collections::BTreeMap<Partition, Vec<(usize, String, Member)>> = Default::default();
        for (i, id) in deliveries.iter().enumerate() {
            let Some(p) = self.base.keys().partition_of_delivery(id) else { continue };
            let (org, webhook, event): (Option<String>, Option<String>, Option<String>) = redis::cmd("HMGET")
                .arg(self.base.keys().delivery(p, id))
                .arg(field::ORG)
                .arg(field::WEBHOOK)
                .arg(field::EVENT)
                .query_async(&mut self.base.conn())
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
                call.key(&self.base.keys().ready(p));
                call.arg(crate::time::now_millis()).arg(retention.as_millis() as u64).arg(if only_failed {
                    "failed"
                } else {
                    "any"
                });
                for (_, webhook, member) in chunk {
                    call.key(&self.base.keys().delivery(p, &member.delivery))
                        .key(&self.base.keys().webhook_queue(p, webhook))
                        .key(&self.base.keys().event(p, &member.org, &member.event))
                        .keys(self.base.keys().order(p, webhook));
                    call.arg(member.text()).arg(webhook);
                }
                let replies: Vec<String> = call.run(&mut self.base.conn()).await?;
                if replies.len() != chunk.len() {
                    return Err(unexpected("retry.lua", "one reply per delivery expected"));
                }
                for ((i, _, _), reply) in chunk.iter().zip(replies) {
                    out[*i] = name_of("retry.lua", &reply, |name| match name {
                        "queued" => Some(Ok(Retried::Queued)),
                        "merged" => Some(Ok(Retried::Merged)),
                        "missing" => Some(Err(RetryRefused::NotFound)),
                        "filtered" => Some(Err(RetryRefused::Filtered)),
                        "cancelled" => Some(Err(RetryRefused::WebhookGone)),
                        "skipped" => Some(Err(RetryRefused::Skipped)),
                        _ => None,
                    })?;
                }
                self.base.acknowledged(&self.base.keys().ready(p)).await?;
            }
        }
        Ok(out)
    }

    /// Ends every queued delivery of a webhook, in every partition, with `status` (`failed`
    /// when it was deactivated, `cancelled` when it was deleted); how many.
    pub async fn end_pending(&self, webhook: &str, status: Status) -> Result<usize> {
        let mut ended = 0;
        for p in self.base.keys().partitions() {
            let queue = self.base.keys().webhook_queue(p, webhook);
            let new = self.base.keys().webhook_new(p, webhook);
            loop {
                let moved: i64 = DRAIN_NEW
                    .call()
                    .key(&new)
                    .key(&queue)
                    .keys(self.base.keys().order(p, webhook))
                    .arg(crate::time::now_millis())
                    .arg(500)
                    .run(&mut self.base.conn())
                    .await?;
                if moved == 0 {
                    break;
                }
            }
            loop {
                let members: Vec<String> =
                    redis::cmd("ZRANGE").arg(&queue).arg(0).arg(499).query_async(&mut self.base.conn()).await?;
                let members: Vec<Member> = members.iter().filter_map(|m| Member::parse(m)).collect();
                let mut call = END_PENDING.call();
                call.key(&self.base.keys().ready(p)).key(&queue).key(&self.base.keys().ended(p));
                call.arg(crate::time::now_millis()).arg(status.as_str()).arg(webhook).arg(self.base.history_flag());
                for m in &members {
                    call.key(&self.base.keys().delivery(p, &m.delivery));
                    call.arg(m.text());
                }
                let left: i64 = call.run(&mut self.base.conn()).await?;
                ended += members.len();
                if left == 0 || members.is_empty() {
                    break;
                }
            }
        }
        Ok(ended)
    }
}
