//! The spans Weir makes, as OTLP's span data: a publish request, an attempt and its plugin
//! calls, a background job; each sampled by the configured sampler and handed to the queue.

use std::borrow::Cow;
use std::time::SystemTime;

use opentelemetry::trace::{
    Link, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{Sampler, SamplingDecision, ShouldSample, SpanData, SpanEvents, SpanLinks};

use super::batch;
use crate::trace::TraceContext;

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
    /// A broker destination: `messaging.system` and `messaging.destination.name`.
    pub(crate) messaging: Option<(&'static str, &'a str)>,
    pub(crate) start: SystemTime,
    pub(crate) end: SystemTime,
    pub(crate) answer: Answer,
    pub(crate) plugins: &'a [PluginCall],
}

/// A publish request (`POST /api/v2/events`, or a provider's to a source's ingest URL), as
/// its span tells it.
#[derive(Debug)]
pub(crate) struct PublishSpan<'a> {
    /// Its route: [`EVENTS_ROUTE`] or [`INGEST_ROUTE`] (an ingest URL's token is never
    /// recorded: it is the source's credential).
    pub(crate) route: Route,
    /// The publisher's `traceparent` (its trace and parent span), if it sent a valid one.
    pub(crate) parent: Option<(&'a TraceContext, [u8; 8])>,
    /// The event accepted (none when the request was refused).
    pub(crate) event_id: Option<&'a str>,
    pub(crate) org_id: Option<&'a str>,
    pub(crate) status: u16,
    pub(crate) start: SystemTime,
    pub(crate) end: SystemTime,
}

/// Export, once configured: the queue to the collector, the sampler, the scope.
#[derive(Debug)]
pub(super) struct On {
    pub(super) queue: batch::Queue,
    pub(super) sampler: Sampler,
    pub(super) scope: InstrumentationScope,
}

/// A publish request's route, and its span's name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Route {
    pub(crate) path: &'static str,
    pub(crate) name: &'static str,
}

/// The route of a publish request.
pub(crate) const EVENTS_ROUTE: Route = Route { path: "/api/v2/events", name: "POST /api/v2/events" };
/// The route of a provider's request to a source.
pub(crate) const INGEST_ROUTE: Route = Route { path: "/in/{token}", name: "POST /in/{token}" };

/// Records a publish request's span.
pub(super) fn publish(on: &On, span: PublishSpan<'_>) {
    let (trace_id, parent) = match span.parent {
        Some((trace, parent_id)) => (trace.trace_id, Some(remote(trace, parent_id, trace.flags & 1 == 1))),
        None => match span.event_id {
            Some(id) => (TraceContext::for_event(id).trace_id, None),
            None => (rand::random(), None),
        },
    };
    let name = span.route.name;
    if !on.decide(parent.as_ref(), trace_id, name, &SpanKind::Server) {
        return;
    }
    let span_id = match span.event_id {
        Some(id) => TraceContext::publish_span_id(trace_id, id),
        None => rand::random(),
    };
    let mut attributes = vec![
        KeyValue::new("http.request.method", "POST"),
        KeyValue::new("http.route", span.route.path),
        KeyValue::new("url.path", span.route.path),
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
        Finished {
            kind: SpanKind::Server,
            name: Cow::Borrowed(name),
            times: (span.start, span.end),
            attributes,
            status,
            links: Vec::new(),
        },
    ));
}

/// Records an attempt's span, with its plugin calls as children.
pub(super) fn attempt(on: &On, span: AttemptSpan<'_>) {
    let trace = span.trace;
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
    let (kind, name) = match (&span.answer, span.messaging) {
        (Answer::NotSent, _) => (SpanKind::Internal, Cow::Borrowed("plugins dropped the event")),
        (_, Some((_, destination))) => (SpanKind::Producer, Cow::Owned(format!("publish {destination}"))),
        (_, None) => (SpanKind::Client, Cow::Borrowed("POST")),
    };
    target_attributes(&span, &mut attributes);
    let status = answer_status(&span, &mut attributes);
    // A retry links to the first attempt.
    let links = if span.attempt > 1 { vec![Link::with_context(own(1))] } else { Vec::new() };
    let parent_of_calls = remote(trace, context.span_id().to_bytes(), true);
    on.queue.push(on.span(
        context,
        Some(&parent),
        Finished { kind, name, times: (span.start, span.end), attributes, status, links },
    ));
    plugin_calls(on, &span, &parent_of_calls);
}

