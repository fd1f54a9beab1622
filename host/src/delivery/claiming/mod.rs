//! One claim loop per partition: ask for the webhooks the last claim named (hints) and those
//! parked here, each within its lane's room — taking a rate-limited webhook's deliveries
//! from its budget first — start what can start, keep the rest waiting in the lanes.
//! Webhooks whose lanes have no room (at their window, probing behind the slow share,
//! paused, over their rate) are *parked*: the claim leaves them out of its hints, so the
//! webhooks that can go are found at once however many cannot. With nothing to claim it
//! sleeps until the partition's next due time, a publish by this process, room in a lane
//! that partition has work for, or a poll interval that grows while idle (so other
//! processes' work is found too).

pub(in crate::delivery) mod lanes;
mod upkeep;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::jobs::Stopping;

use self::lanes::{Room, Waiting};
use super::{Engine, Held};
use crate::store::Partition;
use crate::store::queue::claim::{Ask, ClaimRequest, Member};

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
/// When a claim takes a delivery this process still holds (its attempt is still being
/// recorded), how soon the delivery is due again.
const HELD_AGAIN: Duration = Duration::from_millis(500);

/// A webhook a claim asks for: what its lane reserved, and what the claim may take.
struct Asked {
    webhook: String,
    reserved: usize,
    limit: usize,
    /// Taken from the webhook's rate budget (all of `limit`).
    rate_limit: Option<u32>,
    proven: bool,
}

/// What one partition's claim loop carries from one claim to the next.
struct Claiming {
    p: Partition,
    /// Webhooks the last claim's reply named (they have work here).
    hints: Vec<String>,
    /// Webhooks with work here whose lanes have no room: left out of the hints by name.
    parked: Vec<String>,
    /// How long to sleep when nothing was claimed.
    idle: Duration,
    /// When a claim last looked for other webhooks' work while all known were parked, and
    /// how long until it looks again.
    last_look: Instant,
    look: Duration,
}

/// What one turn of the loop does next.
enum Turn {
    /// Claim again at once.
    Again,
    /// Nothing to claim: sleep (until the time, new work, room or the stop).
    Idle(Duration),
}

