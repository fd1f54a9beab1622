//! One claim loop per partition: ask for the webhooks the last claim named (hints) and those
//! parked here, each within its lane's room — taking a rate-limited webhook's deliveries
//! from its budget first — start what can start, keep the rest waiting in the lanes.
//! Webhooks whose lanes have no room (at their window, probing behind the slow share,
//! paused, over their rate) are *parked*: the claim leaves them out of its hints, so the
//! webhooks that can go are found at once however many cannot. With nothing to claim it
//! sleeps until the partition's next due time, a publish by this process, room in a lane
//! that partition has work for, or a poll interval that grows while idle (so other
//! processes' work is found too).

mod asks;
pub(in crate::delivery) mod claimed;
pub(in crate::delivery) mod held;
pub(in crate::delivery) mod lanes;
mod lending;
mod turns;
pub(in crate::delivery) mod upkeep;

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use self::asks::{Asked, asks, give_back_budgets, take_from_budgets};
use self::claimed::Claimed;
use self::held::{Held, Holds};
use self::lanes::{Lanes, Waiting};
use self::turns::{CLAIM_MAX, HELD_AGAIN, HINTS, IDLE_MAX, IDLE_MIN, LOOK_AROUND, LOOK_AROUND_MAX, LoopState, Turn};
use crate::jobs::Stopping;
use crate::metrics::Metrics;
use crate::shared::Arrivals;
use crate::store::events::publish::EventWrites;
use crate::store::queue::claim::Claims;
use crate::store::queue::claim::{Ask, ClaimRequest, Member};
use crate::store::queue::rate::Rates;
use crate::store::queue::trim::Trim;
use crate::store::queue::work::Work;
use crate::store::{Keys, Partition};

/// Starts the attempt of a claimed delivery, handed its hold: the engine's.
pub(in crate::delivery) type Begin = Box<dyn Fn(Claimed) + Send + Sync>;

/// The claiming part of the engine: the claim loops, the lanes, the deliveries this
/// process holds and their permits.
pub(in crate::delivery) struct Claimer {
    /// What it reads and writes, over the engine's own connection: claims and leases, rate
    /// budgets, a paused webhook's deliveries put back, trimming and snapshots released.
    doors: ClaimerDoors,
    lanes: Lanes,
    holds: Holds,
    /// Per partition: a lane there has room again.
    room: Vec<Notify>,
    arrivals: Arc<Arrivals>,
    metrics: Arc<Metrics>,
    workers: usize,
    /// A claimed delivery's lease.
    lease: Duration,
    begin: Begin,
    stopping: std::sync::atomic::AtomicBool,
    /// Itself, for the holds it lends.
    me: Weak<Claimer>,
}

impl std::fmt::Debug for Claimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimer").field("lanes", &self.lanes).field("holds", &self.holds).finish_non_exhaustive()
    }
}

/// The store's concerns a [`Claimer`] works with.
#[derive(Debug, Clone)]
pub(in crate::delivery) struct ClaimerDoors {
    pub keys: Keys,
    pub claims: Claims,
    pub rates: Rates,
    pub work: Work,
    pub trim: Trim,
    pub events: EventWrites,
}

/// What a [`Claimer`] is made of.
pub(in crate::delivery) struct ClaimerParts {
    pub doors: ClaimerDoors,
    pub arrivals: Arc<Arrivals>,
    pub metrics: Arc<Metrics>,
    /// Workers, and attempts in flight to one webhook at most.
    pub workers: (usize, usize),
    pub lease: Duration,
    pub begin: Begin,
}

/// Attempts that may be slow at once (`lanes`): a quarter of the workers. The rest stay for
/// endpoints that answer.
fn slow_share(workers: usize) -> usize {
    (workers / 4).max(1)
}

impl Claimer {
    pub(in crate::delivery) fn new(parts: ClaimerParts) -> Arc<Claimer> {
        let ClaimerParts { doors, arrivals, metrics, workers: (workers, per_webhook), lease, begin } = parts;
        Arc::new_cyclic(|me| Claimer {
            lanes: Lanes::new(per_webhook, slow_share(workers)),
            holds: Holds::new(workers),
            room: doors.keys.partitions().map(|_| Notify::new()).collect(),
            doors,
            arrivals,
            metrics,
            workers,
            lease,
            begin,
            stopping: std::sync::atomic::AtomicBool::new(false),
            me: me.clone(),
        })
    }

