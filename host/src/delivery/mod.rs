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
//! Each part is a type with its own state — the [`Claimer`](claiming::Claimer) (the claim
//! loops, the lanes, the deliveries held and their permits), the
//! [`Attempter`](attempt::Attempter) (batched loads, plugins, the destinations), the
//! [`Recorder`](recording::Recorder) (batched outcomes, streaks, dead letters) — and this
//! file wires them: the [`Engine`] takes each claimed delivery through the three, and its
//! handle stops it.
//!
//! Every `weir serve` process runs one engine; they share the work through the queue
//! (`crate::store::queue::claim`) with no leader.

mod attempt;
mod claiming;
mod parts;
mod recording;

use std::sync::{Arc, Weak};
use std::time::Duration;

use attempt::{Attempter, AttempterDoors, AttempterParts, Claim, Worked, unsent};
use claiming::claimed::Claimed;
use claiming::{Claimer, ClaimerDoors, ClaimerParts};
pub(crate) use parts::{EngineParts, Settings};
use recording::{Recorder, RecorderDoors, RecorderParts};

use crate::destinations::http::Http;
use crate::destinations::kind::SenderParts;
use crate::destinations::message::KeySource;
use crate::destinations::send::Destinations;
use crate::jobs::Stopping;
use crate::store::queue::work::Outcome;
use crate::store::{Store, StoreError};

