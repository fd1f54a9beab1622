//! Retention: delivery rows carry no TTL of their own (it would cost Redis an expiry
//! entry and a command per delivery); they go with their day. Every partition remembers,
//! per organisation, the last day it trimmed, so a trim that did not run for a while (or a
//! new process) picks up from there and nothing is left behind: each day past the
//! retention period has its organisation index read in chunks, its rows removed
//! (`lua/trim.lua`), and its index lists dropped (with the bases of those, and of the day's
//! event log hours, that moved to history). Events keep their own TTLs.

use std::time::Duration;

use crate::store::core::base::Base;
use crate::store::core::keys::{Partition, day_of};
use crate::store::core::scripts::TRIM;
use crate::store::error::Result;
use crate::store::queue::index::IndexHeads;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::webhooks::WebhookRecords;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Trim {
    base: Base,
}

impl Trim {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Trim {
        Trim { base: base.clone() }
    }
}

/// Rows removed per script call.
const CHUNK: isize = 500;

impl Trim {
    /// Removes the deliveries of each organisation made on days before its retention
    /// (`kept`, of its plan's name — read now, so a changed plan applies at this trim)
    /// reaches back from `now_ms`, with their index lists, in every partition. A row still
    /// pending gets the retention as its TTL instead. How many rows were looked at.
    pub async fn trim_deliveries(&self, now_ms: u64, kept: &(dyn Fn(&str) -> Duration + Sync)) -> Result<usize> {
        let mut seen = 0;
        for org in Orgs::of(&self.base).org_ids().await? {
            let retention = kept(&Orgs::of(&self.base).org_plan_name(&org).await?);
            let cutoff = day_of(now_ms.saturating_sub(retention.as_millis() as u64));
            let webhooks = WebhookRecords::of(&self.base).webhook_ids(&org).await?;
            let first = self.first_untrimmed_day(&org).await?;
            for p in self.base.keys().partitions() {
                let trimmed: Option<u32> = redis::cmd("HGET")
                    .arg(self.base.keys().trimmed(p))
                    .arg(&org)
                    .query_async(&mut self.base.conn())
                    .await?;
                for day in trimmed.map_or(first, |t| t + 1)..cutoff {
                    seen += self.trim_day(p, &org, &webhooks, day, retention).await?;
                }
                if cutoff > 0 && trimmed.is_none_or(|t| t + 1 < cutoff) {
                    let _: () = redis::cmd("HSET")
                        .arg(self.base.keys().trimmed(p))
                        .arg(&org)
                        .arg(cutoff - 1)
                        .query_async(&mut self.base.conn())
                        .await?;
                }
            }
        }
        Ok(seen)
    }

    /// The organisation's first day (it made no deliveries before it was created).
    async fn first_untrimmed_day(&self, org: &str) -> Result<u32> {
        let created: Option<String> = redis::cmd("HGET")
            .arg(self.base.keys().org(org))
            .arg("created_at")
            .query_async(&mut self.base.conn())
            .await?;
        Ok(created.and_then(|c| crate::time::parse_rfc3339(&c)).map_or(0, day_of))
    }

    async fn trim_day(
        &self,
        p: Partition,
        org: &str,
        webhooks: &[String],
        day: u32,
        retention: Duration,
    ) -> Result<usize> {
        let index = self.base.keys().org_deliveries(p, org, day);
        let mut seen = 0;
        loop {
            let ids: Vec<String> =
                redis::cmd("LRANGE").arg(&index).arg(0).arg(CHUNK - 1).query_async(&mut self.base.conn()).await?;
            if ids.is_empty() {
                break;
            }
            let mut call = TRIM.call();
            call.key(&index).arg(retention.as_millis() as u64);
            // (An index entry is the delivery id without `dlv_`, which its key drops too.)
            for entry in &ids {
                call.key(&self.base.keys().delivery(p, entry));
            }
            let left: i64 = call.run(&mut self.base.conn()).await?;
            seen += ids.len();
            if left == 0 {
                break;
            }
        }
        // The day's event log hours too (they expired with the event retention, which is
        // at most this one; their bases are left).
        let hours = day * 24..(day + 1) * 24;
        let lists: Vec<String> = std::iter::once(index)
            .chain(webhooks.iter().map(|wh| self.base.keys().webhook_deliveries(p, wh, day)))
            .chain(hours.map(|hour| self.base.keys().event_log(p, org, hour)))
            .collect();
        let _: i64 = redis::cmd("DEL").arg(&lists).query_async(&mut self.base.conn()).await?;
        // With history in PostgreSQL, what the lists moved there goes with their day's
        // partition; their bases go now.
        IndexHeads::of(&self.base).drop_index_bases(p, &lists).await?;
        Ok(seen)
    }

    /// Forgets the delivery index of a deleted webhook, `retention` back (listings fall back
    /// to the organisation's index for it).
    pub async fn drop_webhook_index(&self, webhook: &str, retention: Duration) -> Result<()> {
        let now = crate::time::now_millis();
        let days: Vec<u32> =
            (day_of(now.saturating_sub(retention.as_millis() as u64)).saturating_sub(1)..=day_of(now) + 1).collect();
        let drops = self.base.keys().partitions().map(|p| {
            let keys: Vec<String> = days.iter().map(|d| self.base.keys().webhook_deliveries(p, webhook, *d)).collect();
            async move {
                redis::cmd("DEL").arg(&keys).query_async::<i64>(&mut self.base.conn()).await?;
                IndexHeads::of(&self.base).drop_index_bases(p, &keys).await
            }
        });
        futures_util::future::try_join_all(drops).await?;
        Ok(())
    }
}
