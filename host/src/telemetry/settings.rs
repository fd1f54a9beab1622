//! The `OTEL_*` variables (`crate::config::Otel`) read into what the exporter, the sampler
//! and the batching need. As the OpenTelemetry specification asks, an invalid value is
//! warned of and its default used; only a missing or unusable endpoint turns export off.

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_otlp::Protocol;
use opentelemetry_sdk::trace::Sampler;

/// The `OTEL_*` variables set, by name (`crate::config` reads them from the environment and the file).
pub(crate) type Otel = std::collections::BTreeMap<String, String>;

/// What export needs, read from the variables.
#[derive(Debug)]
pub(super) struct Settings {
    /// Where spans go: the traces endpoint as given, or the general one with `/v1/traces`.
    pub(super) endpoint: String,
    pub(super) protocol: Protocol,
    pub(super) headers: HashMap<String, String>,
    /// One export request's bound (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s).
    pub(super) timeout: Duration,
    pub(super) sampler: Sampler,
    pub(super) service_name: String,
    pub(super) resource: Vec<KeyValue>,
    pub(super) batch: Batch,
}

/// The batching (`OTEL_BSP_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Batch {
    /// How long spans wait to be sent at most (5 s).
    pub(super) delay: Duration,
    /// Most spans waiting; past that, new ones are dropped (2,048).
    pub(super) queue: usize,
    /// Most spans in one request (512).
    pub(super) batch: usize,
    /// One export's bound, retries included (30 s).
    pub(super) timeout: Duration,
}

/// Metrics over OTLP (`OTEL_METRICS_EXPORTER`, `OTEL_METRIC_EXPORT_INTERVAL`).
#[derive(Debug)]
pub(super) struct MetricsSettings {
    /// The metrics endpoint as given, or the general one with `/v1/metrics`.
    pub(super) endpoint: String,
    pub(super) json: bool,
    pub(super) headers: HashMap<String, String>,
    pub(super) timeout: Duration,
    /// How often the registry is sent (60 s).
    pub(super) interval: Duration,
    pub(super) resource: Vec<(String, String)>,
}

impl MetricsSettings {
    /// The settings, unless metrics are not to be exported (no endpoint, disabled, or
    /// `OTEL_METRICS_EXPORTER=none`).
    pub(super) fn read(otel: &Otel) -> Option<MetricsSettings> {
        let get = |name: &str| otel.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || get("OTEL_METRICS_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"))
        {
            return None;
        }
        let endpoint = match (get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"), get("OTEL_EXPORTER_OTLP_ENDPOINT")) {
            (Some(metrics), _) => metrics.to_owned(),
            (None, Some(base)) => format!("{}/v1/metrics", base.trim_end_matches('/')),
            (None, None) => return None,
        };
        match url::Url::parse(&endpoint) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {}
            _ => {
                tracing::warn!(
                    endpoint,
                    "the OTLP metrics endpoint is not an http:// or https:// URL; no metrics are exported"
                );
                return None;
            }
        }
        let json = match get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL").or(get("OTEL_EXPORTER_OTLP_PROTOCOL")) {
            None | Some("http/protobuf") => false,
            Some("http/json") => true,
            Some(other) => {
                warn("OTEL_EXPORTER_OTLP_PROTOCOL", other, "http/protobuf");
                false
            }
        };
        let mut headers = pairs(get("OTEL_EXPORTER_OTLP_HEADERS"));
        headers.extend(pairs(get("OTEL_EXPORTER_OTLP_METRICS_HEADERS")));
        let traces = Settings::read(otel).ok();
        let (service, attributes) = match &traces {
            Some(s) => (s.service_name.clone(), s.resource.clone()),
            None => (get("OTEL_SERVICE_NAME").unwrap_or("weir").to_owned(), Vec::new()),
        };
        let mut resource = vec![("service.name".to_owned(), service)];
        resource.extend(attributes.iter().map(|kv| (kv.key.to_string(), kv.value.to_string())));
        Some(MetricsSettings {
            endpoint,
            json,
            headers,
            timeout: millis("OTEL_EXPORTER_OTLP_TIMEOUT", get("OTEL_EXPORTER_OTLP_TIMEOUT"), 10_000),
            interval: millis("OTEL_METRIC_EXPORT_INTERVAL", get("OTEL_METRIC_EXPORT_INTERVAL"), 60_000)
                .max(Duration::from_millis(100)),
            resource,
        })
    }
}