/// The delivery workers of one process: its three parts.
#[derive(Debug)]
pub(crate) struct Engine {
    claimer: Arc<Claimer>,
    attempter: Attempter,
    recorder: Recorder,
    /// Panics caught around an attempt are counted here.
    metrics: Arc<crate::metrics::Metrics>,
    /// One attempt's time (the last ones finish on shutdown within it).
    timeout: Duration,
    /// How long finished deliveries are kept (the upkeep trims them).
    plans: std::sync::Arc<crate::plans::Plans>,
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
            notices,
        } = parts;
        let keys = secret_keys;
        let secret: KeySource = Arc::new(move || keys.get());
        let http =
            Http::new(url_rule.clone(), tls.clone(), settings.egress_proxy.clone(), secret.clone(), settings.workers);
        let senders = SenderParts { rule: url_rule, secret, tls: Arc::new(tls), http };
        let destinations = Destinations::new(&senders, settings.timeout);
        Arc::new_cyclic(|engine: &Weak<Engine>| {
            let engine = engine.clone();
            let claimer = Claimer::new(ClaimerParts {
                doors: ClaimerDoors {
                    keys: store.keys().clone(),
                    claims: store.claims(),
                    rates: store.rates(),
                    work: store.work(),
                    trim: store.trim(),
                    events: store.event_writes(),
                },
                arrivals: arrivals.clone(),
                metrics: metrics.clone(),
                workers: (settings.workers, settings.per_webhook),
                lease: settings.takeover_after,
                begin: Box::new(move |claimed| {
                    if let Some(engine) = engine.upgrade() {
                        tokio::spawn(Box::pin(engine.attempt(claimed)));
                    }
                }),
            });
            let attempter = Attempter::new(AttempterParts {
                doors: AttempterDoors {
                    keys: store.keys().clone(),
                    rows: store.work(),
                    targets: store.targets(),
                    plugins: store.plugins(),
                },
                destinations,
                plugins,
                plugin_hashes,
                telemetry,
                metrics: metrics.clone(),
                retry_schedule: settings.retry_schedule.clone(),
            });
            let recorder = Recorder::new(RecorderParts {
                doors: RecorderDoors {
                    keys: store.keys().clone(),
                    work: store.work(),
                    streaks: store.streaks(),
                    endpoints: store.endpoint_states(),
                },
                metrics: metrics.clone(),
                streak: settings.streak,
                arrivals,
                webhooks,
                deliveries,
                notices,
            });
            Engine { claimer, attempter, recorder, metrics, timeout: settings.timeout, plans: settings.plans }
        })
    }

    /// Runs the claimers and the upkeep until told to stop; then gives waiting deliveries
    /// back to the queue and lets attempts in flight finish. When its handle is dropped
    /// without being stopped (the service's future dropped, as a test's runtime does), it
    /// ends at once: what it held is left to its leases.
    async fn run(self: Arc<Self>, mut stopping: Stopping) {
        let claimer = &self.claimer;
        let claimers: Vec<_> =
            claimer.partitions().map(|p| tokio::spawn(claimer.clone().claim_loop(p, stopping.clone()))).collect();
        let upkeep = tokio::spawn(claiming::upkeep::run(claimer.clone(), self.plans.clone(), stopping.clone()));
        let stopped = stopping.wait().await;
        claimer.stop();
        if stopped.is_err() {
            return;
        }
        for task in claimers {
            let _ = task.await;
        }
        claimer.give_back_waiting().await;
        // Attempts in flight finish (each is bounded by the delivery timeout). Whatever is
        // still held after that is left to its lease: the upkeep that renews leases stops.
        let grace = self.timeout + Duration::from_secs(10);
        let deadline = tokio::time::Instant::now() + grace;
        claimer.all_back(grace).await;
        // (Slow attempts hold no permit: the upkeep ends when nothing is held.)
        let upkeep_ends = upkeep.abort_handle();
        if tokio::time::timeout_at(deadline, upkeep).await.is_err() {
            tracing::warn!(
                held = claimer.held_count(),
                "deliveries still held at shutdown; their leases bring them back"
            );
            upkeep_ends.abort();
        }
    }

    /// A claimed delivery, handed its hold, through the three parts: loaded, attempted,
    /// recorded; then its lane slot and permit come back — by its [`Claimed`] hold, which
    /// gives them back whatever path the attempt takes, a panic's included. A panic is
    /// caught here and logged once with the webhook's id; one inside the attempt itself is
    /// recorded as a failed attempt ([`Attempter::work`]).
    async fn attempt(self: Arc<Self>, claimed: Claimed) {
        let mut attempt = std::pin::pin!(self.attempt_claimed(&claimed));
        if let Err(panic) = crate::panics::caught(attempt.as_mut()).await {
            self.metrics.internal_errors.inc();
            let member = claimed.member();
            tracing::error!(webhook_id = %claimed.webhook(), delivery_id = %member.delivery, org_id = %member.org, %panic,
                "internal error around a delivery attempt; its lease brings the delivery back");
        }
    }

    /// [`Engine::attempt`] of a delivery held by `claimed`.
    ///
    /// (The rare paths' futures — a pause, a dead letter — are boxed where they are awaited:
    /// a future holds room for the largest of its awaits, and this one is moved into its
    /// task for every delivery.)
    async fn attempt_claimed(&self, claimed: &Claimed) {
        let (p, webhook, member) = (claimed.partition(), claimed.webhook(), claimed.member());
        if let Some(until) = claimed.paused_until() {
            // Paused since it was claimed: back to the queue for the pause's end, unloaded.
            Box::pin(claimed.give_back(until)).await;
            return;
        }
        let claim = Claim { webhook: webhook.to_owned(), member: member.clone() };
        let worked = match self.attempter.load(p, claim).await {
            Ok(Some(work)) => {
                let paused = work.webhook.as_ref().and_then(|target| {
                    claimed.learned(target.rate_limit, &target.endpoint);
                    target.endpoint.paused_at(crate::time::now_millis())
                });
                if let Some(until) = paused {
                    // Another process got the pause: back to the queue, the attempt uncounted.
                    Box::pin(claimed.put_back(until)).await;
                    return;
                }
                self.attempter.work(claimed, work).await
            }
            // The row is gone: drop the queue member.
            Ok(None) => {
                Worked::Record { report: unsent(webhook, member, Outcome::Cancelled, 0), failing: false, signal: None }
            }
            Err(StoreError::Corrupt { reason, .. }) => Worked::DeadLetter(reason),
            Err(e) => {
                tracing::warn!(error = %e, delivery_id = %member.delivery, org_id = %member.org, "cannot load a delivery; its lease will run out");
                Worked::Nothing
            }
        };
        match worked {
            Worked::Record { report, failing, signal } => {
                if let Some(signal) = signal {
                    self.recorder.endpoint_signal(claimed, signal);
                }
                claimed.release_lane();
                self.recorder.finish(p, report, failing).await;
            }
            Worked::DeadLetter(reason) => {
                Box::pin(self.recorder.dead_letter(p, webhook, member, &reason)).await;
            }
            Worked::Nothing => {}
        }
        // The caller drops `claimed`: the lane slot (if still taken) and the permit come back.
    }
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
