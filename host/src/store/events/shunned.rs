//! Which partitions could not acknowledge writes lately (`events::standby` keeps it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::store::core::keys::Partition;

/// How long a partition that could not acknowledge a write is passed over.
pub(crate) const SHUNNED_FOR: Duration = Duration::from_secs(2);

/// Until when (ms) each partition is shunned (0: it is not).
#[derive(Debug, Default)]
pub(crate) struct Shunned {
    until: Vec<AtomicU64>,
}

impl Shunned {
    pub(crate) fn new(partitions: u16) -> Shunned {
        Shunned { until: (0..partitions).map(|_| AtomicU64::new(0)).collect() }
    }

    /// Shuns `p` for [`SHUNNED_FOR`] from `now_ms` (a shun is extended, never cut short);
    /// whether it was not shunned before.
    pub(super) fn shun(&self, p: Partition, now_ms: u64) -> bool {
        self.at(p).is_some_and(|until| until.swap(now_ms + SHUNNED_FOR.as_millis() as u64, Ordering::Relaxed) == 0)
    }

    /// Ends `p`'s shun if its time is up at `now_ms`; whether it ended one.
    pub(super) fn end_if_over(&self, p: Partition, now_ms: u64) -> bool {
        self.at(p).is_some_and(|until| {
            let was = until.load(Ordering::Relaxed);
            was != 0 && was <= now_ms && until.compare_exchange(was, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        })
    }

    /// Whether `p` is shunned at `now_ms`.
    pub(super) fn shunned(&self, p: Partition, now_ms: u64) -> bool {
        self.at(p).is_some_and(|u| u.load(Ordering::Relaxed) > now_ms)
    }

    fn at(&self, p: Partition) -> Option<&AtomicU64> {
        self.until.get(usize::from(p.0))
    }
}
