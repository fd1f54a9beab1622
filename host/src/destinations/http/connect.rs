//! The sender's connector: it applies the URL rule at connect time and connects only to
//! the addresses it vetted (so a DNS answer cannot change between check and connect) —
//! directly, or through the egress proxy with `CONNECT` to the vetted address (the proxy
//! resolves nothing) — then speaks TLS for `https`, inside the tunnel when there is one,
//! with the endpoint's name.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::config::EgressProxy;
use crate::netguard::{UrlError, UrlRule};

/// Longest answer to a `CONNECT` read (its status line and headers).
const MAX_PROXY_ANSWER: usize = 8 * 1024;

/// Errors of the connector, carried through hyper's error chain and recognised by type.
#[derive(Debug, thiserror::Error)]
pub(in crate::destinations) enum ConnectError {
    #[error("{0}")]
    Blocked(UrlError),
    #[error("{0}")]
    Tcp(io::Error),
    #[error("{0}")]
    Tls(io::Error),
    /// The egress proxy could not be reached or refused the tunnel (the message names it).
    #[error("{0}")]
    Proxy(String),
}

/// The connector: vet, then connect to a vetted address (through the proxy, if any), then
/// TLS if `https`.
#[derive(Clone)]
pub(in crate::destinations) struct GuardedConnector {
    pub(in crate::destinations) rule: UrlRule,
    pub(in crate::destinations) tls: TlsConnector,
    pub(in crate::destinations) proxy: Option<Arc<EgressProxy>>,
}

impl tower::Service<Uri> for GuardedConnector {
    type Response = TokioIo<Stream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let vetted = this.rule.vet(&uri.to_string()).await.map_err(ConnectError::Blocked)?;
            let tcp = match &this.proxy {
                Some(proxy) => tunnel_any(proxy, &vetted.addrs).await?,
                None => connect_any(&vetted.addrs).await.map_err(ConnectError::Tcp)?,
            };
            let _ = tcp.set_nodelay(true);
            if uri.scheme_str() != Some("https") {
                return Ok(TokioIo::new(Stream::Plain(tcp)));
            }
            let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
            let name = ServerName::try_from(host)
                .map_err(|e| ConnectError::Tls(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
            let stream = this.tls.connect(name, tcp).await.map_err(ConnectError::Tls)?;
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

/// A tunnel through the proxy to the first vetted address it connects to.
async fn tunnel_any(proxy: &EgressProxy, addrs: &[SocketAddr]) -> Result<TcpStream, ConnectError> {
    let mut last = ConnectError::Tcp(io::Error::new(io::ErrorKind::NotFound, "no address to connect to"));
    for addr in addrs {
        match tunnel(proxy, *addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// `CONNECT addr` through the proxy; the stream once it answered 2xx.
async fn tunnel(proxy: &EgressProxy, addr: SocketAddr) -> Result<TcpStream, ConnectError> {
    let named = |what: String| ConnectError::Proxy(format!("egress proxy {}: {what}", proxy.address));
    let mut stream =
        TcpStream::connect(&proxy.address).await.map_err(|e| named(format!("cannot connect to it: {e}")))?;
    let mut request = format!("CONNECT {addr} HTTP/1.1\r\nHost: {addr}\r\n");
    if let Some(authorization) = &proxy.authorization {
        request.push_str("Proxy-Authorization: ");
        request.push_str(authorization);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.map_err(|e| named(format!("connection lost: {e}")))?;
    // Nothing follows the answer until this side speaks (TLS and HTTP both start with the
    // client), so reading in pieces cannot take bytes of the tunnel.
    let mut answer = Vec::with_capacity(256);
    let mut piece = [0u8; 512];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        if answer.len() > MAX_PROXY_ANSWER {
            return Err(named("its answer to CONNECT is too long".into()));
        }
        match stream.read(&mut piece).await {
            Ok(0) => return Err(named(format!("closed the connection instead of answering CONNECT {addr}"))),
            Ok(n) => answer.extend_from_slice(&piece[..n]),
            Err(e) => return Err(named(format!("connection lost: {e}"))),
        }
    }
    let text = String::from_utf8_lossy(&answer);
    let status_line = text.lines().next().unwrap_or_default().trim().to_owned();
    let code = status_line.split_whitespace().nth(1).and_then(|c| c.parse::<u16>().ok());
    match code {
        Some(200..=299) if text.ends_with("\r\n\r\n") => Ok(stream),
        Some(200..=299) => Err(named("sent bytes after its answer to CONNECT".into())),
        _ => Err(named(format!("refused CONNECT {addr}: {status_line}"))),
    }
}

/// A plain or TLS connection to a subscriber (through a tunnel or not).
pub(in crate::destinations) enum Stream {
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
