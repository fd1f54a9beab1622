//! A bounded map of what was read recently: entries weigh what their caller says (their
//! size, or 1 each), and together at most `budget`, the least recently used going first (in
//! two generations: an entry read is moved to the newer one, and when the newer one weighs
//! half the budget the older one is dropped), each kept at most `max_age`. O(1) per read and
//! write; one lock, held only for the map operation.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A value, until when it may be used, and its weight.
type Entry<V> = (V, Instant, usize);

#[derive(Debug)]
struct Generations<K, V> {
    newer: HashMap<K, Entry<V>>,
    older: HashMap<K, Entry<V>>,
    /// What the newer generation weighs.
    weight: usize,
}

/// See the module's documentation.
#[derive(Debug)]
pub(crate) struct Recent<K, V> {
    maps: Mutex<Generations<K, V>>,
    /// Half the budget: what one generation may weigh.
    half: usize,
    max_age: Duration,
}

impl<K: Hash + Eq, V: Clone> Recent<K, V> {
    pub(crate) fn new(budget: usize, max_age: Duration) -> Recent<K, V> {
        let maps = Generations { newer: HashMap::new(), older: HashMap::new(), weight: 0 };
        Recent { maps: Mutex::new(maps), half: (budget / 2).max(1), max_age }
    }

    /// The value kept for `key`, unless it is older than the map's `max_age` or than its own
    /// deadline (the instant given with it, if earlier).
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if let Some((value, until, _)) = maps.newer.get(key) {
            return (*until > now).then(|| value.clone());
        }
        let (key, (value, until, weight)) = maps.older.remove_entry(key)?;
        if until <= now {
            return None;
        }
        maps.insert(key, (value.clone(), until, weight), self.half);
        Some(value)
    }

    /// Keeps `value` (weighing `weight`) for `key` until `max_age` from now, or `until` if
    /// earlier.
    pub(crate) fn put(&self, key: K, value: V, until: Option<Instant>, weight: usize) {
        let latest = Instant::now() + self.max_age;
        let until = until.map_or(latest, |u| u.min(latest));
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        maps.older.remove(&key);
        maps.forget_newer(&key);
        maps.insert(key, (value, until, weight), self.half);
    }

    /// Forgets `key`.
    pub(crate) fn forget(&self, key: &K) {
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        maps.forget_newer(key);
        maps.older.remove(key);
    }

    /// How many entries are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        let maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        maps.newer.len() + maps.older.len()
    }
}

impl<K: Hash + Eq, V> Generations<K, V> {
    /// Puts an entry (not in either generation) in the newer one, which first becomes the
    /// older when it would weigh more than `half`.
    fn insert(&mut self, key: K, entry: Entry<V>, half: usize) {
        if self.weight + entry.2 > half && !self.newer.is_empty() {
            self.older = std::mem::take(&mut self.newer);
            self.weight = 0;
        }
        self.weight += entry.2;
        self.newer.insert(key, entry);
    }

    fn forget_newer(&mut self, key: &K) {
        if let Some((_, _, weight)) = self.newer.remove(key) {
            self.weight -= weight;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_at_most_its_capacity_and_what_was_read_lately() {
        let recent = Recent::new(4, Duration::from_secs(60));
        for i in 0..10 {
            recent.put(i, i * 10, None, 1);
            assert!(recent.len() <= 4, "{i}: {}", recent.len());
        }
        assert_eq!(recent.get(&9), Some(90));
        assert_eq!(recent.get(&0), None, "the oldest went first");
        recent.put(1, 1, None, 1);
        recent.put(2, 2, None, 1);
        // 9 was read: it survives the next turn of generations, where 8 does not.
        assert_eq!(recent.get(&9), Some(90));
        recent.put(3, 3, None, 1);
        recent.put(4, 4, None, 1);
        assert_eq!(recent.get(&9), Some(90));
        recent.forget(&9);
        assert_eq!(recent.get(&9), None);
    }

    #[test]
    fn heavy_entries_take_their_weight_of_the_budget() {
        let recent = Recent::new(100, Duration::from_secs(60));
        recent.put("a", 1, None, 30);
        recent.put("b", 2, None, 30);
        assert_eq!((recent.get(&"a"), recent.get(&"b")), (Some(1), Some(2)));
        // 30 + 30 > half of 100: a new generation; the heaviest one alone still fits.
        recent.put("c", 3, None, 30);
        recent.put("d", 4, None, 30);
        assert_eq!(recent.get(&"a"), None, "two generations back");
        assert_eq!((recent.get(&"c"), recent.get(&"d")), (Some(3), Some(4)));
        recent.put("d", 5, None, 10);
        assert_eq!(recent.get(&"d"), Some(5), "replaced, weighing its new weight");
    }

    #[test]
    fn an_entry_past_its_age_or_deadline_is_not_returned() {
        let recent = Recent::new(8, Duration::from_millis(0));
        recent.put("a", 1, None, 1);
        assert_eq!(recent.get(&"a"), None, "past the map's age");
        let recent = Recent::new(8, Duration::from_secs(60));
        recent.put("b", 2, Some(Instant::now()), 1);
        assert_eq!(recent.get(&"b"), None, "past its own deadline");
        recent.put("c", 3, Some(Instant::now() + Duration::from_secs(5)), 1);
        assert_eq!(recent.get(&"c"), Some(3));
    }
}
