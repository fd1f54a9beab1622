//! One claim loop per partition: ask for the webhooks the last claim named (hints) and those
//! parked here, each within its lane's room — taking a rate-limited webhook's deliveries
//! from its budget first — start what can start, keep the rest waiting in the lanes.
//! Webhooks whose lanes have no room (at their window, probing behind the slow share,
//! paused, over their rate) are *parked*: the claim leaves them out of its hints, so the
//! webhooks that can go are found at once however many cannot. With nothing to claim it
//! sleeps until the partition's next due time, a publish by this process, room in a lane
//! that partition has work for, or a poll interval that grows while idle (so other
//! processes' work is found too).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::lanes::{Room, Waiting};
use super::{Engine, Held};
use crate::store::Partition;
use crate::store::queue::claim::{Ask, ClaimRequest};

/// Most deliveries one claim takes.
const CLAIM_MAX: usize = 256;
/// Webhooks a claim reply names to ask for next.
const HINTS: usize = 32;
/// Most parked webhooks a claim leaves out of its hints by name.
const PARKED_MAX: usize = 512;
/// Most webhooks whose endpoints have not proven themselves (new, probing, slow) one claim
/// asks for, besides the healthy ones (which always come first): a crowd of them cannot
/// make one claim, and the loads behind it, long.
const UNPROVEN_ASKS: usize = 32;
/// While every webhook known to have work in the partition is parked, how often a claim
/// still looks for other webhooks' work: from the first to the last, doubling while it finds
/// none. (Parked lanes are looked at again when they have room, or their wait ends.)
const LOOK_AROUND: Duration = Duration::from_millis(10);
const LOOK_AROUND_MAX: Duration = Duration::from_millis(200);
/// Poll interval of an idle partition: from the first to the last, doubling.
const IDLE_MIN: Duration = Duration::from_millis(2);
const IDLE_MAX: Duration = Duration::from_millis(200);
/// How long a webhook's claims wait when its rate budget was read without an answer.
const RATE_RETRY: Duration = Duration::from_millis(100);

/// A webhook a claim asks for: what its lane reserved, and what the claim may take.
struct Asked {
    webhook: String,
    reserved: usize,
    limit: usize,
    /// Taken from the webhook's rate budget (all of `limit`).
    rate_limit: Option<u32>,
    proven: bool,
}

impl Engine {
    pub(super) async fn claim_loop(self: Arc<Self>, p: Partition, mut stopped: watch::Receiver<bool>) {
        let mut hints: Vec<String> = Vec::new();
        let mut parked: Vec<String> = Vec::new();
        let mut idle = IDLE_MIN;
        let mut last_look = Instant::now();
        let mut look = LOOK_AROUND;
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
            let mut asked = Vec::new();
            let mut unproven = 0;
            let mut still_parked = Vec::new();
            for webhook in hints.iter().chain(parked.iter().filter(|w| !hints.contains(w))) {
                match self.lanes.reserve(webhook) {
                    Room { room: 0, .. } => still_parked.push(webhook.clone()),
                    Room { room, proven: false, .. } if unproven == UNPROVEN_ASKS => {
                        self.lanes.claimed(webhook, room, Vec::new());
                        still_parked.push(webhook.clone());
                    }
                    Room { room, rate_limit, proven } => {
                        unproven += usize::from(!proven);
                        asked.push(Asked { webhook: webhook.clone(), reserved: room, limit: room, rate_limit, proven })
                    }
                }
            }
            // The healthy first: when the claim's budget runs short, they are served.
            asked.sort_by_key(|a| !a.proven);
            parked = still_parked;
            parked.truncate(PARKED_MAX);
            let asked = self.take_from_budgets(asked, &mut parked).await;
            if asked.is_empty() && !parked.is_empty() && last_look.elapsed() < look {
                // Every webhook known to have work here is parked: a claim would take
                // nothing. Wait for room, a parked lane's wait to end, new work published
                // here, or the time to look for other webhooks' work.
                drop(permits);
                let until =
                    self.lanes.next_change(&parked).map_or(look, |t| t.saturating_duration_since(Instant::now()));
                tokio::select! {
                    _ = tokio::time::sleep(look.saturating_sub(last_look.elapsed()).min(until)) => {}
                    _ = self.room[usize::from(p.0)].notified() => {}
                    _ = self.app.arrival(p) => {
                        // New work here: the claim that finds it goes at once.
                        look = Duration::ZERO;
                    }
                    _ = stopped.changed() => {}
                }
                continue;
            }
            if asked.is_empty() {
                last_look = Instant::now();
                look = look.max(LOOK_AROUND);
            }
            let asks: Vec<Ask> = asked.iter().map(|a| Ask { webhook: a.webhook.clone(), limit: a.limit }).collect();
            let now = crate::time::now_millis();
            let request = ClaimRequest { asks: &asks, excluded: &parked, budget, hints_wanted: HINTS };
            let claim = self.store.claim(p, &request, now, now + lease);
            let claimed = match claim.await {
                Ok(claimed) => claimed,
                Err(e) => {
                    drop(permits);
                    self.freed.notify_waiters();
                    for a in &asked {
                        self.lanes.claimed(&a.webhook, a.reserved, Vec::new());
                    }
                    self.give_back_budgets(&asked, &HashMap::new());
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
                        Held {
                            partition: p,
                            webhook: webhook.clone(),
                            member: member.clone(),
                            claimed: at,
                            slow: false,
                        },
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
            self.give_back_budgets(&asked, &by_webhook);
            for a in &asked {
                let list = by_webhook.remove(&a.webhook).unwrap_or_default();
                for start in self.lanes.claimed(&a.webhook, a.reserved, list) {
                    self.begin(a.webhook.clone(), start);
                }
            }
            // The lanes learn which partitions have work for them (for refills).
            for a in &asked {
                if !claimed.hints.contains(&a.webhook) {
                    self.lanes.hinted(&a.webhook, p, false);
                }
            }
            for webhook in &claimed.hints {
                self.lanes.hinted(webhook, p, true);
            }
            let was: Vec<String> = std::mem::replace(&mut hints, claimed.hints);
            if count > 0 {
                idle = IDLE_MIN;
                look = LOOK_AROUND;
                continue;
            }
            if asked.is_empty() {
                look = (look * 2).min(LOOK_AROUND_MAX);
            }
            // Nothing claimed: ask at once if the reply named webhooks not asked for yet.
            if hints.iter().any(|h| !was.contains(h)) {
                continue;
            }
            let wait = match claimed.next_due {
                Some(due) if due > now => Duration::from_millis(due - now).min(idle),
                _ => idle,
            };
            let next_change = self.lanes.next_change(&parked).map(|t| t.saturating_duration_since(Instant::now()));
            let wait = next_change.map_or(wait, |change| wait.min(change));
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.app.arrival(p) => {}
                _ = self.room[usize::from(p.0)].notified() => {}
                _ = stopped.changed() => {}
            }
            idle = (idle * 2).min(IDLE_MAX);
        }
    }

