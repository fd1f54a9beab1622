//! The layers a configuration is read from — the compiled-in reference file, an optional
//! `--config FILE`, `WEIR_<KEY>` variables — merged key by key, and read as typed values.
//! Every error names the key and the layer its value came from.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::duration;

/// The reference configuration, with every default.
pub const DEFAULT_TOML: &str = include_str!("../../config.default.toml");

/// Every setting Weir knows. A key `foo_bar` is overridden by `WEIR_FOO_BAR`.
pub const KEYS: &[&str] = &[
    "redis_url",
    "redis_cluster",
    "redis_wait_replicas",
    "redis_partitions",
    "redis_prefix",
    "data_dir",
    "listen",
    "max_connections",
    "runtime_threads",
    "log_format",
    "public_url",
    "tls_cert",
    "tls_key",
    "allow_private_targets",
    "trusted_proxies",
    "extra_ca",
    "egress_proxy",
    "secret_key",
    "token_ttl",
    "api_rate_limit",
    "api_rate_burst",
    "retry_schedule",
    "deactivate_after_failures",
    "deactivate_after",
    "delivery_timeout",
    "max_in_flight_per_webhook",
    "worker_concurrency",
    "delivery_retention",
    "event_retention",
    "export_url_ttl",
    "takeover_after",
    "workers",
    "plugin_fuel",
    "plugin_timeout",
    "plugin_memory_mib",
    "plugin_max_output_kib",
    "plugin_concurrency",
    "plugin_concurrency_per_org",
    "plugin_cache_mib",
    "history_url",
    "history_hot",
];

/// A configuration that cannot be used, with the key and layer at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    ReadFile { path: PathBuf, source: std::io::Error },
    #[error("config file {path} is not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("unknown setting `{key}` in {path} (known settings: see config.default.toml)")]
    UnknownKey { path: PathBuf, key: String },
    #[error("{origin}: {message}")]
    Invalid { origin: Origin, message: String },
    #[error("unknown setting {var}{}: every WEIR_ variable must be a known setting (see config.default.toml)", closest.as_ref().map(|c| format!(" (did you mean {c}?)")).unwrap_or_default())]
    UnknownVariable { var: String, closest: Option<String> },
}

/// Variables Weir reads that are not settings of the file.
const OTHER_VARIABLES: &[&str] = &["WEIR_LOG"];

/// Refuses a `WEIR_` variable that is no known setting (a typo, or a setting this build
/// does not know), naming the closest known one.
pub fn check_variables<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), ConfigError> {
    let known: Vec<String> = KEYS
        .iter()
        .map(|k| format!("WEIR_{}", k.to_ascii_uppercase()))
        .chain(OTHER_VARIABLES.iter().map(|v| (*v).to_owned()))
        .collect();
    let mut unknown: Vec<&str> =
        names.into_iter().filter(|n| n.starts_with("WEIR_") && !known.iter().any(|k| k == n)).collect();
    unknown.sort_unstable();
    let Some(var) = unknown.first() else { return Ok(()) };
    let closest = known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(k, var), k))
        .filter(|(d, k)| *d <= 3.max(k.len() / 4))
        .min()
        .map(|(_, k)| k.clone());
    Err(ConfigError::UnknownVariable { var: (*var).to_owned(), closest })
}

