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

use std::borrow::Cow;
use std::time::SystemTime;

use opentelemetry::trace::{
    Link, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{
    Sampler, SamplingDecision, ShouldSample, SpanData, SpanEvents, SpanExporter, SpanLinks,
};

pub(crate) use self::batch::Counts;
pub(crate) use self::metrics::Read;
use self::settings::{MetricsSettings, Off, Otel, Settings};
use crate::trace::TraceContext;

/// Export, when configured.
#[derive(Debug, Default)]
pub(crate) struct Telemetry {
    on: Option<On>,
    /// Metrics over OTLP, until their task takes them.
    metrics: std::sync::Mutex<Option<(MetricsSettings, http::Client)>>,
}

#[derive(Debug)]
struct On {
    queue: batch::Queue,
    sampler: Sampler,
    scope: InstrumentationScope,
}

/// How an attempt went, for its span.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// The endpoint answered with this status.
    Status(u16),
    /// No answer: `error.type` (`timeout`, `connect`, `tls`, `blocked`, `request`, `proxy`)
    /// and what happened.
    Unanswered(&'static str, String),
    /// No request was made (the plugins dropped the event).
    NotSent,
}

/// One plugin call of an attempt.
#[derive(Debug, Clone)]
pub(crate) struct PluginCall {
    pub(crate) plugin_id: String,
    /// `deliver`, `drop` or `error`.
    pub(crate) verdict: &'static str,
    pub(crate) fuel: u64,
    pub(crate) start: SystemTime,
    pub(crate) end: SystemTime,
}

/// A delivery attempt, as its span tells it.
#[derive(Debug)]
pub(crate) struct AttemptSpan<'a> {
    pub(crate) trace: &'a TraceContext,
    /// Whether the publisher sent the trace context (else Weir started the trace).
    pub(crate) from_publisher: bool,
    pub(crate) event_id: &'a str,
    pub(crate) delivery_id: &'a str,
    pub(crate) webhook_id: &'a str,
    pub(crate) org_id: &'a str,
    pub(crate) attempt: u32,
    pub(crate) url: &'a str,
    pub(crate) start: SystemTime,
    pub(crate) end: SystemTime,
    pub(crate) answer: Answer,
    pub(crate) plugins: &'a [PluginCall],
}

