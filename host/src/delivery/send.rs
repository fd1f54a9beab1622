//! The HTTP sender: one shared, pooling hyper client whose connector applies the URL rule
//! at connect time and connects only to the addresses it vetted (so a DNS answer cannot
//! change between check and connect), with rustls for `https` (system roots plus
//! `WEIR_EXTRA_CA`; HTTP/2 or HTTP/1.1 by ALPN). Redirects are never followed.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Uri;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::netguard::{UrlError, UrlRule};

/// How much of a response body is kept in the delivery's row.
pub const KEPT_RESPONSE_BYTES: usize = 1024;
/// How much of a response body is read (so the connection can be reused); beyond this the
/// connection is dropped.
const READ_RESPONSE_BYTES: usize = 64 * 1024;

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("blocked by the URL rule: {0}")]
    Blocked(UrlError),
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("TLS handshake failed: {0}")]
    Tls(String),
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("request failed: {0}")]
    Request(String),
}

/// A response, as recorded.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub retry_after: Option<String>,
    /// The first [`KEPT_RESPONSE_BYTES`] of the body, as text.
    pub body: String,
}

/// The outcome of one request with its duration.
#[derive(Debug)]
pub struct Sent {
    pub result: Result<Response, SendError>,
    pub duration: Duration,
}

impl Sent {
    /// What the attempt got, as a metrics label: the status class (`2xx`…`5xx`), or why
    /// there was no answer (`timeout`, `connect`, `tls`, `blocked`, `request`).
    pub fn class(&self) -> &'static str {
        match &self.result {
            Ok(response) => match response.status {
                200..=299 => "2xx",
                300..=399 => "3xx",
                400..=499 => "4xx",
                500..=599 => "5xx",
                _ => "1xx",
            },
            Err(SendError::Timeout(_)) => "timeout",
            Err(SendError::Connect(_)) => "connect",
            Err(SendError::Tls(_)) => "tls",
            Err(SendError::Blocked(_)) => "blocked",
            Err(SendError::Request(_)) => "request",
        }
    }
}

/// Errors of the connector, carried through hyper's error chain and recognised by type.
#[derive(Debug, thiserror::Error)]
enum ConnectError {
    #[error("{0}")]
    Blocked(UrlError),
    #[error("{0}")]
    Tcp(io::Error),
    #[error("{0}")]
    Tls(io::Error),
}

/// The connector: vet, then connect to a vetted address, then TLS if `https`.
#[derive(Clone)]
struct GuardedConnector {
    rule: UrlRule,
    tls: TlsConnector,
}

