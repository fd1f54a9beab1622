//! The state shared by the HTTP API and the background workers of one `weir serve`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::config::Config;
use crate::metrics::Metrics;
use crate::netguard::UrlRule;
use crate::plugins::Runtime;
use crate::store::core::batch::Batcher;
use crate::store::events::publish::Retention;
use crate::store::events::publisher::Publisher;
use crate::store::tenants::clients::{TokenOwner, TokenQuery};
use crate::store::{Partition, Result, Store};

/// Most lookups sent to Redis in one round trip.
const LOOKUP_BATCH: usize = 128;

/// Everything a request handler or worker needs, built once at start.
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) config: Config,
    pub(crate) store: Store,
    pub(crate) url_rule: UrlRule,
    pub(crate) metrics: Metrics,
    pub(crate) plugins: Arc<Runtime>,
    /// Sign-in password checks, a bounded number at once.
    pub(crate) passwords: crate::auth::passwords::Verifier,
    /// Publishes events in batches per partition.
    pub(crate) publisher: Publisher,
    /// History in PostgreSQL, when configured (`WEIR_HISTORY_URL`).
    pub(crate) history: Option<Arc<crate::history::History>>,
    /// Webhooks' filters, compiled once each and evaluated off the request threads.
    pub(crate) filters: crate::filters::Evaluator,
    /// Traces exported over OTLP, when the `OTEL_*` variables ask for it.
    pub(crate) telemetry: crate::telemetry::Telemetry,
    /// The move to history, when this process takes part (`/metrics` reads its backlog).
    mover: std::sync::OnceLock<Arc<crate::history::Mover>>,
    /// Token lookups, in batches: concurrent requests share one round trip, and those
    /// with the same token one lookup.
    tokens: Batcher<TokenQuery, Result<Option<TokenOwner>>>,
    /// One signal per partition: this process just queued work there, so its workers look
    /// at once instead of at their next poll.
    arrivals: Vec<Notify>,
    /// Plugin id → SHA-256 of its code. A plugin's code never changes, so this is safe
    /// to keep for the life of the process.
    plugin_hashes: Mutex<HashMap<String, (String, String)>>,
    /// The key that signs export download links (read from Redis once).
    link_key: tokio::sync::OnceCell<Vec<u8>>,
    /// The key sealing secrets at rest (`secret_key`), once known.
    secret_key: std::sync::OnceLock<crate::config::SecretKey>,
}

impl App {
    /// Builds the shared state (inside a Tokio runtime: the publisher's batches start here).
    pub(crate) fn new(
        config: Config,
        store: Store,
        plugins: Arc<Runtime>,
        history: Option<Arc<crate::history::History>>,
    ) -> App {
        let url_rule = UrlRule::new(config.allow_private_targets.clone());
        let retention = Retention { deliveries: config.delivery_retention, events: config.event_retention };
        let publisher = Publisher::start(&store, retention);
        let lookups = store.clone();
        let tokens = Batcher::spawn_distinct(LOOKUP_BATCH, move |queries: Vec<TokenQuery>| {
            let store = lookups.clone();
            async move { store.lookup_tokens(&queries).await }
        });
        let arrivals = store.keys().partitions().map(|_| Notify::new()).collect();
        let metrics = Metrics::new(&plugins.counters);
        let telemetry = match crate::tls::client_config(config.extra_ca.as_deref()) {
            Ok(tls) => crate::telemetry::Telemetry::start(&config.otel, &tls, metrics.otel.clone()),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the roots to trust; no traces are exported");
                crate::telemetry::Telemetry::default()
            }
        };
        App {
            passwords: crate::auth::passwords::Verifier::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            ),
            config,
            store,
            url_rule,
            metrics,
            telemetry,
            plugins,
            publisher,
            history,
            filters: crate::filters::Evaluator::new(),
            mover: std::sync::OnceLock::new(),
            tokens,
            arrivals,
            plugin_hashes: Mutex::default(),
            link_key: tokio::sync::OnceCell::new(),
            secret_key: std::sync::OnceLock::new(),
        }
    }

    /// The key sealing secrets at rest: `WEIR_SECRET_KEY`'s, else the data directory's key
    /// file (made on first use).
    pub(crate) fn secret_key(&self) -> std::result::Result<crate::config::SecretKey, String> {
        if let Some(key) = self.secret_key.get() {
            return Ok(key.clone());
        }
        let key = match &self.config.secret_key {
            Some(key) => key.clone(),
            None => crate::config::SecretKey::of_data_dir(&self.config.data_dir)?,
        };
        Ok(self.secret_key.get_or_init(|| key).clone())
    }

    /// The client and plan a live token belongs to (`None`: unknown, expired or revoked).
    pub(crate) async fn token_owner(&self, client_id: &str, token_hash: &str) -> Result<Option<TokenOwner>> {
        self.tokens.call(TokenQuery { client_id: client_id.to_owned(), token_hash: token_hash.to_owned() }).await?
    }

    /// Says that this process queued work in partition `p`.
    pub(crate) fn work_arrived(&self, p: Partition) {
        if let Some(n) = self.arrivals.get(usize::from(p.0)) {
            n.notify_one();
        }
    }

    /// Completes when this process queues work in partition `p`.
    pub(crate) async fn arrival(&self, p: Partition) {
        match self.arrivals.get(usize::from(p.0)) {
            Some(n) => n.notified().await,
            None => std::future::pending().await,
        }
    }

    /// Whether the organisation has a plugin with this id.
    pub(crate) async fn plugin_exists(&self, org_id: &str, plugin_id: &str) -> Result<bool> {
        Ok(self.plugin_hash(org_id, plugin_id).await?.is_some())
    }

    /// The SHA-256 of the organisation's plugin, `None` if it has no such plugin.
    pub(crate) async fn plugin_hash(&self, org_id: &str, plugin_id: &str) -> Result<Option<String>> {
        if let Some((org, sha)) = self.plugin_hashes.lock().unwrap_or_else(|e| e.into_inner()).get(plugin_id) {
            return Ok((org == org_id).then(|| sha.clone()));
        }
        let Some(plugin) = self.store.get_plugin(org_id, plugin_id).await? else { return Ok(None) };
        self.plugin_hashes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(plugin_id.to_owned(), (plugin.org_id.clone(), plugin.sha256.clone()));
        Ok(Some(plugin.sha256))
    }

    /// The key that signs export download links.
    pub(crate) async fn export_link_key(&self) -> Result<Vec<u8>> {
        self.link_key.get_or_try_init(|| self.store.export_link_key()).await.cloned()
    }

    /// Forgets a deleted plugin.
    pub(crate) fn plugin_deleted(&self, plugin_id: &str) {
        self.plugin_hashes.lock().unwrap_or_else(|e| e.into_inner()).remove(plugin_id);
    }

    /// The move to history this process takes part in.
    pub(crate) fn set_mover(&self, mover: Arc<crate::history::Mover>) {
        let _ = self.mover.set(mover);
    }

    /// Updates gauges that are read from the store at scrape time.
    pub(crate) async fn refresh_gauges(&self) {
        if let Some(history) = &self.history {
            self.metrics.history_up.set(i64::from(history.is_up()));
        }
        if let Some(mover) = self.mover.get()
            && let Ok((deliveries, events)) = mover.backlog().await
        {
            self.metrics.history_backlog_deliveries.set(deliveries as i64);
            self.metrics.history_backlog_events.set(events as i64);
        }
        if let Ok((ready, scheduled)) = self.store.queue_depth().await {
            self.metrics.queue_ready.set(ready as i64);
            self.metrics.queue_scheduled.set(scheduled as i64);
        }
    }
}
