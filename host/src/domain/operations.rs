//! What an operator asks of a running process: whether it can serve (its store answers),
//! and its metrics.

super::handle!(
    /// Operations, for the surfaces: readiness and metrics.
    Operations
);

impl Operations {
    /// Whether the store answers.
    pub(crate) async fn ready(&self) -> bool {
        self.app.store.ping().await.is_ok()
    }

    /// The metrics in Prometheus' text format, the gauges read from the store now.
    pub(crate) async fn metrics(&self) -> String {
        self.app.refresh_gauges().await;
        self.app.metrics.render()
    }
}
