//! What a live engine keeps doing besides attempts: renewing the leases of deliveries it
//! holds for long (so no other worker takes them over), forgetting idle lanes and counting
//! the endpoints' states for `/metrics`, giving superseded snapshot events
//! their TTL back, and removing deliveries past the retention period.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::jobs::Stopping;

use super::super::Engine;
use crate::store::Partition;
use crate::store::queue::claim::Member;

/// How often held leases are looked at (and snapshots released), at most: a third of the
/// lease when that is shorter.
const TICK: Duration = Duration::from_secs(5);
/// How often deliveries past the retention period are removed.
const TRIM_EVERY: Duration = Duration::from_secs(30 * 60);

impl Engine {
    pub(in crate::delivery) async fn upkeep_loop(self: Arc<Self>, mut stopping: Stopping) {
        let mut tick = tokio::time::interval(TICK.min(self.settings.takeover_after / 3));
        let mut trimmed: Option<Instant> = None;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopping.wait() => {}
            }
            self.renew_leases().await;
            let census = self.lanes.sweep();
            self.metrics.endpoints_probing.set(census.probing as i64);
            self.metrics.endpoints_paused.set(census.paused as i64);
            self.metrics.attempts_slow.set(census.slow as i64);
            if self.stopping() {
                // Keep renewing until the held deliveries are done, then stop.
                if self.held().is_empty() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            self.release_snapshots().await;
            if trimmed.is_none_or(|t| t.elapsed() >= TRIM_EVERY) {
                trimmed = Some(Instant::now());
                let cutoff = crate::time::now_millis().saturating_sub(self.settings.retention.as_millis() as u64);
                if let Err(e) = self.store.trim_deliveries(cutoff, self.settings.retention).await {
                    tracing::warn!(error = %e, "cannot remove deliveries past the retention period");
                }
            }
        }
    }

    /// Renews the leases of deliveries held for a third of the lease or more.
    async fn renew_leases(&self) {
        let lease = self.settings.takeover_after;
        let now = Instant::now();
        let mut by_partition: HashMap<Partition, Vec<(String, Member)>> = HashMap::new();
        for held in self.held().values() {
            if now.duration_since(held.claimed) >= lease / 3 {
                by_partition.entry(held.partition).or_default().push((held.webhook.clone(), held.member.clone()));
            }
        }
        let until = crate::time::now_millis() + lease.as_millis() as u64;
        for (p, held) in by_partition {
            if let Err(e) = self.store.renew(p, &held, until).await {
                tracing::warn!(error = %e, "cannot renew held deliveries' leases");
            }
        }
    }

    async fn release_snapshots(&self) {
        let retention = self.settings.retention;
        for p in self.store.keys().partitions() {
            if let Err(e) = self.store.release_snapshots(p, retention, 500).await {
                tracing::warn!(error = %e, "cannot release superseded snapshots");
                return;
            }
        }
    }
}
