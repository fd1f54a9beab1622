//! The OpenAPI document's request and answer schemas of sources (contract §10): documentation
//! only — the domain reads the fields (`crate::domain::sources`), from the kinds' tables.

use serde::Serialize;
use utoipa::ToSchema;

/// `POST /api/v2/sources`
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SourceCreateRequest {
    /// Defaults to the kind's name (`Stripe`).
    #[schema(max_length = 200)]
    pub name: Option<String>,
    /// `stripe`, `github`, `shopify`, `slack`, `twilio`, `standard_webhooks`, `hmac`, `basic`,
    /// `api_key` or `none`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The provider's signing secret (Stripe's `whsec_…`, GitHub's webhook secret, Shopify's
    /// app secret, Slack's signing secret, Twilio's auth token, a Standard Webhooks
    /// `whsec_<base64>`; for `hmac` the key). Sealed, never shown again. Not given for
    /// `basic`, `api_key` and `none`.
    pub secret: Option<String>,
    /// For `hmac`: `{"header": "X-Signature", "algorithm": "sha256"|"sha1"|"sha512",
    /// "encoding": "hex"|"base64", "prefix": "sha256="}`.
    #[schema(value_type = Option<Object>)]
    pub hmac: Option<serde_json::Value>,
    /// For `basic`: `{"username", "password"}` (the password sealed).
    #[schema(value_type = Option<Object>)]
    pub basic: Option<serde_json::Value>,
    /// For `api_key`: `{"header", "key"}` (the key sealed).
    #[schema(value_type = Option<Object>)]
    pub api_key: Option<serde_json::Value>,
    /// How long a request's duplicate id (the provider's delivery id, else the body's
    /// SHA-256) is remembered: `1s` to `7d`, default `24h`.
    #[schema(example = "24h")]
    pub dedup_window: Option<String>,
}

/// `PATCH /api/v2/sources/{id}`: fields left out keep their value; `type` cannot change and
/// the secret changes by rotation.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SourceUpdateRequest {
    #[schema(max_length = 200)]
    pub name: Option<String>,
    pub dedup_window: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub hmac: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub basic: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub api_key: Option<serde_json::Value>,
}

/// `POST /api/v2/sources/{id}/rotate`
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SourceRotateRequest {
    /// The new secret (for `basic` the new password, for `api_key` the new key); the old one
    /// is also accepted for 24 hours.
    pub secret: String,
}

/// `POST /in/{token}`'s answer.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Ingested {
    /// The event the request is (a duplicate: the first request's).
    #[schema(example = "evt_01J…")]
    pub id: String,
}
