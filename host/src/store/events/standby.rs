//! Publishing through a failover (contract §8 "Availability"). With
//! `WEIR_REDIS_WAIT_REPLICAS` set, a publish is acknowledged once that many replicas of its
//! partition's master have it. When a master fails and its replica takes over with no
//! replica of its own, its partitions cannot acknowledge anything until an operator (or
//! replica migration) gives it one — so an event whose own partition cannot take it goes to
//! one that can (its *standby*), where it is just as durable, delivered and found by id
//! (events are looked up in every partition). Events an ordered webhook receives wait for
//! their own partition: their order lives there.
//!
//! An event's id is its idempotency key, kept by the partition that has it. So that an
//! event accepted on a standby (its `202` lost) and sent again once its own partition is back
//! is not stored twice, the standby marks that it took events of that partition
//! (`standby-for`, for as long as events stay in Redis) before it takes one; every serving
//! process reads those marks with each look, and an event whose id the publisher chose is
//! looked for in its own partition and in every standby marked for it before it is stored.
//!
//! A partition is *shunned* while its master has fewer replicas than awaited: a serving
//! process looks at every partition's master every [`LOOK_EVERY`] (`CLUSTER SHARDS`, so a
//! failover is noticed before a publish has to fail on it), and a write that could not be
//! acknowledged, or was refused by a master that is down or being replaced, shuns its
//! partition for `shunned::SHUNNED_FOR` at once. The look extends a shun while the master lacks
//! replicas and ends it once its time is up and they are back; it never cuts one short.

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::keys::{Partition, slot};
use crate::store::core::shards;
use crate::store::error::Result;
use crate::store::events::exports::ExportRecords;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Standbys {
    base: Base,
}

impl Standbys {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Standbys {
        Standbys { base: base.clone() }
    }
}

/// How long one look at the cluster may take.
const LOOK: Duration = Duration::from_millis(100);
/// How often a serving process looks at the replicas of every partition's master.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// Where an event goes ([`Store::place_event`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Into this partition (its own, or a standby marked for it).
    Into(Partition),
    /// Nowhere: an earlier try of the same id left it in a partition already.
    Duplicate,
}

/// An event about to be placed: its own partition, whether it must stay there (an ordered
/// webhook receives it), and its organisation and id when the publisher chose the id (it
/// may have been accepted before).
#[derive(Debug, Clone, Copy)]
pub struct ToPlace<'a> {
    pub home: Partition,
    pub must_stay: bool,
    pub chosen_id: Option<(&'a str, &'a str)>,
    /// How long a standby's events may stay in Redis (the delivery retention).
    pub kept: Duration,
}

impl Standbys {
    /// The standby protocol in one call: the partition an event goes to — its own, or while
    /// that one cannot acknowledge writes a standby, marked before it takes its first event
    /// — unless an earlier try of the publisher's id already left it somewhere.
    pub async fn place_event(&self, event: ToPlace<'_>) -> Result<Placement> {
        let p = self.partition_for(event.home, event.must_stay);
        if let Some((org_id, event_id)) = event.chosen_id {
            let elsewhere = self.tried_elsewhere(event.home, p);
            if !elsewhere.is_empty() && self.has_event_in(&elsewhere, org_id, event_id).await? {
                return Ok(Placement::Duplicate);
            }
        }
        if p != event.home {
            self.mark_standby(event.home, p, event.kept).await?;
        }
        Ok(Placement::Into(p))
    }

    /// After a record's deletion was published in `p` (its own partition being `home`),
    /// forgets its older snapshot where a failover may have left one: at home, or on a
    /// standby marked for it (none before a failover).
    pub async fn forget_older_snapshots(
        &self,
        (home, p): (Partition, Partition),
        org_id: &str,
        subject: &str,
        deleted_ms: u64,
    ) -> Result<()> {
        let elsewhere = self.tried_elsewhere(home, p);
        if elsewhere.is_empty() {
            return Ok(());
        }
        ExportRecords::of(&self.base).forget_snapshot_in(&elsewhere, org_id, subject, deleted_ms).await.map(drop)
    }

