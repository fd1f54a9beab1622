//! Per-webhook lanes: at most `cap` attempts of one webhook in flight in this process, and
//! up to `cap` more claimed and waiting here to start the moment a slot frees. Claims ask
//! for no more than a lane has room for ([`Lanes::reserve`]), so a slow or dead endpoint
//! holds at most `cap` workers, its other deliveries wait in its Redis queue for any worker
//! with room, and nothing is ever parked and brought back.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::store::Partition;
use crate::store::queue::Member;

/// A claimed delivery waiting in its lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Waiting {
    pub(super) partition: Partition,
    pub(super) member: Member,
}

#[derive(Debug, Default)]
struct Lane {
    in_flight: usize,
    waiting: VecDeque<Waiting>,
    /// Slots promised to claims still in progress.
    reserved: usize,
    /// Partitions whose claims last named this webhook as having work.
    hinted: Vec<Partition>,
}

impl Lane {
    fn idle(&self) -> bool {
        self.in_flight == 0 && self.waiting.is_empty() && self.reserved == 0 && self.hinted.is_empty()
    }
}

#[derive(Debug)]
pub(super) struct Lanes {
    cap: usize,
    lanes: Mutex<HashMap<String, Lane>>,
}

/// What to do when an attempt ends.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Freed {
    /// The next waiting delivery, to start now.
    pub(super) next: Option<Waiting>,
    /// The lane's waiting queue is low: ask these partitions' claimers to refill it.
    pub(super) refill: Vec<Partition>,
}

