//! Metrics over OTLP (`OTEL_METRICS_EXPORTER`, default `otlp` when an endpoint is set): the
//! same series as `/metrics`, read from the Prometheus registry's text every
//! `OTEL_METRIC_EXPORT_INTERVAL` (60 s) and sent to `{endpoint}/v1/metrics` — counters as
//! cumulative monotonic sums (named as their family, without `_total`), gauges as gauges,
//! histograms with their buckets — so a collector-only setup needs no scrape. One exporter
//! of the registry, so `/metrics` and OTLP never disagree.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use opentelemetry_http::HttpClient;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Gauge, Histogram, HistogramDataPoint, Metric, NumberDataPoint, ResourceMetrics,
    ScopeMetrics, Sum, metric, number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;

use super::http::Client;

/// The registry's text exposition, as `/metrics` serves it now.
pub(crate) type Read = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = String> + Send>> + Send + Sync>;

/// What the exporting task needs.
pub(super) struct Export {
    pub(super) client: Client,
    pub(super) settings: super::settings::MetricsSettings,
    pub(super) read: Read,
}

/// Sends the registry every interval until the process ends.
pub(super) async fn run(export: Export) {
    let start = nanos(SystemTime::now());
    let mut every = tokio::time::interval(export.settings.interval);
    every.tick().await;
    let mut failing = false;
    loop {
        every.tick().await;
        let text = (export.read)().await;
        let request = request(&text, &export.settings.resource, start, nanos(SystemTime::now()));
        match send(&export, &request).await {
            Ok(()) => failing = false,
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "cannot export metrics to the OpenTelemetry collector; trying again at the next interval");
            }
            Err(_) => {}
        }
    }
}

async fn send(export: &Export, request: &ExportMetricsServiceRequest) -> Result<(), String> {
    let settings = &export.settings;
    let (body, kind) = if settings.json {
        (serde_json::to_vec(request).map_err(|e| e.to_string())?, "application/json")
    } else {
        (request.encode_to_vec(), "application/x-protobuf")
    };
    let mut builder = http::Request::post(&settings.endpoint).header("content-type", kind);
    for (name, value) in &settings.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let request = builder.body(Bytes::from(body)).map_err(|e| e.to_string())?;
    let answer = export.client.send_bytes(request).await.map_err(|e| e.to_string())?;
    if answer.status().is_success() { Ok(()) } else { Err(format!("the collector answered {}", answer.status())) }
}

fn nanos(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn attribute(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.to_owned())) }),
        ..Default::default()
    }
}

/// The registry's text exposition as an OTLP request.
pub(super) fn request(text: &str, resource: &[(String, String)], start: u64, now: u64) -> ExportMetricsServiceRequest {
    let metrics = families(text).into_iter().filter_map(|family| family.metric(start, now)).collect();
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(Resource {
                attributes: resource.iter().map(|(k, v)| attribute(k, v)).collect(),
                ..Default::default()
            }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "weir".to_owned(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    ..Default::default()
                }),
                metrics,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// One family of the exposition: `# HELP`, `# TYPE` and its samples.
#[derive(Debug, Default)]
struct Family {
    name: String,
    help: String,
    kind: String,
    samples: Vec<Sample>,
}

type Labels = Vec<(String, String)>;

/// One line of a family: its name (with its suffix), labels and value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: Labels,
    value: f64,
}

fn families(text: &str) -> Vec<Family> {
    let mut out: Vec<Family> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            out.push(Family { name: name.to_owned(), help: help.to_owned(), ..Family::default() });
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            match out.last_mut() {
                Some(family) if family.name == name => family.kind = kind.to_owned(),
                _ => out.push(Family { name: name.to_owned(), kind: kind.to_owned(), ..Family::default() }),
            }
        } else if !line.starts_with('#')
            && !line.trim().is_empty()
            && let Some(sample) = sample(line)
            && let Some(family) = out.last_mut()
        {
            family.samples.push(sample);
        }
    }
    out
}

/// `name{a="x",b="y"} 1.5` (values with `\"`, `\\` and `\n` escapes).
fn sample(line: &str) -> Option<Sample> {
    let (series, value) = line.rsplit_once(' ')?;
    let value: f64 = value.parse().ok()?;
    let Some((name, labels)) = series.split_once('{') else {
        return Some(Sample { name: series.to_owned(), labels: Vec::new(), value });
    };
    let mut labels_out = Vec::new();
    let mut rest = labels.strip_suffix('}')?;
    while let Some((key, after)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => value.push(other),
                    None => {}
                },
                '"' => {
                    end = Some(i);
                    break;
                }
                c => value.push(c),
            }
        }
        labels_out.push((key.trim_start_matches(',').to_owned(), value));
        rest = &after[end? + 1..];
    }
    Some(Sample { name: name.to_owned(), labels: labels_out, value })
}

