//! What a delivery attempt needs of its webhook, read for a batch of attempts at once
//! (`HMGET` of a few fields, not the whole hash).

use crate::store::core::base::Base;
use crate::store::error::Result;
use crate::store::error::StoreError;
use crate::store::queue::endpoint::{EndpointFields, FIELDS};
use crate::store::tenants::webhook_record::previous_secret;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Targets {
    base: Base,
}

impl Targets {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Targets {
        Targets { base: base.clone() }
    }
}

/// What an attempt needs of its webhook.
#[derive(Debug, Clone, Default)]
pub struct WebhookTarget {
    pub active: bool,
    pub url: String,
    pub signing_secret: String,
    /// The previous secret and when its grace period ends (ms).
    pub previous_secret: Option<(String, u64)>,
    /// Attachments (JSON), as stored.
    pub plugins: Option<String>,
    /// The webhook has a failure streak (a success must end it).
    pub failing: bool,
    /// Deliveries per second to it, every process together.
    pub rate_limit: Option<u32>,
    /// Extra request headers (JSON object), as stored.
    pub headers: Option<String>,
    /// The client certificate, when it has one.
    pub client_certificate: Option<ClientCertificate>,
    /// Where its deliveries go when not to `url` over HTTP.
    pub destination: Option<DestinationTarget>,
    /// Its endpoint's state as the processes keep it (`store::queue::endpoint`).
    pub endpoint: EndpointFields,
}

/// A webhook's destination as an attempt needs it: the spec (JSON, which `crate::destinations` reads)
/// and its sealed credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestinationTarget {
    pub spec: String,
    pub sealed_credentials: Option<String>,
}

/// A webhook's client certificate as an attempt needs it: the chain, the sealed key, and
/// the view (for its expiry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    pub chain_pem: String,
    pub sealed_key: String,
    pub view: Option<String>,
}

/// The fields read, in order: the attempt's, then the endpoint's.
const READ: [&str; 14] = [
    "active",
    "url",
    "signing_secret",
    "plugins",
    "fail_count",
    "previous_secret",
    "previous_secret_expires",
    "rate_limit",
    "headers",
    "client_cert",
    "client_key",
    "client_cert_view",
    "destination",
    "destination_key",
];

impl Targets {
    /// What attempts need of several webhooks (`None` for one that is gone), read together.
    pub async fn webhook_targets(&self, webhooks: &[(&str, &str)]) -> Result<Vec<Option<WebhookTarget>>> {
        let reads = webhooks.iter().map(|&(org, id)| async move {
            let fields: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(self.base.keys().webhook(org, id))
                .arg(&READ[..])
                .arg(&FIELDS[..])
                .query_async(&mut self.base.conn())
                .await?;
            let (mine, endpoint) = fields.split_at(READ.len().min(fields.len()));
            let Ok(
                [
                    active,
                    url,
                    signing_secret,
                    plugins,
                    fail_count,
                    previous,
                    expires,
                    rate_limit,
                    headers,
                    client_cert,
                    client_key,
                    client_cert_view,
                    destination,
                    destination_key,
                ],
            ) = <[Option<String>; 14]>::try_from(mine.to_vec())
            else {
                return Ok(None);
            };
            Ok::<_, StoreError>(url.map(|url| WebhookTarget {
                active: active.as_deref() == Some("1"),
                url,
                signing_secret: signing_secret.unwrap_or_default(),
                previous_secret: previous_secret(previous, expires.as_deref(), crate::time::now_millis()),
                plugins,
                failing: fail_count.is_some_and(|c| c != "0"),
                rate_limit: rate_limit.and_then(|l| l.parse().ok()).filter(|l| *l > 0),
                headers: headers.filter(|h| !h.is_empty()),
                client_certificate: match (client_cert, client_key) {
                    (Some(chain_pem), Some(sealed_key)) if !chain_pem.is_empty() => {
                        Some(ClientCertificate { chain_pem, sealed_key, view: client_cert_view })
                    }
                    _ => None,
                },
                destination: destination.filter(|d| !d.is_empty()).map(|spec| DestinationTarget {
                    spec,
                    sealed_credentials: destination_key.filter(|k| !k.is_empty()),
                }),
                endpoint: EndpointFields::read(endpoint),
            }))
        });
        futures_util::future::try_join_all(reads).await
    }
}