impl Lanes {
    pub(super) fn new(cap: usize) -> Lanes {
        Lanes { cap: cap.max(1), lanes: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lane>> {
        // A panic while holding this lock leaves counts that are still usable.
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many deliveries of `webhook` a claim may take now (in flight plus waiting may
    /// reach twice the cap), and promises them to that claim. While deliveries still wait
    /// here, a claim waits until half a cap's worth has room: claims come in batches, not
    /// one per finished attempt (each claim costs Redis the same however much it takes).
    pub(super) fn reserve(&self, webhook: &str) -> usize {
        let mut lanes = self.lock();
        let lane = lanes.entry(webhook.to_owned()).or_default();
        let room = (2 * self.cap).saturating_sub(lane.in_flight + lane.waiting.len() + lane.reserved);
        let worth = if lane.waiting.is_empty() { 1 } else { (self.cap / 2).max(1) };
        if room < worth {
            return 0;
        }
        lane.reserved += room;
        room
    }

    /// A claim that reserved `reserved` slots of `webhook` took `claimed` deliveries: they
    /// wait in the lane, and the rest of the reservation is given back. Returns the ones to
    /// start now (the lane's free in-flight slots).
    pub(super) fn claimed(&self, webhook: &str, reserved: usize, claimed: Vec<Waiting>) -> Vec<Waiting> {
        let mut lanes = self.lock();
        let lane = lanes.entry(webhook.to_owned()).or_default();
        lane.reserved = lane.reserved.saturating_sub(reserved);
        lane.waiting.extend(claimed);
        let mut start = Vec::new();
        while lane.in_flight < self.cap
            && let Some(next) = lane.waiting.pop_front()
        {
            lane.in_flight += 1;
            start.push(next);
        }
        if lane.idle() {
            lanes.remove(webhook);
        }
        start
    }

    /// Notes which partitions last said `webhook` has work (for [`Freed::refill`]).
    pub(super) fn hinted(&self, webhook: &str, p: Partition, has_work: bool) {
        let mut lanes = self.lock();
        if !has_work && !lanes.contains_key(webhook) {
            return;
        }
        let lane = lanes.entry(webhook.to_owned()).or_default();
        match (has_work, lane.hinted.iter().position(|h| *h == p)) {
            (true, None) => lane.hinted.push(p),
            (false, Some(i)) => {
                lane.hinted.swap_remove(i);
            }
            _ => {}
        }
        if lane.idle() {
            lanes.remove(webhook);
        }
    }

    /// An attempt of `webhook` ended: start the next waiting one, and ask for more when the
    /// waiting queue runs low.
    pub(super) fn release(&self, webhook: &str) -> Freed {
        let mut lanes = self.lock();
        let Some(lane) = lanes.get_mut(webhook) else { return Freed { next: None, refill: Vec::new() } };
        lane.in_flight = lane.in_flight.saturating_sub(1);
        let next = lane.waiting.pop_front();
        if next.is_some() {
            lane.in_flight += 1;
        }
        let refill = if lane.waiting.len() < self.cap / 2 + 1 { lane.hinted.clone() } else { Vec::new() };
        if lane.idle() {
            lanes.remove(webhook);
        }
        Freed { next, refill }
    }

    /// Takes every waiting delivery (on shutdown, to give back to the queue).
    pub(super) fn take_waiting(&self) -> Vec<(String, Waiting)> {
        let mut lanes = self.lock();
        lanes
            .iter_mut()
            .flat_map(|(wh, lane)| lane.waiting.drain(..).map(|w| (wh.clone(), w)).collect::<Vec<_>>())
            .collect()
    }

    /// Attempts in flight for `webhook` (tests).
    #[cfg(test)]
    fn in_flight(&self, webhook: &str) -> usize {
        self.lock().get(webhook).map_or(0, |l| l.in_flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(n: usize) -> Waiting {
        Waiting {
            partition: Partition(0),
            member: Member { delivery: format!("dlv_{n}"), org: "org_1".into(), event: format!("evt_{n}") },
        }
    }

    #[test]
    fn claims_never_take_more_than_twice_the_cap_and_start_only_the_cap() {
        let lanes = Lanes::new(2);
        assert_eq!(lanes.reserve("slow"), 4);
        let started = lanes.claimed("slow", 4, (0..4).map(waiting).collect());
        assert_eq!(started, vec![waiting(0), waiting(1)], "two in flight, two waiting");
        assert_eq!(lanes.reserve("slow"), 0, "a full lane asks for nothing");
        assert_eq!(lanes.reserve("fast"), 4, "other webhooks are untouched");
    }

    #[test]
    fn a_reservation_holds_room_against_a_concurrent_claim_until_settled() {
        let lanes = Lanes::new(2);
        assert_eq!(lanes.reserve("w"), 4);
        assert_eq!(lanes.reserve("w"), 0, "a second partition's claim gets nothing meanwhile");
        lanes.claimed("w", 4, vec![waiting(1)]);
        assert_eq!(lanes.reserve("w"), 3, "the unused part came back");
    }

    #[test]
    fn an_ended_attempt_starts_the_next_waiting_one_and_asks_for_a_refill() {
        let lanes = Lanes::new(2);
        lanes.hinted("w", Partition(3), true);
        lanes.reserve("w");
        lanes.claimed("w", 4, (0..4).map(waiting).collect());
        let freed = lanes.release("w");
        assert_eq!(freed.next, Some(waiting(2)));
        assert_eq!(freed.refill, vec![Partition(3)], "one waiting left: below half the cap plus one");
        assert_eq!(lanes.in_flight("w"), 2);
        lanes.hinted("w", Partition(3), false);
        lanes.release("w");
        let freed = lanes.release("w");
        assert_eq!(freed.next, None);
        assert!(freed.refill.is_empty(), "no partition has work for it any more");
    }

    #[test]
    fn while_deliveries_wait_a_claim_waits_for_half_a_cap_of_room() {
        let lanes = Lanes::new(4);
        assert_eq!(lanes.reserve("w"), 8);
        lanes.claimed("w", 8, (0..8).map(waiting).collect());
        lanes.release("w");
        assert_eq!(lanes.reserve("w"), 0, "one slot free, three waiting: not worth a claim yet");
        lanes.release("w");
        assert_eq!(lanes.reserve("w"), 2, "half a cap");
        lanes.claimed("w", 2, Vec::new());
        for _ in 0..4 {
            lanes.release("w");
        }
        assert_eq!(lanes.reserve("w"), 6, "nothing waits: any room is worth a claim");
    }

    #[test]
    fn shutdown_takes_the_waiting_deliveries() {
        let lanes = Lanes::new(1);
        lanes.reserve("a");
        lanes.claimed("a", 2, vec![waiting(1), waiting(2)]);
        assert_eq!(lanes.take_waiting(), vec![("a".to_owned(), waiting(2))]);
    }
}
