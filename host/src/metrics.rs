//! Weir's metrics: every series, served at `/metrics` in the Prometheus text format (contract
//! §2: `text/plain; version=0.0.4`, counters typed `counter`) and read as typed samples for
//! OTLP (`crate::meters`: one registry for both).
//!
//! No label names an organisation, webhook or delivery: every series has a small, fixed
//! set of label values, so the number of series stays the same however many tenants there
//! are. The dashboard in `examples/grafana-dashboard.json` is built on these.

use std::sync::Mutex;

use crate::meters::{Counter, Family, Gauge, Histogram, Registry, Series};

/// The most webhooks whose filters have series in `/metrics` at once (each has up to three).
const MAX_FILTERED_WEBHOOKS: usize = 1000;

fn attempt_histogram() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::exponential(0.001, 2.0, 16)
}

/// Every metric Weir keeps. Cloning a metric shares it.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    pub tokens_issued: Counter,
    pub events_published: Counter,
    /// Publishes whose kept subscribers or token a change had made stale (published again
    /// from what was read anew: `store::versions`).
    pub stale_publishes: Counter,
    /// Deliveries taken out of the queue because their record could not be read.
    pub dead_letters: Counter,
    /// Attempts (or the work around one) that failed inside Weir: a panic caught.
    pub internal_errors: Counter,
    deliveries: Family<Counter>,
    attempts: Family<Counter>,
    attempt_seconds: Family<Histogram>,
    deactivations: Family<Counter>,
    pub queue_ready: Gauge,
    pub queue_scheduled: Gauge,
    pub in_flight: Gauge,
    endpoint_changes: Family<Counter>,
    /// Events a webhook's filter looked at, by webhook and result, and the webhooks with
    /// series (at most [`MAX_FILTERED_WEBHOOKS`]; a deleted one's go).
    filter_events: Family<Counter>,
    filtered_webhooks: Mutex<std::collections::HashSet<String>>,
    /// Endpoints this process probes one attempt at a time, or holds paused.
    pub endpoints_probing: Gauge,
    pub endpoints_paused: Gauge,
    /// Attempts in flight here past a second without an answer (the slow share in use).
    pub attempts_slow: Gauge,
    /// `webhook_delivery_failed` notices not sent: their organisation's budget was spent.
    pub notices_suppressed: Counter,
    /// Requests refused by a plan's limit, by plan (operators name a few) and limit.
    quota_refusals: Family<Counter>,
    source_requests: Family<Counter>,
    /// History in PostgreSQL: rows and events this process moved, what waits, and whether
    /// PostgreSQL answers.
    pub history_moved_deliveries: Counter,
    pub history_moved_events: Counter,
    pub history_backlog_deliveries: Gauge,
    pub history_backlog_events: Gauge,
    pub history_up: Gauge,
    /// Spans sent to the OpenTelemetry collector, and dropped.
    pub otel: crate::telemetry::Counts,
}

impl Metrics {
    /// The metrics, with the plugin runtime's counters among them.
    pub(crate) fn new(plugins: &crate::plugins::Counters) -> Metrics {
        let mut registry = Registry::with_prefix("weir");
        let mut metrics = Metrics {
            tokens_issued: Counter::default(),
            events_published: Counter::default(),
            stale_publishes: Counter::default(),
            dead_letters: Counter::default(),
            internal_errors: Counter::default(),
            deliveries: Family::default(),
            attempts: Family::default(),
            attempt_seconds: Family::new(attempt_histogram),
            deactivations: Family::default(),
            queue_ready: Gauge::default(),
            queue_scheduled: Gauge::default(),
            in_flight: Gauge::default(),
            endpoint_changes: Family::default(),
            filter_events: Family::default(),
            filtered_webhooks: Mutex::default(),
            endpoints_probing: Gauge::default(),
            endpoints_paused: Gauge::default(),
            attempts_slow: Gauge::default(),
            notices_suppressed: Counter::default(),
            quota_refusals: Family::default(),
            source_requests: Family::default(),
            otel: crate::telemetry::Counts::default(),
            history_moved_deliveries: Counter::default(),
            history_moved_events: Counter::default(),
            history_backlog_deliveries: Gauge::default(),
            history_backlog_events: Gauge::default(),
            history_up: Gauge::default(),
            registry: Registry::default(),
        };
        metrics.register_deliveries(&mut registry);
        metrics.register_process(&mut registry, plugins);
        metrics.registry = registry;
        metrics
    }

    /// Counts a request refused by `plan`'s limit on `quota`.
    pub(crate) fn quota_refused(&self, plan: &str, quota: crate::plans::Quota) {
        self.quota_refusals.get_or_create(&[("plan", plan), ("quota", quota.key())]).inc();
    }

    /// Counts a request to a source's ingest URL by its outcome (`accepted`, `duplicate`,
    /// `rejected`) and reason (`""` when accepted).
    pub(crate) fn source_request(&self, outcome: &'static str, reason: &'static str) {
        self.source_requests.get_or_create(&[("outcome", outcome), ("reason", reason)]).inc();
    }

