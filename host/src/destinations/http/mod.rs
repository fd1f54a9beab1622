//! HTTP (`http`, the webhook's `url`): the kind every webhook without another destination
//! has, and the sender every kind that speaks HTTP uses (the AWS kinds): shared, pooling
//! hyper clients whose connector (`connect`) applies the URL rule at connect time, goes
//! through the egress proxy when there is one, and speaks rustls for `https` (system roots
//! plus `WEIR_EXTRA_CA`; HTTP/2 or HTTP/1.1 by ALPN). Webhooks with a client certificate get
//! a pool of their own (connections made with one certificate are never used with another).
//! Redirects are never followed.

mod connect;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Uri;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sha2::{Digest, Sha256};
use tokio_rustls::TlsConnector;

use self::connect::{ConnectError, GuardedConnector};
use super::message::{Answer, Message, SendError};
use crate::certs::CertificateView;
use crate::config::EgressProxy;
use crate::kinds::Table;
use crate::netguard::{UrlError, UrlRule};
use crate::store::queue::targets::ClientCertificate;

/// The kind's table: nothing but its `type` (the webhook's `url` says where).
pub(crate) const TABLE: Table = Table {
    label: "the URL above, over HTTP",
    help: "Each delivery is POSTed to the webhook's URL, which must resolve to a public address; any 2xx answer is success.",
    fields: &[],
};

/// Most client certificates whose pools a process keeps (beyond it, they start over).
const MAX_CERTIFICATE_POOLS: usize = 256;

/// How much of a response body is kept in the delivery's row.
pub(crate) const KEPT_RESPONSE_BYTES: usize = 1024;
/// How much of a response body is read (so the connection can be reused); beyond this the
/// connection is dropped.
const READ_RESPONSE_BYTES: usize = 64 * 1024;

/// An HTTP response, as recorded.
#[derive(Debug, Clone)]
pub(crate) struct Response {
    pub status: u16,
    pub retry_after: Option<String>,
    /// The first [`KEPT_RESPONSE_BYTES`] of the body, as text.
    pub body: String,
}

impl From<Response> for Answer {
    fn from(r: Response) -> Answer {
        Answer { status: Some(r.status), said: r.body, retry_after: r.retry_after }
    }
}

pub(crate) use super::message::KeySource;

type Pool = Client<GuardedConnector, Full<Bytes>>;

/// Sends to HTTP endpoints. Cloning shares the connection pools.
#[derive(Clone)]
pub(crate) struct Http {
    client: Pool,
    connector: GuardedConnector,
    tls: Arc<rustls::ClientConfig>,
    /// Pools of the client certificates in use, by [`certificate_id`].
    with_certificates: Arc<Mutex<HashMap<[u8; 32], Pool>>>,
    secret: KeySource,
    connections: usize,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http").field("connections", &self.connections).finish_non_exhaustive()
    }
}

/// What an attempt presents for mutual TLS: the webhook's certificate and what its sealed
/// key is bound to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Presented<'a> {
    pub certificate: &'a ClientCertificate,
    pub context: &'a str,
}

impl Http {
    /// `connections`: the most requests this process has in flight at once (its workers).
    /// A pool keeps that many idle connections per host, so that a fan-out whose webhooks
    /// share a host reuses every connection instead of closing those beyond a smaller cap
    /// and connecting again for the next attempts; idle ones close after 60 s.
    pub(crate) fn new(
        rule: UrlRule,
        tls: rustls::ClientConfig,
        proxy: Option<EgressProxy>,
        secret: KeySource,
        connections: usize,
    ) -> Http {
        let tls = Arc::new(tls);
        let connector = GuardedConnector { rule, tls: TlsConnector::from(tls.clone()), proxy: proxy.map(Arc::new) };
        Http {
            client: pool(connector.clone(), connections),
            connector,
            tls,
            with_certificates: Arc::default(),
            secret,
            connections,
        }
    }