impl tower::Service<Uri> for GuardedConnector {
    type Response = TokioIo<Stream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let rule = self.rule.clone();
        let tls = self.tls.clone();
        Box::pin(async move {
            let vetted = rule.vet(&uri.to_string()).await.map_err(ConnectError::Blocked)?;
            let tcp = connect_any(&vetted.addrs).await.map_err(ConnectError::Tcp)?;
            let _ = tcp.set_nodelay(true);
            if uri.scheme_str() != Some("https") {
                return Ok(TokioIo::new(Stream::Plain(tcp)));
            }
            let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
            let name = ServerName::try_from(host)
                .map_err(|e| ConnectError::Tls(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
            let stream = tls.connect(name, tcp).await.map_err(ConnectError::Tls)?;
            Ok(TokioIo::new(Stream::Tls(Box::new(stream))))
        })
    }
}

async fn connect_any(addrs: &[SocketAddr]) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address to connect to");
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// A plain or TLS connection to a subscriber.
enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        match self {
            Stream::Tls(s) if s.get_ref().1.alpn_protocol() == Some(b"h2") => Connected::new().negotiated_h2(),
            _ => Connected::new(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// Sends deliveries. Cloning shares the connection pool.
#[derive(Clone)]
pub struct Sender {
    client: Client<GuardedConnector, Full<Bytes>>,
    timeout: Duration,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Sender {
    /// `connections`: the most requests this process has in flight at once (its workers).
    /// The pool keeps that many idle connections per host, so that a fan-out whose
    /// webhooks share a host reuses every connection instead of closing those beyond a
    /// smaller cap and connecting again for the next attempts; idle ones close after 60 s.
    pub fn new(rule: UrlRule, tls: rustls::ClientConfig, timeout: Duration, connections: usize) -> Sender {
        let connector = GuardedConnector { rule, tls: TlsConnector::from(Arc::new(tls)) };
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(connections)
            .build(connector);
        Sender { client, timeout }
    }

    /// POSTs `body` to `url` with `headers`, within the delivery timeout.
    pub async fn post(&self, url: &str, headers: &[(String, String)], body: Bytes) -> Sent {
        let started = Instant::now();
        let result = match tokio::time::timeout(self.timeout, self.exchange(url, headers, body)).await {
            Ok(result) => result,
            Err(_) => Err(SendError::Timeout(self.timeout)),
        };
        Sent { result, duration: started.elapsed() }
    }

    async fn exchange(&self, url: &str, headers: &[(String, String)], body: Bytes) -> Result<Response, SendError> {
        let uri: Uri = url.parse().map_err(|_| SendError::Blocked(UrlError::Malformed))?;
        let mut map = HeaderMap::with_capacity(headers.len());
        for (name, value) in headers {
            if let (Some(n), Ok(v)) = (header_name(name), HeaderValue::try_from(value.as_str())) {
                map.append(n, v);
            }
        }
        let mut request =
            hyper::Request::post(uri).body(Full::new(body)).map_err(|e| SendError::Request(e.to_string()))?;
        *request.headers_mut() = map;
        let response = self.client.request(request).await.map_err(classify)?;
        let status = response.status().as_u16();
        let retry_after =
            response.headers().get(hyper::header::RETRY_AFTER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let mut body = response.into_body();
        let mut kept = Vec::with_capacity(KEPT_RESPONSE_BYTES);
        let mut read = 0usize;
        while read < READ_RESPONSE_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        read += data.len();
                        let room = KEPT_RESPONSE_BYTES.saturating_sub(kept.len());
                        kept.extend_from_slice(&data[..data.len().min(room)]);
                    }
                }
                Some(Err(_)) | None => break,
            }
        }
        Ok(Response { status, retry_after, body: String::from_utf8_lossy(&kept).into_owned() })
    }
}

/// A header's name; those every delivery carries without parsing or allocating.
fn header_name(name: &str) -> Option<HeaderName> {
    Some(match name {
        "content-type" => hyper::header::CONTENT_TYPE,
        "user-agent" => hyper::header::USER_AGENT,
        "x-webhook-signature" => HeaderName::from_static("x-webhook-signature"),
        "x-webhook-timestamp" => HeaderName::from_static("x-webhook-timestamp"),
        "x-webhook-delivery" => HeaderName::from_static("x-webhook-delivery"),
        "x-webhook-attempt" => HeaderName::from_static("x-webhook-attempt"),
        "webhook-id" => HeaderName::from_static("webhook-id"),
        "webhook-timestamp" => HeaderName::from_static("webhook-timestamp"),
        "webhook-signature" => HeaderName::from_static("webhook-signature"),
        other => HeaderName::try_from(other).ok()?,
    })
}

/// Finds our connector's error in hyper's error chain, by type.
fn classify(error: hyper_util::client::legacy::Error) -> SendError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(e) = source {
        if let Some(connect) = e.downcast_ref::<ConnectError>() {
            return match connect {
                ConnectError::Blocked(url) => SendError::Blocked(url.clone()),
                ConnectError::Tcp(io) => SendError::Connect(io.to_string()),
                ConnectError::Tls(io) => SendError::Tls(io.to_string()),
            };
        }
        source = e.source();
    }
    let detail = std::error::Error::source(&error).map(|s| s.to_string()).unwrap_or_default();
    SendError::Request(if detail.is_empty() { error.to_string() } else { format!("{error}: {detail}") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign;

    #[test]
    fn every_header_of_a_delivery_keeps_its_name() {
        let signatures =
            sign::Signatures::sign(sign::Secrets { current: "whsec_AAAA", previous: None }, "dlv_1", 7, b"{}");
        let attempt = sign::Attempt { delivery_id: "dlv_1", number: 2, event_created_at: "t", signed_at: 7 };
        let extra = [("X-Plugin".to_owned(), "1".to_owned())];
        let headers = sign::request_headers(attempt, &signatures, &extra);
        assert!(headers.len() >= 10, "{headers:?}");
        for (name, _) in &headers {
            assert_eq!(header_name(name), HeaderName::try_from(name.as_str()).ok(), "{name}");
        }
        assert_eq!(header_name("Bad Name"), None);
    }
}
