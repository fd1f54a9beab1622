//! A webhook's record and its hash (`P:{o}:wh:{wh}`, `store::core::keys`) — written from a
//! [`Webhook`] and read back into one. `store::tenants::webhooks` says what each field holds and
//! changes them; `crate::domain::views` shows it.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use serde::Deserialize;

use crate::certs::CertificateView;
use crate::store::core::reply::flag;
use crate::store::core::reply::flag_str;
use crate::store::error::Result;
use crate::store::error::StoreError;
use crate::store::queue::endpoint::{EndpointFields, FIELDS};

/// A plugin attached to a webhook (contract §5), stored as JSON in the webhook's hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    pub plugin_id: String,
    /// Given to the plugin as JSON text.
    pub config: serde_json::Value,
    pub on_error: OnError,
}

/// What happens to a delivery when an attached plugin fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// The delivery ends `filtered`, with the error.
    Drop,
    /// Go on with the body as it was before the failing plugin.
    Deliver,
}

/// Whether a webhook's deliveries keep their subject's order (contract §7 `ordering`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ordering {
    /// No order (the default): deliveries go out as workers take them.
    #[default]
    None,
    /// Deliveries of events about one subject go one at a time, in acceptance order.
    Subject,
}

impl Ordering {
    pub fn as_str(self) -> &'static str {
        match self {
            Ordering::None => "none",
            Ordering::Subject => "subject",
        }
    }

    pub fn parse(text: &str) -> Option<Ordering> {
        match text {
            "none" | "" => Some(Ordering::None),
            "subject" => Some(Ordering::Subject),
            _ => None,
        }
    }
}

/// A webhook subscription, as stored.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub url: String,
    pub active: bool,
    pub subscribed_actions: Vec<String>,
    /// The sources whose requests it receives (contract §10).
    pub subscribed_sources: Vec<String>,
    pub plugins: Vec<Attachment>,
    pub signing_secret: String,
    /// The secret before the latest rotation, while its grace period lasts.
    pub previous_secret: Option<String>,
    /// When the previous secret stops signing (`None` when there is none).
    pub previous_secret_expires_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub deactivated_at: Option<String>,
    pub deactivation_reason: Option<String>,
    /// Deliveries per second to this webhook, every process together (`None`: no limit).
    pub rate_limit: Option<u32>,
    pub ordering: Ordering,
    /// Its CEL filter (`crate::filters`), as written.
    pub filter: Option<String>,
    /// Extra request headers sent with every delivery.
    pub headers: BTreeMap<String, String>,
    /// The client certificate for mutual TLS (never its key).
    pub client_certificate: Option<CertificateView>,
    /// Set only to store a new webhook's certificate; never read back.
    pub client_secret: Option<StoredCertificate>,
    /// Where its deliveries go when that is not its `url` over HTTP (`crate::destinations`).
    pub destination: Option<StoredDestination>,
    /// How deliveries to its endpoint are going (`store::queue::endpoint`).
    pub endpoint: EndpointFields,
}

/// A client certificate as stored: the PEM chain, the key sealed by `crate::vault`, and the
/// view reads show.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCertificate {
    pub chain_pem: String,
    pub sealed_key: String,
    pub view: CertificateView,
}

/// A destination as stored: its spec (shown; JSON with its `type`, which
/// `crate::destinations` reads) and its credentials sealed by `crate::vault` (never read
/// back but by the delivery workers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDestination {
    pub spec: serde_json::Value,
    /// Empty when it has none.
    pub sealed_credentials: String,
}