    /// The pool of a client certificate, made on its first use: its key unsealed, checked,
    /// and given to TLS. An expired certificate is refused before anything is sent.
    fn pool_for(&self, presented: Presented<'_>) -> Result<Pool, SendError> {
        let certificate = presented.certificate;
        let view: Option<CertificateView> = certificate.view.as_deref().and_then(|v| serde_json::from_str(v).ok());
        if let Some(view) = &view
            && crate::time::parse_rfc3339(&view.not_after).is_some_and(|end| end <= crate::time::now_millis())
        {
            return Err(SendError::Tls(format!(
                "the webhook's client certificate expired at {} (subject {}): upload a new one",
                view.not_after, view.subject
            )));
        }
        let id = certificate_id(certificate);
        let mut pools = self.with_certificates.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(pool) = pools.get(&id) {
            return Ok(pool.clone());
        }
        let unusable = |why: String| SendError::Tls(format!("the webhook's client certificate cannot be used: {why}"));
        let secret = (self.secret)().map_err(unusable)?;
        let key = crate::vault::open(&secret, presented.context, &certificate.sealed_key)
            .map_err(|e| unusable(e.to_string()))?;
        let key = String::from_utf8(key).map_err(|_| unusable("its key is not PEM text".into()))?;
        let identity = crate::certs::identity(&certificate.chain_pem, &key).map_err(|e| unusable(e.to_string()))?;
        let provider = rustls::crypto::ring::default_provider();
        let certified = rustls::sign::CertifiedKey::from_der(identity.chain, identity.key, &provider)
            .map_err(|e| unusable(crate::tls::describe(&e)))?;
        let mut tls = (*self.tls).clone();
        tls.client_auth_cert_resolver = Arc::new(OneCertificate(Arc::new(certified)));
        let connector = GuardedConnector { tls: TlsConnector::from(Arc::new(tls)), ..self.connector.clone() };
        let pool = pool(connector, self.connections.min(64));
        if pools.len() >= MAX_CERTIFICATE_POOLS {
            pools.clear();
        }
        pools.insert(id, pool.clone());
        Ok(pool)
    }

    /// POSTs the message to `url` (presenting a client certificate if given); the caller
    /// bounds it in time (`super::send::Destinations::send`).
    pub(crate) async fn send(
        &self,
        url: &str,
        presented: Option<Presented<'_>>,
        message: Message<'_>,
    ) -> Result<Response, SendError> {
        let client = match presented {
            None => self.client.clone(),
            Some(presented) => self.pool_for(presented)?,
        };
        exchange(&client, url, message.headers, message.body).await
    }
}

/// Which pool a certificate's connections belong to: its chain and its sealed key.
fn certificate_id(certificate: &ClientCertificate) -> [u8; 32] {
    Sha256::digest([certificate.chain_pem.as_bytes(), b"\0", certificate.sealed_key.as_bytes()].concat()).into()
}

fn pool(connector: GuardedConnector, connections: usize) -> Pool {
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .pool_max_idle_per_host(connections)
        .build(connector)
}

/// Presents one certificate to every server that asks for one.
#[derive(Debug)]
struct OneCertificate(Arc<rustls::sign::CertifiedKey>);

impl rustls::client::ResolvesClientCert for OneCertificate {
    fn resolve(
        &self,
        _issuers: &[&[u8]],
        _schemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

async fn exchange(client: &Pool, url: &str, headers: &[(String, String)], body: Bytes) -> Result<Response, SendError> {
    let uri: Uri = url.parse().map_err(|_| SendError::Blocked(UrlError::Malformed))?;
    let mut map = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if let (Some(n), Ok(v)) = (header_name(name), HeaderValue::try_from(value.as_str())) {
            map.append(n, v);
        }
    }
    let mut request = hyper::Request::post(uri).body(Full::new(body)).map_err(|e| SendError::Request(e.to_string()))?;
    *request.headers_mut() = map;
    let response = client.request(request).await.map_err(classify)?;
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
                ConnectError::Tls(io) => SendError::Tls(crate::tls::describe_io(io)),
                ConnectError::Proxy(message) => SendError::Proxy(message.clone()),
            };
        }
        // TLS failing after the handshake (TLS 1.3 servers refuse a client certificate, or
        // the lack of one, with an alert the client reads with the response).
        let tls = e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|i| i.downcast_ref::<rustls::Error>())
        });
        if let Some(tls) = tls {
            return SendError::Tls(crate::tls::describe(tls));
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