/// Why nothing is exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Off {
    /// No endpoint is set (the default).
    NoEndpoint,
    /// `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
    Disabled,
    /// The endpoint is not an `http://` or `https://` URL.
    BadEndpoint(String),
}

impl Settings {
    /// The settings, or why export is off.
    pub(super) fn read(otel: &Otel) -> Result<Settings, Off> {
        let get = |name: &str| otel.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || get("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"))
        {
            return Err(Off::Disabled);
        }
        if let Some(other) = get("OTEL_TRACES_EXPORTER").filter(|v| !v.eq_ignore_ascii_case("otlp")) {
            warn("OTEL_TRACES_EXPORTER", other, "otlp");
        }
        let endpoint = match (get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), get("OTEL_EXPORTER_OTLP_ENDPOINT")) {
            (Some(traces), _) => traces.to_owned(),
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Err(Off::NoEndpoint),
        };
        match url::Url::parse(&endpoint) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {}
            _ => return Err(Off::BadEndpoint(endpoint)),
        }
        let protocol = match get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or(get("OTEL_EXPORTER_OTLP_PROTOCOL")) {
            None | Some("http/protobuf") => Protocol::HttpBinary,
            Some("http/json") => Protocol::HttpJson,
            Some(other) => {
                warn("OTEL_EXPORTER_OTLP_PROTOCOL", other, "http/protobuf");
                Protocol::HttpBinary
            }
        };
        let mut headers = pairs(get("OTEL_EXPORTER_OTLP_HEADERS"));
        headers.extend(pairs(get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")));
        let timeout = get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .map(|v| ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", v))
            .or(get("OTEL_EXPORTER_OTLP_TIMEOUT").map(|v| ("OTEL_EXPORTER_OTLP_TIMEOUT", v)))
            .map_or(Duration::from_secs(10), |(name, v)| millis(name, Some(v), 10_000));
        let mut resource: Vec<KeyValue> = pairs(get("OTEL_RESOURCE_ATTRIBUTES"))
            .into_iter()
            .filter(|(k, _)| k != "service.name")
            .map(|(k, v)| KeyValue::new(k, v))
            .collect();
        resource.sort_by(|a, b| a.key.as_str().cmp(b.key.as_str()));
        let service_name = get("OTEL_SERVICE_NAME")
            .map(str::to_owned)
            .or_else(|| pairs(get("OTEL_RESOURCE_ATTRIBUTES")).remove("service.name"))
            .unwrap_or_else(|| "weir".to_owned());
        let batch = Batch {
            delay: millis("OTEL_BSP_SCHEDULE_DELAY", get("OTEL_BSP_SCHEDULE_DELAY"), 5_000),
            queue: count("OTEL_BSP_MAX_QUEUE_SIZE", get("OTEL_BSP_MAX_QUEUE_SIZE"), 2_048),
            batch: count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), 512),
            timeout: millis("OTEL_BSP_EXPORT_TIMEOUT", get("OTEL_BSP_EXPORT_TIMEOUT"), 30_000),
        };
        let batch = Batch { batch: batch.batch.min(batch.queue), ..batch };
        Ok(Settings {
            endpoint,
            protocol,
            headers,
            timeout,
            sampler: sampler(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG")),
            service_name,
            resource,
            batch,
        })
    }
}

fn warn(name: &str, value: &str, used: &str) {
    tracing::warn!(
        variable = name,
        value,
        used,
        "an OpenTelemetry variable has a value Weir does not know; using the default"
    );
}

