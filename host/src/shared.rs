//! The small parts one process shares between the domain's handles and its workers, each
//! made once by `crate::service` (which wires every part to those that use it) and given
//! only to those: token lookups in batches, the signals that work arrived, plugins' code
//! hashes, the export link key, the key sealing secrets, the gauges read at scrape time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use std::time::Instant;

use tokio::sync::Notify;

pub(crate) use crate::auth::TokenProof;

use crate::config::SecretKey;
use crate::metrics::Metrics;
use crate::recent::Recent;
use crate::store::core::batch::Batcher;
use crate::store::events::exports::ExportRecords;
use crate::store::queue::claim::Claims;
use crate::store::tenants::clients::{Clients, TokenOwner, TokenQuery};
use crate::store::tenants::plugins::PluginRecords;
use crate::store::versions::{KEPT_AT_MOST, Versions};
use crate::store::{Keys, Partition, Result};

/// Most lookups sent to Redis in one round trip.
const LOOKUP_BATCH: usize = 128;

/// Token lookups, in batches: concurrent requests share one round trip, and those with the
/// same token one lookup. For publishing, tokens are also kept (`owner_kept`), each with the
/// organisation's version read before it, which the publish script holds it to
/// (`store::versions`): a revoked token or client is refused from the moment its revoke
/// returns, though its entry is still kept.
#[derive(Debug)]
pub(crate) struct Tokens {
    lookups: Batcher<TokenQuery, Result<Option<TokenOwner>>>,
    kept: Recent<String, (TokenOwner, u64)>,
    versions: Versions,
}

/// Most tokens kept per process.
const KEPT_TOKENS: usize = 16 * 1024;

impl Tokens {
    /// Starts the batches (inside a Tokio runtime).
    pub(crate) fn start(clients: Clients, versions: Versions) -> Tokens {
        let batcher = Batcher::spawn_distinct(LOOKUP_BATCH, move |queries: Vec<TokenQuery>| {
            let clients = clients.clone();
            async move { clients.lookup_tokens(&queries).await }
        });
        Tokens { lookups: batcher, kept: Recent::new(KEPT_TOKENS, KEPT_AT_MOST), versions }
    }

    /// The client and plan a live token belongs to (`None`: unknown, expired or revoked).
    pub(crate) async fn owner(&self, client_id: &str, token_hash: &str) -> Result<Option<TokenOwner>> {
        self.lookups.call(TokenQuery { client_id: client_id.to_owned(), token_hash: token_hash.to_owned() }).await?
    }

    /// [`Tokens::owner`] as kept, with the organisation's version it was read at — for a
    /// publish, whose script proves that version current. Not kept: looked up, then (the
    /// organisation now known) its version read and the token looked up once more, so the
    /// version kept is never newer than what it was read with.
    pub(crate) async fn owner_kept(&self, client_id: &str, token_hash: &str) -> Result<Option<(TokenOwner, u64)>> {
        if let Some(kept) = self.kept.get(token_hash) {
            return Ok(Some(kept));
        }
        let Some(first) = self.owner(client_id, token_hash).await? else { return Ok(None) };
        let version = self.versions.current(&first.client.org_id).await?;
        let Some(owner) = self.owner(client_id, token_hash).await? else { return Ok(None) };
        let until = owner.expires_in.map(|left| Instant::now() + left);
        self.kept.put(token_hash.to_owned(), (owner.clone(), version), until, 1);
        Ok(Some((owner, version)))
    }

    /// The owner of a kept token, looked up now.
    pub(crate) async fn owner_now(&self, token: &TokenProof) -> Result<Option<TokenOwner>> {
        self.owner(&token.client_id, &token.token_hash).await
    }

    /// Keeps a token no longer (what it was kept with changed).
    pub(crate) fn forget(&self, token: &TokenProof) {
        self.kept.forget(&token.token_hash);
    }
}

/// One signal per partition: this process just queued work there, so its workers look at
/// once instead of at their next poll.
#[derive(Debug)]
pub(crate) struct Arrivals(Vec<Notify>);

impl Arrivals {
    pub(crate) fn new(keys: &Keys) -> Arrivals {
        Arrivals(keys.partitions().map(|_| Notify::new()).collect())
    }

    /// Says that this process queued work in partition `p`.
    pub(crate) fn arrived(&self, p: Partition) {
        if let Some(n) = self.0.get(usize::from(p.0)) {
            n.notify_one();
        }
    }

    /// Completes when this process queues work in partition `p`.
    pub(crate) async fn wait(&self, p: Partition) {
        match self.0.get(usize::from(p.0)) {
            Some(n) => n.notified().await,
            None => std::future::pending().await,
        }
    }
}

