//! The Redis store: everything Weir keeps, and the only module that speaks Redis. It keeps
//! records and answers with them; how the API shows one is the domain's (`crate::domain::views`).
//!
//! - [`core`]: the connection (one Redis or a cluster: `conn`), the one key layout (`keys`,
//!   with its table) and `lua/` with every script (scripts get all their keys through `KEYS`,
//!   and every script's keys share one slot, so the same code runs on one Redis and on a
//!   Redis Cluster), script replies read by name (`reply`), group commit (`batch`), and the
//!   `redis-server` Weir runs itself when none is configured (`managed`).
//! - [`queue`]: a delivery's life — its row (`row`, `attempts`, `status`), claiming
//!   (`claim`), loading and recording attempts and dead letters (`work`), manual retries and
//!   ending a stopped webhook's deliveries (`requeue`), reading and listing rows
//!   (`deliveries`, `listing`), retention (`trim`), and what the workers share about a
//!   webhook (`targets`, `streak`, `endpoint`, `rate`).
//! - [`events`]: publishing (`publish`, `publisher`), the stored form (`stored`), the events
//!   this process just published (`recent`), the event log (`log`), replays (`replay`), and
//!   report exports with the snapshots they are built from (`exports`).
//! - [`tenants`]: organisations, API clients and tokens, people and sessions, webhooks
//!   (`webhooks`: changes; `webhook_record`: the record and its hash) and plugins.
//!
//! Writes that must be all-or-nothing are Lua scripts or `MULTI`, so no request leaves
//! half-written state behind. With `WEIR_REDIS_WAIT_REPLICAS` set, a write the API
//! acknowledges has also reached that many replicas ([`Store::acknowledged`]).

pub mod concerns;
pub mod core;
mod error;
pub mod events;
pub mod queue;
pub mod tenants;
pub mod versions;

use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

pub use self::core::conn::{Conn, Target};
pub use self::core::keys::{Keys, Partition};
pub use self::error::{StoreError, not_ready};

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Most record snapshots kept per organisation (the least recently updated, sampled, go
/// first); each partition keeps its share. Not enforced with history in PostgreSQL: the
/// pointers leave Redis with their events (`history::mover`).
pub const MAX_SNAPSHOTS_PER_ORG: usize = 50_000;

/// How a store connects and what it promises about writes.
#[derive(Debug, Clone)]
pub struct Settings {
    pub target: Target,
    pub prefix: String,
    /// Partitions of a new data set (an existing one keeps its own).
    pub partitions: u16,
    /// Replicas an acknowledged write waits for (`WAIT`), and for how long.
    pub wait_replicas: u32,
    pub wait_timeout: Duration,
    /// Most record snapshots kept per organisation ([`MAX_SNAPSHOTS_PER_ORG`]).
    pub snapshots_per_org: usize,
    /// History is kept in PostgreSQL: deliveries that end and events accepted are noted
    /// for their move (`queue::ended`, `events::accepted`).
    pub history: bool,
}

impl Settings {
    /// One Redis at `url`, prefix `prefix`, one partition, no replicas awaited.
    pub fn single(url: &str, prefix: &str) -> Settings {
        Settings {
            target: Target::Single(url.to_owned()),
            prefix: prefix.to_owned(),
            partitions: 1,
            wait_replicas: 0,
            wait_timeout: Duration::from_secs(1),
            snapshots_per_org: MAX_SNAPSHOTS_PER_ORG,
            history: false,
        }
    }
}

/// The `hash-max-listpack-value` Weir's hashes want (the managed Redis runs with it): a
/// finished delivery's row holds its signature and attempts, past Redis's default of 64
/// bytes, which would make it a hash table of about 2.4 times the memory.
pub const LISTPACK_VALUE: &str = "512";

/// Partitions of a new data set on a cluster unless configured (on one Redis: one).
pub const CLUSTER_PARTITIONS: u16 = 16;

/// A handle on the store: a shared, self-reconnecting connection and the key layout.
/// Cloning is cheap.
#[derive(Clone)]
pub struct Store {
    conn: Conn,
    /// Where it connected (for [`Store::another_connection`]).
    target: Arc<Target>,
    keys: Arc<Keys>,
    wait_replicas: u32,
    wait_timeout: Duration,
    snapshots_per_org: usize,
    /// Whether ended deliveries and accepted events are noted for their move to history.
    history: bool,
    /// Events this process published lately (`recent`).
    recent: Arc<self::events::recent::Recent>,
    /// Snapshots this handle (and its clones) published: every
    /// [`events::CAP_CHECK_EVERY`]th checks the organisation's cap.
    snapshots_published: Arc<AtomicU32>,
    /// Partitions that could not acknowledge a write lately (`events::standby`).
    shunned: Arc<self::events::shunned::Shunned>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("prefix", &self.keys.prefix())
            .field("partitions", &self.keys.partition_count())
            .field("cluster", &self.conn.is_cluster())
            .finish_non_exhaustive()
    }
}

/// Longest a starting process waits for Redis to load its data set.
const LOADING_WAIT: Duration = Duration::from_secs(300);

