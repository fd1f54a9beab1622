//! The Redis store: every durable record of Weir, and the only module that speaks Redis
//! commands (the queue, in `crate::queue`, owns its own keys but uses [`Store`]'s
//! connection).
//!
//! # Keys
//! Every key starts with the configured prefix `P` (default `weir`), so installations and
//! test runs can share one Redis.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:orgs` | zset (lex) | ids of all organisations |
//! | `P:org:{org}` | hash | an organisation: `id`, `name`, `plan`, `created_at` |
//! | `P:client:{cli}` | hash | an API client; `secret_hash` is SHA-256 of the secret |
//! | `P:client:{cli}:tokens` | zset | hashes of the client's live tokens, scored by expiry (ms) |
//! | `P:token:{sha256}` | string, TTL | the client id a token belongs to |
//! | `P:wh:{wh}` | hash | a webhook ([`webhooks`]) |
//! | `P:org:{org}:webhooks` | zset (lex) | the organisation's webhook ids |
//! | `P:rate:{cli}` | string, TTL | the client's API request budget ([`rate`]) |
//!
//! Records that are updated field by field are hashes; writes that must be all-or-nothing
//! go through Lua scripts or `MULTI`, so no request leaves half-written state behind.

pub mod clients;
pub mod deliveries;
pub mod exports;
pub mod managed;
pub mod orgs;
pub mod plugins;
pub mod rate;
pub mod users;
pub mod webhooks;

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// A store failure. `Unavailable` means Redis could not be reached or did not answer in
/// time: callers answer 503 and the connection manager reconnects in the background.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("Redis is unavailable: {0}")]
    Unavailable(redis::RedisError),
    #[error("Redis error: {0}")]
    Redis(redis::RedisError),
    #[error("record {key} is corrupt: {reason}")]
    Corrupt { key: String, reason: String },
}

impl From<redis::RedisError> for StoreError {
    fn from(e: redis::RedisError) -> StoreError {
        if not_ready(&e) { StoreError::Unavailable(e) } else { StoreError::Redis(e) }
    }
}

/// Whether an error means Redis cannot serve right now but will (unreachable, loading its
/// data, busy with a script, out of memory, or a cluster between masters), as opposed to
/// a request it refuses. Callers answer `503` with `Retry-After` and try again later.
pub fn not_ready(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
        || e.kind() == redis::ErrorKind::ClusterConnectionNotFound
        || matches!(
            e.code(),
            Some("LOADING" | "BUSY" | "TRYAGAIN" | "CLUSTERDOWN" | "MASTERDOWN" | "READONLY" | "NOREPLICAS" | "OOM")
        )
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A handle on the store: a shared, self-reconnecting connection and the key prefix.
/// Cloning is cheap.
#[derive(Clone)]
pub struct Store {
    conn: ConnectionManager,
    client: redis::Client,
    prefix: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

/// How long one Redis command may take before the caller treats Redis as unavailable.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);

impl Store {
    /// Connects to `url`, failing fast when Redis cannot be reached.
    pub async fn connect(url: &str, prefix: &str) -> Result<Store> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(3)))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let conn = client.get_connection_manager_with_config(config).await?;
        let store = Store { conn, client, prefix: prefix.to_owned() };
        store.ping().await?;
        Ok(store)
    }

    /// A separate connection for blocking commands (`XREADGROUP BLOCK`), which would
    /// otherwise hold up every other command on the shared, multiplexed connection.
    pub async fn dedicated(&self, response_timeout: Duration) -> Result<ConnectionManager> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(3)))
            .set_response_timeout(Some(response_timeout))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        Ok(self.client.get_connection_manager_with_config(config).await?)
    }

    /// The shared connection.
    pub fn conn(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// The key prefix, without the trailing colon.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `P:part1:part2…`
    pub fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    pub async fn ping(&self) -> Result<()> {
        let _: String = redis::cmd("PING").query_async(&mut self.conn()).await?;
        Ok(())
    }
}

/// Reads a `0`/`1` hash field.
pub(crate) fn flag(value: Option<&String>) -> bool {
    value.map(|v| v == "1").unwrap_or(false)
}

/// Writes a boolean hash field.
pub(crate) fn flag_str(value: bool) -> &'static str {
    if value { "1" } else { "0" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_not_being_ready_is_unavailable_and_a_refused_request_is_not() {
        for code in ["TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "OOM"] {
            let e = parse_error(&format!("-{code} not now\r\n"));
            assert!(matches!(StoreError::from(e), StoreError::Unavailable(_)), "{code}");
        }
        let loading = parse_error("-LOADING Redis is loading the dataset in memory\r\n");
        assert_eq!(loading.code(), Some("LOADING"));
        assert!(matches!(StoreError::from(loading), StoreError::Unavailable(_)));
        let busy =
            parse_error("-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n");
        assert!(matches!(StoreError::from(busy), StoreError::Unavailable(_)));
        let wrongtype = parse_error("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
        assert!(matches!(StoreError::from(wrongtype), StoreError::Redis(_)));
    }

    /// A server error as the client reads it off the wire.
    fn parse_error(wire: &str) -> redis::RedisError {
        match redis::parse_redis_value(wire.as_bytes()) {
            Ok(redis::Value::ServerError(e)) => e.into(),
            other => panic!("not a server error: {other:?}"),
        }
    }
}
