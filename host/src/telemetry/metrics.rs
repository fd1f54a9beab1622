//! Metrics over OTLP (`OTEL_METRICS_EXPORTER`, default `otlp` when an endpoint is set): the
//! same series as `/metrics`, read from the registry as typed samples (`crate::meters`: no
//! text is parsed) every `OTEL_METRIC_EXPORT_INTERVAL` (60 s) and sent to
//! `{endpoint}/v1/metrics` — counters as cumulative monotonic sums (named as their family,
//! without `_total`), gauges as gauges, histograms with their buckets — so a collector-only
//! setup needs no scrape. One registry, so `/metrics` and OTLP never disagree.

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
use crate::meters::{HistogramSample, Labels, Series, Values};

/// The registry's series, as they stand now (the gauges refreshed as for `/metrics`).
pub(crate) type Read = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Vec<Series>> + Send>> + Send + Sync>;

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
        let series = (export.read)().await;
        let request = request(&series, &export.settings.resource, start, nanos(SystemTime::now()));
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

/// The registry's series as an OTLP request.
pub(super) fn request(
    series: &[Series],
    resource: &[(String, String)],
    start: u64,
    now: u64,
) -> ExportMetricsServiceRequest {
    let metrics = series.iter().map(|s| metric(s, start, now)).collect();
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

/// One series as an OTLP metric.
fn metric(series: &Series, start: u64, now: u64) -> Metric {
    let point = |labels: &Labels, value: f64| NumberDataPoint {
        attributes: attributes(labels),
        start_time_unix_nano: start,
        time_unix_nano: now,
        value: Some(number_data_point::Value::AsDouble(value)),
        ..Default::default()
    };
    let data = match &series.values {
        Values::Counter(samples) => metric::Data::Sum(Sum {
            data_points: samples.iter().map(|(l, v)| point(l, *v as f64)).collect(),
            aggregation_temporality: AggregationTemporality::Cumulative as i32,
            is_monotonic: true,
        }),
        Values::Gauge(samples) => {
            metric::Data::Gauge(Gauge { data_points: samples.iter().map(|(l, v)| point(l, *v as f64)).collect() })
        }
        Values::Histogram(samples) => metric::Data::Histogram(Histogram {
            data_points: samples.iter().map(|(l, h)| histogram_point(l, h, (start, now))).collect(),
            aggregation_temporality: AggregationTemporality::Cumulative as i32,
        }),
    };
    Metric {
        name: series.name.clone(),
        description: format!("{}.", series.help.trim_end_matches('.')),
        unit: if series.name.ends_with("_seconds") { "s".to_owned() } else { String::new() },
        data: Some(data),
        ..Default::default()
    }
}

/// A histogram's point: each bucket's own count (the last above every bound), its sum and
/// count.
fn histogram_point(labels: &Labels, h: &HistogramSample, (start, now): (u64, u64)) -> HistogramDataPoint {
    HistogramDataPoint {
        attributes: attributes(labels),
        start_time_unix_nano: start,
        time_unix_nano: now,
        count: h.count,
        sum: Some(h.sum),
        bucket_counts: h.counts.clone(),
        explicit_bounds: h.bounds.clone(),
        ..Default::default()
    }
}

fn attributes(labels: &Labels) -> Vec<KeyValue> {
    labels.iter().map(|(k, v)| attribute(k, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meters::{Counter, Family, Gauge, Registry};

    #[test]
    fn the_registry_becomes_otlp_sums_gauges_and_histograms() {
        let mut registry = Registry::with_prefix("weir");
        let attempts: Family<Counter> = Family::default();
        let in_flight = Gauge::default();
        let seconds: Family<crate::meters::Histogram> =
            Family::new(|| crate::meters::Histogram::exponential(0.001, 10.0, 2));
        let odd: Family<Counter> = Family::default();
        registry.register("attempts", "Attempts", attempts.clone());
        registry.register("in_flight", "In flight", in_flight.clone());
        registry.register("attempt_duration_seconds", "Durations", seconds.clone());
        registry.register("odd", "Odd \"labels\"", odd.clone());
        attempts.get_or_create(&[("result", "success"), ("class", "2xx")]).inc_by(7);
        attempts.get_or_create(&[("result", "failure"), ("class", "5xx")]).inc_by(2);
        in_flight.set(3);
        let h = seconds.get_or_create(&[("result", "success")]);
        for v in [0.0005, 0.005, 0.005, 0.005, 0.005, 1.0, 2.0] {
            h.observe(v);
        }
        odd.get_or_create(&[("webhook_id", "a\"b,c")]).inc();
        let request = request(&registry.read(), &[("service.name".into(), "weir".into())], 1, 2);
        let metrics = &request.resource_metrics[0].scope_metrics[0].metrics;
        let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["weir_attempts", "weir_in_flight", "weir_attempt_duration_seconds", "weir_odd"]);
        let Some(metric::Data::Sum(sum)) = &metrics[0].data else { panic!("a sum") };
        assert!(sum.is_monotonic);
        assert_eq!(sum.data_points.len(), 2);
        let failure =
            sum.data_points.iter().find(|p| p.value == Some(number_data_point::Value::AsDouble(2.0))).unwrap();
        assert_eq!(failure.attributes[1].key, "class");
        let Some(metric::Data::Histogram(h)) = &metrics[2].data else { panic!("a histogram") };
        let point = &h.data_points[0];
        assert_eq!(point.count, 7);
        assert_eq!(point.explicit_bounds, [0.001, 0.01]);
        assert_eq!(point.bucket_counts, [1, 4, 2]);
        assert_eq!(metrics[2].unit, "s");
        let Some(metric::Data::Gauge(g)) = &metrics[1].data else { panic!("a gauge") };
        assert_eq!(g.data_points[0].value, Some(number_data_point::Value::AsDouble(3.0)));
        let Some(metric::Data::Sum(odd)) = &metrics[3].data else { panic!("a sum") };
        let label = &odd.data_points[0].attributes[0];
        assert_eq!(label.value, Some(AnyValue { value: Some(any_value::Value::StringValue("a\"b,c".into())) }));
    }
}
