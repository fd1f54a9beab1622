//! The whole service on an already-bound listener: connects to the store, starts the
//! plugin runtime, the delivery engine and the export builders, and serves the API and the
//! settings pages until told to stop. Tests start it on port 0 in-process and stop it
//! through the shutdown future (as mini-redis's `server::run`).

mod app;
pub(crate) mod doors;

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::config::Config;
use crate::domain::replay::job::ReplayJobs;
use crate::store::{Store, StoreError};
use crate::{api, delivery, exports, history, jobs, plugins, server, settings, store, tls};
use app::App;

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("no Redis to use: set WEIR_REDIS_URL, or let `weir serve` manage one")]
    NoRedis,
    #[error("cannot reach Redis at {url}: {source}")]
    Redis { url: String, source: StoreError },
    #[error("WEIR_TLS_CERT / WEIR_TLS_KEY: {0}")]
    Tls(#[from] tls::TlsError),
    #[error("{0}")]
    Engine(#[from] delivery::EngineError),
    #[error("{0}")]
    Plugins(#[from] plugins::RuntimeError),
}

/// Installs rustls' process-wide crypto provider (ring). Safe to call more than once.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Runs Weir on `listener` until `shutdown` completes.
pub async fn run(
    mut config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), StartError> {
    install_crypto_provider();
    // A panic a worker catches (a delivery attempt's) is logged by it, with its ids.
    crate::panics::install_hook();
    // Links default to the address actually bound (WEIR_LISTEN may ask for port 0).
    if config.public_url.is_none()
        && let Ok(addr) = listener.local_addr()
    {
        config.listen = addr;
    }
    let tls = config.tls.as_ref().map(|files| tls::acceptor(&files.cert, &files.key)).transpose()?;
    let app = connect(config).await?;
    // Every background worker watches one shutdown: the delivery workers (with their upkeep
    // and trimming), the export builders, and the replays a request left to the background
    // or whose process died.
    let (stop_workers, stopping) = jobs::Shutdown::new();
    let workers = app.config.workers;
    let engine = if workers { Some(delivery::Engine::start(app.engine(), stopping.clone())?) } else { None };
    let background = if workers { background(&app, stopping).await } else { Vec::new() };
    // Metrics over OTLP, when asked for: the registry as `/metrics` serves it.
    let gauges = app.gauges.clone();
    let metrics_export = app.telemetry.export_metrics(Arc::new(move || {
        let gauges = gauges.clone();
        Box::pin(async move { gauges.read().await })
    }));
    let handles = app.handles();
    let routes = api::routes().merge(settings::router(handles.access.clone()));
    let service = api::service(api::with_error_shape(routes, handles.clone()), handles.access.clone());
    let addr = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    tracing::info!(%addr, tls = tls.is_some(), workers = engine.is_some(), "weir is serving");
    let limits = (app.config.max_connections, Arc::new(app.config.trusted_proxies.clone()));
    server::serve(listener, service, tls, limits, shutdown).await;
    // Each finishes what it is doing (an export being built, an attempt in flight) first.
    stop_workers.stop();
    for worker in background {
        let _ = worker.await;
    }
    if let Some(engine) = engine {
        engine.stopped().await;
    }
    // The last spans go out (within 5 s).
    app.telemetry.stop().await;
    if let Some(task) = metrics_export {
        task.abort();
    }
    tracing::info!("weir stopped");
    Ok(())
}

/// The process's state: the store connected (and checked), the plugin runtime, history.
async fn connect(config: Config) -> Result<App, StartError> {
    let settings = config.store_settings().ok_or(StartError::NoRedis)?;
    let store = Store::connect(&settings)
        .await
        .map_err(|source| StartError::Redis { url: settings.target.describe(), source })?;
    if let Some(value) = store.small_listpack_values().await {
        tracing::warn!(
            hash_max_listpack_value = value,
            recommended = store::LISTPACK_VALUE,
            "this Redis keeps finished delivery records in hash tables (about 2.4 times the memory): set hash-max-listpack-value to the recommended value"
        );
    }
    // With replicas awaited, publishing steers clear of partitions whose master lost them.
    store.standbys().watch_replicas();
    tokio::spawn(plans_in_use(store.clone(), config.plans.clone()));
    let plugins = Arc::new(plugins::Runtime::new(config.plugin_limits(), config.data_dir.join("plugin-cache"))?);
    let history = history::History::configured(&config, store.prefix())?;
    if let Some(history) = &history
        && let Err(e) = history.migrate().await
    {
        // Publishing and delivery go on; the movers try again.
        tracing::warn!(error = %e, "history in PostgreSQL is not ready yet; ended work waits in Redis");
    }
    Ok(App::new(config, store, plugins, history))
}

/// The background workers of a process with workers: export builds, replays left to the
/// background, and the move to history.
async fn background(app: &App, stopping: jobs::Stopping) -> Vec<tokio::task::JoinHandle<()>> {
    let config = &app.config;
    let store = &app.store;
    let mut background = Vec::new();
    let link = (config.export_url_ttl, config.public_url());
    let builds =
        Arc::new(exports::builder::Builds::new((store.exports(), &app.notices), &app.moved, &app.telemetry, link));
    background.push(tokio::spawn(jobs::run(builds, store.jobs(), stopping.clone())));
    let replays = Arc::new(ReplayJobs::new(&app.replayer, &app.telemetry));
    background.push(tokio::spawn(jobs::run(replays, store.jobs(), stopping.clone())));
    if let Some(history) = &app.history {
        let moved = (app.metrics.history_moved_deliveries.clone(), app.metrics.history_moved_events.clone());
        let retention = (config.delivery_retention, config.event_retention);
        let mover = Arc::new(history::Mover::new(
            history.clone(),
            self::doors::mover(store),
            (retention, &config.plans),
            moved,
        ));
        if let Err(e) = mover.enlist().await {
            tracing::warn!(error = %e, "cannot enlist the partitions for the move to history yet");
        }
        app.gauges.set_mover(mover.clone());
        background.push(tokio::spawn(jobs::run(Arc::new(history::MoverJob(mover)), store.jobs(), stopping)));
    }
    background
}

/// Says, once at start, which organisations are on a plan the configuration no longer has:
/// they may use no API and put nothing new in until an operator gives them one that it has.
async fn plans_in_use(store: Store, plans: Arc<crate::plans::Plans>) {
    let Ok(orgs) = store.orgs().org_ids().await else { return };
    let mut unknown: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for org in orgs {
        if let Ok(Some(plan)) = store.orgs().org_plan(&org).await
            && plans.get(plan.as_str()).is_none()
        {
            *unknown.entry(plan.as_str().to_owned()).or_default() += 1;
        }
    }
    for (plan, organisations) in unknown {
        tracing::error!(
            plan,
            organisations,
            "organisations are on a plan the configuration does not have: they may use no API and put nothing new in; add [plans.{plan}] or move them with weir admin org set-plan"
        );
    }
}
