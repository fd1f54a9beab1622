//! What an operator asks of a running process: whether it can serve (its store answers),
//! and its metrics.

/// Operations, for the surfaces: readiness and metrics.
#[derive(Debug, Clone)]
pub(crate) struct Operations {
    health: crate::store::core::health::Health,
    gauges: std::sync::Arc<crate::shared::Gauges>,
}

impl Operations {
    pub(crate) fn new(
        health: crate::store::core::health::Health,
        gauges: &std::sync::Arc<crate::shared::Gauges>,
    ) -> Operations {
        Operations { health, gauges: gauges.clone() }
    }
}

impl Operations {
    /// Whether the store answers.
    pub(crate) async fn ready(&self) -> bool {
        self.health.ping().await.is_ok()
    }

    /// The metrics in Prometheus' text format, the gauges read from the store now.
    pub(crate) async fn metrics(&self) -> String {
        self.gauges.render().await
    }
}
