//! A fast receiver: answers 200 at once and notes when each delivery arrived.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::load::PublishedEvent;

pub struct FastReceiver {
    addr: SocketAddr,
    arrivals: Arc<Mutex<Vec<(String, Instant)>>>,
}

impl FastReceiver {
    pub async fn start() -> FastReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let arrivals: Arc<Mutex<Vec<(String, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
        let shared = arrivals.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                let arrivals = shared.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| record(arrivals.clone(), req));
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FastReceiver { addr, arrivals }
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub async fn wait_for(&self, n: usize, timeout: Duration) {
        let started = Instant::now();
        while self.arrivals.lock().map(|a| a.len()).unwrap_or(0) < n {
            assert!(
                started.elapsed() < timeout,
                "only {} of {n} deliveries arrived",
                self.arrivals.lock().map(|a| a.len()).unwrap_or(0)
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    pub fn last_arrival(&self) -> Option<Instant> {
        self.arrivals.lock().ok()?.iter().map(|(_, at)| *at).max()
    }

    /// Publish-start to arrival, for every delivery.
    pub fn latencies(&self, published: &[PublishedEvent]) -> Vec<Duration> {
        let started: HashMap<&str, Instant> = published.iter().map(|p| (p.id.as_str(), p.started)).collect();
        let arrivals = self.arrivals.lock().map(|a| a.clone()).unwrap_or_default();
        arrivals.iter().filter_map(|(id, at)| started.get(id.as_str()).map(|s| at.duration_since(*s))).collect()
    }
}

async fn record(
    arrivals: Arc<Mutex<Vec<(String, Instant)>>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let at = Instant::now();
    // The envelope starts with {"id":"evt_…".
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
    let id = text.strip_prefix("{\"id\":\"").and_then(|rest| rest.split('"').next()).unwrap_or("").to_owned();
    if let Ok(mut a) = arrivals.lock() {
        a.push((id, at));
    }
    Ok(Response::new(Full::new(Bytes::from_static(b"ok"))))
}

/// An endpoint that accepts connections and never answers: it reads what comes and holds
/// the socket. Counts the connections opened and the most open at once.
pub struct HangingReceiver {
    addr: SocketAddr,
    counts: Arc<Mutex<(usize, usize, usize)>>,
}

impl HangingReceiver {
    pub async fn start() -> HangingReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        // (opened, open now, most open at once)
        let counts = Arc::new(Mutex::new((0usize, 0usize, 0usize)));
        let shared = counts.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { continue };
                let counts = shared.clone();
                if let Ok(mut c) = counts.lock() {
                    c.0 += 1;
                    c.1 += 1;
                    c.2 = c.2.max(c.1);
                }
                tokio::spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let mut buf = vec![0u8; 16 * 1024];
                    while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
                    if let Ok(mut c) = counts.lock() {
                        c.1 -= 1;
                    }
                });
            }
        });
        HangingReceiver { addr, counts }
    }

    pub fn url(&self, n: usize) -> String {
        format!("http://{}/hang/{n}", self.addr)
    }

    /// Connections opened, and the most open at once.
    pub fn connections(&self) -> (usize, usize) {
        self.counts.lock().map(|c| (c.0, c.2)).unwrap_or_default()
    }
}
