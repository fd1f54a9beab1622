//! A claimed delivery's hold on its engine: its lane slot and its permit — and with the
//! permit its place among the held deliveries whose leases the upkeep renews. Each is given
//! back once: when the engine says so, or when the hold is dropped, a panic unwinding
//! through the attempt included. So no branch of an attempt, and no bug in one, can keep a
//! worker or a lease from the deliveries that come after it.

use std::sync::atomic::{AtomicBool, Ordering};

use super::Claimer;
use super::lanes::Waiting;
use crate::store::Partition;
use crate::store::queue::claim::Member;

/// A delivery this process claimed, its lane slot taken and its permit held.
#[derive(Debug)]
pub(in crate::delivery) struct Claimed<'a> {
    claimer: &'a Claimer,
    pub(in crate::delivery) webhook: String,
    pub(in crate::delivery) partition: Partition,
    pub(in crate::delivery) member: Member,
    /// Its lane slot is still taken.
    lane: AtomicBool,
    /// It is still held (its permit not back, its lease renewed).
    held: AtomicBool,
}

impl<'a> Claimed<'a> {
    /// The hold of a delivery whose attempt begins now.
    pub(in crate::delivery) fn new(claimer: &'a Claimer, webhook: String, waiting: Waiting) -> Claimed<'a> {
        let Waiting { partition, member } = waiting;
        Claimed { claimer, webhook, partition, member, lane: AtomicBool::new(true), held: AtomicBool::new(true) }
    }

    /// Its lane slot goes back (the next waiting delivery of the webhook may start), once.
    pub(in crate::delivery) fn release_lane(&self) {
        if self.lane.swap(false, Ordering::Relaxed) {
            self.claimer.release_lane(&self.webhook, &self.member.delivery);
        }
    }

    /// It went back to the queue with its hold (`Claimer::give_back` ended that): nothing
    /// is given back again when it is dropped.
    pub(in crate::delivery) fn given_back(&self) {
        self.release_lane();
        self.held.store(false, Ordering::Relaxed);
    }
}

impl Drop for Claimed<'_> {
    /// Whatever is still taken goes back: the lane slot, then the permit (the lease is no
    /// longer renewed; a delivery not recorded comes back to any worker when it runs out).
    fn drop(&mut self) {
        self.release_lane();
        if self.held.swap(false, Ordering::Relaxed) {
            self.claimer.holds.done(&self.member.delivery);
        }
    }
}
