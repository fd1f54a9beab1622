//! The state shared by the HTTP API and the background workers of one `weir serve`.

use crate::config::Config;
use crate::metrics::Metrics;
use crate::netguard::UrlRule;
use crate::queue::Queue;
use crate::store::{Result, Store};

/// Everything a request handler or worker needs, built once at start.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    pub store: Store,
    pub url_rule: UrlRule,
    pub metrics: Metrics,
    pub queue: Queue,
}

impl App {
    pub fn new(config: Config, store: Store) -> App {
        let url_rule = UrlRule::new(config.allow_private_targets.clone());
        let queue = Queue::new(store.clone());
        App { config, store, url_rule, metrics: Metrics::new(), queue }
    }

    /// Whether the organisation has a plugin with this id.
    pub async fn plugin_exists(&self, _org_id: &str, _plugin_id: &str) -> Result<bool> {
        Ok(false)
    }

    /// Updates gauges that are read from the store at scrape time.
    pub async fn refresh_gauges(&self) {
        if let Ok((ready, scheduled)) = self.queue.depth().await {
            self.metrics.queue_ready.set(ready as i64);
            self.metrics.queue_scheduled.set(scheduled as i64);
        }
    }
}
