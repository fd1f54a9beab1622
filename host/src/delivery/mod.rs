//! Delivery: the workers that take deliveries off the queue and send them, in three parts
//! a delivery goes through in order:
//!
//! 1. `claiming`: one loop per partition claiming what the lanes have room for; `lanes`:
//!    per-webhook windows that follow the endpoint (AIMD, probing, pauses, the slow share),
//!    so endpoints that fail or hang cannot hold the workers healthy ones need; `upkeep`:
//!    keeping held leases alive, trimming indexes, releasing old snapshots.
//! 2. `attempt`: one attempt — loaded, prepared (`prepare`: plugins), signed and sent
//!    (`send`, `connect`: the HTTP(S) client, connecting only to addresses the URL rule
//!    vetted, directly or through the egress proxy) — its request built from what it is
//!    handed alone (`attempt::Request`), its answer judged by the policy (`retry`).
//! 3. `recording`: the outcome recorded (a row that cannot be read is dead-lettered), the
//!    failure streak kept (and a webhook switched off), the endpoint's state shared with the
//!    other processes (`endpoint`), the permit given back.
//!
//! This file wires them: the [`Engine`] (what the parts share: the lanes, the permits, the
//! batched loads and records, the deliveries held) and its handle.
//!
//! Every `weir serve` process runs one engine; they share the work through the queue
//! (`crate::store::queue::claim`) with no leader.

mod attempt;
mod claiming;
mod destination;
mod parts;
mod recording;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, Semaphore};

use crate::jobs::Stopping;
use crate::store::core::batch::Batcher;
use crate::store::queue::claim::Member;
use crate::store::queue::targets::WebhookTarget;
use crate::store::queue::work::{Loaded, Recorded, Report};
use crate::store::{Partition, Store, StoreError};
use claiming::lanes::Lanes;
use destination::{Destinations, http::Http};
pub(crate) use parts::{EngineParts, Settings};

/// Most loads or outcomes sent to Redis in one script call.
const BATCH: usize = 64;

/// A claimed delivery to load: its webhook and queue member.
#[derive(Debug, Clone)]
struct Claim {
    webhook: String,
    member: Member,
}

/// What an attempt needs: the delivery as loaded, and its webhook (`None` if it is gone;
/// shared by the deliveries of one load to it).
#[derive(Debug)]
struct Work {
    loaded: Loaded,
    webhook: Option<Arc<WebhookTarget>>,
}

/// A delivery this process holds (claimed, waiting, attempted, or being recorded): its
/// lease is renewed until it is done with.
#[derive(Debug, Clone)]
struct Held {
    partition: Partition,
    webhook: String,
    member: Member,
    claimed: Instant,
    /// Its attempt had no answer for `lanes::SLOW_AFTER`: its permit went back (it counts
    /// against the slow share instead).
    slow: bool,
}

/// The delivery workers of one process.
#[derive(Debug)]
pub(crate) struct Engine {
    settings: Settings,
    /// The store over this engine's own connection.
    store: Store,
    metrics: Arc<crate::metrics::Metrics>,
    telemetry: Arc<crate::telemetry::Telemetry>,
    plugins: Arc<crate::plugins::Runtime>,
    plugin_hashes: Arc<crate::shared::PluginHashes>,
    arrivals: Arc<crate::shared::Arrivals>,
    webhooks: crate::domain::webhooks::Webhooks,
    deliveries: crate::domain::deliveries::Deliveries,
    publishing: crate::domain::events::Publishing,
    /// Where attempts are sent (every kind of destination).
    destinations: Destinations,
    lanes: Lanes,
    /// One permit per claimed delivery, until its outcome is recorded.
    permits: Arc<Semaphore>,
    /// A delivery was done with: claimers waiting for permits look again.
    freed: Notify,
    /// Loads and outcomes go to Redis in batches per partition (group commit).
    loaders: Vec<Batcher<Claim, Result<Option<Work>, StoreError>>>,
    recorders: Vec<Batcher<Arc<Report>, Result<Recorded, StoreError>>>,
    /// Deliveries this process holds, by delivery id.
    held: std::sync::Mutex<HashMap<String, Held>>,
    /// Per partition: a lane there has room again.
    room: Vec<Notify>,
    stopping: AtomicBool,
}

