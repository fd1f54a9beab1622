//! Weir: a webhook subscription and delivery service with sandboxed tenant plugins.
//!
//! # Layout
//! - [`config`]: the one typed configuration, from defaults, a file and `WEIR_*` variables.
//! - [`store`]: every durable record, in Redis (one Redis or a cluster), the key layout, the
//!   Lua scripts and the delivery queue; also the managed `redis-server`.
//! - [`domain`]: what Weir does below HTTP: publishing, webhook changes, retries.
//! - [`auth`]: callers, roles and plans; secret hashing and constant-time comparison.
//! - [`api`]: the HTTP surface (token endpoint, `/api/v2`, operations endpoints).
//! - [`delivery`]: the workers: claim, sign, send, retry, per-webhook fairness.
//! - [`batch`]: group commit (requests in flight together share one Redis call).
//! - [`netguard`]: the webhook URL rule (no private addresses, no DNS rebinding).
//! - [`plugins`]: tenant WebAssembly plugins (the only module that knows wasmtime).
//! - [`exports`]: report exports: rendering, signed download links, the builders.
//! - [`settings`]: Settings > Webhooks, the server-rendered pages for organisation users.
//! - [`catalog`]: the subscribable events.
//! - [`server`]: the listener (TLS, HTTP/1.1 and HTTP/2, graceful shutdown).
//! - [`cli`]: `weir serve` and the operator commands `weir admin …`.
//!
//! [`run`] is the whole service on an already-bound listener, so tests can start it on
//! port 0 in-process and stop it through the shutdown future.

pub mod api;
pub mod app;
pub mod auth;
pub mod batch;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod delivery;
pub mod domain;
pub mod exports;
pub mod ids;
pub mod metrics;
pub mod netguard;
pub mod plugins;
pub mod server;
pub mod settings;
pub mod store;
pub mod time;

use std::future::Future;
use std::sync::Arc;

pub use app::App;
use config::Config;
use store::{Store, StoreError};
use tokio::net::TcpListener;

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("no Redis to use: set WEIR_REDIS_URL, or let `weir serve` manage one")]
    NoRedis,
    #[error("cannot reach Redis at {url}: {source}")]
    Redis { url: String, source: StoreError },
    #[error("WEIR_TLS_CERT / WEIR_TLS_KEY: {0}")]
    Tls(#[from] server::TlsError),
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
    // Links default to the address actually bound (WEIR_LISTEN may ask for port 0).
    if config.public_url.is_none()
        && let Ok(addr) = listener.local_addr()
    {
        config.listen = addr;
    }
    let settings = config.store_settings().ok_or(StartError::NoRedis)?;
    let tls = config.tls.as_ref().map(server::tls_acceptor).transpose()?;
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
    let plugins = Arc::new(plugins::Runtime::new(config.plugin_limits(), config.data_dir.join("plugin-cache"))?);
    let app = Arc::new(App::new(config, store, plugins));
    let engine = if app.config.workers { Some(delivery::Engine::start(app.clone())?) } else { None };
    let builders = app.config.workers.then(|| exports::builder::BuilderHandle::start(app.clone()));
    let service = api::service(app.clone());
    let addr = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    tracing::info!(%addr, tls = tls.is_some(), workers = engine.is_some(), "weir is serving");
    server::serve(listener, service, tls, app.config.max_connections, shutdown).await;
    if let Some(builders) = builders {
        builders.stop().await;
    }
    if let Some(engine) = engine {
        engine.stop().await;
    }
    tracing::info!("weir stopped");
    Ok(())
}

/// A Redis URL with any password replaced, for messages and logs.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}
