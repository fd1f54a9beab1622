//! `weir serve`: start (or adopt) the managed Redis when no `WEIR_REDIS_URL` is set, bind
//! the listener, run until SIGTERM or SIGINT, then shut down cleanly.

use std::process::ExitCode;

use tokio::net::TcpListener;

use super::logging::init_logging;
use crate::config::Config;
use crate::store::core::managed::Supervisor;

pub(super) async fn serve(mut config: Config) -> ExitCode {
    init_logging("info", config.log_format);
    let supervisor = match config.store_settings() {
        Some(_) => None,
        None => match Supervisor::start(&config.managed_redis_dir()).await {
            Ok(supervisor) => {
                config.redis_url = Some(supervisor.url());
                Some(supervisor)
            }
            Err(e) => {
                eprintln!("weir: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let code = match TcpListener::bind(config.listen).await {
        Ok(listener) => match crate::service::run(config, listener, shutdown_signal()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("weir: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("weir: cannot listen on {} (WEIR_LISTEN): {e}", config.listen);
            ExitCode::FAILURE
        }
    };
    if let Some(supervisor) = supervisor {
        supervisor.shutdown().await;
    }
    code
}

/// Completes on SIGTERM or SIGINT.
pub(super) async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    tracing::info!("shutdown requested; finishing in-flight work");
}