    /// The series about events, deliveries and their queue.
    fn register_deliveries(&self, r: &mut Registry) {
        let metrics = self;
        r.register("tokens_issued", "Access tokens issued by the token endpoint", metrics.tokens_issued.clone());
        r.register(
            "events_published",
            "Events accepted (not counting idempotent replays)",
            metrics.events_published.clone(),
        );
        r.register(
            "stale_publishes",
            "Publishes made from kept subscribers or a kept token that a change had made stale, published again from what was read anew",
            metrics.stale_publishes.clone(),
        );
        r.register(
            "quota_refusals",
            "Requests refused by a plan's limit (403 or 429 quota_exceeded), by plan and quota (events_per_day, webhooks, plugins, plugin_bytes)",
            metrics.quota_refusals.clone(),
        );
        r.register(
            "source_requests",
            "Requests to sources' ingest URLs, by outcome (accepted, duplicate, rejected) and reason",
            metrics.source_requests.clone(),
        );
        r.register(
            "dead_letters",
            "Deliveries failed because their record could not be read (also counted as failed deliveries)",
            metrics.dead_letters.clone(),
        );
        r.register(
            "delivery_internal_errors",
            "Delivery attempts that failed inside Weir (a bug, not the destination's answer): recorded as failed attempts and retried",
            metrics.internal_errors.clone(),
        );
        r.register(
            "deliveries",
            "Deliveries that reached a final status, by status (succeeded, failed, filtered, cancelled)",
            metrics.deliveries.clone(),
        );
        r.register(
            "attempts",
            "Delivery attempts, by result (success, failure), class (2xx, 3xx, 4xx, 5xx, timeout, connect, tls, blocked, request, proxy; a broker's ack or refused) and destination kind (http, nats, amqp, sqs, sns, eventbridge, kinesis)",
            metrics.attempts.clone(),
        );
        r.register(
            "attempt_duration_seconds",
            "Duration of delivery attempts (request sent to response read), by result",
            metrics.attempt_seconds.clone(),
        );
        r.register(
            "webhooks_deactivated",
            "Webhooks switched off automatically, by reason (failing, gone)",
            metrics.deactivations.clone(),
        );
        r.register(
            "queue_ready",
            "Queued deliveries that are due: new, or their retry time has come",
            metrics.queue_ready.clone(),
        );
        r.register(
            "queue_scheduled",
            "Queued deliveries not yet due: waiting for a retry, or leased to an attempt in progress",
            metrics.queue_scheduled.clone(),
        );
        r.register("deliveries_in_flight", "Delivery attempts in flight in this process", metrics.in_flight.clone());
        self.register_endpoints(r);
    }

    /// The series about the endpoints' states and filters, as this process sees them.
    fn register_endpoints(&self, r: &mut Registry) {
        let metrics = self;
        r.register(
            "endpoint_changes",
            "Changes of webhook endpoints' state seen by this process, by the state entered (probing, healthy, paused)",
            metrics.endpoint_changes.clone(),
        );
        r.register(
            "endpoints_probing",
            "Webhook endpoints this process sends one attempt at a time until one succeeds",
            metrics.endpoints_probing.clone(),
        );
        r.register(
            "endpoints_paused",
            "Webhook endpoints this process holds paused (they answered 429 or 503 with Retry-After)",
            metrics.endpoints_paused.clone(),
        );
        r.register(
            "attempts_slow",
            "Attempts in flight in this process for more than a second without an answer (they use the slow share of the workers)",
            metrics.attempts_slow.clone(),
        );
        r.register(
            "filter_events",
            "Events a webhook's filter looked at, by webhook_id and result (selected, not_selected, error), in this process",
            metrics.filter_events.clone(),
        );
    }

    /// The series about this process: notices, telemetry, history, plugins.
    fn register_process(&self, r: &mut Registry, plugins: &crate::plugins::Counters) {
        let metrics = self;
        r.register(
            "notices_suppressed",
            "webhook_delivery_failed notices not published because their organisation's budget (10 a minute, 10 at once) was spent",
            metrics.notices_suppressed.clone(),
        );
        r.register(
            "otel_spans_exported",
            "Spans this process sent to the OpenTelemetry collector (OTEL_EXPORTER_OTLP_ENDPOINT)",
            metrics.otel.exported.clone(),
        );
        r.register(
            "otel_spans_dropped",
            "Spans this process dropped: its queue was full (OTEL_BSP_MAX_QUEUE_SIZE) or the collector did not take them",
            metrics.otel.dropped.clone(),
        );
        r.register(
            "history_moved_deliveries",
            "Ended deliveries this process moved from Redis to history in PostgreSQL",
            metrics.history_moved_deliveries.clone(),
        );
        r.register(
            "history_moved_events",
            "Accepted events this process moved from Redis to history in PostgreSQL",
            metrics.history_moved_events.clone(),
        );
        r.register(
            "history_backlog_deliveries",
            "Ended deliveries past WEIR_HISTORY_HOT still in Redis, waiting to move to PostgreSQL",
            metrics.history_backlog_deliveries.clone(),
        );
        r.register(
            "history_backlog_events",
            "Accepted events past WEIR_HISTORY_HOT still in Redis (waiting to move, or for their deliveries to end)",
            metrics.history_backlog_events.clone(),
        );
        r.register(
            "history_up",
            "1 when history in PostgreSQL answered its last statement, 0 when it could not be reached",
            metrics.history_up.clone(),
        );
        r.register(
            "plugin_compilations",
            "Plugins compiled from WebAssembly by this process",
            plugins.compiled.clone(),
        );
        r.register(
            "plugin_cache_loads",
            "Compiled plugins loaded from the disk cache by this process",
            plugins.cache_loads.clone(),
        );
        r.register("plugin_calls", "Plugin calls made by this process", plugins.calls.clone());
    }

