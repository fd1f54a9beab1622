//! One claim loop per partition: ask for the webhooks the last claim named (hints), each
//! within its lane's room, start what can start, keep the rest waiting in the lanes. With
//! nothing to claim it sleeps until the partition's next due time, a publish by this
//! process, room in a lane that partition has work for, or a poll interval that grows
//! while idle (so other processes' work is found too).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::lanes::Waiting;
use super::{Engine, Held};
use crate::store::Partition;
use crate::store::queue::Ask;

/// Most deliveries one claim takes.
const CLAIM_MAX: usize = 256;
/// Webhooks a claim reply names to ask for next (beyond those at their cap here).
const HINTS: usize = 32;
/// While every webhook known to have work in the partition is at its cap, how often a claim
/// still looks for other webhooks' work.
const LOOK_AROUND: Duration = Duration::from_millis(10);
/// Poll interval of an idle partition: from the first to the last, doubling.
const IDLE_MIN: Duration = Duration::from_millis(2);
const IDLE_MAX: Duration = Duration::from_millis(200);

impl Engine {
    pub(super) async fn claim_loop(self: Arc<Self>, p: Partition, mut stopped: watch::Receiver<bool>) {
        let mut hints: Vec<String> = Vec::new();
        let mut idle = IDLE_MIN;
        let mut last_look = Instant::now();
        let lease = self.app.config.takeover_after.as_millis() as u64;
        while !*stopped.borrow() {
            // Registered before looking, so a delivery finishing in between is not missed.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            // A share of the permits per claim, so that every partition gets some.
            let share = (2 * self.app.config.worker_concurrency / self.room.len().max(1)).max(16);
            let budget = self.permits.available_permits().min(CLAIM_MAX).min(share);
            if budget == 0 {
                // Back-pressure: wait for a delivery to finish before claiming more.
                tokio::select! {
                    _ = freed => {}
                    _ = stopped.changed() => {}
                }
                continue;
            }
            let Ok(mut permits) = self.permits.clone().try_acquire_many_owned(budget as u32) else {
                // Another partition's claim took them first.
                tokio::task::yield_now().await;
                continue;
            };
            let mut asks = Vec::new();
            let mut reserved: HashMap<String, usize> = HashMap::new();
            let mut saturated = 0;
            for webhook in &hints {
                match self.lanes.reserve(webhook) {
                    0 => saturated += 1,
                    room => {
                        asks.push(Ask { webhook: webhook.clone(), limit: room });
                        reserved.insert(webhook.clone(), room);
                    }
                }
            }
            if asks.is_empty() && !hints.is_empty() && last_look.elapsed() < LOOK_AROUND {
                // Every webhook known to have work here is at its cap: a claim would take
                // nothing. Wait for room, or until it is time to look for other webhooks.
                drop(permits);
                tokio::select! {
                    _ = tokio::time::sleep(LOOK_AROUND.saturating_sub(last_look.elapsed())) => {}
                    _ = self.room[usize::from(p.0)].notified() => {}
                    _ = stopped.changed() => {}
                }
                continue;
            }
            if asks.is_empty() {
                last_look = Instant::now();
            }
            let now = crate::time::now_millis();
            let claimed = match self.app.store.claim(p, &asks, budget, HINTS + saturated, now, now + lease).await {
                Ok(claimed) => claimed,
                Err(e) => {
                    drop(permits);
                    self.freed.notify_waiters();
                    for (webhook, room) in reserved {
                        self.lanes.claimed(&webhook, room, Vec::new());
                    }
                    tracing::warn!(error = %e, partition = p.0, "cannot claim deliveries; retrying");
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        _ = stopped.changed() => {}
                    }
                    continue;
                }
            };
            let mut by_webhook: HashMap<String, Vec<Waiting>> = HashMap::new();
            let mut count = 0;
            {
                let mut held = self.held();
                let at = std::time::Instant::now();
                for (webhook, member) in claimed.deliveries {
                    // Still being attempted (or recorded) here: its lease ran out while Redis
                    // could not take the renewal, and this claim has just renewed it. A
                    // second attempt would send it twice.
                    if held.contains_key(&member.delivery) {
                        continue;
                    }
                    held.insert(
                        member.delivery.clone(),
                        Held { partition: p, webhook: webhook.clone(), member: member.clone(), claimed: at },
                    );
                    by_webhook.entry(webhook).or_default().push(Waiting { partition: p, member });
                    count += 1;
                }
            }
            // One permit per claimed delivery, given back when it is done with.
            if let Some(taken) = permits.split(count) {
                taken.forget();
            }
            if permits.num_permits() > 0 {
                // The rest goes back: other partitions' claimers may be waiting for it.
                drop(permits);
                self.freed.notify_waiters();
            }
            for (webhook, room) in reserved {
                let list = by_webhook.remove(&webhook).unwrap_or_default();
                for start in self.lanes.claimed(&webhook, room, list) {
                    self.begin(webhook.clone(), start);
                }
            }
            // The lanes learn which partitions have work for them (for refills).
            for webhook in &hints {
                if !claimed.hints.contains(webhook) {
                    self.lanes.hinted(webhook, p, false);
                }
            }
            for webhook in &claimed.hints {
                self.lanes.hinted(webhook, p, true);
            }
            let asked: Vec<String> = std::mem::replace(&mut hints, claimed.hints);
            if count > 0 {
                idle = IDLE_MIN;
                continue;
            }
            // Nothing claimed: ask at once if the reply named webhooks not asked for yet.
            if hints.iter().any(|h| !asked.contains(h)) {
                continue;
            }
            let wait = match claimed.next_due {
                Some(due) if due > now => Duration::from_millis(due - now).min(idle),
                _ => idle,
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.app.arrival(p) => {}
                _ = self.room[usize::from(p.0)].notified() => {}
                _ = stopped.changed() => {}
            }
            idle = (idle * 2).min(IDLE_MAX);
        }
    }
}
