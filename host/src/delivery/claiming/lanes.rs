//! Per-webhook lanes: how many attempts of a webhook this process may have in flight, and
//! the deliveries claimed for it waiting to start. A lane is also this process's view of the
//! webhook's endpoint (flow control, contract §7 "Isolation"):
//!
//! - **A window that follows the endpoint** (AIMD, as TCP's): a lane starts with one attempt
//!   in flight; each success widens it by one, up to `WEIR_MAX_IN_FLIGHT_PER_WEBHOOK`; a
//!   failed attempt halves it. An attempt that gets no answer (a timeout, a refused
//!   connection), or a failure at a window of one, turns the lane to **probing**: one attempt
//!   at a time until one succeeds.
//! - **A bounded share for slow attempts.** An attempt without an answer after
//!   [`SLOW_AFTER`] is *slow*: it stops counting against the process's workers (the engine
//!   gives its permit back), and counts against the slow share instead. A lane that has slow
//!   attempts, or is probing, starts an attempt only while the slow share has room. So
//!   endpoints that hang hold at most the slow share's sockets after their first second,
//!   and healthy endpoints always find workers.
//! - **Look-ahead only for healthy lanes**: a healthy lane may hold as many claimed
//!   deliveries waiting as its window; a probing, slow or new one holds none (its deliveries
//!   wait in Redis, holding nothing).
//! - **Pauses** asked for by the endpoint (`429`/`503` with `Retry-After`), and the wait the
//!   webhook's `rate_limit` sets: nothing is claimed until they end.
//!
//! Lanes are kept while idle (the state must outlive a quiet minute) and swept after
//! [`FORGET_AFTER`] unused.

mod lane;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::store::Partition;
use crate::store::queue::endpoint::{EndpointChange, EndpointFields};
pub(in crate::delivery) use lane::Waiting;
use lane::{Health, Lane};

/// An attempt without an answer for this long is slow.
pub(in crate::delivery) const SLOW_AFTER: Duration = Duration::from_secs(1);
/// An idle lane is forgotten after this long unused.
const FORGET_AFTER: Duration = Duration::from_secs(600);

/// What an attempt's end says about the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::delivery) enum Signal {
    /// A 2xx.
    Success,
    /// An answer that fails the attempt.
    Failed(String),
    /// No answer: a timeout, a connection or TLS failure.
    NoAnswer(String),
    /// `429`/`503` with `Retry-After`: pause until then (ms), with the reason.
    Pause { until_ms: u64, reason: String },
}

#[derive(Debug)]
pub(in crate::delivery) struct Lanes {
    cap: usize,
    slow_share: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    lanes: HashMap<String, Lane>,
    /// Slow attempts in flight, every lane together.
    slow: usize,
    /// Attempts of suspect lanes (probing, or with slow attempts) in flight and not slow
    /// yet, and reserved for them: with `slow`, what the slow share bounds.
    unproven: usize,
}

impl State {
    fn share_used(&self) -> usize {
        self.slow + self.unproven
    }
}

/// What to do when an attempt ends.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::delivery) struct Freed {
    /// The next waiting deliveries, to start now.
    pub(in crate::delivery) next: Vec<Waiting>,
    /// The lane's waiting queue is low: ask these partitions' claimers to refill it.
    pub(in crate::delivery) refill: Vec<Partition>,
}

/// A claim's reservation of a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::delivery) struct Room {
    pub(in crate::delivery) room: usize,
    /// The webhook's `rate_limit`: take the deliveries from its budget first.
    pub(in crate::delivery) rate_limit: Option<u32>,
    /// Its endpoint answers (healthy, nothing slow): claims ask for it first.
    pub(in crate::delivery) proven: bool,
}

/// What this process sees of the endpoints (for `/metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::delivery) struct Census {
    pub(in crate::delivery) probing: usize,
    pub(in crate::delivery) paused: usize,
    pub(in crate::delivery) slow: usize,
}

