//! Shares of what one process has, so that no tenant or sender takes it all:
//!
//! - [`Slots`], for work a tenant can make slow (plugin calls, filter evaluations): at most
//!   `total` at once in this process, and at most `per_org` of them for one organisation.
//!   An organisation waits for its own slots before it queues for the shared ones, so a
//!   tenant that saturates its share holds no more than it; every other tenant still finds
//!   slots (and CPU) free.
//! - [`Shares`], for what is refused rather than waited for (requests in progress, bodies
//!   being read): at most a given number at once per key, the next one refused at once.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Organisations remembered before idle ones are forgotten.
const PRUNE_ABOVE: usize = 1024;

#[derive(Debug)]
pub(crate) struct Slots {
    total: Arc<Semaphore>,
    per_org: usize,
    orgs: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A slot held for one call; dropping it frees the slot.
#[derive(Debug)]
pub(crate) struct Slot {
    _total: OwnedSemaphorePermit,
    _org: OwnedSemaphorePermit,
}

impl Slots {
    pub(crate) fn new(total: usize, per_org: usize) -> Slots {
        Slots {
            total: Arc::new(Semaphore::new(total)),
            per_org: per_org.clamp(1, total.max(1)),
            orgs: Mutex::default(),
        }
    }

    /// Waits for a slot of `org`, then for a shared one.
    pub(crate) async fn acquire(&self, org: &str) -> Option<Slot> {
        let own = {
            let mut orgs = self.orgs.lock().unwrap_or_else(|e| e.into_inner());
            if orgs.len() > PRUNE_ABOVE {
                // Only the map holds those: nobody of that organisation waits or runs.
                orgs.retain(|_, s| Arc::strong_count(s) > 1);
            }
            orgs.entry(org.to_owned()).or_insert_with(|| Arc::new(Semaphore::new(self.per_org))).clone()
        };
        let org_permit = own.acquire_owned().await.ok()?;
        let total = self.total.clone().acquire_owned().await.ok()?;
        Some(Slot { _total: total, _org: org_permit })
    }
}

/// How many of something each key holds at once.
#[derive(Debug)]
pub(crate) struct Shares<K: Hash + Eq + Clone> {
    held: Mutex<HashMap<K, usize>>,
}

impl<K: Hash + Eq + Clone> Default for Shares<K> {
    fn default() -> Self {
        Shares { held: Mutex::default() }
    }
}

/// One held share: given back when dropped.
#[derive(Debug)]
pub(crate) struct Share<'a, K: Hash + Eq + Clone> {
    shares: &'a Shares<K>,
    key: K,
}

impl<K: Hash + Eq + Clone> Shares<K> {
    /// A share of `key`, unless it holds `most` already.
    pub(crate) fn take(&self, key: K, most: usize) -> Option<Share<'_, K>> {
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = held.entry(key.clone()).or_default();
        if *count >= most {
            if *count == 0 {
                held.remove(&key);
            }
            return None;
        }
        *count += 1;
        Some(Share { shares: self, key })
    }

    /// How many shares `key` holds.
    #[cfg(test)]
    pub(crate) fn held(&self, key: &K) -> usize {
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(key).copied().unwrap_or(0)
    }
}

impl<K: Hash + Eq + Clone> Drop for Share<'_, K> {
    fn drop(&mut self) {
        let mut held = self.shares.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = held.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn pending(pool: &Slots, org: &str) -> bool {
        tokio::time::timeout(Duration::from_millis(50), pool.acquire(org)).await.is_err()
    }

    #[tokio::test]
    async fn one_organisation_holds_at_most_its_share_and_others_still_get_slots() {
        let pool = Slots::new(4, 2);
        let a1 = pool.acquire("org_a").await.unwrap();
        let _a2 = pool.acquire("org_a").await.unwrap();
        assert!(pending(&pool, "org_a").await, "a third call of org_a waits for org_a's own slots");
        let _b1 = pool.acquire("org_b").await.unwrap();
        let _b2 = pool.acquire("org_b").await.unwrap();
        assert!(pending(&pool, "org_c").await, "the pool is full");
        drop(a1);
        assert!(!pending(&pool, "org_a").await, "org_a's freed slot is usable again");
    }

    #[tokio::test]
    async fn many_waiting_calls_of_one_organisation_do_not_queue_ahead_of_another() {
        let pool = Arc::new(Slots::new(4, 2));
        let held: Vec<Slot> = vec![pool.acquire("org_a").await.unwrap(), pool.acquire("org_a").await.unwrap()];
        // A hundred more calls of org_a queue up behind its own share.
        let waiting: Vec<_> = (0..100)
            .map(|_| {
                let pool = pool.clone();
                tokio::spawn(async move { pool.acquire("org_a").await.map(drop) })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(!pending(&pool, "org_b").await, "org_b is served at once despite org_a's queue");
        drop(held);
        for w in waiting {
            w.await.unwrap().unwrap();
        }
    }

    #[test]
    fn a_key_holds_at_most_its_shares_and_forgets_them_when_given_back() {
        let shares = Shares::default();
        let held: Vec<_> = (0..3).map(|_| shares.take("a", 3).unwrap()).collect();
        assert!(shares.take("a", 3).is_none(), "a fourth is refused");
        assert!(shares.take("b", 3).is_some(), "another key is not");
        assert!(shares.take("c", 0).is_none());
        drop(held);
        assert_eq!(shares.held(&"a"), 0);
        assert!(shares.held.lock().unwrap().is_empty(), "nothing is left counted");
    }

    #[tokio::test]
    async fn idle_organisations_are_forgotten() {
        let pool = Slots::new(2, 1);
        for i in 0..(PRUNE_ABOVE + 10) {
            drop(pool.acquire(&format!("org_{i}")).await.unwrap());
        }
        assert!(pool.orgs.lock().unwrap().len() <= PRUNE_ABOVE + 1);
    }
}
