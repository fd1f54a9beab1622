//! The `OTEL_*` variables (`crate::config::Otel`) read into what the exporter, the sampler
//! and the batching need. As the OpenTelemetry specification asks, an invalid value is
//! warned of and its default used; only a missing or unusable endpoint turns export off.

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_otlp::Protocol;
use opentelemetry_sdk::trace::Sampler;

/// The `OTEL_*` variables set, by name (`crate::config` reads them from the environment and the file).
pub type Otel = std::collections::BTreeMap<String, String>;

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
    /// The settings, or why metrics are not exported (no endpoint, disabled, or
    /// `OTEL_METRICS_EXPORTER=none`).
    pub(super) fn read(otel: &Otel) -> Result<MetricsSettings, Off> {
        let to = Destination::read(otel, "METRICS", "/v1/metrics")?;
        let (service, attributes) = resource(otel);
        let mut resource = vec![("service.name".to_owned(), service)];
        resource.extend(attributes.iter().map(|kv| (kv.key.to_string(), kv.value.to_string())));
        let interval = get(otel, "OTEL_METRIC_EXPORT_INTERVAL");
        Ok(MetricsSettings {
            endpoint: to.endpoint,
            json: to.protocol == Protocol::HttpJson,
            headers: to.headers,
            timeout: to.timeout,
            interval: millis("OTEL_METRIC_EXPORT_INTERVAL", interval, 60_000).max(Duration::from_millis(100)),
            resource,
        })
    }
}

/// Why nothing is exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Off {
    /// No endpoint is set (the default).
    NoEndpoint,
    /// `OTEL_SDK_DISABLED=true`, or the signal's exporter is `none`.
    Disabled,
    /// The endpoint is not an `http://` or `https://` URL.
    BadEndpoint(String),
}

/// Where and how one signal is sent: the variables both signals read, each with its
/// signal's own (`OTEL_EXPORTER_OTLP_TRACES_…`, `…_METRICS_…`) winning over the general one.
struct Destination {
    endpoint: String,
    protocol: Protocol,
    headers: HashMap<String, String>,
    /// One export request's bound (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s).
    timeout: Duration,
}

impl Destination {
    /// `signal` is `TRACES` or `METRICS`; `path` is appended to the general endpoint.
    fn read(otel: &Otel, signal: &str, path: &str) -> Result<Destination, Off> {
        let own = |name: &str| format!("OTEL_EXPORTER_OTLP_{signal}_{name}");
        let general = |name: &str| format!("OTEL_EXPORTER_OTLP_{name}");
        if get(otel, "OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || get(otel, &format!("OTEL_{signal}_EXPORTER")).is_some_and(|v| v.eq_ignore_ascii_case("none"))
        {
            return Err(Off::Disabled);
        }
        let endpoint = match (get(otel, &own("ENDPOINT")), get(otel, &general("ENDPOINT"))) {
            (Some(endpoint), _) => endpoint.to_owned(),
            (None, Some(base)) => format!("{}{path}", base.trim_end_matches('/')),
            (None, None) => return Err(Off::NoEndpoint),
        };
        match url::Url::parse(&endpoint) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {}
            _ => return Err(Off::BadEndpoint(endpoint)),
        }
        let protocol = match get(otel, &own("PROTOCOL")).or(get(otel, &general("PROTOCOL"))) {
            None | Some("http/protobuf") => Protocol::HttpBinary,
            Some("http/json") => Protocol::HttpJson,
            Some(other) => {
                warn("OTEL_EXPORTER_OTLP_PROTOCOL", other, "http/protobuf");
                Protocol::HttpBinary
            }
        };
        let mut headers = pairs(get(otel, &general("HEADERS")));
        headers.extend(pairs(get(otel, &own("HEADERS"))));
        let timeout = [own("TIMEOUT"), general("TIMEOUT")]
            .into_iter()
            .find_map(|name| get(otel, &name).map(|v| millis(&name, Some(v), 10_000)))
            .unwrap_or(Duration::from_secs(10));
        Ok(Destination { endpoint, protocol, headers, timeout })
    }
}