impl Family {
    fn metric(&self, start: u64, now: u64) -> Option<Metric> {
        let point = |labels: &[(String, String)], value: f64| NumberDataPoint {
            attributes: labels.iter().map(|(k, v)| attribute(k, v)).collect(),
            start_time_unix_nano: start,
            time_unix_nano: now,
            value: Some(number_data_point::Value::AsDouble(value)),
            ..Default::default()
        };
        let data = match self.kind.as_str() {
            "counter" => metric::Data::Sum(Sum {
                data_points: self.samples.iter().map(|s| point(&s.labels, s.value)).collect(),
                aggregation_temporality: AggregationTemporality::Cumulative as i32,
                is_monotonic: true,
            }),
            "gauge" => metric::Data::Gauge(Gauge {
                data_points: self.samples.iter().map(|s| point(&s.labels, s.value)).collect(),
            }),
            "histogram" => metric::Data::Histogram(Histogram {
                data_points: self.histogram_points(start, now),
                aggregation_temporality: AggregationTemporality::Cumulative as i32,
            }),
            _ => return None,
        };
        Some(Metric {
            name: self.name.trim_end_matches("_total").to_owned(),
            description: self.help.clone(),
            unit: if self.name.ends_with("_seconds") { "s".to_owned() } else { String::new() },
            data: Some(data),
            ..Default::default()
        })
    }

    /// Each label set's buckets (cumulative in the exposition, each its own in OTLP), sum
    /// and count.
    fn histogram_points(&self, start: u64, now: u64) -> Vec<HistogramDataPoint> {
        #[derive(Default)]
        struct Point {
            bounds: Vec<(f64, f64)>,
            sum: f64,
            count: f64,
        }
        let mut points: BTreeMap<Vec<(String, String)>, Point> = BTreeMap::new();
        for Sample { name, labels, value } in &self.samples {
            let key: Vec<(String, String)> = labels.iter().filter(|(k, _)| k != "le").cloned().collect();
            let point = points.entry(key).or_default();
            if name.ends_with("_bucket") {
                let le = labels.iter().find(|(k, _)| k == "le").map_or(f64::INFINITY, |(_, v)| {
                    if v == "+Inf" { f64::INFINITY } else { v.parse().unwrap_or(f64::INFINITY) }
                });
                point.bounds.push((le, *value));
            } else if name.ends_with("_sum") {
                point.sum = *value;
            } else if name.ends_with("_count") {
                point.count = *value;
            }
        }
        points
            .into_iter()
            .map(|(labels, mut point)| {
                point.bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mut previous = 0.0;
                let mut bucket_counts = Vec::new();
                let mut explicit_bounds = Vec::new();
                for (le, cumulative) in &point.bounds {
                    bucket_counts.push((cumulative - previous).max(0.0) as u64);
                    previous = *cumulative;
                    if le.is_finite() {
                        explicit_bounds.push(*le);
                    }
                }
                if point.bounds.last().is_none_or(|(le, _)| le.is_finite()) {
                    // No +Inf bucket: the rest of the count is above the last bound.
                    bucket_counts.push((point.count - previous).max(0.0) as u64);
                }
                HistogramDataPoint {
                    attributes: labels.iter().map(|(k, v)| attribute(k, v)).collect(),
                    start_time_unix_nano: start,
                    time_unix_nano: now,
                    count: point.count as u64,
                    sum: Some(point.sum),
                    bucket_counts,
                    explicit_bounds,
                    ..Default::default()
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# HELP weir_attempts Attempts.\n# TYPE weir_attempts counter\nweir_attempts_total{result=\"success\",class=\"2xx\"} 7\nweir_attempts_total{result=\"failure\",class=\"5xx\"} 2\n# HELP weir_in_flight In flight.\n# TYPE weir_in_flight gauge\nweir_in_flight 3\n# HELP weir_attempt_duration_seconds Durations.\n# TYPE weir_attempt_duration_seconds histogram\nweir_attempt_duration_seconds_sum{result=\"success\"} 0.5\nweir_attempt_duration_seconds_count{result=\"success\"} 7\nweir_attempt_duration_seconds_bucket{le=\"0.001\",result=\"success\"} 1\nweir_attempt_duration_seconds_bucket{le=\"0.01\",result=\"success\"} 5\nweir_attempt_duration_seconds_bucket{le=\"+Inf\",result=\"success\"} 7\n# HELP weir_odd Odd \\\"labels\\\".\n# TYPE weir_odd gauge\nweir_odd{webhook_id=\"a\\\"b,c\"} 1\n# EOF\n";

    #[test]
    fn the_exposition_becomes_otlp_sums_gauges_and_histograms() {
        let request = request(TEXT, &[("service.name".into(), "weir".into())], 1, 2);
        let metrics = &request.resource_metrics[0].scope_metrics[0].metrics;
        let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["weir_attempts", "weir_in_flight", "weir_attempt_duration_seconds", "weir_odd"]);
        let Some(metric::Data::Sum(sum)) = &metrics[0].data else { panic!("a sum") };
        assert!(sum.is_monotonic);
        assert_eq!(sum.data_points.len(), 2);
        assert_eq!(sum.data_points[1].value, Some(number_data_point::Value::AsDouble(2.0)));
        assert_eq!(sum.data_points[1].attributes[1].key, "class");
        let Some(metric::Data::Histogram(h)) = &metrics[2].data else { panic!("a histogram") };
        let point = &h.data_points[0];
        assert_eq!((point.count, point.sum), (7, Some(0.5)));
        assert_eq!(point.explicit_bounds, [0.001, 0.01]);
        assert_eq!(point.bucket_counts, [1, 4, 2]);
        assert_eq!(metrics[2].unit, "s");
        let Some(metric::Data::Gauge(g)) = &metrics[3].data else { panic!("a gauge") };
        let label = &g.data_points[0].attributes[0];
        assert_eq!(label.value, Some(AnyValue { value: Some(any_value::Value::StringValue("a\"b,c".into())) }));
    }
}