    /// A webhook's filter looked at an event: `result` is selected, not_selected or error.
    /// Past [`MAX_FILTERED_WEBHOOKS`] webhooks with series, all start again (a counter reset,
    /// which Prometheus reads as one), so `/metrics` stays bounded.
    pub(crate) fn filter_event(&self, webhook: &str, result: &'static str) {
        {
            let mut webhooks = self.filtered_webhooks.lock().unwrap_or_else(|e| e.into_inner());
            if !webhooks.contains(webhook) {
                if webhooks.len() >= MAX_FILTERED_WEBHOOKS {
                    webhooks.clear();
                    self.filter_events.clear();
                }
                webhooks.insert(webhook.to_owned());
            }
        }
        self.filter_events.get_or_create(&[("webhook_id", webhook), ("result", result)]).inc();
    }

    /// A webhook was deleted: its filter's series go.
    pub(crate) fn forget_webhook(&self, webhook: &str) {
        if self.filtered_webhooks.lock().unwrap_or_else(|e| e.into_inner()).remove(webhook) {
            for result in ["selected", "not_selected", "error"] {
                self.filter_events.remove(&[("webhook_id", webhook), ("result", result)]);
            }
        }
    }

    /// A delivery reached `status` (succeeded, failed, filtered, cancelled).
    pub(crate) fn delivery_finished(&self, status: &str) {
        let status = match status {
            "succeeded" => "succeeded",
            "filtered" => "filtered",
            "cancelled" => "cancelled",
            _ => "failed",
        };
        self.deliveries.get_or_create(&[("status", status)]).inc();
    }

    /// An attempt ended; `class` is what it got (`2xx`… or why there was no answer, see
    /// `delivery::destination::Sent::class`).
    pub(crate) fn attempt(&self, destination: &'static str, class: &'static str, seconds: f64) {
        let result = if matches!(class, "2xx" | "ack") { "success" } else { "failure" };
        self.attempts.get_or_create(&[("result", result), ("class", class), ("destination", destination)]).inc();
        self.attempt_seconds.get_or_create(&[("result", result)]).observe(seconds);
    }

    /// A webhook's endpoint entered `state` (probing, healthy, paused).
    pub(crate) fn endpoint_changed(&self, state: &'static str) {
        self.endpoint_changes.get_or_create(&[("state", state)]).inc();
    }

    /// A webhook was switched off automatically (`failing` or `gone`).
    pub(crate) fn webhook_deactivated(&self, reason: &str) {
        let reason = if reason == "gone" { "gone" } else { "failing" };
        self.deactivations.get_or_create(&[("reason", reason)]).inc();
    }

    /// The text exposition (format 0.0.4) of every metric.
    pub(crate) fn render(&self) -> String {
        self.registry.render()
    }

    /// Every metric's values, typed (OTLP).
    pub(crate) fn read(&self) -> Vec<Series> {
        self.registry.read()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_typed_under_their_sample_name_in_the_text_format() {
        let m = Metrics::new(&crate::plugins::Counters::default());
        m.tokens_issued.inc();
        m.attempt("http", "5xx", 0.2);
        m.attempt("nats", "ack", 0.01);
        let text = m.render();
        assert!(text.contains("# TYPE weir_tokens_issued_total counter\nweir_tokens_issued_total 1\n"), "{text}");
        assert!(text.contains("# HELP weir_plugin_calls_total Plugin calls"), "{text}");
        assert!(text.contains("# TYPE weir_attempt_duration_seconds histogram"), "{text}");
        assert!(
            text.contains("weir_attempts_total{result=\"failure\",class=\"5xx\",destination=\"http\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("weir_attempts_total{result=\"success\",class=\"ack\",destination=\"nats\"} 1"),
            "{text}"
        );
        assert!(text.contains("# TYPE weir_queue_ready gauge"), "{text}");
        assert!(!text.contains("# EOF") && !text.contains("# TYPE weir_tokens_issued counter"), "{text}");
    }
}
