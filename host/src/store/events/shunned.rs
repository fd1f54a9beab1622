//! Which partitions could not acknowledge writes lately, and which took events for which
//! (`events::standby` keeps both).

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::store::core::keys::Partition;

/// How long a partition that could not acknowledge a write is passed over.
pub(crate) const SHUNNED_FOR: Duration = Duration::from_secs(2);

/// A standby's mark is written again once it would last this much longer.
pub(super) const NOTED_AGAIN_AFTER: Duration = Duration::from_secs(60);

/// Until when (ms) each partition is shunned (0: it is not); and, for each partition, the
/// partitions that took its events as its standby and until when (ms) those may be there.
#[derive(Debug, Default)]
pub(crate) struct Shunned {
    until: Vec<AtomicU64>,
    standbys: RwLock<Vec<Vec<(Partition, u64)>>>,
}

impl Shunned {
    pub(crate) fn new(partitions: u16) -> Shunned {
        Shunned {
            until: (0..partitions).map(|_| AtomicU64::new(0)).collect(),
            standbys: RwLock::new(vec![Vec::new(); usize::from(partitions)]),
        }
    }

    /// Whether it is known that `standby` may hold events of `home` until `until_ms` (to
    /// within [`NOTED_AGAIN_AFTER`]).
    pub(super) fn standby_known(&self, home: Partition, standby: Partition, until_ms: u64) -> bool {
        let all = self.standbys.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.get(usize::from(home.0)).is_some_and(|of_home| {
            of_home.iter().any(|(p, until)| *p == standby && *until + NOTED_AGAIN_AFTER.as_millis() as u64 >= until_ms)
        })
    }

    /// Notes that `standby` may hold events of `home` until `until_ms` (a later time than
    /// one known wins).
    pub(super) fn note_standby(&self, home: Partition, standby: Partition, until_ms: u64) {
        let mut all = self.standbys.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(of_home) = all.get_mut(usize::from(home.0)) else { return };
        match of_home.iter_mut().find(|(p, _)| *p == standby) {
            Some((_, until)) => *until = (*until).max(until_ms),
            None => of_home.push((standby, until_ms)),
        }
    }

    /// The partitions that may still hold events of `home` at `now_ms`.
    pub(super) fn standbys_of(&self, home: Partition, now_ms: u64) -> Vec<Partition> {
        let all = self.standbys.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.get(usize::from(home.0))
            .map(|of_home| of_home.iter().filter(|(_, until)| *until > now_ms).map(|(p, _)| *p).collect())
            .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standby_is_known_for_its_partition_until_its_time_and_a_later_time_wins() {
        let shunned = Shunned::new(4);
        let (home, standby, other) = (Partition(1), Partition(2), Partition(3));
        assert!(shunned.standbys_of(home, 0).is_empty());
        assert!(!shunned.standby_known(home, standby, 10_000));
        shunned.note_standby(home, standby, 10_000);
        assert!(shunned.standby_known(home, standby, 10_000));
        assert!(!shunned.standby_known(home, other, 10_000), "another standby is not");
        assert!(shunned.standbys_of(other, 0).is_empty(), "nor another partition's");
        // Known to within NOTED_AGAIN_AFTER; beyond it, written again.
        let again = 10_000 + NOTED_AGAIN_AFTER.as_millis() as u64;
        assert!(shunned.standby_known(home, standby, again));
        assert!(!shunned.standby_known(home, standby, again + 1));
        shunned.note_standby(home, standby, 5_000);
        assert_eq!(shunned.standbys_of(home, 9_999), vec![standby], "an earlier time does not shorten it");
        assert!(shunned.standbys_of(home, 10_000).is_empty(), "over at its time");
        shunned.note_standby(home, other, 20_000);
        assert_eq!(shunned.standbys_of(home, 10_000), vec![other]);
    }
}
