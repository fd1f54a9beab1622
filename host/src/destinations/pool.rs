//! The brokers' connection pools: one connection (or channel) per server and credentials,
//! shared by the attempts of every webhook that names them, dropped when it has gone unused
//! for [`IDLE`] or is no longer alive.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::kind::Sealed;

/// A connection unused this long is closed.
pub(crate) const IDLE: Duration = Duration::from_secs(300);

/// Which connection: the server's address and the sealed credentials (empty: none).
pub(crate) type PoolKey = (String, String);

/// Pooled connections of one kind.
pub(crate) struct IdlePool<T> {
    entries: Arc<Mutex<HashMap<PoolKey, (T, Instant)>>>,
}

impl<T> Clone for IdlePool<T> {
    fn clone(&self) -> Self {
        IdlePool { entries: self.entries.clone() }
    }
}

impl<T> Default for IdlePool<T> {
    fn default() -> Self {
        IdlePool { entries: Arc::default() }
    }
}

impl<T: Clone> IdlePool<T> {
    /// The pooled connection of `key`, if one is alive (`alive`); idle or dead ones go.
    pub(crate) fn get(&self, key: &PoolKey, alive: impl Fn(&T) -> bool) -> Option<T> {
        let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        entries.retain(|_, (connection, used)| now.duration_since(*used) < IDLE && alive(connection));
        let (connection, used) = entries.get_mut(key)?;
        *used = now;
        Some(connection.clone())
    }

    /// Pools a connection just made (or, when another attempt pooled one meanwhile, keeps
    /// that one); the connection to use.
    pub(crate) fn put(&self, key: PoolKey, connection: T) -> T {
        let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        entries.entry(key).or_insert((connection, Instant::now())).0.clone()
    }
}

/// The key of a server and its sealed credentials.
pub(crate) fn key_of(url: &str, sealed: Option<Sealed<'_>>) -> PoolKey {
    (url.to_owned(), sealed.map(|s| s.credentials.to_owned()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_connection_is_dropped_and_the_first_pooled_one_is_kept() {
        let pool: IdlePool<u32> = IdlePool::default();
        let key = key_of("nats://h:1", None);
        assert_eq!(pool.get(&key, |_| true), None);
        assert_eq!(pool.put(key.clone(), 1), 1);
        assert_eq!(pool.put(key.clone(), 2), 1, "another attempt's connection stays");
        assert_eq!(pool.get(&key, |_| true), Some(1));
        assert_eq!(pool.get(&key, |c| *c != 1), None, "a dead one goes");
        assert_eq!(pool.put(key.clone(), 3), 3);
        let sealed = Sealed { credentials: "sealed", context: "ctx" };
        assert_ne!(key_of("nats://h:1", Some(sealed)), key, "other credentials, another connection");
    }
}