/// Where a setting's value came from, for error messages.
#[derive(Debug, Clone)]
pub enum Origin {
    Default(&'static str),
    File(PathBuf, &'static str),
    Env(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default(key) => write!(f, "`{key}` in config.default.toml"),
            Origin::File(path, key) => write!(f, "`{key}` in {}", path.display()),
            Origin::Env(var) => write!(f, "{var}"),
        }
    }
}

enum Raw {
    Toml(toml::Value),
    Env(String),
}

/// The merged, not yet validated settings.
pub(super) struct Layers {
    values: BTreeMap<&'static str, (Raw, Origin)>,
    /// OpenTelemetry's variables (`super::otel`).
    pub(super) otel: super::otel::Otel,
    /// The `[plans.<name>]` tables, each with where it came from (`super::plans` reads
    /// them); a later layer's table of a plan overrides an earlier one's key by key.
    pub(super) plans: BTreeMap<String, (toml::Table, Origin)>,
}

impl Layers {
    /// The defaults, then `file`, then the `WEIR_*` variables `env` gives.
    pub(super) fn load(file: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Result<Layers, ConfigError> {
        let mut layers = Layers { values: BTreeMap::new(), otel: Default::default(), plans: Default::default() };
        let defaults: toml::Table = toml::from_str(DEFAULT_TOML)
            .map_err(|e| ConfigError::Syntax { path: "config.default.toml".into(), message: e.to_string() })?;
        layers.add_table(defaults, Origin::Default, Path::new("config.default.toml"))?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .map_err(|source| ConfigError::ReadFile { path: path.to_owned(), source })?;
            let table: toml::Table = toml::from_str(&text)
                .map_err(|e| ConfigError::Syntax { path: path.to_owned(), message: e.to_string() })?;
            let owned = path.to_owned();
            layers.add_table(table, |key| Origin::File(owned.clone(), key), path)?;
        }
        for key in KEYS {
            let var = format!("WEIR_{}", key.to_ascii_uppercase());
            if let Some(value) = env(&var) {
                layers.values.insert(key, (Raw::Env(value), Origin::Env(var)));
            }
        }
        layers.otel = super::otel::with_env(std::mem::take(&mut layers.otel), &env);
        Ok(layers)
    }

    fn add_table(
        &mut self,
        table: toml::Table,
        origin: impl Fn(&'static str) -> Origin,
        path: &Path,
    ) -> Result<(), ConfigError> {
        for (name, value) in table {
            if name == "otel" {
                self.otel = super::otel::from_table(value)
                    .map_err(|message| ConfigError::Invalid { origin: origin("otel"), message })?;
                continue;
            }
            if name == "plans" {
                self.add_plans(value, origin("plans"))?;
                continue;
            }
            let Some(key) = KEYS.iter().find(|k| **k == name) else {
                return Err(ConfigError::UnknownKey { path: path.to_owned(), key: name });
            };
            self.values.insert(key, (Raw::Toml(value), origin(key)));
        }
        Ok(())
    }

    /// Adds the plans of a `plans` table.
    fn add_plans(&mut self, value: toml::Value, origin: Origin) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { origin: origin.clone(), message };
        let toml::Value::Table(plans) = value else {
            return Err(invalid("must be a table of plans: [plans.<name>]".into()));
        };
        for (name, table) in plans {
            if !crate::plans::is_valid_name(&name) {
                return Err(invalid(format!("plan name `{name}`: use 1-32 lower-case letters, digits, - and _")));
            }
            let toml::Value::Table(table) = table else {
                return Err(invalid(format!("plans.{name} must be a table")));
            };
            // Key by key over the plan of that name an earlier layer set (the shipped
            // `free` and `pro`): a key neither sets is no limit.
            match self.plans.get_mut(&name) {
                Some((kept, kept_origin)) => {
                    kept.extend(table);
                    *kept_origin = origin.clone();
                }
                None => {
                    self.plans.insert(name, (table, origin.clone()));
                }
            }
        }
        Ok(())
    }

    /// Whether `key` keeps the reference file's value (no file or variable set it).
    pub(super) fn is_default(&self, key: &'static str) -> bool {
        matches!(self.values.get(key), None | Some((_, Origin::Default(_))))
    }

    pub(super) fn invalid(&self, key: &'static str, message: impl Into<String>) -> ConfigError {
        let origin = self.values.get(key).map(|(_, o)| o.clone()).unwrap_or(Origin::Default(key));
        ConfigError::Invalid { origin, message: message.into() }
    }

