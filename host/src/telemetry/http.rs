//! The exporter's HTTP client: one HTTP/1.1 request per export over Weir's own hyper and
//! rustls (no second HTTP stack in the build), bounded in time and in the answer's size.
//! Exports come a batch at a time, seconds apart, so a connection per request is enough.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use tokio::net::TcpStream;

/// The largest answer read from a collector.
const MAX_ANSWER: usize = 1 << 20;

#[derive(Clone)]
pub(super) struct Client {
    tls: tokio_rustls::TlsConnector,
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Client {
    /// A client trusting `tls`'s roots, each request bounded by `timeout`.
    pub(super) fn new(tls: &rustls::ClientConfig, timeout: Duration) -> Client {
        let mut tls = tls.clone();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Client { tls: tokio_rustls::TlsConnector::from(Arc::new(tls)), timeout }
    }

    async fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        match tokio::time::timeout(self.timeout, self.send_once(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(format!("no answer from the collector within {:?}", self.timeout).into()),
        }
    }

    async fn send_once(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (mut parts, body) = request.into_parts();
        let uri = parts.uri.clone();
        let host = uri.host().ok_or("the collector's URL has no host")?.trim_matches(['[', ']']).to_owned();
        let https = uri.scheme_str() == Some("https");
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        parts.uri = uri.path_and_query().map_or("/", |p| p.as_str()).parse()?;
        let authority = uri.authority().map(|a| a.as_str().to_owned()).unwrap_or_else(|| host.clone());
        parts.headers.insert(hyper::header::HOST, authority.parse()?);
        let request = hyper::Request::from_parts(parts, Full::new(body));
        let tcp = TcpStream::connect((host.as_str(), port)).await?;
        tcp.set_nodelay(true)?;
        let answer = if https {
            let name = rustls::pki_types::ServerName::try_from(host)?;
            let tls = self.tls.connect(name, tcp).await?;
            exchange(TokioIo::new(tls), request).await?
        } else {
            exchange(TokioIo::new(tcp), request).await?
        };
        Ok(answer)
    }
}

/// One request on a new connection.
async fn exchange<S>(io: S, request: hyper::Request<Full<Bytes>>) -> Result<Response<Bytes>, HttpError>
where
    S: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    let connection = tokio::spawn(connection);
    let answer = sender.send_request(request).await;
    let result = match answer {
        Ok(answer) => {
            let (parts, body) = answer.into_parts();
            let body = Limited::new(body, MAX_ANSWER).collect().await?.to_bytes();
            Ok(Response::from_parts(parts, body))
        }
        Err(e) => Err(e.into()),
    };
    connection.abort();
    result
}

impl HttpClient for Client {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(self.send(request))
    }
}
