//! The connection under [`crate::store::Store`]: one Redis (a self-reconnecting multiplexed
//! connection) or a Redis Cluster (the `redis` crate's cluster client, which follows `MOVED`
//! and `ASK`, refreshes its slot map after a failover and reloads scripts a new master
//! lacks). Both are used through the same `ConnectionLike` interface, so no code path
//! knows which it runs on — except [`Conn::wait_for_replicas`], which must send `WAIT` to
//! the node that took a write.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// How long one Redis command may take before the caller treats Redis as unavailable.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long connecting to a node may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Where the data lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One Redis: `redis://`, `rediss://` or `redis+unix://`.
    Single(String),
    /// Seed nodes of a Redis Cluster (`redis://` or `rediss://`).
    Cluster(Vec<String>),
}

impl Target {
    /// For messages: the URL(s) with any password replaced.
    pub fn describe(&self) -> String {
        match self {
            Target::Single(url) => redact(url),
            Target::Cluster(seeds) => {
                format!("cluster {}", seeds.iter().map(|s| redact(s)).collect::<Vec<_>>().join(","))
            }
        }
    }
}

/// A Redis URL with any password replaced, for messages and logs.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// A connection to one Redis or to a cluster. Cloning is cheap and shares it.
#[derive(Clone)]
pub enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Conn::Single(_) => "Conn::Single",
            Conn::Cluster(_) => "Conn::Cluster",
        })
    }
}

impl Conn {
    pub async fn open(target: &Target) -> redis::RedisResult<Conn> {
        match target {
            Target::Single(url) => {
                let client = redis::Client::open(url.as_str())?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(RESPONSE_TIMEOUT))
                    .set_number_of_retries(2)
                    .set_max_delay(Duration::from_secs(1));
                Ok(Conn::Single(client.get_connection_manager_with_config(config).await?))
            }
            Target::Cluster(seeds) => {
                let mut builder = ClusterClientBuilder::new(seeds.clone())
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(RESPONSE_TIMEOUT)
                    // A failover takes seconds: keep retrying redirects and CLUSTERDOWN a
                    // little longer than the default, then report the store unavailable.
                    .retries(8)
                    .min_retry_wait(50)
                    .max_retry_wait(1000);
                if seeds.iter().any(|s| s.starts_with("rediss://")) {
                    builder = builder.tls(redis::TlsMode::Secure);
                }
                Ok(Conn::Cluster(builder.build()?.get_async_connection().await?))
            }
        }
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, Conn::Cluster(_))
    }

    /// Sends `WAIT replicas timeout` to the node that holds `key` (the one that took the
    /// write just made on this connection); how many replicas acknowledged it.
    pub async fn wait_for_replicas(&mut self, key: &str, replicas: u32, timeout: Duration) -> redis::RedisResult<u32> {
        let mut wait = redis::cmd("WAIT");
        wait.arg(replicas).arg(timeout.as_millis() as u64);
        let acked: Value = match self {
            Conn::Single(conn) => wait.query_async(conn).await?,
            Conn::Cluster(conn) => {
                let route = Route::with_key(key, SlotAddr::Master);
                conn.route_command(wait, RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route))).await?
            }
        };
        Ok(redis::from_redis_value(acked).unwrap_or(0))
    }
}

impl Conn {
    /// Runs independent pipelines (each on one slot, none atomic) as cheaply as the
    /// topology allows: on one Redis as one pipeline (one round trip for all), on a cluster
    /// every command on its own node, concurrently. One reply list per pipeline, in order; a
    /// pipeline with a failed command gets that error alone.
    pub async fn query_each(&mut self, pipes: &[Pipeline]) -> redis::RedisResult<Vec<redis::RedisResult<Vec<Value>>>> {
        match self {
            Conn::Single(conn) => {
                let mut all = redis::pipe();
                all.ignore_errors();
                for cmd in pipes.iter().flat_map(|p| p.cmd_iter()) {
                    all.add_command(cmd.clone());
                }
                let mut replies: Vec<Value> = all.query_async(conn).await?;
                let mut out = Vec::with_capacity(pipes.len());
                for pipe in pipes {
                    let rest = replies.split_off(pipe.len().min(replies.len()));
                    let own = std::mem::replace(&mut replies, rest);
                    out.push(own.into_iter().map(Value::extract_error).collect());
                }
                Ok(out)
            }
            Conn::Cluster(conn) => {
                // Every command on its own: while a reshard moves a slot, its keys sit on two
                // nodes for a moment, and only a command alone follows the redirect (`ASK`)
                // for its own key (a pipeline sent on would read the others where they are
                // not yet, and report them missing).
                let calls = pipes.iter().map(|pipe| {
                    let replies = pipe.cmd_iter().map(|cmd| {
                        let mut conn = conn.clone();
                        async move { cmd.query_async::<Value>(&mut conn).await }
                    });
                    futures_util::future::try_join_all(replies)
                });
                Ok(futures_util::future::join_all(calls).await)
            }
        }
    }

    /// Runs a pipeline of independent reads (see [`Conn::query_each`]): one round trip on one
    /// Redis, every command on its own node on a cluster. The replies, typed.
    pub async fn query_reads<T: redis::FromRedisValue>(&mut self, pipe: &Pipeline) -> redis::RedisResult<Vec<T>> {
        let replies = self.query_each(std::slice::from_ref(pipe)).await?.pop().unwrap_or(Ok(Vec::new()))?;
        replies.into_iter().map(|v| redis::from_redis_value(v).map_err(redis::RedisError::from)).collect()
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}