/// A variable's value, unless unset or blank.
/// An endpoint as logs show it: without its `user:password` and query (either may carry a
/// credential).
pub(super) fn shown(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.to_string()
        }
        // Not a URL: whatever stands before an `@` may be a credential.
        Err(_) => endpoint.rsplit('@').next().unwrap_or_default().to_owned(),
    }
}

fn get<'a>(otel: &'a Otel, name: &str) -> Option<&'a str> {
    otel.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// `service.name` (`OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`,
/// else `weir`) and the other resource attributes, by name.
fn resource(otel: &Otel) -> (String, Vec<KeyValue>) {
    let mut attributes = pairs(get(otel, "OTEL_RESOURCE_ATTRIBUTES"));
    let from_attributes = attributes.remove("service.name");
    let service =
        get(otel, "OTEL_SERVICE_NAME").map(str::to_owned).or(from_attributes).unwrap_or_else(|| "weir".to_owned());
    let mut resource: Vec<KeyValue> = attributes.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect();
    resource.sort_by(|a, b| a.key.as_str().cmp(b.key.as_str()));
    (service, resource)
}

impl Settings {
    /// The settings, or why export is off.
    pub(super) fn read(otel: &Otel) -> Result<Settings, Off> {
        let to = Destination::read(otel, "TRACES", "/v1/traces")?;
        if let Some(other) = get(otel, "OTEL_TRACES_EXPORTER").filter(|v| !v.eq_ignore_ascii_case("otlp")) {
            warn("OTEL_TRACES_EXPORTER", other, "otlp");
        }
        let (service_name, resource) = resource(otel);
        let get = |name: &str| get(otel, name);
        let batch = Batch {
            delay: millis("OTEL_BSP_SCHEDULE_DELAY", get("OTEL_BSP_SCHEDULE_DELAY"), 5_000),
            queue: count("OTEL_BSP_MAX_QUEUE_SIZE", get("OTEL_BSP_MAX_QUEUE_SIZE"), 2_048),
            batch: count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), 512),
            timeout: millis("OTEL_BSP_EXPORT_TIMEOUT", get("OTEL_BSP_EXPORT_TIMEOUT"), 30_000),
        };
        let batch = Batch { batch: batch.batch.min(batch.queue), ..batch };
        Ok(Settings {
            endpoint: to.endpoint,
            protocol: to.protocol,
            headers: to.headers,
            timeout: to.timeout,
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

    #[test]
    fn an_endpoint_is_logged_without_its_credentials() {
        assert_eq!(shown("http://user:secret@collector:4318/v1?token=x"), "http://collector:4318/v1");
        assert_eq!(shown("https://collector:4318"), "https://collector:4318/");
        assert_eq!(shown("//user:secret@collector:4318"), "collector:4318");
    }

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

    #[test]
    fn metrics_read_the_same_variables_with_their_own_winning() {
        let general = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=prod,service.name=from-attributes"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ];
        let m = MetricsSettings::read(&otel(&general)).unwrap();
        assert_eq!(m.endpoint, "http://127.0.0.1:4318/v1/metrics");
        assert!(m.json);
        assert_eq!(m.headers.get("x-api-key").map(String::as_str), Some("k"));
        assert_eq!(m.interval, Duration::from_secs(60));
        assert_eq!(
            m.resource,
            [
                ("service.name".to_owned(), "from-attributes".to_owned()),
                ("deployment.environment".to_owned(), "prod".to_owned())
            ],
            "the resource whether or not traces are exported"
        );
        let mut own = general.to_vec();
        own.extend([
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "https://metrics.internal/v1/m"),
            ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "250"),
        ]);
        let m = MetricsSettings::read(&otel(&own)).unwrap();
        assert_eq!(m.endpoint, "https://metrics.internal/v1/m");
        assert!(!m.json);
        assert_eq!(m.interval, Duration::from_millis(250));
        own.push(("OTEL_METRICS_EXPORTER", "none"));
        assert_eq!(MetricsSettings::read(&otel(&own)).unwrap_err(), Off::Disabled);
        assert_eq!(MetricsSettings::read(&otel(&[])).unwrap_err(), Off::NoEndpoint);
    }
}
