//! Publishing through a failover (contract §8 "Availability"). With
//! `WEIR_REDIS_WAIT_REPLICAS` set, a publish is acknowledged once that many replicas of its
//! partition's master have it. When a master fails and its replica takes over with no
//! replica of its own, its partitions cannot acknowledge anything until an operator (or
//! replica migration) gives it one — so an event whose own partition cannot take it goes to
//! one that can (its *standby*), where it is just as durable, delivered and found by id
//! (events are looked up in every partition). Events an ordered webhook receives wait for
//! their own partition: their order lives there.
//!
//! A partition is *shunned* while its master has fewer replicas than awaited: a serving
//! process looks at every partition's master every [`LOOK_EVERY`] (`CLUSTER SHARDS`, so a
//! failover is noticed before a publish has to fail on it), and a write that could not be
//! acknowledged, or was refused by a master that is down or being replaced, shuns its
//! partition for `shunned::SHUNNED_FOR` at once. The look extends a shun while the master lacks
//! replicas and ends it once its time is up and they are back; it never cuts one short.

use std::sync::Arc;
use std::time::Duration;

use crate::store::core::keys::{Partition, slot};
use crate::store::core::shards;
use crate::store::{Result, Store};

/// How long one look at the cluster may take.
const LOOK: Duration = Duration::from_millis(100);
/// How often a serving process looks at the replicas of every partition's master.
const LOOK_EVERY: Duration = Duration::from_millis(250);

impl Store {
    /// Looks at the replicas of every partition's master every [`LOOK_EVERY`], for as long
    /// as this store (or a clone) lives; nothing when no replica is awaited.
    pub fn watch_replicas(&self) {
        if self.wait_replicas == 0 {
            return;
        }
        let shunned = Arc::downgrade(&self.shunned);
        let (conn, keys, wanted) = (self.conn(), self.keys().clone(), self.wait_replicas);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(LOOK_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let Some(shunned) = shunned.upgrade() else { return };
                // One look at the whole cluster, bounded; none: the marks stay as they are.
                let Ok(Ok(shards)) = tokio::time::timeout(LOOK, shards::look(&mut conn.clone())).await else {
                    continue;
                };
                let now = crate::time::now_millis();
                for p in keys.partitions() {
                    let replicas = shards::replicas_of(&shards, slot(&keys.ready(p)));
                    if replicas.is_some_and(|n| n >= wanted) {
                        if shunned.end_if_over(p, now) {
                            tracing::info!(
                                partition = p.0,
                                "a partition's master has its replicas again; its events go there again"
                            );
                        }
                    } else if shunned.shun(p, now) {
                        tracing::warn!(
                            partition = p.0,
                            "a partition's master has fewer replicas than WEIR_REDIS_WAIT_REPLICAS: its events go to another partition (ordered webhooks' wait)"
                        );
                    }
                }
            }
        });
    }

    /// Notes that `p` could not acknowledge a write.
    pub(crate) fn shun(&self, p: Partition) {
        if self.shunned.shun(p, crate::time::now_millis()) {
            tracing::warn!(
                partition = p.0,
                "a partition could not acknowledge a write: its events go to another partition for a while (ordered webhooks' wait)"
            );
        }
    }

    /// The partition an event whose own is `home` goes to: `home` when it is not shunned
    /// (or nothing is awaited, or `must_stay`), else the first after it that is not (`home`
    /// if all are).
    pub(crate) fn partition_for(&self, home: Partition, must_stay: bool) -> Partition {
        let now = crate::time::now_millis();
        if self.wait_replicas == 0 || must_stay || !self.shunned.shunned(home, now) {
            return home;
        }
        let n = self.keys().partition_count();
        (1..n).map(|i| Partition((home.0 + i) % n)).find(|p| !self.shunned.shunned(*p, now)).unwrap_or(home)
    }

    /// Whether the organisation's event `event_id` is in partition `p` (a publish going to a
    /// standby checks the event's own partition: an earlier try may have left it there).
    pub(crate) async fn has_event(&self, p: Partition, org_id: &str, event_id: &str) -> Result<bool> {
        let n: u64 =
            redis::cmd("EXISTS").arg(self.keys().event(p, org_id, event_id)).query_async(&mut self.conn()).await?;
        Ok(n > 0)
    }
}
