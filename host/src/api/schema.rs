//! The shapes the API documents but handlers do not build as records: request bodies the
//! handlers validate field by field (the `*Request` types: they only describe), pages, and
//! small answers. `openapi` collects them into the document.

use serde::Serialize;
use utoipa::ToSchema;

/// A page of a list, newest first (contract §2).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Page<T: ToSchema> {
    pub data: Vec<T>,
    /// Give it back as `?cursor=` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// `POST /api/v2/webhooks`
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookCreateRequest {
    /// Defaults to the URL's host.
    #[schema(max_length = 200)]
    pub name: Option<String>,
    /// `http` or `https` to a public address (contract §2, URL rule); required unless a
    /// `destination` other than `http` is given (then it is not sent).
    pub url: Option<String>,
    /// Actions of the catalogue (`GET /api/v2/webhooks/events`); unknown ones are dropped.
    /// Required unless `subscribed_sources` is given.
    pub subscribed_actions: Option<Vec<String>>,
    /// Sources of the organisation (`src_…`) whose requests it receives, forwarded as the
    /// provider sent them (at most 20).
    pub subscribed_sources: Option<Vec<String>>,
    pub plugins: Option<Vec<AttachmentRequest>>,
    /// Deliveries per second to this webhook, every Weir process together (1 to 10,000);
    /// `null` or absent: no limit. Deliveries over it wait in the queue.
    #[schema(minimum = 1, maximum = 10_000)]
    pub rate_limit: Option<u32>,
    /// `"subject"`: deliveries of events about one subject go one at a time, in the order
    /// the events were accepted; `"none"` (default, also `null`): no order.
    pub ordering: Option<crate::domain::views::Ordering>,
    /// A CEL expression over the event's envelope (each top-level key a variable, `event`
    /// the whole), at most 4,096 bytes: only events for which it is `true` are delivered, e.g.
    /// `report_export.exportable.type == "Form" && creator.id in ["usr_1"]`; `null`: none.
    #[schema(max_length = 4096)]
    pub filter: Option<String>,
    /// Extra request headers sent with every delivery (at most 20; names Weir sets itself
    /// are refused); `null` or absent: none.
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// A client certificate for endpoints that require mutual TLS; `null` removes it.
    pub client_certificate: Option<ClientCertificateRequest>,
    /// Where deliveries go instead of an HTTP endpoint (contract §9); `null` or
    /// `{"type": "http"}`: the `url` over HTTP.
    pub destination: Option<crate::api::kind_schema::DestinationRequest>,
}

/// `PATCH /api/v2/webhooks/{id}`: fields left out keep their value.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookUpdateRequest {
    #[schema(max_length = 200)]
    pub name: Option<String>,
    pub url: Option<String>,
    pub subscribed_actions: Option<Vec<String>>,
    pub subscribed_sources: Option<Vec<String>>,
    pub plugins: Option<Vec<AttachmentRequest>>,
    /// `true` reactivates a deactivated webhook and clears its failure streak.
    pub active: Option<bool>,
    /// Deliveries per second (1 to 10,000); `null` removes the limit.
    #[schema(minimum = 1, maximum = 10_000)]
    pub rate_limit: Option<u32>,
    /// `"subject"`: deliveries of events about one subject go one at a time, in the order
    /// the events were accepted; `"none"` (default, also `null`): no order.
    pub ordering: Option<crate::domain::views::Ordering>,
    /// A CEL expression over the event's envelope (each top-level key a variable, `event`
    /// the whole), at most 4,096 bytes: only events for which it is `true` are delivered, e.g.
    /// `report_export.exportable.type == "Form" && creator.id in ["usr_1"]`; `null`: none.
    #[schema(max_length = 4096)]
    pub filter: Option<String>,
    /// Extra request headers sent with every delivery (at most 20; names Weir sets itself
    /// are refused); `null` or absent: none.
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// A client certificate for endpoints that require mutual TLS; `null` removes it.
    pub client_certificate: Option<ClientCertificateRequest>,
    /// Where deliveries go instead of an HTTP endpoint (contract §9); `null` or
    /// `{"type": "http"}`: the `url` over HTTP.
    pub destination: Option<crate::api::kind_schema::DestinationRequest>,
}

/// A client certificate and its private key, both PEM (the key is write-only: reads show
/// the certificate's fingerprint, subject and expiry).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ClientCertificateRequest {
    /// PEM certificate, its chain may follow.
    pub certificate: String,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1) matching the certificate.
    pub private_key: String,
}

/// A plugin to attach (contract §5).
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttachmentRequest {
    pub plugin_id: String,
    /// Given to the plugin as JSON text (at most 64 KiB).
    #[schema(value_type = Option<Object>)]
    pub config: Option<serde_json::Value>,
    /// Default `drop`.
    pub on_error: Option<crate::domain::views::OnError>,
}

