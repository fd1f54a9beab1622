//! Budgets for rejected requests (the ingest URL is public): per source and per client
//! address, each so many a minute, kept in the process (a flood is turned away before it
//! costs a round trip to Redis). Past its budget a source or address is answered `429`.

use std::collections::HashMap;
use std::sync::Mutex;

/// Rejected requests a source may have in a minute before it is answered `429`.
pub(crate) const PER_SOURCE: u32 = 600;
/// Rejected requests (and unknown tokens) one address may make in a minute.
pub(crate) const PER_ADDRESS: u32 = 300;
/// Most budgets kept at once: past it the oldest minute's are forgotten.
const MAX_KEPT: usize = 20_000;
const MINUTE_MS: u64 = 60_000;

/// Rejections counted per key in the current minute.
#[derive(Debug, Default)]
pub(crate) struct Budgets {
    counts: Mutex<HashMap<String, (u64, u32)>>,
}

impl Budgets {
    /// Whether `key` is past `limit` this minute: the seconds until its minute ends.
    pub(crate) fn spent(&self, key: &str, limit: u32) -> Option<u64> {
        let now = crate::time::now_millis();
        let minute = now / MINUTE_MS;
        let counts = self.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (at, count) = counts.get(key).copied()?;
        (at == minute && count >= limit).then(|| ((minute + 1) * MINUTE_MS - now).div_ceil(1000).max(1))
    }

    /// Counts one rejection of `key`.
    pub(crate) fn count(&self, key: &str) {
        let minute = crate::time::now_millis() / MINUTE_MS;
        let mut counts = self.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if counts.len() >= MAX_KEPT {
            counts.retain(|_, (at, _)| *at == minute);
            if counts.len() >= MAX_KEPT {
                counts.clear();
            }
        }
        let entry = counts.entry(key.to_owned()).or_insert((minute, 0));
        if entry.0 != minute {
            *entry = (minute, 0);
        }
        entry.1 = entry.1.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_past_its_budget_waits_for_the_minute_and_others_do_not() {
        let budgets = Budgets::default();
        for _ in 0..3 {
            assert!(budgets.spent("a", 3).is_none());
            budgets.count("a");
        }
        let wait = budgets.spent("a", 3).unwrap();
        assert!((1..=60).contains(&wait), "{wait}");
        assert!(budgets.spent("b", 3).is_none(), "another key keeps its budget");
    }
}
