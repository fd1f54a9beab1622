//! Per-webhook lanes: at most `cap` attempts in flight per webhook in this process, up to
//! `cap` more waiting here, and the rest parked in Redis until a slot frees. A slow or dead
//! endpoint therefore holds at most `cap` workers; every other webhook keeps flowing.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::queue::Entry;

#[derive(Debug, Default)]
struct Lane {
    in_flight: usize,
    waiting: VecDeque<Entry>,
    /// Deliveries of this webhook were parked in Redis by this process.
    parked: bool,
}

/// What to do with a new entry.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Admit {
    Start,
    Wait,
    Park,
}

/// What to do when an attempt ends.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Freed {
    Start(Entry),
    /// Bring back up to this many parked deliveries.
    Unpark(usize),
    Nothing,
}

#[derive(Debug)]
pub(super) struct Lanes {
    cap: usize,
    lanes: Mutex<HashMap<String, Lane>>,
}

impl Lanes {
    pub(super) fn new(cap: usize) -> Lanes {
        Lanes { cap, lanes: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lane>> {
        // A panic while holding this lock leaves counts that are still usable.
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits an entry: start now, wait here, or park in Redis.
    pub(super) fn admit(&self, entry: &Entry) -> Admit {
        let mut lanes = self.lock();
        let lane = lanes.entry(entry.webhook.clone()).or_default();
        if lane.in_flight < self.cap {
            lane.in_flight += 1;
            Admit::Start
        } else if lane.waiting.len() < self.cap {
            lane.waiting.push_back(entry.clone());
            Admit::Wait
        } else {
            lane.parked = true;
            Admit::Park
        }
    }

    /// An attempt of `webhook` ended.
    pub(super) fn release(&self, webhook: &str) -> Freed {
        let mut lanes = self.lock();
        let Some(lane) = lanes.get_mut(webhook) else { return Freed::Nothing };
        lane.in_flight = lane.in_flight.saturating_sub(1);
        if let Some(next) = lane.waiting.pop_front() {
            lane.in_flight += 1;
            return Freed::Start(next);
        }
        if lane.parked {
            return Freed::Unpark(self.cap - lane.in_flight);
        }
        if lane.in_flight == 0 {
            lanes.remove(webhook);
        }
        Freed::Nothing
    }

    /// Unparking found fewer than asked: nothing of this process is parked any more.
    pub(super) fn drained(&self, webhook: &str) {
        let mut lanes = self.lock();
        if let Some(lane) = lanes.get_mut(webhook) {
            lane.parked = false;
            if lane.in_flight == 0 && lane.waiting.is_empty() {
                lanes.remove(webhook);
            }
        }
    }

    /// Another process parked deliveries of `webhook` (and perhaps died): this lane now
    /// brings them back as its attempts end, as for its own.
    pub(super) fn adopt_parked(&self, webhook: &str) {
        self.lock().entry(webhook.to_owned()).or_default().parked = true;
    }

    /// Free slots of `webhook` in this process.
    pub(super) fn free(&self, webhook: &str) -> usize {
        let lanes = self.lock();
        lanes.get(webhook).map_or(self.cap, |l| self.cap.saturating_sub(l.in_flight + l.waiting.len()))
    }

    /// Takes every waiting entry (on shutdown).
    pub(super) fn take_waiting(&self) -> Vec<Entry> {
        let mut lanes = self.lock();
        lanes.values_mut().flat_map(|l| l.waiting.drain(..)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize, webhook: &str) -> Entry {
        Entry { id: format!("{n}-0"), delivery: format!("dlv_{n}"), webhook: webhook.into() }
    }

    #[test]
    fn a_busy_webhook_waits_then_parks_and_others_still_start() {
        let lanes = Lanes::new(2);
        assert_eq!(lanes.admit(&entry(1, "slow")), Admit::Start);
        assert_eq!(lanes.admit(&entry(2, "slow")), Admit::Start);
        assert_eq!(lanes.admit(&entry(3, "slow")), Admit::Wait);
        assert_eq!(lanes.admit(&entry(4, "slow")), Admit::Wait);
        assert_eq!(lanes.admit(&entry(5, "slow")), Admit::Park);
        assert_eq!(lanes.admit(&entry(6, "fast")), Admit::Start);
        assert_eq!(lanes.free("slow"), 0);
        assert_eq!(lanes.free("fast"), 1);
        assert_eq!(lanes.free("idle"), 2);
    }

    #[test]
    fn releasing_starts_the_next_waiting_then_unparks() {
        let lanes = Lanes::new(1);
        lanes.admit(&entry(1, "w"));
        lanes.admit(&entry(2, "w"));
        assert_eq!(lanes.admit(&entry(3, "w")), Admit::Park);
        assert_eq!(lanes.release("w"), Freed::Start(entry(2, "w")));
        assert_eq!(lanes.release("w"), Freed::Unpark(1));
        lanes.drained("w");
        assert_eq!(lanes.release("w"), Freed::Nothing);
        assert_eq!(lanes.free("w"), 1);
    }

    #[test]
    fn shutdown_takes_the_waiting_entries() {
        let lanes = Lanes::new(1);
        lanes.admit(&entry(1, "a"));
        lanes.admit(&entry(2, "a"));
        lanes.admit(&entry(3, "b"));
        assert_eq!(lanes.take_waiting(), vec![entry(2, "a")]);
    }

    #[test]
    fn adopted_parked_work_is_unparked_as_attempts_end() {
        let lanes = Lanes::new(2);
        lanes.adopt_parked("w");
        assert_eq!(lanes.admit(&entry(1, "w")), Admit::Start);
        assert_eq!(lanes.release("w"), Freed::Unpark(2));
    }
}
