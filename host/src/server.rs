//! The listener: HTTP/1.1 and HTTP/2 over plain TCP or TLS (rustls, ALPN), and graceful
//! shutdown — on the shutdown signal it stops accepting, lets in-flight requests finish
//! (up to a grace period), then returns.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::config::TlsFiles;

/// How long in-flight requests may take to finish after shutdown begins.
const GRACE: Duration = Duration::from_secs(20);

/// A TLS certificate or key that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read certificate chain {path}: {reason}")]
    Cert { path: String, reason: String },
    #[error("cannot read private key {path}: {reason}")]
    Key { path: String, reason: String },
    #[error("certificate and key do not make a TLS configuration: {0}")]
    Config(rustls::Error),
}

/// Builds the TLS acceptor from PEM files (HTTP/2 and HTTP/1.1 offered by ALPN).
pub fn tls_acceptor(files: &TlsFiles) -> Result<TlsAcceptor, TlsError> {
    let certs = load_certs(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| TlsError::Key { path: files.key.display().to_string(), reason: e.to_string() })?;
    let mut config =
        rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(certs, key).map_err(TlsError::Config)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Every certificate in a PEM file (at least one).
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let cert_error = |reason: String| TlsError::Cert { path: path.display().to_string(), reason };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| cert_error(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_error(e.to_string()))?;
    if certs.is_empty() {
        return Err(cert_error("no certificate found".into()));
    }
    Ok(certs)
}

/// Serves `router` on `listener` until `shutdown` completes, then drains connections.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    tls: Option<TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let builder = Arc::new(Builder::new(TokioExecutor::new()));
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        tokio::spawn(async move {
            let result = match tls {
                Some(acceptor) => {
                    let stream = match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "TLS handshake failed");
                            return;
                        }
                        Err(_) => return,
                    };
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                    watcher.watch(conn.into_owned()).await
                }
                None => {
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                    watcher.watch(conn.into_owned()).await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("some connections did not finish within the grace period");
    }
}
