//! Configuration: one typed [`Config`], loaded once at start and passed down.
//!
//! Three layers, later ones winning: the commented reference file `config.default.toml`
//! (compiled in), an optional `--config FILE`, and `WEIR_<KEY>` environment variables. The
//! merged values are validated together into [`Config`]; every error names the key and the
//! layer it came from, so an operator knows what to fix. Nothing else reads the environment.

mod derived;
pub mod duration;
mod egress;
mod history;
mod layers;
mod otel;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;

use crate::store::queue::rate::RateLimit;
pub use egress::{EgressProxy, SecretKey};
pub use history::{History, SslMode};
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
    pub history: Option<History>,
    /// OpenTelemetry's `OTEL_*` variables set (`crate::telemetry` reads them).
    pub otel: Otel,
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

impl Layers {
    fn validate(self) -> Result<Config, ConfigError> {
        const YEAR: Duration = Duration::from_secs(365 * 86_400);

        let redis_url = self.string("redis_url")?;
        if let Some(url) = &redis_url {
            let scheme_ok = ["redis://", "rediss://", "redis+unix://", "unix://"].iter().any(|s| url.starts_with(s));
            if !scheme_ok || redis::Client::open(url.as_str()).is_err() {
                return Err(self.invalid("redis_url", "must be a redis://, rediss:// or redis+unix:// URL"));
            }
        }
        let redis_cluster = self.list("redis_cluster")?.into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>();
        for seed in &redis_cluster {
            let scheme_ok = seed.starts_with("redis://") || seed.starts_with("rediss://");
            if !scheme_ok || redis::Client::open(seed.as_str()).is_err() {
                return Err(self.invalid("redis_cluster", format!("`{seed}` is not a redis:// or rediss:// URL")));
            }
        }
        if !redis_cluster.is_empty() && redis_url.is_some() {
            return Err(self.invalid("redis_cluster", "set either WEIR_REDIS_CLUSTER or WEIR_REDIS_URL, not both"));
        }
        let redis_wait_replicas = self.uint("redis_wait_replicas", 0, 16)? as u32;
        // 0: automatic — one on a single Redis (partitions only split its batches), enough
        // to spread over a cluster's masters on a cluster.
        let redis_partitions =
            match self.uint("redis_partitions", 0, u64::from(crate::store::core::keys::MAX_PARTITIONS))? {
                0 if redis_cluster.is_empty() => 1,
                0 => crate::store::CLUSTER_PARTITIONS,
                n => n as u16,
            };
        let redis_prefix = self.required_string("redis_prefix")?;
        if redis_prefix.is_empty() || !redis_prefix.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(self.invalid("redis_prefix", "must be letters, digits, `-`, `_` or `.`"));
        }
        let data_dir = PathBuf::from(self.required_string("data_dir")?);
        let listen_text = self.required_string("listen")?;
        let listen: SocketAddr = listen_text
            .parse()
            .map_err(|_| self.invalid("listen", format!("`{listen_text}` is not an address like 127.0.0.1:8080")))?;

        let max_connections = self.uint("max_connections", 1, 1_000_000)? as usize;
        let log_format = match self.required_string("log_format")?.as_str() {
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            other => return Err(self.invalid("log_format", format!("`{other}` is neither `text` nor `json`"))),
        };
        let public_url = self.string("public_url")?;
        if let Some(u) = &public_url {
            let ok = url::Url::parse(u)
                .map(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some())
                .unwrap_or(false);
            if !ok {
                return Err(self.invalid("public_url", format!("`{u}` is not an http(s) URL")));
            }
        }

