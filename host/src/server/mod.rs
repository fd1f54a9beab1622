//! The listener: HTTP/1.1 and HTTP/2 over plain TCP or TLS (rustls, ALPN), the limits of
//! contract §2 on every connection (`conn`: headers within 10 s, idle keep-alive closed
//! after 60 s, at most `WEIR_MAX_CONNECTIONS` open), and graceful shutdown — on the
//! shutdown signal it stops accepting, lets in-flight requests finish (up to a grace
//! period), then returns.

mod conn;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::response::Response;
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// How long in-flight requests may take to finish after shutdown begins.
const GRACE: Duration = Duration::from_secs(20);

/// Serves `service` on `listener` until `shutdown` completes, then drains connections.
/// At most `max_connections` are open at once: beyond that, new ones wait in the
/// kernel's backlog until one closes.
pub(crate) async fn serve<S>(
    listener: TcpListener,
    service: S,
    tls: Option<TlsAcceptor>,
    (max_connections, trusted): (usize, Arc<Vec<ipnet::IpNet>>),
    shutdown: impl Future<Output = ()>,
) where
    S: tower::Service<Request<Incoming>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(conn::FIRST_REQUEST);
    builder.http2().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(max_connections));
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = accept(&listener, &slots) => accepted,
            () = &mut shutdown => break,
        };
        let Some((stream, peer, slot)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let activity = conn::Activity::new();
        let stream = conn::Watched::new(stream, activity.clone());
        let hyper_service = {
            let (service, activity, trusted) = (service.clone(), activity.clone(), trusted.clone());
            hyper::service::service_fn(move |mut request: Request<Incoming>| {
                let client = crate::forwarded::client_address(peer.ip(), request.headers(), &trusted);
                request.extensions_mut().insert(crate::web::Peer(peer));
                request.extensions_mut().insert(crate::forwarded::ClientAddr(client));
                let request_guard = activity.begin();
                let call = service.clone().oneshot(request);
                async move {
                    let response = call.await;
                    drop(request_guard);
                    response
                }
            })
        };
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        tokio::spawn(async move {
            let connection = async {
                match tls {
                    Some(acceptor) => match acceptor.accept(stream).await {
                        Ok(stream) => {
                            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), hyper_service);
                            watcher.watch(conn.into_owned()).await
                        }
                        Err(e) => {
                            tracing::debug!(%peer, error = %e, "TLS handshake failed");
                            Ok(())
                        }
                    },
                    None => {
                        let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), hyper_service);
                        watcher.watch(conn.into_owned()).await
                    }
                }
            };
            tokio::select! {
                result = connection => {
                    if let Err(e) = result {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                }
                () = conn::watchdog(activity) => tracing::debug!(%peer, "closing a slow or idle connection"),
            }
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("some connections did not finish within the grace period");
    }
}

/// Waits for a free connection slot, then for a connection. `None` when accepting failed.
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> Option<(TcpStream, std::net::SocketAddr, OwnedSemaphorePermit)> {
    let slot = slots.clone().acquire_owned().await.ok()?;
    match listener.accept().await {
        Ok((stream, peer)) => Some((stream, peer, slot)),
        Err(e) => {
            // Out of file descriptors and the like: wait a moment rather than spin.
            tracing::warn!(error = %e, "accept failed");
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}