/// A publish request, as its span tells it.
#[derive(Debug)]
pub(crate) struct PublishSpan<'a> {
    /// The publisher's `traceparent` (its trace and parent span), if it sent a valid one.
    pub(crate) parent: Option<(&'a TraceContext, [u8; 8])>,
    /// The event accepted (none when the request was refused).
    pub(crate) event_id: Option<&'a str>,
    pub(crate) org_id: Option<&'a str>,
    pub(crate) status: u16,
    pub(crate) start: SystemTime,
    pub(crate) end: SystemTime,
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
        let Some(on) = &self.on else { return };
        let (trace_id, parent) = match span.parent {
            Some((trace, parent_id)) => (trace.trace_id, Some(remote(trace, parent_id, trace.flags & 1 == 1))),
            None => match span.event_id {
                Some(id) => (TraceContext::for_event(id).trace_id, None),
                None => (rand::random(), None),
            },
        };
        let name = "POST /api/v2/events";
        if !on.decide(parent.as_ref(), trace_id, name, &SpanKind::Server) {
            return;
        }
        let span_id = match span.event_id {
            Some(id) => TraceContext::publish_span_id(trace_id, id),
            None => rand::random(),
        };
        let mut attributes = vec![
            KeyValue::new("http.request.method", "POST"),
            KeyValue::new("http.route", "/api/v2/events"),
            KeyValue::new("url.path", "/api/v2/events"),
            KeyValue::new("http.response.status_code", i64::from(span.status)),
        ];
        if let Some(id) = span.event_id {
            attributes.push(KeyValue::new("weir.event.id", id.to_owned()));
        }
        if let Some(id) = span.org_id {
            attributes.push(KeyValue::new("weir.organisation.id", id.to_owned()));
        }
        // A server span fails with a 5xx only (the client's mistakes are not the server's).
        let status = if span.status >= 500 {
            attributes.push(KeyValue::new("error.type", span.status.to_string()));
            Status::error(format!("HTTP {}", span.status))
        } else {
            Status::Unset
        };
        let context = sampled(trace_id, span_id);
        on.queue.push(on.span(
            context,
            parent.as_ref(),
            SpanKind::Server,
            name,
            (span.start, span.end),
            attributes,
            status,
            Vec::new(),
        ));
    }

    /// Records an attempt's span, with its plugin calls as children.
    pub(crate) fn attempt(&self, span: AttemptSpan<'_>) {
        let Some(on) = &self.on else { return };
        let trace = span.trace;
        if !self.sampled(trace, span.from_publisher) {
            return;
        }
        let publish_id = TraceContext::publish_span_id(trace.trace_id, span.event_id);
        let parent = remote(trace, publish_id, true);
        let own = |attempt: u32| sampled(trace.trace_id, trace.attempt_span_id(span.delivery_id, attempt as usize));
        let context = own(span.attempt);
        let mut attributes = vec![
            KeyValue::new("weir.webhook.id", span.webhook_id.to_owned()),
            KeyValue::new("weir.delivery.id", span.delivery_id.to_owned()),
            KeyValue::new("weir.event.id", span.event_id.to_owned()),
            KeyValue::new("weir.organisation.id", span.org_id.to_owned()),
            KeyValue::new("weir.attempt", i64::from(span.attempt)),
        ];
        let (kind, name) = match span.answer {
            Answer::NotSent => (SpanKind::Internal, "plugins dropped the event"),
            _ => (SpanKind::Client, "POST"),
        };
        if !matches!(span.answer, Answer::NotSent) {
            attributes.push(KeyValue::new("http.request.method", "POST"));
            if let Ok(url) = url::Url::parse(span.url) {
                attributes.push(KeyValue::new("url.full", full_url(&url)));
                if let Some(host) = url.host_str() {
                    attributes.push(KeyValue::new("server.address", host.to_owned()));
                }
                if let Some(port) = url.port_or_known_default() {
                    attributes.push(KeyValue::new("server.port", i64::from(port)));
                }
            }
        }
        let status = match &span.answer {
            Answer::Status(code) => {
                attributes.push(KeyValue::new("http.response.status_code", i64::from(*code)));
                if (200..300).contains(code) {
                    Status::Unset
                } else {
                    attributes.push(KeyValue::new("error.type", code.to_string()));
                    Status::error(format!("HTTP {code}"))
                }
            }
            Answer::Unanswered(kind, why) => {
                attributes.push(KeyValue::new("error.type", *kind));
                Status::error(why.clone())
            }
            Answer::NotSent => Status::Unset,
        };
        // A retry links to the first attempt.
        let links = if span.attempt > 1 { vec![Link::with_context(own(1))] } else { Vec::new() };
        let parent_of_calls = remote(trace, context.span_id().to_bytes(), true);
        on.queue.push(on.span(context, Some(&parent), kind, name, (span.start, span.end), attributes, status, links));
        for (i, call) in span.plugins.iter().enumerate() {
            let id = TraceContext::plugin_span_id(trace.trace_id, span.delivery_id, i);
            let context = sampled(trace.trace_id, id);
            let attributes = vec![
                KeyValue::new("weir.plugin.id", call.plugin_id.clone()),
                KeyValue::new("weir.plugin.verdict", call.verdict),
                KeyValue::new("weir.plugin.fuel", call.fuel as i64),
            ];
            let status = if call.verdict == "error" { Status::error("the plugin failed") } else { Status::Unset };
            on.queue.push(on.span(
                context,
                Some(&parent_of_calls),
                SpanKind::Internal,
                "plugin",
                (call.start, call.end),
                attributes,
                status,
                Vec::new(),
            ));
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
        let Some(on) = &self.on else { return };
        let trace_id: [u8; 16] = rand::random();
        if !on.decide(None, trace_id, name, &SpanKind::Internal) {
            return;
        }
        let context = sampled(trace_id, rand::random());
        let attributes = attributes.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect();
        let status = error.map_or(Status::Unset, Status::error);
        on.queue.push(on.span(
            context,
            None,
            SpanKind::Internal,
            name,
            (start, SystemTime::now()),
            attributes,
            status,
            Vec::new(),
        ));
    }
}

impl On {
    fn decide(&self, parent: Option<&SpanContext>, trace_id: [u8; 16], name: &str, kind: &SpanKind) -> bool {
        let context = parent.map(|p| opentelemetry::Context::new().with_remote_span_context(p.clone()));
        let result = self.sampler.should_sample(context.as_ref(), TraceId::from_bytes(trace_id), name, kind, &[], &[]);
        result.decision == SamplingDecision::RecordAndSample
    }

    #[allow(clippy::too_many_arguments)]
    fn span(
        &self,
        context: SpanContext,
        parent: Option<&SpanContext>,
        kind: SpanKind,
        name: &'static str,
        (start, end): (SystemTime, SystemTime),
        attributes: Vec<KeyValue>,
        status: Status,
        links: Vec<Link>,
    ) -> SpanData {
        let mut span_links = SpanLinks::default();
        span_links.links = links;
        SpanData {
            span_context: context,
            parent_span_id: parent.map_or(SpanId::INVALID, SpanContext::span_id),
            parent_span_is_remote: parent.is_some_and(SpanContext::is_remote),
            span_kind: kind,
            name: Cow::Borrowed(name),
            start_time: start,
            end_time: end.max(start),
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: span_links,
            status,
            instrumentation_scope: self.scope.clone(),
        }
    }
}

/// A sampled span made here.
fn sampled(trace_id: [u8; 16], span_id: [u8; 8]) -> SpanContext {
    SpanContext::new(
        TraceId::from_bytes(trace_id),
        SpanId::from_bytes(span_id),
        TraceFlags::SAMPLED,
        false,
        TraceState::NONE,
    )
}

/// A span of `trace` made elsewhere (another request, another process).
fn remote(trace: &TraceContext, span_id: [u8; 8], sampled: bool) -> SpanContext {
    let flags = if sampled { TraceFlags::SAMPLED } else { TraceFlags::default() };
    SpanContext::new(TraceId::from_bytes(trace.trace_id), SpanId::from_bytes(span_id), flags, true, TraceState::NONE)
}

/// `url.full` as the semantic conventions ask: no user info, and no query (it may carry
/// credentials).
fn full_url(url: &url::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}
