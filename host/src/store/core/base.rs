//! The store's base: what every concern stands on (see [`Base`]). Only the store's concerns
//! and the store's handle hold one; a concern reaches another only by naming it
//! (`Other::of(&self.base)`), so every tie between concerns is an import.

use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use crate::store::core::conn::{Conn, Target};
use crate::store::core::keys::Keys;
use crate::store::error::{Result, StoreError};

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

/// What every concern of the store stands on: the connection (one Redis or a cluster), the
/// key layout, the write promise (`WEIR_REDIS_WAIT_REPLICAS`) and the few reads every concern
/// shares — and nothing of any concern. Cloning is one reference count.
#[derive(Clone)]
pub struct Base(Arc<Inner>);

/// A [`Base`]'s parts.
pub struct Inner {
    pub(in crate::store) conn: Conn,
    /// Where it connected (for [`Base::another_connection`]).
    pub(in crate::store) target: Arc<Target>,
    pub(in crate::store) keys: Arc<Keys>,
    pub(in crate::store) wait_replicas: u32,
    pub(in crate::store) wait_timeout: Duration,
    pub(in crate::store) snapshots_per_org: usize,
    /// Whether ended deliveries and accepted events are noted for their move to history.
    pub(in crate::store) history: bool,
    /// Events this process published lately (`recent`).
    pub(in crate::store) recent: Arc<crate::store::events::recent::Recent>,
    /// Snapshots this handle (and its clones) published: every
    /// [`crate::store::events::CAP_CHECK_EVERY`]th checks the organisation's cap.
    pub(in crate::store) snapshots_published: Arc<AtomicU32>,
    /// Partitions that could not acknowledge a write lately (`events::standby`).
    pub(in crate::store) shunned: Arc<crate::store::events::shunned::Shunned>,
}

impl std::fmt::Debug for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("prefix", &self.keys.prefix())
            .field("partitions", &self.keys.partition_count())
            .field("cluster", &self.conn.is_cluster())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner").field("prefix", &self.keys.prefix()).finish_non_exhaustive()
    }
}

impl Deref for Base {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
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

impl Base {
    /// Connects, failing fast when Redis cannot be reached (waiting while it loads its data),
    /// and reads (or creates) the data set's layout: an existing data set keeps its
    /// partition count.
    pub async fn connect(settings: &Settings) -> Result<Base> {
        let mut conn = Conn::open(&settings.target).await?;
        let probe = Keys::new(&settings.prefix, 1);
        let meta = probe.meta();
        wait_while_loading(&mut conn, &meta).await?;
        let _: () = redis::pipe()
            .atomic()
            .hset_nx(&meta, "layout", crate::store::core::keys::LAYOUT)
            .ignore()
            .hset_nx(&meta, "partitions", settings.partitions.clamp(1, crate::store::core::keys::MAX_PARTITIONS))
            .ignore()
            .query_async(&mut conn)
            .await?;
        let (layout, partitions): (Option<String>, Option<u16>) =
            redis::cmd("HMGET").arg(&meta).arg("layout").arg("partitions").query_async(&mut conn).await?;
        if layout.as_deref() != Some(crate::store::core::keys::LAYOUT) {
            return Err(StoreError::OldLayout(settings.prefix.clone()));
        }
        let partitions = partitions.unwrap_or(settings.partitions);
        if partitions != settings.partitions {
            tracing::info!(partitions, "the data set keeps the partition count it was created with");
        }
        Ok(Base(Arc::new(Inner {
            conn,
            target: Arc::new(settings.target.clone()),
            keys: Arc::new(Keys::new(&settings.prefix, partitions)),
            wait_replicas: settings.wait_replicas,
            wait_timeout: settings.wait_timeout,
            snapshots_per_org: settings.snapshots_per_org,
            history: settings.history,
            recent: Arc::default(),
            snapshots_published: Arc::default(),
            shunned: Arc::new(crate::store::events::shunned::Shunned::new(partitions)),
        })))
    }

    /// The same store over a connection of its own, driven by the calling runtime (the
    /// delivery workers run on a thread of their own). Everything else is shared.
    pub async fn another_connection(&self) -> Result<Base> {
        let inner = &self.0;
        Ok(Base(Arc::new(Inner {
            conn: Conn::open(&inner.target).await?,
            target: inner.target.clone(),
            keys: inner.keys.clone(),
            wait_replicas: inner.wait_replicas,
            wait_timeout: inner.wait_timeout,
            snapshots_per_org: inner.snapshots_per_org,
            history: inner.history,
            recent: inner.recent.clone(),
            snapshots_published: inner.snapshots_published.clone(),
            shunned: inner.shunned.clone(),
        })))
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