impl Lanes {
    /// Lanes of at most `cap` attempts in flight each, with `slow_share` slow attempts in
    /// all.
    pub(in crate::delivery) fn new(cap: usize, slow_share: usize) -> Lanes {
        Lanes { cap: cap.max(1), slow_share: slow_share.max(1), state: Mutex::default() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves counts that are still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many deliveries of `webhook` a claim may take now, promised to that claim.
    /// While deliveries still wait here, a claim waits until half its holding has room:
    /// claims come in batches, not one per finished attempt (each claim costs Redis the
    /// same however much it takes).
    pub(in crate::delivery) fn reserve(&self, webhook: &str) -> Room {
        let now = Instant::now();
        let mut state = self.lock();
        let share_left = self.slow_share.saturating_sub(state.share_used());
        let lane = state.lanes.entry(webhook.to_owned()).or_insert_with(Lane::new);
        lane.used = now;
        let rate_limit = lane.rate_limit;
        let proven = lane.health == Health::Healthy && lane.slow == 0;
        let none = Room { room: 0, rate_limit, proven };
        if lane.paused().is_some() || lane.not_before.is_some_and(|t| t > now) {
            return none;
        }
        let mut room = lane.holding().saturating_sub(lane.in_flight + lane.waiting.len() + lane.reserved);
        let suspect = lane.suspect();
        if suspect {
            room = room.min(share_left);
        }
        let worth = if lane.waiting.is_empty() { 1 } else { (lane.holding() / 4).max(1) };
        if room < worth {
            return none;
        }
        lane.reserved += room;
        if suspect {
            lane.reserved_unproven += room;
            state.unproven += room;
        }
        Room { room, rate_limit, proven }
    }

    /// A claim that reserved `reserved` slots of `webhook` took `claimed` deliveries: they
    /// wait in the lane, and the rest of the reservation is given back. Returns the ones to
    /// start now.
    pub(in crate::delivery) fn claimed(&self, webhook: &str, reserved: usize, claimed: Vec<Waiting>) -> Vec<Waiting> {
        let mut state = self.lock();
        let State { lanes, slow, unproven } = &mut *state;
        let lane = lanes.entry(webhook.to_owned()).or_insert_with(Lane::new);
        lane.reserved = lane.reserved.saturating_sub(reserved);
        let was_unproven = lane.reserved_unproven.min(reserved);
        lane.reserved_unproven -= was_unproven;
        *unproven = unproven.saturating_sub(was_unproven);
        lane.waiting.extend(claimed);
        self.start(lane, *slow, unproven)
    }

    /// Takes the waiting deliveries the lane may start now (a suspect lane's count in the
    /// slow share).
    fn start(&self, lane: &mut Lane, slow: usize, unproven: &mut usize) -> Vec<Waiting> {
        let mut start = Vec::new();
        if lane.paused().is_some() {
            return start;
        }
        while lane.in_flight < lane.limit()
            && !(lane.suspect() && slow + *unproven >= self.slow_share)
            && let Some(next) = lane.waiting.pop_front()
        {
            if lane.suspect() {
                lane.unproven += 1;
                *unproven += 1;
            }
            lane.in_flight += 1;
            start.push(next);
        }
        start
    }

    /// Notes which partitions last said `webhook` has work (for [`Freed::refill`]).
    pub(in crate::delivery) fn hinted(&self, webhook: &str, p: Partition, has_work: bool) {
        let mut state = self.lock();
        if !has_work && !state.lanes.contains_key(webhook) {
            return;
        }
        let lane = state.lanes.entry(webhook.to_owned()).or_insert_with(Lane::new);
        match (has_work, lane.hinted.iter().position(|h| *h == p)) {
            (true, None) => lane.hinted.push(p),
            (false, Some(i)) => {
                lane.hinted.swap_remove(i);
            }
            _ => {}
        }
    }

    /// An attempt of `webhook` has had no answer for [`SLOW_AFTER`].
    pub(in crate::delivery) fn became_slow(&self, webhook: &str) {
        let mut state = self.lock();
        let State { lanes, slow, unproven } = &mut *state;
        *slow += 1;
        if let Some(lane) = lanes.get_mut(webhook) {
            lane.slow += 1;
            if lane.unproven > 0 {
                lane.unproven -= 1;
                *unproven = unproven.saturating_sub(1);
            }
        }
    }

    /// An attempt of `webhook` ended (`was_slow`: it had become slow): start what may start
    /// now, and ask for more when the waiting queue runs low.
    pub(in crate::delivery) fn release(&self, webhook: &str, was_slow: bool) -> Freed {
        let mut state = self.lock();
        let State { lanes, slow, unproven } = &mut *state;
        if was_slow {
            *slow = slow.saturating_sub(1);
        }
        let Some(lane) = lanes.get_mut(webhook) else { return Freed { next: Vec::new(), refill: Vec::new() } };
        lane.in_flight = lane.in_flight.saturating_sub(1);
        if was_slow {
            lane.slow = lane.slow.saturating_sub(1);
        } else if lane.unproven > 0 {
            lane.unproven -= 1;
            *unproven = unproven.saturating_sub(1);
        }
        lane.used = Instant::now();
        let next = self.start(lane, *slow, unproven);
        let refill = if lane.waiting.len() <= lane.holding() / 2 { lane.hinted.clone() } else { Vec::new() };
        Freed { next, refill }
    }

    /// What an attempt's end says about its endpoint: the window and state change, and a
    /// change to keep in the webhook (probing, healthy again, paused) is returned.
    pub(in crate::delivery) fn signal(&self, webhook: &str, signal: Signal) -> Option<EndpointChange> {
        let mut state = self.lock();
        let lane = state.lanes.entry(webhook.to_owned()).or_insert_with(Lane::new);
        let at_ms = crate::time::now_millis();
        let change = match signal {
            Signal::Success => {
                let was = lane.health;
                lane.health = Health::Healthy;
                lane.window = (lane.window + 1).min(self.cap);
                (was == Health::Probing).then_some(EndpointChange::Healthy { at_ms })
            }
            Signal::Failed(reason) => {
                let was_one = lane.limit() == 1;
                lane.window = (lane.window / 2).max(1);
                match lane.health {
                    Health::Probing => None,
                    Health::Healthy if !was_one => None,
                    _ => {
                        lane.health = Health::Probing;
                        Some(EndpointChange::Probing { at_ms, reason })
                    }
                }
            }
            Signal::NoAnswer(reason) => {
                lane.window = 1;
                match lane.health {
                    Health::Probing => None,
                    _ => {
                        lane.health = Health::Probing;
                        Some(EndpointChange::Probing { at_ms, reason })
                    }
                }
            }
            Signal::Pause { until_ms, reason } => {
                lane.paused_until = Some(lane.paused_until.map_or(until_ms, |p| p.max(until_ms)));
                Some(EndpointChange::Paused { at_ms, until_ms, reason })
            }
        };
        if let Some(change) = &change {
            lane.shared_since_ms = match change {
                EndpointChange::Healthy { at_ms }
                | EndpointChange::Probing { at_ms, .. }
                | EndpointChange::Paused { at_ms, .. } => *at_ms,
            };
        }
        change
    }

    /// What the webhook says (read with each load): its `rate_limit`, and an endpoint state
    /// another process found since this lane last took or kept one.
    pub(in crate::delivery) fn learned(&self, webhook: &str, rate_limit: Option<u32>, shared: &EndpointFields) {
        let mut state = self.lock();
        let lane = state.lanes.entry(webhook.to_owned()).or_insert_with(Lane::new);
        lane.rate_limit = rate_limit;
        let now_ms = crate::time::now_millis();
        if let Some(until_ms) = shared.paused_at(now_ms) {
            lane.paused_until = Some(lane.paused_until.map_or(until_ms, |p| p.max(until_ms)));
        }
        if let Some(since) = shared.since_ms.filter(|since| *since > lane.shared_since_ms) {
            lane.shared_since_ms = since;
            if shared.probing {
                lane.health = Health::Probing;
                lane.window = 1;
            } else if lane.health == Health::Probing {
                lane.health = Health::Healthy;
                lane.window = lane.window.max(2);
            }
        }
    }

    /// The earliest time one of `webhooks`' lanes stops waiting for a pause or its rate
    /// budget to end (the other waits end with room in a lane, which is notified).
    pub(in crate::delivery) fn next_change(&self, webhooks: &[String]) -> Option<Instant> {
        let state = self.lock();
        let now_ms = crate::time::now_millis();
        let now = Instant::now();
        webhooks
            .iter()
            .filter_map(|w| state.lanes.get(w))
            .filter_map(|lane| {
                let pause = lane
                    .paused_until
                    .filter(|until| *until > now_ms)
                    .map(|until| now + Duration::from_millis(until - now_ms));
                pause.into_iter().chain(lane.not_before.filter(|t| *t > now)).max()
            })
            .min()
    }

    /// The webhook's rate budget has no room for `wait`.
    pub(in crate::delivery) fn limited(&self, webhook: &str, wait: Duration) {
        if let Some(lane) = self.lock().lanes.get_mut(webhook) {
            lane.not_before = Some(Instant::now() + wait);
        }
    }

    /// The end (ms) of the pause `webhook` is in, if any.
    pub(in crate::delivery) fn paused_until(&self, webhook: &str) -> Option<u64> {
        self.lock().lanes.get_mut(webhook).and_then(Lane::paused)
    }

    /// Takes the deliveries waiting in `webhook`'s lane (to give back to the queue when it
    /// turns probing or paused: they would hold workers waiting).
    pub(in crate::delivery) fn take_waiting_of(&self, webhook: &str) -> Vec<Waiting> {
        self.lock().lanes.get_mut(webhook).map(|lane| lane.waiting.drain(..).collect()).unwrap_or_default()
    }

    /// Takes every waiting delivery (on shutdown, to give back to the queue).
    pub(in crate::delivery) fn take_waiting(&self) -> Vec<(String, Waiting)> {
        let mut state = self.lock();
        state
            .lanes
            .iter_mut()
            .flat_map(|(wh, lane)| lane.waiting.drain(..).map(|w| (wh.clone(), w)).collect::<Vec<_>>())
            .collect()
    }

    /// Forgets lanes unused for [`FORGET_AFTER`]; counts what is left (for `/metrics`).
    pub(in crate::delivery) fn sweep(&self) -> Census {
        let now = Instant::now();
        let mut state = self.lock();
        state.lanes.retain(|_, lane| lane.busy() || now.duration_since(lane.used) < FORGET_AFTER);
        let mut census = Census { slow: state.slow, ..Census::default() };
        for lane in state.lanes.values_mut() {
            if lane.paused().is_some() {
                census.paused += 1;
            } else if lane.health == Health::Probing {
                census.probing += 1;
            }
        }
        census
    }

    /// Attempts in flight for `webhook` (tests).
    #[cfg(test)]
    fn in_flight(&self, webhook: &str) -> usize {
        self.lock().lanes.get(webhook).map_or(0, |l| l.in_flight)
    }

    /// Whether `webhook`'s lane is probing (tests).
    #[cfg(test)]
    fn probing(&self, webhook: &str) -> bool {
        self.lock().lanes.get(webhook).is_some_and(|l| l.health == Health::Probing)
    }
}

#[cfg(test)]
mod tests;