/// Waits while Redis loads its data set after a restart (it answers data commands with
/// `LOADING` until then, which would stop a process starting beside it), at most
/// [`LOADING_WAIT`]; any other answer ends the wait.
async fn wait_while_loading(conn: &mut Conn, key: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + LOADING_WAIT;
    let mut told = false;
    loop {
        match redis::cmd("EXISTS").arg(key).query_async::<u64>(conn).await {
            Err(e) if e.code() == Some("LOADING") && std::time::Instant::now() < deadline => {
                if !told {
                    tracing::warn!("Redis is loading its data set; waiting for it before starting");
                    told = true;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e.into()),
            Ok(_) => return Ok(()),
        }
    }
}

impl Store {
    /// Connects, failing fast when Redis cannot be reached (waiting while it loads its data),
    /// and reads (or creates) the data set's layout: an existing data set keeps its
    /// partition count.
    pub async fn connect(settings: &Settings) -> Result<Store> {
        let mut conn = Conn::open(&settings.target).await?;
        let probe = Keys::new(&settings.prefix, 1);
        let meta = probe.meta();
        wait_while_loading(&mut conn, &meta).await?;
        let _: () = redis::pipe()
            .atomic()
            .hset_nx(&meta, "layout", self::core::keys::LAYOUT)
            .ignore()
            .hset_nx(&meta, "partitions", settings.partitions.clamp(1, self::core::keys::MAX_PARTITIONS))
            .ignore()
            .query_async(&mut conn)
            .await?;
        let (layout, partitions): (Option<String>, Option<u16>) =
            redis::cmd("HMGET").arg(&meta).arg("layout").arg("partitions").query_async(&mut conn).await?;
        if layout.as_deref() != Some(self::core::keys::LAYOUT) {
            return Err(StoreError::OldLayout(settings.prefix.clone()));
        }
        let partitions = partitions.unwrap_or(settings.partitions);
        if partitions != settings.partitions {
            tracing::info!(partitions, "the data set keeps the partition count it was created with");
        }
        Ok(Store {
            conn,
            target: Arc::new(settings.target.clone()),
            keys: Arc::new(Keys::new(&settings.prefix, partitions)),
            wait_replicas: settings.wait_replicas,
            wait_timeout: settings.wait_timeout,
            snapshots_per_org: settings.snapshots_per_org,
            history: settings.history,
            recent: Arc::default(),
            snapshots_published: Arc::default(),
            shunned: Arc::new(self::events::shunned::Shunned::new(partitions)),
        })
    }

    /// The same store over a connection of its own, driven by the calling runtime (the
    /// delivery workers run on a thread of their own). Everything else is shared.
    pub async fn another_connection(&self) -> Result<Store> {
        Ok(Store { conn: Conn::open(&self.target).await?, ..self.clone() })
    }

    /// The shared connection.
    pub fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// Up to `n` members of the sorted set `key` scored at or before `due_ms`, lowest first
    /// (what is due in a set kept by when).
    pub(in crate::store) async fn due_members(&self, key: &str, due_ms: u64, n: usize) -> Result<Vec<String>> {
        Ok(redis::cmd("ZRANGE")
            .arg(key)
            .arg("-inf")
            .arg(due_ms)
            .arg("BYSCORE")
            .arg("LIMIT")
            .arg(0)
            .arg(n)
            .query_async(&mut self.conn())
            .await?)
    }

    /// How many members of the sorted set `key` are scored at or before `due_ms`.
    pub(in crate::store) async fn due_count(&self, key: &str, due_ms: u64) -> Result<u64> {
        Ok(redis::cmd("ZCOUNT").arg(key).arg("-inf").arg(due_ms).query_async(&mut self.conn()).await?)
    }

    /// The flag the scripts that end deliveries or accept events take: `1` when history
    /// is kept in PostgreSQL.
    pub(crate) fn history_flag(&self) -> &'static str {
        if self.history { "1" } else { "" }
    }

    /// The names of every key.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The key prefix, without the trailing colon.
    pub fn prefix(&self) -> &str {
        self.keys.prefix()
    }

    /// Redis's `hash-max-listpack-value` when it is below [`LISTPACK_VALUE`]; `None` when it
    /// is not (or `CONFIG` is not allowed, as on some managed services).
    pub async fn small_listpack_values(&self) -> Option<u64> {
        let reply: Vec<String> =
            redis::cmd("CONFIG").arg("GET").arg("hash-max-listpack-value").query_async(&mut self.conn()).await.ok()?;
        let value: u64 = reply.get(1)?.parse().ok()?;
        (value < LISTPACK_VALUE.parse().unwrap_or(0)).then_some(value)
    }

    pub async fn ping(&self) -> Result<()> {
        let _: String = redis::cmd("PING").query_async(&mut self.conn()).await?;
        Ok(())
    }

    /// Makes a write to `key`'s node acknowledged: with `WEIR_REDIS_WAIT_REPLICAS` set, waits
    /// until that many replicas have it (`NotReplicated` if they do not in time).
    pub async fn acknowledged(&self, key: &str) -> Result<()> {
        if self.wait_replicas == 0 {
            return Ok(());
        }
        let acked = self.conn().wait_for_replicas(key, self.wait_replicas, self.wait_timeout).await?;
        if acked < self.wait_replicas {
            return Err(StoreError::NotReplicated { acked, wanted: self.wait_replicas });
        }
        Ok(())
    }

    /// One page of ids from a lexicographic index, newest (greatest) first, below `cursor`.
    pub(crate) async fn page_ids(
        &self,
        index: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<String>, Option<String>)> {
        let max = match cursor {
            Some(c) => format!("({c}"),
            None => "+".to_owned(),
        };
        let mut ids: Vec<String> = redis::cmd("ZREVRANGEBYLEX")
            .arg(index)
            .arg(max)
            .arg("-")
            .arg("LIMIT")
            .arg(0)
            .arg(limit + 1)
            .query_async(&mut self.conn())
            .await?;
        let next = if ids.len() > limit {
            ids.truncate(limit);
            ids.last().cloned()
        } else {
            None
        };
        Ok((ids, next))
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