    /// Takes the deliveries of rate-limited webhooks from their budgets (every process
    /// shares them, `store::queue::rate`): each such ask is cut to what its budget grants, and one
    /// granted nothing is parked until its budget has room.
    async fn take_from_budgets(&self, asked: Vec<Asked>, parked: &mut Vec<String>) -> Vec<Asked> {
        let takes = asked.iter().map(|a| async move {
            match a.rate_limit {
                None => None,
                Some(rate) => Some(self.store.take_deliveries(&a.webhook, rate, a.limit).await),
            }
        });
        let grants = futures_util::future::join_all(takes).await;
        let mut out = Vec::with_capacity(asked.len());
        for (mut a, grant) in asked.into_iter().zip(grants) {
            match grant {
                None => out.push(a),
                Some(Ok(grant)) if grant.granted > 0 => {
                    a.limit = grant.granted;
                    if let Some(wait) = grant.wait {
                        // The budget is spent: the next claim of it waits for a batch.
                        self.lanes.limited(&a.webhook, wait);
                    }
                    out.push(a);
                }
                Some(result) => {
                    let wait = match result {
                        Ok(grant) => grant.wait.unwrap_or(RATE_RETRY),
                        Err(e) => {
                            tracing::warn!(error = %e, webhook_id = %a.webhook, "cannot read a webhook's rate budget");
                            RATE_RETRY
                        }
                    };
                    self.lanes.claimed(&a.webhook, a.reserved, Vec::new());
                    self.lanes.limited(&a.webhook, wait);
                    parked.push(a.webhook);
                }
            }
        }
        out
    }

    /// Gives back to their budgets the deliveries rate-limited asks were granted but did
    /// not claim (their queues had fewer due).
    fn give_back_budgets(&self, asked: &[Asked], claimed: &HashMap<String, Vec<Waiting>>) {
        for a in asked {
            let Some(rate) = a.rate_limit else { continue };
            let unused = a.limit.saturating_sub(claimed.get(&a.webhook).map_or(0, Vec::len));
            if unused == 0 {
                continue;
            }
            let (store, webhook) = (self.store.clone(), a.webhook.clone());
            tokio::spawn(async move {
                if let Err(e) = store.give_back_deliveries(&webhook, rate, unused).await {
                    tracing::debug!(error = %e, webhook_id = %webhook, "cannot give back a webhook's unused rate budget");
                }
            });
        }
    }
}
