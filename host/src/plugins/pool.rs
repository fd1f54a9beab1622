//! The slots plugin calls run in: at most `total` calls at once in this process, and at
//! most `per_org` of them for one organisation. An organisation waits for its own slots
//! before it queues for the shared ones, so a tenant that saturates its plugins holds at
//! most its share; every other tenant still finds slots (and CPU) free.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Organisations remembered before idle ones are forgotten.
const PRUNE_ABOVE: usize = 1024;

#[derive(Debug)]
pub(super) struct Pool {
    total: Arc<Semaphore>,
    per_org: usize,
    orgs: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A slot held for one call; dropping it frees the slot.
#[derive(Debug)]
pub(super) struct Slot {
    _total: OwnedSemaphorePermit,
    _org: OwnedSemaphorePermit,
}

impl Pool {
    pub(super) fn new(total: usize, per_org: usize) -> Pool {
        Pool { total: Arc::new(Semaphore::new(total)), per_org: per_org.clamp(1, total.max(1)), orgs: Mutex::default() }
    }

    /// Waits for a slot of `org`, then for a shared one.
    pub(super) async fn acquire(&self, org: &str) -> Option<Slot> {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn pending(pool: &Pool, org: &str) -> bool {
        tokio::time::timeout(Duration::from_millis(50), pool.acquire(org)).await.is_err()
    }

    #[tokio::test]
    async fn one_organisation_holds_at_most_its_share_and_others_still_get_slots() {
        let pool = Pool::new(4, 2);
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
        let pool = Arc::new(Pool::new(4, 2));
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

    #[tokio::test]
    async fn idle_organisations_are_forgotten() {
        let pool = Pool::new(2, 1);
        for i in 0..(PRUNE_ABOVE + 10) {
            drop(pool.acquire(&format!("org_{i}")).await.unwrap());
        }
        assert!(pool.orgs.lock().unwrap().len() <= PRUNE_ABOVE + 1);
    }
}
