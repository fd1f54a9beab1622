//! Configuration: one typed [`Config`], loaded once at start and passed down.
//!
//! Three layers, later ones winning: the commented reference file `config.default.toml`
//! (compiled in), an optional `--config FILE`, and `WEIR_<KEY>` environment variables. The
//! merged values are validated together into [`Config`]; every error names the key and the
//! layer it came from, so an operator knows what to fix. Nothing else reads the environment.

mod checks;
mod derived;
pub mod duration;
mod egress;
mod history;
mod layers;
mod otel;
mod plans;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;

use crate::store::queue::rate::RateLimit;
pub use egress::{EgressProxy, SecretKey};
pub use history::{HistorySettings, SslMode};
use layers::Layers;
pub use layers::{ConfigError, DEFAULT_TOML, KEYS, Origin, check_variables};
pub use otel::{Otel, VARIABLES as OTEL_VARIABLES};

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
    /// Loads the configuration from the defaults, `file`, and the process environment.
    /// A `WEIR_` variable that is no setting is refused ([`check_variables`]).
    pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
        let names: Vec<String> = std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()).collect();
        check_variables(names.iter().map(String::as_str))?;
        Config::load_with(file, |name| std::env::var(name).ok())
    }

    /// Loads the configuration with `env` standing in for the process environment.
    pub fn load_with(file: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        Layers::load(file, env)?.validate()
    }

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
}

#[cfg(test)]
mod tests;