    /// Looks at the replicas of every partition's master every [`LOOK_EVERY`], for as long
    /// as this store (or a clone) lives; nothing when no replica is awaited.
    pub fn watch_replicas(&self) {
        if self.base.wait_replicas == 0 {
            return;
        }
        let shunned = Arc::downgrade(&self.base.shunned);
        let (conn, keys, wanted) = (self.base.conn(), self.base.keys().clone(), self.base.wait_replicas);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(LOOK_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let Some(shunned) = shunned.upgrade() else { return };
                if let Ok(Ok(marks)) = tokio::time::timeout(LOOK, read_marks(&conn, &keys)).await {
                    for (home, standby, until_ms) in marks {
                        shunned.note_standby(home, standby, until_ms);
                    }
                }
                // One look at the whole cluster, bounded; none: the shuns stay as they are.
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
        if self.base.shunned.shun(p, crate::time::now_millis()) {
            tracing::warn!(
                partition = p.0,
                "a partition could not acknowledge a write: its events go to another partition for a while (ordered webhooks' wait)"
            );
        }
    }

    /// The partition an event whose own is `home` goes to: `home` when it is not shunned
    /// (or nothing is awaited, or `must_stay`), else the first after it that is not (`home`
    /// if all are).
    fn partition_for(&self, home: Partition, must_stay: bool) -> Partition {
        let now = crate::time::now_millis();
        if self.base.wait_replicas == 0 || must_stay || !self.base.shunned.shunned(home, now) {
            return home;
        }
        let n = self.base.keys().partition_count();
        (1..n).map(|i| Partition((home.0 + i) % n)).find(|p| !self.base.shunned.shunned(*p, now)).unwrap_or(home)
    }

    /// Where an earlier try of an event whose own partition is `home`, going now to `p`,
    /// may have left it: `home`, and the standbys marked for it (none of them `p`).
    fn tried_elsewhere(&self, home: Partition, p: Partition) -> Vec<Partition> {
        // Every publish with an id of the publisher's asks: before any failover, the answer
        // (nothing, going home) allocates nothing.
        let mut elsewhere = self.base.shunned.standbys_of(home, crate::time::now_millis());
        elsewhere.retain(|q| *q != p);
        if home != p {
            elsewhere.push(home);
        }
        elsewhere
    }

    /// Marks, before it takes one, that `standby` has events of `home` that may stay in
    /// Redis for `kept` (a mark known to this process already is not written again).
    async fn mark_standby(&self, home: Partition, standby: Partition, kept: Duration) -> Result<()> {
        let until_ms = crate::time::now_millis() + kept.as_millis() as u64;
        if self.base.shunned.standby_known(home, standby, until_ms) {
            return Ok(());
        }
        let () = redis::cmd("HSET")
            .arg(self.base.keys().standby_for(standby))
            .arg(home.0)
            .arg(until_ms)
            .query_async(&mut self.base.conn())
            .await?;
        self.base.shunned.note_standby(home, standby, until_ms);
        Ok(())
    }

    /// Whether the organisation's event `event_id` is in any of the partitions `ps`.
    async fn has_event_in(&self, ps: &[Partition], org_id: &str, event_id: &str) -> Result<bool> {
        let looks = ps.iter().map(|p| async move {
            let n: u64 = redis::cmd("EXISTS")
                .arg(self.base.keys().event(*p, org_id, event_id))
                .query_async(&mut self.base.conn())
                .await?;
            Ok::<_, crate::store::error::StoreError>(n > 0)
        });
        Ok(futures_util::future::try_join_all(looks).await?.into_iter().any(|found| found))
    }
}

/// Every standby's marks: (home, standby, until when (ms)).
async fn read_marks(
    conn: &crate::store::core::conn::Conn,
    keys: &crate::store::core::keys::Keys,
) -> Result<Vec<(Partition, Partition, u64)>> {
    let reads = keys.partitions().map(|standby| async move {
        let marks: std::collections::HashMap<u16, u64> = conn.clone().hgetall(keys.standby_for(standby)).await?;
        Ok::<_, crate::store::error::StoreError>(
            marks.into_iter().map(move |(home, until)| (Partition(home), standby, until)),
        )
    });
    Ok(futures_util::future::try_join_all(reads).await?.into_iter().flatten().collect())
}