    pub(super) fn string(&self, key: &'static str) -> Result<Option<String>, ConfigError> {
        match self.values.get(key) {
            None => Ok(None),
            Some((Raw::Env(s), _)) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
            Some((Raw::Toml(toml::Value::String(s)), _)) => Ok(Some(s.clone())),
            Some(_) => Err(self.invalid(key, "must be a string")),
        }
    }

    pub(super) fn required_string(&self, key: &'static str) -> Result<String, ConfigError> {
        self.string(key)?.ok_or_else(|| self.invalid(key, "must be set"))
    }

    pub(super) fn uint(&self, key: &'static str, min: u64, max: u64) -> Result<u64, ConfigError> {
        let n = match self.values.get(key) {
            Some((Raw::Env(s), _)) => {
                s.trim().parse::<u64>().map_err(|_| self.invalid(key, format!("`{s}` is not a whole number")))?
            }
            Some((Raw::Toml(toml::Value::Integer(i)), _)) => {
                u64::try_from(*i).map_err(|_| self.invalid(key, "must not be negative"))?
            }
            Some(_) => return Err(self.invalid(key, "must be a whole number")),
            None => return Err(self.invalid(key, "must be set")),
        };
        if n < min || n > max {
            return Err(self.invalid(key, format!("must be between {min} and {max}, got {n}")));
        }
        Ok(n)
    }

    pub(super) fn duration(&self, key: &'static str, max: Duration) -> Result<Duration, ConfigError> {
        let d = duration::parse(&self.required_string(key)?).map_err(|m| self.invalid(key, m))?;
        self.at_most(key, d, max)
    }

    /// A duration that may be zero.
    pub(super) fn span(&self, key: &'static str, max: Duration) -> Result<Duration, ConfigError> {
        let d = duration::parse_span(&self.required_string(key)?).map_err(|m| self.invalid(key, m))?;
        self.at_most(key, d, max)
    }

    pub(super) fn at_most(&self, key: &'static str, d: Duration, max: Duration) -> Result<Duration, ConfigError> {
        if d > max {
            return Err(self.invalid(key, format!("must be at most {}", duration::format(max))));
        }
        Ok(d)
    }

    /// Whether the value of `key` is a TOML integer (not a string).
    pub(super) fn is_toml_integer(&self, key: &'static str) -> bool {
        matches!(self.values.get(key), Some((Raw::Toml(toml::Value::Integer(_)), _)))
    }

    pub(super) fn boolean(&self, key: &'static str) -> Result<bool, ConfigError> {
        match self.values.get(key) {
            Some((Raw::Toml(toml::Value::Boolean(b)), _)) => Ok(*b),
            Some((Raw::Env(s), _)) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => Ok(true),
                "false" | "0" | "no" | "off" => Ok(false),
                other => Err(self.invalid(key, format!("`{other}` is not true or false"))),
            },
            Some(_) => Err(self.invalid(key, "must be true or false")),
            None => Err(self.invalid(key, "must be set")),
        }
    }

    /// A list of CIDRs (a bare address is its own /32 or /128).
    pub(super) fn cidrs(&self, key: &'static str) -> Result<Vec<ipnet::IpNet>, ConfigError> {
        self.list(key)?
            .iter()
            .map(|text| {
                text.parse::<ipnet::IpNet>()
                    .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .map(|n| n.trunc())
                    .map_err(|_| self.invalid(key, format!("`{text}` is not a CIDR such as 10.0.0.0/8")))
            })
            .collect()
    }

    pub(super) fn list(&self, key: &'static str) -> Result<Vec<String>, ConfigError> {
        match self.values.get(key) {
            None => Ok(Vec::new()),
            Some((Raw::Env(s), _)) if s.trim().is_empty() => Ok(Vec::new()),
            Some((Raw::Env(s), _)) => Ok(s.split(',').map(|item| item.trim().to_owned()).collect()),
            Some((Raw::Toml(toml::Value::Array(items)), _)) => items
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s.clone()),
                    _ => Err(self.invalid(key, "must be a list of strings")),
                })
                .collect(),
            Some(_) => Err(self.invalid(key, "must be a list of strings")),
        }
    }
}
