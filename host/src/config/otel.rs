//! OpenTelemetry's standard variables (contract §8 "OpenTelemetry"): read from the
//! environment — they are `OTEL_*`, not `WEIR_*` — or from an `[otel]` table of the
//! configuration file with the same names (`OTEL_EXPORTER_OTLP_ENDPOINT = "http://…"`); a
//! variable that is set wins. Their values are read by `crate::telemetry`, which, as the
//! OpenTelemetry specification asks, warns of an invalid one and uses the default.

/// The variables Weir reads.
pub const VARIABLES: &[&str] = &[
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_TRACES_EXPORTER",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_BSP_SCHEDULE_DELAY",
    "OTEL_BSP_MAX_QUEUE_SIZE",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    "OTEL_BSP_EXPORT_TIMEOUT",
    "OTEL_METRICS_EXPORTER",
    "OTEL_METRIC_EXPORT_INTERVAL",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
];

/// The values set, by name: the file's `[otel]` table, then the environment (the type
/// telemetry reads them as).
pub use crate::telemetry::Otel;

/// Reads the file's `[otel]` table: every key one of [`VARIABLES`], every value a string,
/// number or boolean.
pub(super) fn from_table(table: toml::Value) -> Result<Otel, String> {
    let toml::Value::Table(table) = table else { return Err("must be a table of OTEL_* variables".to_owned()) };
    let mut otel = Otel::new();
    for (name, value) in table {
        if !VARIABLES.contains(&name.as_str()) {
            return Err(format!(
                "has `{name}`, which is not one of the OTEL_* variables Weir reads ({})",
                VARIABLES.join(", ")
            ));
        }
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => return Err(format!("has `{name}` that is not a string, number or boolean")),
        };
        otel.insert(name, value);
    }
    Ok(otel)
}

/// The variables `env` sets, over the file's.
pub(super) fn with_env(mut otel: Otel, env: impl Fn(&str) -> Option<String>) -> Otel {
    for name in VARIABLES {
        if let Some(value) = env(name) {
            otel.insert((*name).to_owned(), value);
        }
    }
    otel
}