/// Attempts that may be slow at once (`lanes`): a quarter of the workers. The rest stay for
/// endpoints that answer.
fn slow_share(workers: usize) -> usize {
    (workers / 4).max(1)
}

/// A running engine: it stops when the process's [`Shutdown`](crate::jobs::Shutdown) says
/// so, finishing its attempts in flight; [`EngineHandle::stopped`] waits for that.
#[derive(Debug)]
pub(crate) struct EngineHandle {
    done: tokio::sync::oneshot::Receiver<()>,
    thread: std::thread::JoinHandle<()>,
}

/// The engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot start delivery workers: WEIR_EXTRA_CA: {0}")]
    ExtraCa(#[from] crate::tls::TlsError),
    #[error("cannot start delivery workers: {0}")]
    Thread(std::io::Error),
}

impl Engine {
    /// Starts the workers of this process on a thread of their own, with a runtime and a
    /// Redis connection of their own: the API's requests never wait behind delivery work
    /// for a turn of the scheduler, however much of it there is (contract §7).
    pub(crate) fn start(parts: EngineParts, stopping: Stopping) -> Result<EngineHandle, EngineError> {
        let tls = crate::tls::client_config(parts.settings.extra_ca.as_deref())?;
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(EngineError::Thread)?;
        let (finished, done) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("weir-delivery".into())
            .spawn(move || {
                runtime.block_on(async move {
                    if let Some(store) = own_connection(&parts.store, &stopping).await {
                        Engine::new(parts, store, tls).run(stopping).await;
                    }
                });
                let _ = finished.send(());
            })
            .map_err(EngineError::Thread)?;
        Ok(EngineHandle { done, thread })
    }