impl StoredDestination {
    /// Its hash fields (`destination`, `destination_key`); empty values for HTTP.
    pub(in crate::store) fn fields(this: Option<&StoredDestination>) -> [(&'static str, String); 2] {
        [
            ("destination", this.map(|d| json(&d.spec)).unwrap_or_default()),
            ("destination_key", this.map(|d| d.sealed_credentials.clone()).unwrap_or_default()),
        ]
    }
}

impl StoredCertificate {
    /// Its hash fields (`client_cert`, `client_key`, `client_cert_view`); empty values for none.
    pub(in crate::store) fn fields(this: Option<&StoredCertificate>) -> [(&'static str, String); 3] {
        [
            ("client_cert", this.map(|c| c.chain_pem.clone()).unwrap_or_default()),
            ("client_key", this.map(|c| c.sealed_key.clone()).unwrap_or_default()),
            ("client_cert_view", this.map(|c| json(&c.view)).unwrap_or_default()),
        ]
    }
}

pub(in crate::store) fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".into())
}

pub(in crate::store) fn to_fields(w: &Webhook) -> Vec<(&'static str, String)> {
    vec![
        ("id", w.id.clone()),
        ("org_id", w.org_id.clone()),
        ("name", w.name.clone()),
        ("url", w.url.clone()),
        ("active", flag_str(w.active).into()),
        ("subscribed_actions", json(&w.subscribed_actions)),
        ("subscribed_sources", json(&w.subscribed_sources)),
        ("plugins", json(&w.plugins)),
        ("signing_secret", w.signing_secret.clone()),
        ("previous_secret", String::new()),
        ("previous_secret_expires", String::new()),
        ("created_at", w.created_at.clone()),
        ("updated_at", w.updated_at.clone()),
        ("deactivated_at", w.deactivated_at.clone().unwrap_or_default()),
        ("deactivation_reason", w.deactivation_reason.clone().unwrap_or_default()),
        ("fail_count", "0".into()),
        ("fail_since", String::new()),
        ("rate_limit", w.rate_limit.map(|l| l.to_string()).unwrap_or_default()),
        ("headers", headers_json(&w.headers)),
        ("ordering", w.ordering.as_str().into()),
        ("filter", w.filter.clone().unwrap_or_default()),
    ]
    .into_iter()
    .chain(StoredCertificate::fields(w.client_secret.as_ref()))
    .chain(StoredDestination::fields(w.destination.as_ref()))
    .collect()
}

/// The stored form of `headers` (empty for none).
pub(in crate::store) fn headers_json(headers: &BTreeMap<String, String>) -> String {
    if headers.is_empty() { String::new() } else { json(headers) }
}

pub(in crate::store) fn from_fields(key: &str, f: &HashMap<String, String>) -> Result<Webhook> {
    let text = |name: &str| f.get(name).cloned().unwrap_or_default();
    let optional = |name: &str| f.get(name).filter(|v| !v.is_empty()).cloned();
    let corrupt = |reason: String| StoreError::Corrupt { key: key.to_owned(), reason };
    let subscribed_actions = serde_json::from_str(f.get("subscribed_actions").map_or("[]", |s| s))
        .map_err(|e| corrupt(format!("subscribed_actions: {e}")))?;
    let subscribed_sources = serde_json::from_str(f.get("subscribed_sources").map_or("[]", |s| s))
        .map_err(|e| corrupt(format!("subscribed_sources: {e}")))?;
    let plugins =
        serde_json::from_str(f.get("plugins").map_or("[]", |s| s)).map_err(|e| corrupt(format!("plugins: {e}")))?;
    let previous = previous_secret(
        f.get("previous_secret").cloned(),
        f.get("previous_secret_expires").map(String::as_str),
        crate::time::now_millis(),
    );
    Ok(Webhook {
        id: text("id"),
        org_id: text("org_id"),
        name: text("name"),
        url: text("url"),
        active: flag(f.get("active")),
        subscribed_actions,
        subscribed_sources,
        plugins,
        signing_secret: text("signing_secret"),
        previous_secret: previous.as_ref().map(|(s, _)| s.clone()),
        previous_secret_expires_at: previous.map(|(_, ms)| crate::time::format_millis(ms)),
        created_at: text("created_at"),
        updated_at: text("updated_at"),
        deactivated_at: optional("deactivated_at"),
        deactivation_reason: optional("deactivation_reason"),
        rate_limit: optional("rate_limit").and_then(|l| l.parse().ok()),
        ordering: Ordering::parse(&text("ordering")).unwrap_or_default(),
        filter: optional("filter"),
        headers: match optional("headers") {
            Some(text) => serde_json::from_str(&text).map_err(|e| corrupt(format!("headers: {e}")))?,
            None => BTreeMap::new(),
        },
        client_certificate: match optional("client_cert_view") {
            Some(text) => Some(serde_json::from_str(&text).map_err(|e| corrupt(format!("client_cert_view: {e}")))?),
            None => None,
        },
        client_secret: None,
        destination: match optional("destination") {
            Some(text) => Some(StoredDestination {
                spec: serde_json::from_str(&text).map_err(|e| corrupt(format!("destination: {e}")))?,
                // The credentials stay in Redis: only the delivery workers open them.
                sealed_credentials: String::new(),
            }),
            None => None,
        },
        endpoint: EndpointFields::read(&FIELDS.map(|name| f.get(name).cloned())),
    })
}

/// The previous secret and the end of its grace period, if it still signs at `now_ms`.
pub(in crate::store) fn previous_secret(
    secret: Option<String>,
    expires: Option<&str>,
    now_ms: u64,
) -> Option<(String, u64)> {
    let expires = expires.and_then(|e| e.parse::<u64>().ok()).filter(|&ms| ms > now_ms)?;
    secret.filter(|s| !s.is_empty()).map(|s| (s, expires))
}
