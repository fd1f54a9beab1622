//! A bounded map of what was read recently: at most `capacity` entries, the least recently
//! used going first (in two generations: an entry read is moved to the newer one, and when
//! the newer one is half the capacity the older one is dropped), each kept at most
//! `max_age`. O(1) per read and write; one lock, held only for the map operation.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Generations<K, V> {
    newer: HashMap<K, (V, Instant)>,
    older: HashMap<K, (V, Instant)>,
}

/// See the module's documentation.
#[derive(Debug)]
pub(crate) struct Recent<K, V> {
    maps: Mutex<Generations<K, V>>,
    half: usize,
    max_age: Duration,
}

impl<K: Hash + Eq + Clone, V: Clone> Recent<K, V> {
    pub(crate) fn new(capacity: usize, max_age: Duration) -> Recent<K, V> {
        let maps = Generations { newer: HashMap::new(), older: HashMap::new() };
        Recent { maps: Mutex::new(maps), half: (capacity / 2).max(1), max_age }
    }

    /// The value kept for `key`, unless it is older than the map's `max_age` or than its own
    /// deadline (the instant given with it, if earlier).
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if let Some((value, until)) = maps.newer.get(key) {
            return (*until > now).then(|| value.clone());
        }
        let (value, until) = maps.older.remove(key)?;
        if until <= now {
            return None;
        }
        maps.insert(key.clone(), (value.clone(), until), self.half);
        Some(value)
    }

    /// Keeps `value` for `key` until `max_age` from now, or `until` if earlier.
    pub(crate) fn put(&self, key: K, value: V, until: Option<Instant>) {
        let latest = Instant::now() + self.max_age;
        let until = until.map_or(latest, |u| u.min(latest));
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        maps.older.remove(&key);
        maps.insert(key, (value, until), self.half);
    }

    /// Forgets `key`.
    pub(crate) fn forget(&self, key: &K) {
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        maps.newer.remove(key);
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
    fn insert(&mut self, key: K, entry: (V, Instant), half: usize) {
        if self.newer.len() >= half && !self.newer.contains_key(&key) {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(key, entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_at_most_its_capacity_and_what_was_read_lately() {
        let recent = Recent::new(4, Duration::from_secs(60));
        for i in 0..10 {
            recent.put(i, i * 10, None);
            assert!(recent.len() <= 4, "{i}: {}", recent.len());
        }
        assert_eq!(recent.get(&9), Some(90));
        assert_eq!(recent.get(&0), None, "the oldest went first");
        recent.put(1, 1, None);
        recent.put(2, 2, None);
        // 9 was read: it survives the next turn of generations, where 8 does not.
        assert_eq!(recent.get(&9), Some(90));
        recent.put(3, 3, None);
        recent.put(4, 4, None);
        assert_eq!(recent.get(&9), Some(90));
        recent.forget(&9);
        assert_eq!(recent.get(&9), None);
    }

    #[test]
    fn an_entry_past_its_age_or_deadline_is_not_returned() {
        let recent = Recent::new(8, Duration::from_millis(0));
        recent.put("a", 1, None);
        assert_eq!(recent.get(&"a"), None, "past the map's age");
        let recent = Recent::new(8, Duration::from_secs(60));
        recent.put("b", 2, Some(Instant::now()));
        assert_eq!(recent.get(&"b"), None, "past its own deadline");
        recent.put("c", 3, Some(Instant::now() + Duration::from_secs(5)));
        assert_eq!(recent.get(&"c"), Some(3));
    }
}
