//! The validated configuration of one Weir process and what is derived from it
//! (`super::load` makes it; nothing else does).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use ipnet::IpNet;

use super::egress::{EgressProxy, SecretKey};
use super::history::HistorySettings;
use super::otel::Otel;
use crate::store::queue::rate::RateLimit;

/// The validated configuration of one Weir process.
#[derive(Debug, Clone)]
pub struct Config {
    /// `None` (and no cluster): Weir manages its own `redis-server` under `data_dir`.
    pub redis_url: Option<String>,
    /// Seed nodes of a Redis Cluster (then `redis_url` is unset).
    pub redis_cluster: Vec<String>,
    /// Replicas every acknowledged write waits for (`WAIT`).
    pub redis_wait_replicas: u32,
    /// Partitions of a new data set.
    pub redis_partitions: u16,
    pub redis_prefix: String,
    pub data_dir: PathBuf,
    pub listen: SocketAddr,
    /// Most connections open at once on the listener.
    pub max_connections: usize,
    /// Threads of the async runtime (HTTP, Redis, delivery hand-offs); with one, tokio's
    /// single-threaded scheduler (no work stealing, tasks woken run in turn).
    pub runtime_threads: usize,
    pub log_format: LogFormat,
    /// Explicit `public_url`; see [`Config::public_url`] for the effective one.
    pub public_url: Option<String>,
    pub tls: Option<TlsFiles>,
    pub allow_private_targets: Vec<IpNet>,
    /// Proxies (CIDRs) whose `X-Forwarded-For` / `Forwarded` name the client's address
    /// (contract §9 "Hardening").
    pub trusted_proxies: Vec<IpNet>,
    pub extra_ca: Option<PathBuf>,
    /// The HTTP proxy every delivery attempt tunnels through (`CONNECT`).
    pub egress_proxy: Option<EgressProxy>,
    /// The operator's key for secrets kept in Redis (client certificates' keys); `None`:
    /// the data directory's own key file.
    pub secret_key: Option<SecretKey>,
    pub token_ttl: Duration,
    /// Per-client API request budget; `None`: unlimited.
    pub api_rate_limit: Option<RateLimit>,
    pub retry_schedule: Vec<Duration>,
    pub deactivate_after_failures: u32,
    pub deactivate_after: Duration,
    pub delivery_timeout: Duration,
    pub max_in_flight_per_webhook: usize,
    pub worker_concurrency: usize,
    pub delivery_retention: Duration,
    /// How far back the event log and replays reach (zero: no event log).
    pub event_retention: Duration,
    pub export_url_ttl: Duration,
    pub takeover_after: Duration,
    pub workers: bool,
    pub plugin_fuel: u64,
    pub plugin_timeout: Duration,
    pub plugin_memory_mib: usize,
    pub plugin_max_output_kib: usize,
    pub plugin_concurrency: usize,
    /// Most plugin calls of one organisation at once in this process.
    pub plugin_concurrency_per_org: usize,
    /// Most MiB of compiled plugins kept on disk.
    pub plugin_cache_mib: u64,
    /// Where ended work goes (`None`: everything stays in Redis).
    pub history: Option<HistorySettings>,
    /// OpenTelemetry's `OTEL_*` variables set (`crate::telemetry` reads them).
    pub otel: Otel,
    /// The plans and what each allows (`[plans.<name>]`).
    pub plans: std::sync::Arc<crate::plans::Plans>,
}

/// How log lines are written (`log_format`, `WEIR_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable, with colours only when stderr is a terminal.
    Text,
    /// One JSON object a line.
    Json,
}

/// Certificate chain and key for the HTTPS listener.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Config {
    /// The base URL used in links Weir hands out.
    pub fn public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => {
                let scheme = if self.tls.is_some() { "https" } else { "http" };
                format!("{scheme}://{}", self.listen)
            }
        }
    }

    /// The directory of the managed Redis.
    pub fn managed_redis_dir(&self) -> PathBuf {
        self.data_dir.join("redis")
    }

    /// The limits of plugin calls.
    pub fn plugin_limits(&self) -> crate::plugins::Limits {
        crate::plugins::Limits {
            fuel: self.plugin_fuel,
            timeout: self.plugin_timeout,
            memory: self.plugin_memory_mib * 1024 * 1024,
            max_output: self.plugin_max_output_kib * 1024,
            concurrency: self.plugin_concurrency,
            concurrency_per_org: self.plugin_concurrency_per_org,
            cache_disk: self.plugin_cache_mib * 1024 * 1024,
            // In memory, as much as on disk, at most 1 GiB.
            cache_memory: (self.plugin_cache_mib * 1024 * 1024).min(1 << 30) as usize,
        }
    }

    /// How to reach the store, unless Weir must manage its own Redis (`None`).
    pub fn store_settings(&self) -> Option<crate::store::Settings> {
        let target = match (&self.redis_url, self.redis_cluster.is_empty()) {
            (Some(url), _) => crate::store::Target::Single(url.clone()),
            (None, false) => crate::store::Target::Cluster(self.redis_cluster.clone()),
            (None, true) => return None,
        };
        Some(crate::store::Settings {
            target,
            prefix: self.redis_prefix.clone(),
            partitions: self.redis_partitions,
            wait_replicas: self.redis_wait_replicas,
            wait_timeout: std::time::Duration::from_secs(1),
            snapshots_per_org: crate::store::MAX_SNAPSHOTS_PER_ORG,
            history: self.history.is_some(),
        })
    }
}