    /// Whether the engine is stopping (claims stop; the upkeep goes on while deliveries are
    /// held).
    pub(in crate::delivery) fn stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(in crate::delivery) fn stop(&self) {
        self.stopping.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Starts the attempt of a delivery whose lane slot is taken, handing it its hold.
    fn begin(&self, webhook: String, waiting: Waiting) {
        if let Some(me) = self.me.upgrade() {
            (self.begin)(Claimed::new(me, webhook, waiting));
        }
    }

    /// The partitions claimed from (a claim loop each).
    pub(in crate::delivery) fn partitions(&self) -> impl Iterator<Item = Partition> + use<> {
        self.doors.keys.partitions()
    }

    /// On shutdown: deliveries waiting in the lanes go back to the queue, due now.
    pub(in crate::delivery) async fn give_back_waiting(&self) {
        let waiting = self.lanes.take_waiting();
        self.give_back(waiting, crate::time::now_millis()).await;
    }

    /// Waits (up to `grace`) for every permit to be back: attempts in flight have ended.
    pub(in crate::delivery) async fn all_back(&self, grace: Duration) {
        self.holds.all_back(grace).await;
    }

    /// How many deliveries are held now.
    pub(in crate::delivery) fn held_count(&self) -> usize {
        self.holds.held().len()
    }

    /// The claim loop of partition `p` (see the module's documentation).
    pub(in crate::delivery) async fn claim_loop(self: Arc<Self>, p: Partition, mut stopping: Stopping) {
        let mut state = LoopState {
            p,
            hints: Vec::new(),
            parked: Vec::new(),
            idle: IDLE_MIN,
            last_look: Instant::now(),
            look: LOOK_AROUND,
        };
        while !stopping.is_set() {
            // Registered before looking, so a delivery finishing in between is not missed.
            let freed = self.holds.freed.notified();
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
        state: &mut LoopState,
        freed: std::pin::Pin<&mut tokio::sync::futures::Notified<'_>>,
        stopping: &mut Stopping,
    ) -> Turn {
        // A share of the permits per claim, so that every partition gets some.
        let share = (2 * self.workers / self.room.len().max(1)).max(16);
        let budget = self.holds.available().min(CLAIM_MAX).min(share);
        if budget == 0 {
            // Back-pressure: wait for a delivery to finish before claiming more.
            tokio::select! {
                _ = freed => {}
                _ = stopping.wait() => {}
            }
            return Turn::Again;
        }
        let Some(permits) = self.holds.try_take(budget) else {
            // Another partition's claim took them first.
            tokio::task::yield_now().await;
            return Turn::Again;
        };
        let asked = asks(&self.lanes, &state.hints, &mut state.parked);
        let asked = take_from_budgets((&self.doors.rates, &self.lanes), asked, &mut state.parked).await;
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
        let lease = self.lease.as_millis() as u64;
        let request = ClaimRequest { asks: &asks, excluded: &state.parked, budget, hints_wanted: HINTS };
        let claimed = match self.doors.claims.claim(state.p, &request, now, now + lease).await {
            Ok(claimed) => claimed,
            Err(e) => {
                self.holds.give_back(permits);
                for a in &asked {
                    self.lanes.claimed(&a.webhook, a.reserved, Vec::new());
                }
                give_back_budgets(&self.doors.rates, &asked, &HashMap::new());
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

    /// Waits for room, a parked lane's wait to end, new work published here, or the time to
    /// look for other webhooks' work.
    async fn wait_while_parked(&self, state: &mut LoopState, stopping: &mut Stopping) {
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
        state: &LoopState,
        asked: &[Asked],
        deliveries: Vec<(String, Member)>,
        mut permits: tokio::sync::OwnedSemaphorePermit,
    ) -> usize {
        let mut by_webhook: HashMap<String, Vec<Waiting>> = HashMap::new();
        let mut again = Vec::new();
        let mut count = 0;
        {
            let mut held = self.holds.held();
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
            self.holds.give_back(permits);
        }
        give_back_budgets(&self.doors.rates, asked, &by_webhook);
        if !again.is_empty() {
            let (claims, p) = (self.doors.claims.clone(), state.p);
            let due = crate::time::now_millis() + HELD_AGAIN.as_millis() as u64;
            tokio::spawn(async move {
                if let Err(e) = claims.give_back(p, &again, due).await {
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
        state: &mut LoopState,
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

    /// Deliveries claimed but not started go back to their queues, due at `due_ms`, for any
    /// worker (on shutdown; when their webhook turns probing or paused).
    async fn give_back(&self, waiting: Vec<(String, Waiting)>, due_ms: u64) {
        let mut by_partition: HashMap<Partition, Vec<(String, Member)>> = HashMap::new();
        let mut delivered = Vec::with_capacity(waiting.len());
        for (webhook, w) in waiting {
            delivered.push(w.member.delivery.clone());
            by_partition.entry(w.partition).or_default().push((webhook, w.member));
        }
        for (p, items) in by_partition {
            if let Err(e) = self.doors.claims.give_back(p, &items, due_ms).await {
                tracing::warn!(error = %e, "cannot give back waiting deliveries; their leases will run out");
            }
        }
        for delivery in delivered {
            self.holds.done(&delivery);
        }
    }
}
