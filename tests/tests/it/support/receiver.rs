//! A real subscriber for tests: an HTTP (or HTTPS) server on loopback that records every
//! request and answers as the test tells it to — a status, a sequence of statuses, extra
//! headers, a delay, or never (hang).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::Notify;

use super::eventually;
use super::tls::TestCa;

/// How the receiver answers.
#[derive(Debug, Clone)]
pub enum Reply {
    Status(u16),
    /// A status with extra response headers.
    With(u16, Vec<(&'static str, String)>),
    /// Waits, then answers with the status.
    Delay(Duration, u16),
    /// Never answers.
    Hang,
}

/// A request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
    pub at: Instant,
    pub version: hyper::Version,
}

impl Received {
    pub fn header(&self, name: &str) -> String {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("delivery body is JSON")
    }
}

struct State {
    received: Mutex<Vec<Received>>,
    /// Replies used one by one; the last one is kept for every later request.
    replies: Mutex<VecDeque<Reply>>,
    arrived: Notify,
    /// Connections accepted.
    connections: AtomicUsize,
}

/// A running receiver; stops when dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    pub url: String,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// A receiver answering 200.
    pub async fn start() -> Receiver {
        Receiver::start_with(None, Reply::Status(200)).await
    }

    pub async fn replying(reply: Reply) -> Receiver {
        Receiver::start_with(None, reply).await
    }

    /// An HTTPS receiver with the test CA's certificate, offering `alpn`.
    pub async fn https(ca: &TestCa, alpn: &[&[u8]]) -> Receiver {
        Receiver::start_with(Some(tokio_rustls::TlsAcceptor::from(ca.server_config(alpn))), Reply::Status(200)).await
    }

    /// An HTTPS receiver with a TLS configuration of the test's own (mutual TLS).
    pub async fn https_with(config: Arc<rustls::ServerConfig>) -> Receiver {
        Receiver::start_with(Some(tokio_rustls::TlsAcceptor::from(config)), Reply::Status(200)).await
    }

    /// A receiver answering 200 on `ip` (a container network's gateway: this machine's own).
    pub async fn start_on(ip: std::net::IpAddr) -> Receiver {
        Receiver::start_bound(std::net::SocketAddr::new(ip, 0), None, Reply::Status(200)).await
    }

    async fn start_with(tls: Option<tokio_rustls::TlsAcceptor>, reply: Reply) -> Receiver {
        Receiver::start_bound(std::net::SocketAddr::from(([127, 0, 0, 1], 0)), tls, reply).await
    }

    async fn start_bound(at: std::net::SocketAddr, tls: Option<tokio_rustls::TlsAcceptor>, reply: Reply) -> Receiver {
        let listener = TcpListener::bind(at).await.expect("bind receiver");
        let addr = listener.local_addr().expect("addr");
        let state = Arc::new(State {
            received: Mutex::new(Vec::new()),
            replies: Mutex::new(VecDeque::from([reply])),
            arrived: Notify::new(),
            connections: AtomicUsize::new(0),
        });
        let scheme = if tls.is_some() { "https" } else { "http" };
        let host = if tls.is_some() { format!("localhost:{}", addr.port()) } else { addr.to_string() };
        let serving = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                serving.connections.fetch_add(1, Ordering::SeqCst);
                let state = serving.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
                    let builder = Builder::new(TokioExecutor::new());
                    match tls {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                let _ = builder.serve_connection(TokioIo::new(stream), service).await;
                            }
                        }
                        None => {
                            let _ = builder.serve_connection(TokioIo::new(stream), service).await;
                        }
                    }
                });
            }
        });
        Receiver { addr, url: format!("{scheme}://{host}/hook"), state, task }
    }

    /// Answers every later request with `reply`.
    pub fn set(&self, reply: Reply) {
        *self.state.replies.lock().unwrap() = VecDeque::from([reply]);
    }

    /// Answers the next requests with `replies` in order, then keeps the last.
    pub fn sequence(&self, replies: Vec<Reply>) {
        *self.state.replies.lock().unwrap() = VecDeque::from(replies);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// How many connections it accepted.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    pub fn count(&self) -> usize {
        self.state.received.lock().unwrap().len()
    }

    /// Waits until at least `n` requests arrived; returns them all.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        eventually(&format!("{n} requests at the receiver"), timeout, async || {
            let got = self.received();
            (got.len() >= n).then_some(got)
        })
        .await
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(state: Arc<State>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let reply = {
        let mut replies = state.replies.lock().unwrap();
        if replies.len() > 1 { replies.pop_front().unwrap() } else { replies.front().cloned().unwrap() }
    };
    state.received.lock().unwrap().push(Received {
        headers: parts.headers,
        body,
        at: Instant::now(),
        version: parts.version,
    });
    state.arrived.notify_waiters();
    let (status, headers) = match reply {
        Reply::Status(s) => (s, Vec::new()),
        Reply::With(s, h) => (s, h),
        Reply::Delay(d, s) => {
            tokio::time::sleep(d).await;
            (s, Vec::new())
        }
        Reply::Hang => {
            std::future::pending::<()>().await;
            (500, Vec::new())
        }
    };
    let mut response = Response::builder().status(status);
    for (name, value) in headers {
        response = response.header(name, value);
    }
    Ok(response.body(Full::new(Bytes::from_static(b"{\"received\":true}"))).unwrap())
}