/// What an attempt's span says of where it went: the broker's system and destination, or
/// the HTTP method and URL.
fn target_attributes(span: &AttemptSpan<'_>, attributes: &mut Vec<KeyValue>) {
    if let (false, Some((system, destination))) = (matches!(span.answer, Answer::NotSent), span.messaging) {
        attributes.push(KeyValue::new("messaging.system", system));
        attributes.push(KeyValue::new("messaging.destination.name", destination.to_owned()));
        attributes.push(KeyValue::new("messaging.operation.type", "publish"));
        if let Ok(url) = url::Url::parse(span.url)
            && let Some(host) = url.host_str()
        {
            attributes.push(KeyValue::new("server.address", host.to_owned()));
        }
    } else if !matches!(span.answer, Answer::NotSent) {
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
}

/// An attempt's span status from its answer, with the answer's attributes.
fn answer_status(span: &AttemptSpan<'_>, attributes: &mut Vec<KeyValue>) -> Status {
    match &span.answer {
        // A broker's acknowledgement: no HTTP status to tell.
        Answer::Status(_) if span.messaging.is_some() => Status::Unset,
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
    }
}

/// The spans of an attempt's plugin calls, children of `parent`.
fn plugin_calls(on: &On, span: &AttemptSpan<'_>, parent: &SpanContext) {
    let trace = span.trace;
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
            Some(parent),
            Finished {
                kind: SpanKind::Internal,
                name: Cow::Borrowed("plugin"),
                times: (call.start, call.end),
                attributes,
                status,
                links: Vec::new(),
            },
        ));
    }
}

/// Records a background job's span (a replay, an export build): a trace of its own.
pub(super) fn job(
    on: &On,
    name: &'static str,
    attributes: Vec<(&'static str, String)>,
    (start, error): (SystemTime, Option<String>),
) {
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
        Finished {
            kind: SpanKind::Internal,
            name: Cow::Borrowed(name),
            times: (start, SystemTime::now()),
            attributes,
            status,
            links: Vec::new(),
        },
    ));
}

/// What a span says once its work is over.
struct Finished {
    kind: SpanKind,
    name: Cow<'static, str>,
    times: (SystemTime, SystemTime),
    attributes: Vec<KeyValue>,
    status: Status,
    links: Vec<Link>,
}

impl On {
    pub(super) fn decide(&self, parent: Option<&SpanContext>, trace_id: [u8; 16], name: &str, kind: &SpanKind) -> bool {
        let context = parent.map(|p| opentelemetry::Context::new().with_remote_span_context(p.clone()));
        let result = self.sampler.should_sample(context.as_ref(), TraceId::from_bytes(trace_id), name, kind, &[], &[]);
        result.decision == SamplingDecision::RecordAndSample
    }

    fn span(&self, context: SpanContext, parent: Option<&SpanContext>, finished: Finished) -> SpanData {
        let Finished { kind, name, times: (start, end), attributes, status, links } = finished;
        let mut span_links = SpanLinks::default();
        span_links.links = links;
        SpanData {
            span_context: context,
            parent_span_id: parent.map_or(SpanId::INVALID, SpanContext::span_id),
            parent_span_is_remote: parent.is_some_and(SpanContext::is_remote),
            span_kind: kind,
            name,
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
pub(super) fn remote(trace: &TraceContext, span_id: [u8; 8], sampled: bool) -> SpanContext {
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
