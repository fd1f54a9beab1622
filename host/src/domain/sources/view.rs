//! A source as the API and the pages show it: never a secret; the ingest URL, as a
//! webhook's `signing_secret` is shown.

use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::sources::{Encoding, Scheme};
use crate::store::tenants::source_requests::RequestEntry;
use crate::store::tenants::sources::SourceRecord;

/// A source (contract §10).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Source)]
pub(crate) struct SourceView {
    pub id: String,
    pub name: String,
    /// `stripe`, `github`, `shopify`, `slack`, `twilio`, `standard_webhooks`, `hmac`,
    /// `basic`, `api_key` or `none`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where the provider sends its webhooks: `<WEIR_PUBLIC_URL>/in/<token>`.
    pub ingest_url: String,
    /// How long a request's duplicate id is remembered (`24h`).
    pub dedup_window: String,
    /// The settings of a generic kind, without its secret (`hmac`, `basic`, `api_key`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub settings: Option<Value>,
    /// Until when the secret rotated out is still accepted (`null`: none is).
    pub previous_secret_expires_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl SourceView {
    /// The view of `record`, its token opened (`token`).
    pub(super) fn of(record: &SourceRecord, ingest_url: String) -> SourceView {
        let scheme: Scheme = serde_json::from_str(&record.scheme).unwrap_or_default();
        let settings = match scheme {
            Scheme::Provider => None,
            Scheme::Hmac { header, algorithm, encoding, prefix } => Some(json!({
                "header": header,
                "algorithm": algorithm,
                "encoding": match encoding { Encoding::Hex => "hex", Encoding::Base64 => "base64" },
                "prefix": prefix,
            })),
            Scheme::Basic { username } => Some(json!({ "username": username })),
            Scheme::ApiKey { header } => Some(json!({ "header": header })),
        };
        let now = crate::time::now_millis();
        SourceView {
            id: record.id.clone(),
            name: record.name.clone(),
            kind: record.kind.clone(),
            ingest_url,
            dedup_window: crate::config::duration::format(std::time::Duration::from_millis(record.dedup_window_ms)),
            settings: settings.map(|s| json!({ record.kind.clone(): s })),
            previous_secret_expires_at: record
                .previous_secret
                .as_ref()
                .filter(|(_, until)| *until > now)
                .map(|(_, until)| crate::time::format_millis(*until)),
            created_at: record.created_at.clone(),
            updated_at: record.updated_at.clone(),
        }
    }
}

/// One request to a source, as its listing shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = SourceRequest)]
pub(crate) struct RequestView {
    pub id: String,
    pub received_at: String,
    /// `accepted`, `duplicate` or `rejected`.
    pub outcome: String,
    /// Why it was rejected (`invalid_signature`: …), `null` otherwise.
    pub reason: Option<String>,
    /// The event it is (a duplicate: the first request's).
    pub event_id: Option<String>,
    /// The body's size in bytes (a rejected body is not kept).
    pub size: usize,
}

impl From<RequestEntry> for RequestView {
    fn from(e: RequestEntry) -> RequestView {
        RequestView {
            id: e.id,
            received_at: e.received_at,
            outcome: e.outcome,
            reason: e.reason,
            event_id: e.event_id,
            size: e.size,
        }
    }
}