    /// The engine, inside its runtime (its batchers start here).
    fn new(parts: EngineParts, store: Store, tls: rustls::ClientConfig) -> Arc<Engine> {
        let EngineParts {
            settings,
            store: _,
            metrics,
            telemetry,
            plugins,
            plugin_hashes,
            arrivals,
            url_rule,
            secret_keys,
            webhooks,
            deliveries,
            publishing,
        } = parts;
        let keys = secret_keys;
        let http =
            Http::new(url_rule, tls, settings.egress_proxy.clone(), Arc::new(move || keys.get()), settings.workers);
        let destinations = Destinations::new(http, settings.timeout);
        let loaders = Batcher::per_partition(&store, BATCH, |store, p, claims: Vec<Claim>| async move {
            load(&store, p, claims).await
        });
        let recorders = Batcher::per_partition(&store, BATCH, |store, p, outcomes: Vec<Arc<Report>>| async move {
            store.record(p, &outcomes).await
        });
        Arc::new(Engine {
            destinations,
            lanes: Lanes::new(settings.per_webhook, slow_share(settings.workers)),
            permits: Arc::new(Semaphore::new(settings.workers)),
            freed: Notify::new(),
            loaders,
            recorders,
            held: std::sync::Mutex::new(HashMap::new()),
            room: store.keys().partitions().map(|_| Notify::new()).collect(),
            stopping: AtomicBool::new(false),
            store,
            settings,
            metrics,
            telemetry,
            plugins,
            plugin_hashes,
            arrivals,
            webhooks,
            deliveries,
            publishing,
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// Runs the claimers and the upkeep until told to stop; then gives waiting deliveries
    /// back to the queue and lets attempts in flight finish. When its handle is dropped
    /// without being stopped (the service's future dropped, as a test's runtime does), it
    /// ends at once: what it held is left to its leases.
    async fn run(self: Arc<Self>, mut stopping: Stopping) {
        let claimers: Vec<_> = self
            .store
            .keys()
            .partitions()
            .map(|p| tokio::spawn(self.clone().claim_loop(p, stopping.clone())))
            .collect();
        let upkeep = tokio::spawn(self.clone().upkeep_loop(stopping.clone()));
        let stopped = stopping.wait().await;
        self.stopping.store(true, Ordering::Relaxed);
        if stopped.is_err() {
            return;
        }
        for claimer in claimers {
            let _ = claimer.await;
        }
        let waiting = self.lanes.take_waiting();
        self.give_back(waiting, crate::time::now_millis()).await;
        // Attempts in flight finish (each is bounded by the delivery timeout).
        let total = self.settings.workers as u32;
        let grace = self.settings.timeout + Duration::from_secs(10);
        let _ = tokio::time::timeout(grace, self.permits.acquire_many(total)).await;
        let _ = upkeep.await;
    }

    /// Deliveries claimed but not started go back to their queues, due at `due_ms`, for any
    /// worker (on shutdown; when their webhook turns probing or paused).
    async fn give_back(&self, waiting: Vec<(String, claiming::lanes::Waiting)>, due_ms: u64) {
        let mut by_partition: HashMap<Partition, Vec<(String, Member)>> = HashMap::new();
        let mut delivered = Vec::with_capacity(waiting.len());
        for (webhook, w) in waiting {
            delivered.push(w.member.delivery.clone());
            by_partition.entry(w.partition).or_default().push((webhook, w.member));
        }
        for (p, items) in by_partition {
            if let Err(e) = self.store.give_back(p, &items, due_ms).await {
                tracing::warn!(error = %e, "cannot give back waiting deliveries; their leases will run out");
            }
        }
        for delivery in delivered {
            self.done(&delivery);
        }
    }
}

/// Loads a batch of claimed deliveries of one partition and their webhooks.
async fn load(
    store: &crate::store::Store,
    p: Partition,
    claims: Vec<Claim>,
) -> Result<Vec<Result<Option<Work>, StoreError>>, StoreError> {
    let members: Vec<&Member> = claims.iter().map(|c| &c.member).collect();
    let mut webhooks: Vec<(&str, &str)> = claims.iter().map(|c| (c.member.org.as_str(), c.webhook.as_str())).collect();
    webhooks.sort_unstable();
    webhooks.dedup();
    // Sent together: on one Redis they share a round trip.
    let (loaded, targets) = tokio::try_join!(store.load(p, &members), store.webhook_targets(&webhooks))?;
    let targets: Vec<Option<Arc<WebhookTarget>>> = targets.into_iter().map(|t| t.map(Arc::new)).collect();
    Ok(loaded
        .into_iter()
        .zip(&claims)
        .map(|(loaded, claim)| {
            loaded.map(|loaded| {
                loaded.map(|loaded| {
                    let wanted = (claim.member.org.as_str(), claim.webhook.as_str());
                    let webhook = webhooks.binary_search(&wanted).ok().and_then(|i| targets.get(i).cloned().flatten());
                    Work { loaded, webhook }
                })
            })
        })
        .collect())
}

impl EngineHandle {
    /// Waits, once the process is stopping, for the engine to have stopped claiming, given
    /// waiting work back to the queue and finished its attempts in flight (they are bounded
    /// by the delivery timeout).
    pub(crate) async fn stopped(self) {
        let _ = self.done.await;
        let _ = self.thread.join();
    }
}

/// The engine's own connection to the store, tried again until it opens or the engine is
/// told to stop (`None`).
async fn own_connection(store: &Store, stopping: &Stopping) -> Option<Store> {
    let mut wait = Duration::from_millis(100);
    let mut stopping = stopping.clone();
    loop {
        match store.another_connection().await {
            Ok(store) => return Some(store),
            Err(e) => tracing::warn!(error = %e, "the delivery workers cannot connect to Redis yet; retrying"),
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stopping.wait() => return None,
        }
        wait = (wait * 2).min(Duration::from_secs(5));
    }
}