        let tls = match (self.string("tls_cert")?, self.string("tls_key")?) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert: cert.into(), key: key.into() }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(self.invalid("tls_key", "must be set when tls_cert is set"));
            }
            (None, Some(_)) => {
                return Err(self.invalid("tls_cert", "must be set when tls_key is set"));
            }
        };

        let allow_private_targets = self.cidrs("allow_private_targets")?;
        let trusted_proxies = self.cidrs("trusted_proxies")?;

        let extra_ca = self.string("extra_ca")?.map(PathBuf::from);
        let history = self.history()?;
        let egress_proxy = match self.string("egress_proxy")? {
            Some(url) => Some(EgressProxy::parse(&url).map_err(|m| self.invalid("egress_proxy", m))?),
            None => None,
        };
        let secret_key = match self.string("secret_key")? {
            Some(text) if text.len() < 16 => {
                return Err(self.invalid(
                    "secret_key",
                    "must be at least 16 characters (32 random bytes, e.g. `openssl rand -hex 32`)",
                ));
            }
            Some(text) => Some(SecretKey::derive(text.as_bytes())),
            None => None,
        };

        // Seconds (a number), or a duration.
        let token_ttl = match self.is_toml_integer("token_ttl") {
            true => Duration::from_secs(self.uint("token_ttl", 1, 31_536_000)?),
            false => {
                let text = self.required_string("token_ttl")?;
                match text.parse::<u64>() {
                    Ok(_) => Duration::from_secs(self.uint("token_ttl", 1, 31_536_000)?),
                    Err(_) => self.duration("token_ttl", YEAR)?,
                }
            }
        };
        if token_ttl < Duration::from_secs(1) {
            return Err(self.invalid("token_ttl", "must be at least 1 second"));
        }

        let per_second = self.uint("api_rate_limit", 0, 1_000_000)? as u32;
        let burst = self.uint("api_rate_burst", 0, 1_000_000)? as u32;
        let api_rate_limit =
            (per_second > 0).then_some(RateLimit { per_second, burst: if burst == 0 { per_second } else { burst } });

        let retry_schedule = self
            .list("retry_schedule")?
            .iter()
            .map(|s| duration::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| self.invalid("retry_schedule", m))?;
        if retry_schedule.is_empty() {
            return Err(self.invalid("retry_schedule", "must list at least one delay"));
        }
        if retry_schedule.len() > 50 {
            return Err(self.invalid("retry_schedule", "must list at most 50 delays"));
        }
        if let Some(long) = retry_schedule.iter().find(|d| **d > Duration::from_secs(7 * 86_400)) {
            return Err(
                self.invalid("retry_schedule", format!("delays must be at most 7d, got {}", duration::format(*long)))
            );
        }

        let deactivate_after_failures = self.uint("deactivate_after_failures", 1, 1_000_000)? as u32;
        // Zero: no minimum failing span, only the count of failures.
        let deactivate_after = self.span("deactivate_after", YEAR)?;
        let delivery_timeout = self.duration("delivery_timeout", Duration::from_secs(300))?;
        let max_in_flight_per_webhook = self.uint("max_in_flight_per_webhook", 1, 10_000)? as usize;
        let worker_concurrency = self.uint("worker_concurrency", 1, 100_000)? as usize;
        let delivery_retention = self.duration("delivery_retention", YEAR)?;
        let event_retention = self.span("event_retention", YEAR)?;
        let export_url_ttl = self.duration("export_url_ttl", Duration::from_secs(7 * 86_400))?;
        let takeover_after = self.duration("takeover_after", Duration::from_secs(3600))?;
        let workers = self.boolean("workers")?;
        let plugin_fuel = self.uint("plugin_fuel", 10_000, 10_000_000_000)?;
        let plugin_timeout = self.duration("plugin_timeout", Duration::from_secs(60))?;
        let plugin_memory_mib = self.uint("plugin_memory_mib", 1, 4096)? as usize;
        let plugin_max_output_kib = self.uint("plugin_max_output_kib", 1, 65_536)? as usize;
        let plugin_concurrency = self.uint("plugin_concurrency", 1, 256)? as usize;
        let plugin_cache_mib = self.uint("plugin_cache_mib", 64, 1 << 20)?;
        let runtime_threads = match self.uint("runtime_threads", 0, 1024)? as usize {
            0 => half_the_cores(),
            n => n,
        };
        // 0: half the machine's cores (at least one), so one organisation's busy plugins
        // leave CPU for everyone else's; never more than the whole pool.
        let plugin_concurrency_per_org = match self.uint("plugin_concurrency_per_org", 0, 256)? as usize {
            0 => half_the_cores(),
            n => n,
        }
        .min(plugin_concurrency);

        let schedule_span: Duration = retry_schedule.iter().sum();
        if delivery_retention < schedule_span.mul_f64(1.2) + Duration::from_secs(60) {
            return Err(self.invalid(
                "delivery_retention",
                format!(
                    "must outlast the retry schedule ({} with jitter)",
                    duration::format(schedule_span.mul_f64(1.2))
                ),
            ));
        }

        // The default follows a shorter delivery retention; a value set on purpose must fit.
        let event_retention = match self.is_default("event_retention") {
            true => event_retention.min(delivery_retention),
            false => event_retention,
        };
        if event_retention > delivery_retention {
            return Err(self.invalid(
                "event_retention",
                format!(
                    "must be at most delivery_retention ({}): a replayed event becomes a delivery, kept that long",
                    duration::format(delivery_retention)
                ),
            ));
        }

        Ok(Config {
            redis_url,
            redis_cluster,
            redis_wait_replicas,
            redis_partitions,
            redis_prefix,
            data_dir,
            listen,
            max_connections,
            runtime_threads,
            log_format,
            public_url,
            tls,
            allow_private_targets,
            trusted_proxies,
            extra_ca,
            egress_proxy,
            secret_key,
            token_ttl,
            api_rate_limit,
            retry_schedule,
            deactivate_after_failures,
            deactivate_after,
            delivery_timeout,
            max_in_flight_per_webhook,
            worker_concurrency,
            delivery_retention,
            event_retention,
            export_url_ttl,
            takeover_after,
            workers,
            plugin_fuel,
            plugin_timeout,
            plugin_memory_mib,
            plugin_max_output_kib,
            plugin_concurrency,
            plugin_concurrency_per_org,
            plugin_cache_mib,
            history,
            otel: self.otel.clone(),
        })
    }
}

/// Half the cores this process may use (at least one): the default of settings that
/// should leave the rest of the machine to others.
fn half_the_cores() -> usize {
    (std::thread::available_parallelism().map_or(2, |n| n.get()) / 2).max(1)
}

#[cfg(test)]
mod tests;