/// `POST /api/v2/webhooks/{id}/rotate_secret`
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RotateSecretRequest {
    /// How long the old secret keeps signing beside the new one: `0s` to `7d`, default `24h`.
    #[schema(example = "24h")]
    pub grace_period: Option<String>,
}

/// `POST /api/v2/webhooks/{id}/retry_failed`
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetryFailedRequest {
    /// Failed deliveries created at or after this time (RFC 3339) are re-queued.
    pub since: String,
}

/// `POST /api/v2/webhooks/{id}/replay`
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayRequest {
    /// Events accepted at or after this time (RFC 3339; within `WEIR_EVENT_RETENTION`).
    pub since: String,
    /// Events accepted before this time (RFC 3339; default: now).
    pub until: Option<String>,
}

/// How many deliveries were re-queued.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Count {
    pub count: u64,
}

/// An event to publish (contract §2): exactly one snapshot key (`work_order`, `form`, …)
/// matching the subject type, besides these fields.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PublishRequest {
    /// Replaying an id already accepted creates nothing new.
    pub id: Option<String>,
    pub action: String,
    pub created_at: Option<String>,
    pub creator: Creator,
    pub subject: Subject,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Creator {
    pub id: String,
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Subject {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub deleted: Option<bool>,
}

/// The id of an accepted event.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Accepted {
    pub id: String,
}

/// `POST /api/v2/report_exports`
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportRequest {
    pub exportable: crate::domain::views::ExportableView,
    /// `pdf`, `csv` or `json`.
    pub format: String,
}

/// `POST /api/v2/plugins/{id}/test`: either `event` (as published, or the envelope as a
/// subscriber received it) or `delivery_id` (rerun on a real delivery's event).
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DryRunRequest {
    #[schema(value_type = Option<Object>)]
    pub event: Option<serde_json::Value>,
    pub delivery_id: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub config: Option<serde_json::Value>,
}

/// The catalogue of actions (contract §3).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Catalogue {
    pub categories: Vec<CatalogueCategory>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CatalogueCategory {
    pub key: String,
    pub name: String,
    pub events: Vec<String>,
}

/// `POST /oauth/token` (form-encoded; the client's credentials in the form or HTTP Basic).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TokenRequest {
    /// `client_credentials`.
    pub grant_type: String,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

/// `POST /oauth/revoke` (RFC 7009).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RevokeRequest {
    pub token: String,
    pub token_type_hint: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

/// A health answer.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    pub status: String,
}

/// `POST /api/v2/filters/test`: a filter and the event to try it on (its envelope, or the
/// id of one of the organisation's events).
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilterTestRequest {
    /// A CEL expression, as `filter` on a webhook.
    #[schema(max_length = 4096)]
    pub filter: String,
    /// An event's envelope, as delivered.
    #[schema(value_type = Option<Object>)]
    pub event: Option<serde_json::Value>,
    /// Instead of `event`: one of the organisation's events.
    pub event_id: Option<String>,
}

/// `POST /api/v2/portal_links`: what the link opens, for how long, and who may frame it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PortalLinkRequest {
    /// `manage` (every page and control; the default) or `view` (the pages, no control that
    /// changes anything).
    #[schema(pattern = "^(manage|view)$")]
    pub permissions: Option<String>,
    /// How long the link may be opened, in seconds (default 300); it opens once.
    #[schema(minimum = 60, maximum = 900)]
    pub ttl_seconds: Option<u32>,
    /// The origins whose pages may show the portal in a frame (`https://app.example.com`);
    /// none: it may not be framed.
    #[schema(max_items = 16)]
    pub frame_ancestors: Option<Vec<String>>,
    /// The pages' accent colour.
    #[schema(pattern = "^#[0-9A-Fa-f]{6}$")]
    pub accent_color: Option<String>,
    /// Shown instead of Weir's name (and logo).
    pub brand: Option<PortalBrand>,
    /// A "back" link in the portal to your product: `https`, or `http` on loopback.
    #[schema(max_length = 2048)]
    pub return_url: Option<String>,
    /// Where a page of this link sends its frame once the link has expired or was used: your
    /// backend makes a new link there and redirects to it. `https`, or `http` on loopback.
    #[schema(max_length = 2048)]
    pub refresh_url: Option<String>,
    /// `light` or `dark`; left out, the pages follow the browser's (and so the framing
    /// page's) preference.
    #[schema(pattern = "^(light|dark)$")]
    pub theme: Option<String>,
}

/// The operator's name and logo, shown in the portal's header and on its pages.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PortalBrand {
    #[schema(min_length = 1, max_length = 60)]
    pub name: String,
    /// An image (`https`, or `http` on loopback), shown 24 px high.
    #[schema(max_length = 2048)]
    pub logo_url: Option<String>,
}

/// How many were ended.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Ended {
    pub ended: u64,
}

/// `POST /api/v2/webhooks/{id}/test`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestEventRequest {
    /// One of the webhook's subscribed actions.
    pub action: Option<String>,
}

/// A test event's delivery, queued.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TestEventQueued {
    pub delivery_id: String,
}
