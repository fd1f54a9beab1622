//! A claimed delivery's hold on its engine: its lane slot and its permit — and with the
//! permit its place among the held deliveries whose leases the upkeep renews. The claimer
//! hands one out for each delivery it starts; the attempter and the recorder work through it,
//! never through the claimer. Each part is given back once: when the engine says so, or when
//! the hold is dropped, a panic unwinding through the attempt included. So no branch of an
//! attempt, and no bug in one, can keep a worker or a lease from the deliveries after it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::lanes::{Signal, Waiting};
use crate::store::Partition;
use crate::store::queue::claim::Member;
use crate::store::queue::endpoint::{EndpointChange, EndpointFields};

/// A future of the lender's, boxed (its rare paths: a pause).
pub(in crate::delivery) type Later<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// What a hold gives back to, and asks of, the claimer that lent it (`lending.rs`): the
/// lanes, the held deliveries and their permits, the queue.
pub(in crate::delivery) trait Lender: Send + Sync + std::fmt::Debug {
    /// Frees the lane slot of `delivery`'s attempt to `webhook`.
    fn release_lane(&self, webhook: &str, delivery: &str);
    /// `delivery` is done with: its permit comes back.
    fn done(&self, delivery: &str);
    fn paused_until(&self, webhook: &str) -> Option<u64>;
    fn learned(&self, webhook: &str, rate_limit: Option<u32>, endpoint: &EndpointFields);
    fn became_slow(&self, webhook: &str, delivery: &str);
    /// What an attempt said of `webhook`'s endpoint; a change of state, its lane's waiting
    /// deliveries given back when it turned probing or paused.
    fn endpoint_signal(&self, webhook: &str, signal: Signal) -> Option<EndpointChange>;
    /// A delivery back to the queue unloaded, due at `until_ms`, its hold ended.
    fn give_back<'a>(&'a self, webhook: &'a str, waiting: Waiting, until_ms: u64) -> Later<'a>;
    /// A loaded delivery back to the queue, due at `until_ms`, its attempt uncounted.
    fn put_back<'a>(&'a self, webhook: &'a str, waiting: &'a Waiting, until_ms: u64) -> Later<'a>;
}

/// A delivery this process claimed, its lane slot taken and its permit held.
#[derive(Debug)]
pub(in crate::delivery) struct Claimed {
    claimer: Arc<dyn Lender>,
    webhook: String,
    partition: Partition,
    member: Member,
    /// Its lane slot is still taken.
    lane: AtomicBool,
    /// It is still held (its permit not back, its lease renewed).
    held: AtomicBool,
}

impl Claimed {
    /// The hold of a delivery whose attempt begins now (the claimer's to make).
    pub(super) fn new(claimer: Arc<dyn Lender>, webhook: String, waiting: Waiting) -> Claimed {
        let Waiting { partition, member } = waiting;
        Claimed { claimer, webhook, partition, member, lane: AtomicBool::new(true), held: AtomicBool::new(true) }
    }

    pub(in crate::delivery) fn webhook(&self) -> &str {
        &self.webhook
    }

    pub(in crate::delivery) fn partition(&self) -> Partition {
        self.partition
    }

    pub(in crate::delivery) fn member(&self) -> &Member {
        &self.member
    }

    /// Its lane slot goes back (the next waiting delivery of the webhook may start), once.
    pub(in crate::delivery) fn release_lane(&self) {
        if self.lane.swap(false, Ordering::Relaxed) {
            self.claimer.release_lane(&self.webhook, &self.member.delivery);
        }
    }

    /// When its webhook's lane is paused until (since it was claimed).
    pub(in crate::delivery) fn paused_until(&self) -> Option<u64> {
        self.claimer.paused_until(&self.webhook)
    }

    /// What its webhook's record says of its endpoint and rate, for the lane.
    pub(in crate::delivery) fn learned(&self, rate_limit: Option<u32>, endpoint: &EndpointFields) {
        self.claimer.learned(&self.webhook, rate_limit, endpoint);
    }

    /// Its attempt has had no answer for `lanes::SLOW_AFTER`: its permit goes back, and it
    /// counts against the slow share.
    pub(in crate::delivery) fn became_slow(&self) {
        self.claimer.became_slow(&self.webhook, &self.member.delivery);
    }

    /// Back to the queue, unloaded, due at `until_ms` (its webhook paused since it was
    /// claimed): the lane slot and the hold end with it.
    pub(in crate::delivery) async fn give_back(&self, until_ms: u64) {
        self.release_lane();
        let waiting = Waiting { partition: self.partition, member: self.member.clone() };
        self.claimer.give_back(&self.webhook, waiting, until_ms).await;
        self.held.store(false, Ordering::Relaxed);
    }

    /// Back to the queue after it was loaded (another process got its webhook's pause), its
    /// attempt uncounted; the hold ends when it is dropped.
    pub(in crate::delivery) async fn put_back(&self, until_ms: u64) {
        self.release_lane();
        let waiting = Waiting { partition: self.partition, member: self.member.clone() };
        self.claimer.put_back(&self.webhook, &waiting, until_ms).await;
    }

    /// What its attempt's end says of its webhook's endpoint, told to the lane; a change of
    /// state is returned for the webhook's record. A lane that turned probing or paused gives
    /// its waiting deliveries back to the queue, holding no worker.
    pub(in crate::delivery) fn endpoint_signal(&self, signal: Signal) -> Option<EndpointChange> {
        self.claimer.endpoint_signal(&self.webhook, signal)
    }
}

impl Drop for Claimed {
    /// Whatever is still taken goes back: the lane slot, then the permit (the lease is no
    /// longer renewed; a delivery not recorded comes back to any worker when it runs out).
    fn drop(&mut self) {
        self.release_lane();
        if self.held.swap(false, Ordering::Relaxed) {
            self.claimer.done(&self.member.delivery);
        }
    }
}
