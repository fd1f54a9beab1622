//! Prometheus metrics, served at `/metrics` in the text exposition format.

use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;

/// Every metric Weir keeps. Cloning a metric shares it.
#[derive(Debug)]
pub struct Metrics {
    registry: Mutex<Registry>,
    pub tokens_issued: Counter,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("weir");
        let tokens_issued = Counter::default();
        registry.register(
            "tokens_issued",
            "Access tokens issued by the token endpoint",
            tokens_issued.clone(),
        );
        Metrics {
            registry: Mutex::new(registry),
            tokens_issued,
        }
    }

    /// The registry, for modules that add their own metrics at start.
    pub fn register(
        &self,
        name: &str,
        help: &str,
        metric: impl prometheus_client::registry::Metric,
    ) {
        if let Ok(mut registry) = self.registry.lock() {
            registry.register(name, help, metric);
        }
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
