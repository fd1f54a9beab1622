//! A few connections to PostgreSQL, opened when first needed and again when one breaks.
//! A `tokio_postgres::Client` pipelines the queries given to it at once, so a handful
//! serve a process; every query has a deadline, and a server that cannot be reached is
//! [`HistoryError::Unavailable`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Mutex;
use tokio_postgres::Client;

use super::error::HistoryError;
use crate::config::{HistorySettings as Settings, SslMode};

/// Connections kept.
const SIZE: usize = 3;
/// How long connecting may take.
const CONNECT: Duration = Duration::from_secs(5);

/// The pool.
pub(crate) struct Pool {
    settings: Settings,
    slots: Vec<Mutex<Option<Arc<Client>>>>,
    next: AtomicUsize,
    tls: Option<rustls::ClientConfig>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("at", &self.settings.describe()).finish_non_exhaustive()
    }
}

impl Pool {
    pub(crate) fn new(settings: Settings, tls: Option<rustls::ClientConfig>) -> Pool {
        Pool { settings, slots: (0..SIZE).map(|_| Mutex::new(None)).collect(), next: AtomicUsize::new(0), tls }
    }

    /// A connection (one of the pool's, in turn), opened if it is not.
    pub(crate) async fn client(&self) -> Result<Arc<Client>, HistoryError> {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % SIZE];
        let mut held = slot.lock().await;
        if let Some(client) = held.as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        let client = Arc::new(self.connect().await?);
        *held = Some(client.clone());
        Ok(client)
    }

    /// A connection of its own, not pooled (migrations hold a session lock on it).
    pub(crate) async fn connect(&self) -> Result<Client, HistoryError> {
        let unavailable = |e: String| HistoryError::Unavailable(format!("{}: {e}", self.settings.describe()));
        let config = client_config(&self.settings).map_err(unavailable)?;
        let connecting = async {
            match (&self.tls, self.settings.ssl) {
                (Some(tls), SslMode::Require | SslMode::Verify) => {
                    let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls.clone());
                    let (client, connection) = config.connect(tls).await?;
                    tokio::spawn(drive(connection));
                    Ok::<_, tokio_postgres::Error>(client)
                }
                _ => {
                    let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
                    tokio::spawn(drive(connection));
                    Ok(client)
                }
            }
        };
        match tokio::time::timeout(CONNECT, connecting).await {
            Ok(Ok(client)) => Ok(client),
            Ok(Err(e)) => Err(unavailable(e.to_string())),
            Err(_) => Err(unavailable(format!("no connection within {}s", CONNECT.as_secs()))),
        }
    }
}

/// The client's settings from the URL: `sslmode` is read here (`config::HistorySettings`), not by
/// the client, which knows fewer of libpq's modes.
fn client_config(settings: &Settings) -> Result<tokio_postgres::Config, String> {
    let mut url = url::Url::parse(&settings.url).map_err(|e| e.to_string())?;
    let kept: Vec<(String, String)> =
        url.query_pairs().filter(|(k, _)| k != "sslmode").map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    url.set_query(None);
    if !kept.is_empty() {
        url.query_pairs_mut().extend_pairs(kept);
    }
    let mut config: tokio_postgres::Config = url.as_str().parse().map_err(|e: tokio_postgres::Error| e.to_string())?;
    config.ssl_mode(match settings.ssl {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Require | SslMode::Verify => tokio_postgres::config::SslMode::Require,
    });
    if config.get_application_name().is_none() {
        config.application_name("weir");
    }
    Ok(config)
}

/// Runs a connection until it closes.
async fn drive<C: std::future::Future<Output = Result<(), tokio_postgres::Error>>>(connection: C) {
    if let Err(e) = connection.await {
        tracing::debug!(error = %e, "a PostgreSQL connection ended");
    }
}
