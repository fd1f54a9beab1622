//! What this process holds: every delivery it claimed until it is done with (waiting,
//! attempted, being recorded), each holding one of the workers' permits — but a slow
//! attempt, which gave its permit back (`lanes::SLOW_AFTER`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::store::Partition;
use crate::store::queue::claim::Member;

/// A delivery this process holds: its lease is renewed until it is done with.
#[derive(Debug, Clone)]
pub(in crate::delivery) struct Held {
    pub partition: Partition,
    pub webhook: String,
    pub member: Member,
    pub claimed: Instant,
    /// Its attempt had no answer for `lanes::SLOW_AFTER`: its permit went back (it counts
    /// against the slow share instead).
    pub slow: bool,
}

/// The deliveries held, by id, and the permits (one per worker).
#[derive(Debug)]
pub(in crate::delivery) struct Holds {
    held: Mutex<HashMap<String, Held>>,
    permits: Arc<Semaphore>,
    /// A delivery was done with: claimers waiting for permits look again.
    pub freed: Notify,
    workers: usize,
}

impl Holds {
    pub(in crate::delivery) fn new(workers: usize) -> Holds {
        Holds { held: Mutex::default(), permits: Arc::new(Semaphore::new(workers)), freed: Notify::new(), workers }
    }

    pub(in crate::delivery) fn held(&self) -> MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Permits free now.
    pub(in crate::delivery) fn available(&self) -> usize {
        self.permits.available_permits()
    }

    /// Takes `n` permits, if they are free.
    pub(in crate::delivery) fn try_take(&self, n: usize) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_many_owned(n as u32).ok()
    }

    /// Permits not used go back; claimers waiting for them look again.
    pub(in crate::delivery) fn give_back(&self, unused: OwnedSemaphorePermit) {
        drop(unused);
        self.freed.notify_waiters();
    }

    /// Whether the delivery's attempt went slow (it holds no permit).
    pub(in crate::delivery) fn was_slow(&self, delivery: &str) -> bool {
        self.held().get(delivery).is_some_and(|h| h.slow)
    }

    /// The delivery's attempt went slow: its permit comes back now (once).
    pub(in crate::delivery) fn became_slow(&self, delivery: &str) -> bool {
        let mut held = self.held();
        let Some(entry) = held.get_mut(delivery).filter(|h| !h.slow) else { return false };
        entry.slow = true;
        drop(held);
        self.permits.add_permits(1);
        self.freed.notify_waiters();
        true
    }

    /// A held delivery is done with: its permit comes back (a slow one's came back when it
    /// became slow).
    pub(in crate::delivery) fn done(&self, delivery: &str) {
        if self.held().remove(delivery).is_some_and(|h| !h.slow) {
            self.permits.add_permits(1);
            self.freed.notify_waiters();
        }
    }

    /// Held deliveries claimed `age` ago or more, by partition (their leases to renew).
    pub(in crate::delivery) fn older_than(&self, age: Duration) -> HashMap<Partition, Vec<(String, Member)>> {
        let now = Instant::now();
        let mut by_partition: HashMap<Partition, Vec<(String, Member)>> = HashMap::new();
        for held in self.held().values() {
            if now.duration_since(held.claimed) >= age {
                by_partition.entry(held.partition).or_default().push((held.webhook.clone(), held.member.clone()));
            }
        }
        by_partition
    }

    /// Waits (up to `grace`) for every permit to be back: attempts in flight have ended.
    pub(in crate::delivery) async fn all_back(&self, grace: Duration) {
        let _ = tokio::time::timeout(grace, self.permits.acquire_many(self.workers as u32)).await;
    }
}