impl Engine {
    /// The claim loop of partition `p` (see the module's documentation).
    pub(in crate::delivery) async fn claim_loop(self: Arc<Self>, p: Partition, mut stopping: Stopping) {
        let mut state = Claiming {
            p,
            hints: Vec::new(),
            parked: Vec::new(),
            idle: IDLE_MIN,
            last_look: Instant::now(),
            look: LOOK_AROUND,
        };
        while !stopping.is_set() {
            // Registered before looking, so a delivery finishing in between is not missed.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            match self.claim_turn(&mut state, freed, &mut stopping).await {
                Turn::Again => {}
                Turn::Idle(wait) => {
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = self.arrivals.wait(p) => {}
                        _ = self.room[usize::from(p.0)].notified() => {}
                        _ = stopping.wait() => {}
                    }
                    state.idle = (state.idle * 2).min(IDLE_MAX);
                }
            }
        }
    }

    /// One turn: take permits, ask the lanes, claim, start what can start.
    async fn claim_turn(
        self: &Arc<Self>,
        state: &mut Claiming,
        freed: std::pin::Pin<&mut tokio::sync::futures::Notified<'_>>,
        stopping: &mut Stopping,
    ) -> Turn {
        // A share of the permits per claim, so that every partition gets some.
        let share = (2 * self.settings.workers / self.room.len().max(1)).max(16);
        let budget = self.permits.available_permits().min(CLAIM_MAX).min(share);
        if budget == 0 {
            // Back-pressure: wait for a delivery to finish before claiming more.
            tokio::select! {
                _ = freed => {}
                _ = stopping.wait() => {}
            }
            return Turn::Again;
        }
        let Ok(permits) = self.permits.clone().try_acquire_many_owned(budget as u32) else {
            // Another partition's claim took them first.
            tokio::task::yield_now().await;
            return Turn::Again;
        };
        let asked = self.asks(state);
        let asked = self.take_from_budgets(asked, &mut state.parked).await;
        if asked.is_empty() && !state.parked.is_empty() && state.last_look.elapsed() < state.look {
            // Every webhook known to have work here is parked: a claim would take nothing.
            drop(permits);
            self.wait_while_parked(state, stopping).await;
            return Turn::Again;
        }
        if asked.is_empty() {
            state.last_look = Instant::now();
            state.look = state.look.max(LOOK_AROUND);
        }
        let asks: Vec<Ask> = asked.iter().map(|a| Ask { webhook: a.webhook.clone(), limit: a.limit }).collect();
        let now = crate::time::now_millis();
        let lease = self.settings.takeover_after.as_millis() as u64;
        let request = ClaimRequest { asks: &asks, excluded: &state.parked, budget, hints_wanted: HINTS };
        let claimed = match self.store.claim(state.p, &request, now, now + lease).await {
            Ok(claimed) => claimed,
            Err(e) => {
                drop(permits);
                self.freed.notify_waiters();
                for a in &asked {
                    self.lanes.claimed(&a.webhook, a.reserved, Vec::new());
                }
                self.give_back_budgets(&asked, &HashMap::new());
                tracing::warn!(error = %e, partition = state.p.0, "cannot claim deliveries; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = stopping.wait() => {}
                }
                return Turn::Again;
            }
        };
        let count = self.start_claimed(state, &asked, claimed.deliveries, permits);
        self.after_claim(state, &asked, (claimed.hints, claimed.next_due), count, now)
    }

    /// The webhooks to ask for — the hints and the parked, each within its lane's room; the
    /// healthy first, and at most [`UNPROVEN_ASKS`] others — parking those without room.
    fn asks(&self, state: &mut Claiming) -> Vec<Asked> {
        let mut asked = Vec::new();
        let mut unproven = 0;
        let mut still_parked = Vec::new();
        for webhook in state.hints.iter().chain(state.parked.iter().filter(|w| !state.hints.contains(w))) {
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
        state.parked = still_parked;
        state.parked.truncate(PARKED_MAX);
        asked
    }

    /// Waits for room, a parked lane's wait to end, new work published here, or the time to
    /// look for other webhooks' work.
    async fn wait_while_parked(&self, state: &mut Claiming, stopping: &mut Stopping) {
        let look = state.look;
        let until = self.lanes.next_change(&state.parked).map_or(look, |t| t.saturating_duration_since(Instant::now()));
        tokio::select! {
            _ = tokio::time::sleep(look.saturating_sub(state.last_look.elapsed()).min(until)) => {}
            _ = self.room[usize::from(state.p.0)].notified() => {}
            _ = self.arrivals.wait(state.p) => {
                // New work here: the claim that finds it goes at once.
                state.look = Duration::ZERO;
            }
            _ = stopping.wait() => {}
        }
    }

    /// Holds what a claim took (one permit each, given back when it is done with), hands it
    /// to the lanes and starts what can start; how many deliveries it took.
    fn start_claimed(
        self: &Arc<Self>,
        state: &Claiming,
        asked: &[Asked],
        deliveries: Vec<(String, Member)>,
        mut permits: tokio::sync::OwnedSemaphorePermit,
    ) -> usize {
        let mut by_webhook: HashMap<String, Vec<Waiting>> = HashMap::new();
        let mut again = Vec::new();
        let mut count = 0;
        {
            let mut held = self.held();
            let at = std::time::Instant::now();
            for (webhook, member) in deliveries {
                // Still being attempted (or recorded) here: its lease ran out while Redis
                // could not take the renewal, or it was queued again (a manual retry) as
                // its last attempt's outcome was being recorded. A second attempt now
                // would send it twice; it is due again shortly instead of at the end of
                // the lease this claim gave it (the attempt's record, if it ends it,
                // takes it out of the queue).
                if held.contains_key(&member.delivery) {
                    again.push((webhook, member));
                    continue;
                }
                let hold = Held {
                    partition: state.p,
                    webhook: webhook.clone(),
                    member: member.clone(),
                    claimed: at,
                    slow: false,
                };
                held.insert(member.delivery.clone(), hold);
                by_webhook.entry(webhook).or_default().push(Waiting { partition: state.p, member });
                count += 1;
            }
        }
        if let Some(taken) = permits.split(count) {
            taken.forget();
        }
        if permits.num_permits() > 0 {
            // The rest goes back: other partitions' claimers may be waiting for it.
            drop(permits);
            self.freed.notify_waiters();
        }
        self.give_back_budgets(asked, &by_webhook);
        if !again.is_empty() {
            let (store, p) = (self.store.clone(), state.p);
            let due = crate::time::now_millis() + HELD_AGAIN.as_millis() as u64;
            tokio::spawn(async move {
                if let Err(e) = store.give_back(p, &again, due).await {
                    tracing::warn!(error = %e, "cannot make held deliveries due again; their leases will run out");
                }
            });
        }
        for a in asked {
            let list = by_webhook.remove(&a.webhook).unwrap_or_default();
            for start in self.lanes.claimed(&a.webhook, a.reserved, list) {
                self.begin(a.webhook.clone(), start);
            }
        }
        count
    }

    /// Learns from a claim's reply (which webhooks have work here) and says what the loop
    /// does next: claim again at once, or sleep how long.
    fn after_claim(
        &self,
        state: &mut Claiming,
        asked: &[Asked],
        (hints, next_due): (Vec<String>, Option<u64>),
        count: usize,
        now: u64,
    ) -> Turn {
        // The lanes learn which partitions have work for them (for refills).
        for a in asked {
            if !hints.contains(&a.webhook) {
                self.lanes.hinted(&a.webhook, state.p, false);
            }
        }
        for webhook in &hints {
            self.lanes.hinted(webhook, state.p, true);
        }
        let was: Vec<String> = std::mem::replace(&mut state.hints, hints);
        if count > 0 {
            state.idle = IDLE_MIN;
            state.look = LOOK_AROUND;
            return Turn::Again;
        }
        if asked.is_empty() {
            state.look = (state.look * 2).min(LOOK_AROUND_MAX);
        }
        // Nothing claimed: ask at once if the reply named webhooks not asked for yet.
        if state.hints.iter().any(|h| !was.contains(h)) {
            return Turn::Again;
        }
        let wait = match next_due {
            Some(due) if due > now => Duration::from_millis(due - now).min(state.idle),
            _ => state.idle,
        };
        let next_change = self.lanes.next_change(&state.parked).map(|t| t.saturating_duration_since(Instant::now()));
        Turn::Idle(next_change.map_or(wait, |change| wait.min(change)))
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
