//! Prometheus metrics, served at `/metrics` in the text exposition format.

use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

/// Every metric Weir keeps. Cloning a metric shares it.
#[derive(Debug)]
pub struct Metrics {
    registry: Mutex<Registry>,
    pub tokens_issued: Counter,
    pub events_published: Counter,
    /// Deliveries taken out of the queue because their record could not be read.
    pub dead_letters: Counter,
    deliveries: Family<Labels, Counter>,
    attempts: Family<Labels, Counter>,
    attempt_seconds: Histogram,
    pub queue_ready: Gauge,
    pub queue_scheduled: Gauge,
    pub in_flight: Gauge,
    pub plugin_compilations: Gauge,
    pub plugin_cache_loads: Gauge,
    pub plugin_calls: Gauge,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("weir");
        let metrics = Metrics {
            tokens_issued: Counter::default(),
            events_published: Counter::default(),
            dead_letters: Counter::default(),
            deliveries: Family::default(),
            attempts: Family::default(),
            attempt_seconds: Histogram::new(exponential_buckets(0.001, 2.0, 16)),
            queue_ready: Gauge::default(),
            queue_scheduled: Gauge::default(),
            in_flight: Gauge::default(),
            plugin_compilations: Gauge::default(),
            plugin_cache_loads: Gauge::default(),
            plugin_calls: Gauge::default(),
            registry: Mutex::new(Registry::default()),
        };
        registry.register("tokens_issued", "Access tokens issued by the token endpoint", metrics.tokens_issued.clone());
        registry.register(
            "events_published",
            "Events accepted (not counting idempotent replays)",
            metrics.events_published.clone(),
        );
        registry.register(
            "dead_letters",
            "Deliveries failed because their record could not be read (also counted as failed deliveries)",
            metrics.dead_letters.clone(),
        );
        registry.register(
            "deliveries",
            "Deliveries that reached a final status, by status",
            metrics.deliveries.clone(),
        );
        registry.register("attempts", "Delivery attempts, by result (success, failure)", metrics.attempts.clone());
        registry.register(
            "attempt_duration_seconds",
            "Duration of delivery attempts (request sent to response read)",
            metrics.attempt_seconds.clone(),
        );
        registry.register(
            "queue_ready",
            "Queued deliveries that are due: new, or their retry time has come",
            metrics.queue_ready.clone(),
        );
        registry.register(
            "queue_scheduled",
            "Queued deliveries not yet due: waiting for a retry, or leased to an attempt in progress",
            metrics.queue_scheduled.clone(),
        );
        registry.register(
            "deliveries_in_flight",
            "Delivery attempts in flight in this process",
            metrics.in_flight.clone(),
        );
        registry.register(
            "plugin_compilations",
            "Plugins compiled from WebAssembly by this process",
            metrics.plugin_compilations.clone(),
        );
        registry.register(
            "plugin_cache_loads",
            "Compiled plugins loaded from the disk cache by this process",
            metrics.plugin_cache_loads.clone(),
        );
        registry.register("plugin_calls", "Plugin calls made by this process", metrics.plugin_calls.clone());
        *metrics.registry.lock().unwrap_or_else(|e| e.into_inner()) = registry;
        metrics
    }

    /// A delivery reached `status` (succeeded, failed, filtered, cancelled).
    pub fn delivery_finished(&self, status: &str) {
        self.deliveries.get_or_create(&vec![("status", status.to_owned())]).inc();
    }

    /// An attempt ended; `success` when the endpoint answered 2xx.
    pub fn attempt(&self, success: bool, seconds: f64) {
        let result = if success { "success" } else { "failure" };
        self.attempts.get_or_create(&vec![("result", result.to_owned())]).inc();
        self.attempt_seconds.observe(seconds);
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Ok(registry) = self.registry.lock() {
            let _ = encode(&mut out, &registry);
        }
        out
    }
}