/// `key=value,key2=value2`, values percent-decoded (the specification's W3C Baggage form).
fn pairs(text: Option<&str>) -> HashMap<String, String> {
    let decode = |s: &str| percent_encoding::percent_decode_str(s.trim()).decode_utf8_lossy().into_owned();
    text.unwrap_or_default()
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

fn millis(name: &str, value: Option<&str>, default: u64) -> Duration {
    match value.map(str::parse::<u64>) {
        None => Duration::from_millis(default),
        Some(Ok(ms)) => Duration::from_millis(ms),
        Some(Err(_)) => {
            warn(name, value.unwrap_or_default(), &default.to_string());
            Duration::from_millis(default)
        }
    }
}

fn count(name: &str, value: Option<&str>, default: usize) -> usize {
    match value.map(str::parse::<usize>) {
        None => default,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            warn(name, value.unwrap_or_default(), &default.to_string());
            default
        }
    }
}

/// `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) and its argument.
fn sampler(name: Option<&str>, arg: Option<&str>) -> Sampler {
    let ratio = || match arg.map(str::parse::<f64>) {
        None => 1.0,
        Some(Ok(r)) if (0.0..=1.0).contains(&r) => r,
        Some(_) => {
            warn("OTEL_TRACES_SAMPLER_ARG", arg.unwrap_or_default(), "1.0");
            1.0
        }
    };
    match name.unwrap_or("parentbased_always_on") {
        "always_on" => Sampler::AlwaysOn,
        "always_off" => Sampler::AlwaysOff,
        "traceidratio" => Sampler::TraceIdRatioBased(ratio()),
        "parentbased_always_on" => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        "parentbased_always_off" => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        "parentbased_traceidratio" => Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio()))),
        other => {
            warn("OTEL_TRACES_SAMPLER", other, "parentbased_always_on");
            Sampler::ParentBased(Box::new(Sampler::AlwaysOn))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn otel(pairs: &[(&str, &str)]) -> Otel {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn no_endpoint_or_disabled_exports_nothing() {
        assert_eq!(Settings::read(&otel(&[])).unwrap_err(), Off::NoEndpoint);
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")];
        assert!(Settings::read(&otel(&on)).is_ok());
        for off in [("OTEL_SDK_DISABLED", "true"), ("OTEL_TRACES_EXPORTER", "none")] {
            assert_eq!(Settings::read(&otel(&[on[0], off])).unwrap_err(), Off::Disabled);
        }
        let bad = Settings::read(&otel(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4318")])).unwrap_err();
        assert!(matches!(bad, Off::BadEndpoint(_)));
    }

    #[test]
    fn the_variables_are_read_as_the_specification_says() {
        let s = Settings::read(&otel(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=a%20b, tenant=7"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=prod,service.name=ignored"),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "10"),
        ]))
        .unwrap();
        assert_eq!(s.endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(s.protocol, Protocol::HttpJson);
        assert_eq!(s.headers.get("x-api-key").map(String::as_str), Some("a b"));
        assert_eq!(s.headers.get("tenant").map(String::as_str), Some("7"));
        assert_eq!(s.timeout, Duration::from_millis(2500));
        assert_eq!(s.service_name, "ignored", "service.name from the attributes when OTEL_SERVICE_NAME is unset");
        assert_eq!(s.resource, vec![KeyValue::new("deployment.environment", "prod")]);
        assert!(matches!(s.sampler, Sampler::ParentBased(_)));
        assert_eq!(
            s.batch,
            Batch { delay: Duration::from_millis(100), queue: 10, batch: 10, timeout: Duration::from_secs(30) }
        );
        // The traces endpoint is used as given; invalid values fall back to the defaults.
        let s = Settings::read(&otel(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://collector.internal/otlp/traces"),
            ("OTEL_SERVICE_NAME", "weir-eu"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "lots"),
        ]))
        .unwrap();
        assert_eq!(s.endpoint, "https://collector.internal/otlp/traces");
        assert_eq!(s.service_name, "weir-eu");
        assert_eq!(s.protocol, Protocol::HttpBinary);
        assert_eq!(s.batch.queue, 2048);
    }
}
