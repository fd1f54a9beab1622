//! What a live engine keeps doing besides attempts: renewing the leases of deliveries it
//! holds for long (so no other worker takes them over), forgetting idle lanes and counting
//! the endpoints' states for `/metrics`, giving superseded snapshot events
//! their TTL back, and removing deliveries past the retention period.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Claimer;
use crate::jobs::Stopping;
use crate::plans::Plans;

/// How often held leases are looked at (and snapshots released), at most: a third of the
/// lease when that is shorter.
const TICK: Duration = Duration::from_secs(5);
/// How often deliveries past the retention period are removed.
const TRIM_EVERY: Duration = Duration::from_secs(30 * 60);

/// Runs the upkeep of the claimer's deliveries and of the store until the engine stops and
/// nothing is held; `plans`: how long each organisation's finished deliveries are kept.
pub(in crate::delivery) async fn run(claimer: Arc<Claimer>, plans: Arc<Plans>, mut stopping: Stopping) {
    let this = &*claimer;
    let mut tick = tokio::time::interval(TICK.min(this.lease / 3));
    let mut trimmed: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopping.wait() => {}
        }
        renew_leases(this).await;
        let census = this.lanes.sweep();
        this.metrics.endpoints_probing.set(census.probing as i64);
        this.metrics.endpoints_paused.set(census.paused as i64);
        this.metrics.attempts_slow.set(census.slow as i64);
        if this.stopping() {
            // Keep renewing until the held deliveries are done, then stop.
            if this.holds.held().is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        let kept = |plan: &str| plans.delivery_retention(plan);
        release_snapshots(this, &kept).await;
        if trimmed.is_none_or(|t| t.elapsed() >= TRIM_EVERY) {
            trimmed = Some(Instant::now());
            if let Err(e) = this.doors.trim.trim_deliveries(crate::time::now_millis(), &kept).await {
                tracing::warn!(error = %e, "cannot remove deliveries past the retention period");
            }
        }
    }
}

/// Renews the leases of deliveries held for a third of the lease or more.
async fn renew_leases(claimer: &Claimer) {
    let lease = claimer.lease;
    let until = crate::time::now_millis() + lease.as_millis() as u64;
    for (p, held) in claimer.holds.older_than(lease / 3) {
        if let Err(e) = claimer.doors.claims.renew(p, &held, until).await {
            tracing::warn!(error = %e, "cannot renew held deliveries' leases");
        }
    }
}

async fn release_snapshots(claimer: &Claimer, kept: &(dyn Fn(&str) -> Duration + Sync)) {
    for p in claimer.doors.keys.partitions() {
        if let Err(e) = claimer.doors.events.release_snapshots(p, kept, 500).await {
            tracing::warn!(error = %e, "cannot release superseded snapshots");
            return;
        }
    }
}