/// Plugin id → its organisation and the SHA-256 of its code. A plugin's code never changes,
/// so this is safe to keep for the life of the process.
#[derive(Debug)]
pub(crate) struct PluginHashes {
    plugins: PluginRecords,
    known: Mutex<HashMap<String, (String, String)>>,
}

impl PluginHashes {
    pub(crate) fn new(plugins: PluginRecords) -> PluginHashes {
        PluginHashes { plugins, known: Mutex::default() }
    }

    /// Whether the organisation has a plugin with this id.
    pub(crate) async fn exists(&self, org_id: &str, plugin_id: &str) -> Result<bool> {
        Ok(self.hash(org_id, plugin_id).await?.is_some())
    }

    /// The SHA-256 of the organisation's plugin, `None` if it has no such plugin.
    pub(crate) async fn hash(&self, org_id: &str, plugin_id: &str) -> Result<Option<String>> {
        if let Some((org, sha)) = self.known.lock().unwrap_or_else(|e| e.into_inner()).get(plugin_id) {
            return Ok((org == org_id).then(|| sha.clone()));
        }
        let Some(plugin) = self.plugins.get_plugin(org_id, plugin_id).await? else { return Ok(None) };
        self.known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(plugin_id.to_owned(), (plugin.org_id.clone(), plugin.sha256.clone()));
        Ok(Some(plugin.sha256))
    }

    /// Forgets a deleted plugin.
    pub(crate) fn deleted(&self, plugin_id: &str) {
        self.known.lock().unwrap_or_else(|e| e.into_inner()).remove(plugin_id);
    }
}

/// The key that signs export download links (read from Redis once).
#[derive(Debug)]
pub(crate) struct LinkKey {
    exports: ExportRecords,
    key: tokio::sync::OnceCell<Vec<u8>>,
}

impl LinkKey {
    pub(crate) fn new(exports: ExportRecords) -> LinkKey {
        LinkKey { exports, key: tokio::sync::OnceCell::new() }
    }

    pub(crate) async fn get(&self) -> Result<Vec<u8>> {
        self.key.get_or_try_init(|| self.exports.export_link_key()).await.cloned()
    }
}

/// The key sealing secrets at rest: `WEIR_SECRET_KEY`'s, else the data directory's key file
/// (made on first use).
#[derive(Debug)]
pub(crate) struct SecretKeys {
    configured: Option<SecretKey>,
    data_dir: PathBuf,
    key: OnceLock<SecretKey>,
}

impl SecretKeys {
    pub(crate) fn new(configured: Option<SecretKey>, data_dir: PathBuf) -> SecretKeys {
        SecretKeys { configured, data_dir, key: OnceLock::new() }
    }

    pub(crate) fn get(&self) -> std::result::Result<SecretKey, String> {
        if let Some(key) = self.key.get() {
            return Ok(key.clone());
        }
        let key = match &self.configured {
            Some(key) => key.clone(),
            None => SecretKey::of_data_dir(&self.data_dir)?,
        };
        Ok(self.key.get_or_init(|| key).clone())
    }
}

/// The gauges read from the store at scrape time.
#[derive(Debug)]
pub(crate) struct Gauges {
    claims: Claims,
    metrics: Arc<Metrics>,
    history: Option<Arc<crate::history::History>>,
    /// The move to history, when this process takes part (its backlog).
    mover: OnceLock<Arc<crate::history::Mover>>,
}

impl Gauges {
    pub(crate) fn new(
        claims: Claims,
        metrics: &Arc<Metrics>,
        history: Option<&Arc<crate::history::History>>,
    ) -> Gauges {
        Gauges { claims, metrics: metrics.clone(), history: history.cloned(), mover: OnceLock::new() }
    }

    /// The move to history this process takes part in.
    pub(crate) fn set_mover(&self, mover: Arc<crate::history::Mover>) {
        let _ = self.mover.set(mover);
    }

    /// Updates the gauges, then renders the registry (`/metrics`).
    pub(crate) async fn render(&self) -> String {
        self.refresh().await;
        self.metrics.render()
    }

    /// Updates the gauges, then reads the registry's series (OTLP).
    pub(crate) async fn read(&self) -> Vec<crate::meters::Series> {
        self.refresh().await;
        self.metrics.read()
    }

    /// Reads what the gauges show from where it is kept.
    async fn refresh(&self) {
        if let Some(history) = &self.history {
            self.metrics.history_up.set(i64::from(history.is_up()));
        }
        if let Some(mover) = self.mover.get()
            && let Ok((deliveries, events)) = mover.backlog().await
        {
            self.metrics.history_backlog_deliveries.set(deliveries as i64);
            self.metrics.history_backlog_events.set(events as i64);
        }
        if let Ok((ready, scheduled)) = self.claims.queue_depth().await {
            self.metrics.queue_ready.set(ready as i64);
            self.metrics.queue_scheduled.set(scheduled as i64);
        }
    }
}
