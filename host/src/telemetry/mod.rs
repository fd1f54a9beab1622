//! OpenTelemetry traces over OTLP (contract §8 "OpenTelemetry"): the only module that knows
//! the `opentelemetry` crates. Configured by the standard `OTEL_*` variables
//! (`settings`); without an endpoint nothing is exported and every call here returns at
//! once.
//!
//! A delivery's story, as spans of one trace:
//!
//! - **publish** (SERVER): `POST /api/v2/events`, the child of the publisher's span when it
//!   sent a `traceparent`;
//! - **attempt** (CLIENT, one per attempt, the child of the publish span): its span id is
//!   the parent id of the `traceparent` the subscriber receives; a retry links to the first
//!   attempt; a plugin call is its child (INTERNAL);
//! - a **replay** and an **export build** are traces of their own.
//!
//! Span ids follow from what the delivery already carries (`crate::trace`): the publish
//! span's from the event, an attempt's from its delivery and number — so an attempt in any
//! process finds its parent and its first attempt without storing anything, and the
//! sampling decision is remade the same everywhere (the standard samplers decide by the
//! trace id and the parent's flag). Spans are made once their work is over, with its start
//! and end, and handed to a bounded queue (`batch`) that never waits.

mod batch;
mod http;
mod metrics;
mod settings;
mod spans;

use std::time::SystemTime;

use opentelemetry::trace::SpanKind;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::SpanExporter;

pub(crate) use self::batch::Counts;
pub(crate) use self::metrics::Read;
pub use self::settings::Otel;
use self::settings::{MetricsSettings, Off, Settings};
pub(crate) use self::spans::{Answer, AttemptSpan, EVENTS_ROUTE, INGEST_ROUTE, PluginCall, PublishSpan};
use self::spans::{On, remote};
use crate::trace::TraceContext;

/// Export, when configured.
#[derive(Debug, Default)]
pub(crate) struct Telemetry {
    on: Option<On>,
    /// Metrics over OTLP, until their task takes them.
    metrics: std::sync::Mutex<Option<(MetricsSettings, http::Client)>>,
}

impl Telemetry {
    /// Export as `otel` asks (inside a Tokio runtime), through a client trusting `tls`'s
    /// roots; off (logged why, when it was asked for) otherwise.
    pub(crate) fn start(otel: &Otel, tls: &rustls::ClientConfig, counts: Counts) -> Telemetry {
        let metrics = match MetricsSettings::read(otel) {
            Ok(m) => {
                let client = http::Client::new(tls, m.timeout);
                Some((m, client))
            }
            Err(Off::BadEndpoint(endpoint)) => {
                tracing::warn!(
                    endpoint = %settings::shown(&endpoint),
                    "the OTLP metrics endpoint is not an http:// or https:// URL; no metrics are exported"
                );
                None
            }
            Err(Off::NoEndpoint | Off::Disabled) => None,
        };
        let on = Self::traces(otel, tls, counts);
        Telemetry { on, metrics: std::sync::Mutex::new(metrics) }
    }

    /// Starts sending the registry `read` gives over OTLP, when the variables ask for it.
    pub(crate) fn export_metrics(&self, read: Read) -> Option<tokio::task::JoinHandle<()>> {
        let (settings, client) = self.metrics.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        tracing::info!(endpoint = %settings::shown(&settings.endpoint), every = ?settings.interval, "exporting metrics over OTLP");
        Some(tokio::spawn(metrics::run(metrics::Export { client, settings, read })))
    }

    fn traces(otel: &Otel, tls: &rustls::ClientConfig, counts: Counts) -> Option<On> {
        let settings = match Settings::read(otel) {
            Ok(settings) => settings,
            Err(Off::NoEndpoint) => return None,
            Err(Off::Disabled) => {
                tracing::info!("OpenTelemetry trace export is disabled (OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER)");
                return None;
            }
            Err(Off::BadEndpoint(endpoint)) => {
                let endpoint = settings::shown(&endpoint);
                tracing::warn!(%endpoint, "the OTLP endpoint is not an http:// or https:// URL; nothing is exported");
                return None;
            }
        };
        let client = http::Client::new(tls, settings.timeout);
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_endpoint(settings.endpoint.clone())
            .with_protocol(settings.protocol)
            .with_headers(settings.headers.clone())
            .with_timeout(settings.timeout)
            // A few retries a batch, within its timeout, sleeping on the runtime's timer.
            .with_retry_policy(opentelemetry_otlp::RetryPolicy::recommended())
            .build();
        let mut exporter = match exporter {
            Ok(exporter) => exporter,
            Err(e) => {
                tracing::warn!(error = %e, "cannot build the OTLP exporter; nothing is exported");
                return None;
            }
        };
        let resource = opentelemetry_sdk::Resource::builder_empty()
            .with_service_name(settings.service_name.clone())
            .with_attributes(settings.resource.clone())
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        exporter.set_resource(&resource);
        let endpoint = settings::shown(&settings.endpoint);
        tracing::info!(%endpoint, protocol = ?settings.protocol, service = %settings.service_name, "exporting traces over OTLP");
        let scope = InstrumentationScope::builder("weir").with_version(env!("CARGO_PKG_VERSION")).build();
        let queue = batch::Queue::start(exporter, settings.batch, counts);
        Some(On { queue, sampler: settings.sampler, scope })
    }

    /// Whether spans are exported.
    pub(crate) fn enabled(&self) -> bool {
        self.on.is_some()
    }

    /// Sends the spans waiting, and stops.
    pub(crate) async fn stop(&self) {
        if let Some(on) = &self.on {
            on.queue.stop().await;
        }
    }

    /// Whether the trace of an event is sampled: the publish span's decision (also the flag
    /// of the `traceparent` its subscribers receive while export is on).
    pub(crate) fn sampled(&self, trace: &TraceContext, from_publisher: bool) -> bool {
        let Some(on) = &self.on else { return trace.flags & 1 == 1 };
        let parent = from_publisher.then(|| remote(trace, [0xff; 8], trace.flags & 1 == 1));
        on.decide(parent.as_ref(), trace.trace_id, "publish", &SpanKind::Server)
    }

    /// The trace context an attempt passes on to its subscriber: while spans are exported,
    /// its sampled flag is Weir's own decision (a subscriber that follows its parent records
    /// a trace exactly when Weir did, and never under a span Weir did not export); while
    /// they are not, the flags it came with, unchanged.
    pub(crate) fn passed_on(&self, mut trace: TraceContext, from_publisher: bool) -> TraceContext {
        if self.on.is_some() {
            let sampled = self.sampled(&trace, from_publisher);
            trace.flags = (trace.flags & !1) | u8::from(sampled);
        }
        trace
    }

    /// Records a publish request's span.
    pub(crate) fn publish(&self, span: PublishSpan<'_>) {
        if let Some(on) = &self.on {
            spans::publish(on, span);
        }
    }

    /// Records an attempt's span, with its plugin calls as children.
    pub(crate) fn attempt(&self, span: AttemptSpan<'_>) {
        if let Some(on) = &self.on
            && self.sampled(span.trace, span.from_publisher)
        {
            spans::attempt(on, span);
        }
    }

    /// Records a background job's span (a replay, an export build): a trace of its own.
    pub(crate) fn job(
        &self,
        name: &'static str,
        attributes: Vec<(&'static str, String)>,
        start: SystemTime,
        error: Option<String>,
    ) {
        if let Some(on) = &self.on {
            spans::job(on, name, attributes, (start, error));
        }
    }
}
