//! Each setting's rule, one method a setting (or a pair that must agree), and the `Config`
//! [`Checked::validate`] builds from them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::duration;
use super::egress::{EgressProxy, SecretKey};
use super::history::HistorySettings;
use super::layers::ConfigError;
use super::layers::Layers;
use super::values::{Config, LogFormat, TlsFiles};
use crate::store::queue::rate::RateLimit;

/// The longest most durations may be.
pub(super) const YEAR: Duration = Duration::from_secs(365 * 86_400);

/// The layers read setting by setting, each by its rule.
#[derive(Clone, Copy)]
pub(super) struct Checked<'a>(pub(super) &'a Layers);

impl Checked<'_> {
    pub(super) fn validate(self) -> Result<Config, ConfigError> {
        let (redis_url, redis_cluster) = (self.redis_url()?, self.redis_cluster()?);
        if !redis_cluster.is_empty() && redis_url.is_some() {
            return Err(self.0.invalid("redis_cluster", "set either WEIR_REDIS_CLUSTER or WEIR_REDIS_URL, not both"));
        }
        let retry_schedule = self.retry_schedule()?;
        let (delivery_retention, event_retention) = self.retentions(&retry_schedule)?;
        let plugin_concurrency = self.0.uint("plugin_concurrency", 1, 256)? as usize;
        let ceiling = crate::plans::Ceiling { deliveries: delivery_retention, events: event_retention };
        let plans = std::sync::Arc::new(super::plans::validate(&self.0.plans, &retry_schedule, ceiling)?);
        Ok(Config {
            redis_wait_replicas: self.0.uint("redis_wait_replicas", 0, 16)? as u32,
            redis_partitions: self.redis_partitions(redis_cluster.is_empty())?,
            redis_prefix: self.redis_prefix()?,
            redis_url,
            redis_cluster,
            data_dir: PathBuf::from(self.0.required_string("data_dir")?),
            listen: self.listen()?,
            max_connections: self.0.uint("max_connections", 1, 1_000_000)? as usize,
            runtime_threads: self.or_half_the_cores("runtime_threads", 1024)?,
            log_format: self.log_format()?,
            public_url: self.public_url()?,
            tls: self.tls()?,
            allow_private_targets: self.0.cidrs("allow_private_targets")?,
            trusted_proxies: self.0.cidrs("trusted_proxies")?,
            extra_ca: self.0.string("extra_ca")?.map(PathBuf::from),
            egress_proxy: self.egress_proxy()?,
            secret_key: self.secret_key()?,
            token_ttl: self.token_ttl()?,
            api_rate_limit: self.api_rate_limit()?,
            retry_schedule,
            deactivate_after_failures: self.0.uint("deactivate_after_failures", 1, 1_000_000)? as u32,
            // Zero: no minimum failing span, only the count of failures.
            deactivate_after: self.0.span("deactivate_after", YEAR)?,
            delivery_timeout: self.0.duration("delivery_timeout", Duration::from_secs(300))?,
            max_in_flight_per_webhook: self.0.uint("max_in_flight_per_webhook", 1, 10_000)? as usize,
            worker_concurrency: self.0.uint("worker_concurrency", 1, 100_000)? as usize,
            delivery_retention,
            event_retention,
            export_url_ttl: self.0.duration("export_url_ttl", Duration::from_secs(7 * 86_400))?,
            takeover_after: self.0.duration("takeover_after", Duration::from_secs(3600))?,
            workers: self.0.boolean("workers")?,
            plugin_fuel: self.0.uint("plugin_fuel", 10_000, 10_000_000_000)?,
            plugin_timeout: self.0.duration("plugin_timeout", Duration::from_secs(60))?,
            plugin_memory_mib: self.0.uint("plugin_memory_mib", 1, 4096)? as usize,
            plugin_max_output_kib: self.0.uint("plugin_max_output_kib", 1, 65_536)? as usize,
            plugin_concurrency,
            // Half the machine's cores by default, so one organisation's busy plugins leave
            // CPU for everyone else's; never more than the whole pool.
            plugin_concurrency_per_org: self
                .or_half_the_cores("plugin_concurrency_per_org", 256)?
                .min(plugin_concurrency),
            plugin_cache_mib: self.0.uint("plugin_cache_mib", 64, 1 << 20)?,
            history: self.history()?,
            otel: self.0.otel.clone(),
            plans,
        })
    }

    pub(super) fn redis_url(&self) -> Result<Option<String>, ConfigError> {
        let redis_url = self.0.string("redis_url")?;
        if let Some(url) = &redis_url {
            let scheme_ok = ["redis://", "rediss://", "redis+unix://", "unix://"].iter().any(|s| url.starts_with(s));
            if !scheme_ok || redis::Client::open(url.as_str()).is_err() {
                return Err(self.0.invalid("redis_url", "must be a redis://, rediss:// or redis+unix:// URL"));
            }
        }
        Ok(redis_url)
    }

    pub(super) fn redis_cluster(&self) -> Result<Vec<String>, ConfigError> {
        let seeds = self.0.list("redis_cluster")?.into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>();
        for seed in &seeds {
            let scheme_ok = seed.starts_with("redis://") || seed.starts_with("rediss://");
            if !scheme_ok || redis::Client::open(seed.as_str()).is_err() {
                return Err(self.0.invalid("redis_cluster", format!("`{seed}` is not a redis:// or rediss:// URL")));
            }
        }
        Ok(seeds)
    }

    /// 0: automatic — one on a single Redis (partitions only split its batches), enough to
    /// spread over a cluster's masters on a cluster.
    pub(super) fn redis_partitions(&self, single: bool) -> Result<u16, ConfigError> {
        Ok(match self.0.uint("redis_partitions", 0, u64::from(crate::store::core::keys::MAX_PARTITIONS))? {
            0 if single => 1,
            0 => crate::store::CLUSTER_PARTITIONS,
            n => n as u16,
        })
    }

    pub(super) fn redis_prefix(&self) -> Result<String, ConfigError> {
        let prefix = self.0.required_string("redis_prefix")?;
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(self.0.invalid("redis_prefix", "must be letters, digits, `-`, `_` or `.`"));
        }
        Ok(prefix)
    }

    pub(super) fn listen(&self) -> Result<SocketAddr, ConfigError> {
        let text = self.0.required_string("listen")?;
        text.parse().map_err(|_| self.0.invalid("listen", format!("`{text}` is not an address like 127.0.0.1:8080")))
    }

    pub(super) fn log_format(&self) -> Result<LogFormat, ConfigError> {
        match self.0.required_string("log_format")?.as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(self.0.invalid("log_format", format!("`{other}` is neither `text` nor `json`"))),
        }
    }

    pub(super) fn public_url(&self) -> Result<Option<String>, ConfigError> {
        let public_url = self.0.string("public_url")?;
        if let Some(u) = &public_url {
            let ok = url::Url::parse(u)
                .map(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some())
                .unwrap_or(false);
            if !ok {
                return Err(self.0.invalid("public_url", format!("`{u}` is not an http(s) URL")));
            }
        }
        Ok(public_url)
    }

    pub(super) fn tls(&self) -> Result<Option<TlsFiles>, ConfigError> {
        match (self.0.string("tls_cert")?, self.0.string("tls_key")?) {
            (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert: cert.into(), key: key.into() })),
            (None, None) => Ok(None),
            (Some(_), None) => Err(self.0.invalid("tls_key", "must be set when tls_cert is set")),
            (None, Some(_)) => Err(self.0.invalid("tls_cert", "must be set when tls_key is set")),
        }
    }

    pub(super) fn egress_proxy(&self) -> Result<Option<EgressProxy>, ConfigError> {
        match self.0.string("egress_proxy")? {
            Some(url) => Ok(Some(EgressProxy::parse(&url).map_err(|m| self.0.invalid("egress_proxy", m))?)),
            None => Ok(None),
        }
    }

    pub(super) fn secret_key(&self) -> Result<Option<SecretKey>, ConfigError> {
        match self.0.string("secret_key")? {
            Some(text) if text.len() < 16 => Err(self.0.invalid(
                "secret_key",
                "must be at least 16 characters (32 random bytes, e.g. `openssl rand -hex 32`)",
            )),
            Some(text) => Ok(Some(SecretKey::derive(text.as_bytes()))),
            None => Ok(None),
        }
    }

    /// Seconds (a number), or a duration.
    pub(super) fn token_ttl(&self) -> Result<Duration, ConfigError> {
        let token_ttl = match self.0.is_toml_integer("token_ttl") {
            true => Duration::from_secs(self.0.uint("token_ttl", 1, 31_536_000)?),
            false => {
                let text = self.0.required_string("token_ttl")?;
                match text.parse::<u64>() {
                    Ok(_) => Duration::from_secs(self.0.uint("token_ttl", 1, 31_536_000)?),
                    Err(_) => self.0.duration("token_ttl", YEAR)?,
                }
            }
        };
        if token_ttl < Duration::from_secs(1) {
            return Err(self.0.invalid("token_ttl", "must be at least 1 second"));
        }
        Ok(token_ttl)
    }

    pub(super) fn api_rate_limit(&self) -> Result<Option<RateLimit>, ConfigError> {
        let per_second = self.0.uint("api_rate_limit", 0, 1_000_000)? as u32;
        let burst = self.0.uint("api_rate_burst", 0, 1_000_000)? as u32;
        Ok((per_second > 0).then_some(RateLimit { per_second, burst: if burst == 0 { per_second } else { burst } }))
    }

    pub(super) fn retry_schedule(&self) -> Result<Vec<Duration>, ConfigError> {
        let schedule = self
            .0
            .list("retry_schedule")?
            .iter()
            .map(|s| duration::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| self.0.invalid("retry_schedule", m))?;
        if schedule.is_empty() {
            return Err(self.0.invalid("retry_schedule", "must list at least one delay"));
        }
        if schedule.len() > 50 {
            return Err(self.0.invalid("retry_schedule", "must list at most 50 delays"));
        }
        if let Some(long) = schedule.iter().find(|d| **d > Duration::from_secs(7 * 86_400)) {
            let why = format!("delays must be at most 7d, got {}", duration::format(*long));
            return Err(self.0.invalid("retry_schedule", why));
        }
        Ok(schedule)
    }

    /// The delivery and event retentions: the first outlasts the retry schedule; the second
    /// is at most the first (its default follows a shorter delivery retention).
    pub(super) fn retentions(&self, schedule: &[Duration]) -> Result<(Duration, Duration), ConfigError> {
        let delivery_retention = self.0.duration("delivery_retention", YEAR)?;
        let schedule_span: Duration = schedule.iter().sum();
        if delivery_retention < schedule_span.mul_f64(1.2) + Duration::from_secs(60) {
            let with_jitter = duration::format(schedule_span.mul_f64(1.2));
            let why = format!("must outlast the retry schedule ({with_jitter} with jitter)");
            return Err(self.0.invalid("delivery_retention", why));
        }
        let event_retention = self.0.span("event_retention", YEAR)?;
        let event_retention = match self.0.is_default("event_retention") {
            true => event_retention.min(delivery_retention),
            false => event_retention,
        };
        if event_retention > delivery_retention {
            let why = format!(
                "must be at most delivery_retention ({}): a replayed event becomes a delivery, kept that long",
                duration::format(delivery_retention)
            );
            return Err(self.0.invalid("event_retention", why));
        }
        Ok((delivery_retention, event_retention))
    }

    /// A count whose 0 means half the machine's cores (at least one).
    pub(super) fn or_half_the_cores(&self, key: &'static str, most: u64) -> Result<usize, ConfigError> {
        Ok(match self.0.uint(key, 0, most)? as usize {
            0 => (std::thread::available_parallelism().map_or(2, |n| n.get()) / 2).max(1),
            n => n,
        })
    }

    /// `history_url` and `history_hot` (at most a day).
    pub(super) fn history(&self) -> Result<Option<HistorySettings>, ConfigError> {
        let Some(url) = self.0.string("history_url")? else { return Ok(None) };
        let hot = self.0.duration("history_hot", Duration::from_secs(86_400))?;
        HistorySettings::parse(&url, hot).map(Some).map_err(|m| self.0.invalid("history_url", m))
    }
}
