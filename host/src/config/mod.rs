//! Configuration: one typed [`Config`], loaded once at start and passed down.
//!
//! Three layers, later ones winning: the commented reference file `config.default.toml`
//! (compiled in), an optional `--config FILE`, and `WEIR_<KEY>` environment variables. The
//! merged values are validated together into [`Config`]; every error names the key and the
//! layer it came from, so an operator knows what to fix. Nothing else reads the environment.

mod checks;
pub mod duration;
mod egress;
mod history;
mod layers;
mod otel;
mod plans;
mod values;

use std::path::Path;

pub use egress::{EgressProxy, SecretKey};
pub use history::{HistorySettings, SslMode};
use layers::Layers;
pub use layers::{ConfigError, DEFAULT_TOML, KEYS, Origin, check_variables};
pub use otel::{Otel, VARIABLES as OTEL_VARIABLES};
pub use values::{Config, LogFormat, TlsFiles};

/// Loads the configuration from the defaults, `file`, and the process environment.
/// A `WEIR_` variable that is no setting is refused ([`check_variables`]).
pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
    let names: Vec<String> = std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()).collect();
    check_variables(names.iter().map(String::as_str))?;
    load_with(file, |name| std::env::var(name).ok())
}

/// Loads the configuration with `env` standing in for the process environment.
pub fn load_with(file: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
    checks::Checked(&Layers::load(file, env)?).validate()
}

#[cfg(test)]
mod tests;
