//! The views: what the API and the settings pages show of the store's records — each built
//! from a record, with its JSON shape and its place in the OpenAPI document. The store
//! keeps records and knows nothing of how they are shown; a change of a JSON field is a
//! change here. (A delivery's view is built in `deliveries`, beside the rules that rebuild
//! its request.)
//!
//! The store's small vocabularies (a delivery's [`Status`], a webhook's [`Ordering`], an
//! attachment's [`OnError`]) appear in views as they are; their schemas are described here,
//! by a documentation type each ([`documented_as!`]).

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::certs::CertificateView;
use crate::store::events::exports::Export;
use crate::store::events::publish::EventDelivery as StoredEventDelivery;
use crate::store::queue::endpoint::EndpointFields;
pub(crate) use crate::store::queue::status::Status;
use crate::store::tenants::plugins::Plugin;
use crate::store::tenants::webhooks::{Attachment, Webhook};
pub(crate) use crate::store::tenants::webhooks::{OnError, Ordering};

/// Gives a store type the OpenAPI schema of a documentation type (the store's types carry no
/// API annotations).
macro_rules! documented_as {
    ($stored:ty => $doc:ty) => {
        impl utoipa::PartialSchema for $stored {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                <$doc as utoipa::PartialSchema>::schema()
            }
        }

        impl utoipa::ToSchema for $stored {
            fn name() -> std::borrow::Cow<'static, str> {
                <$doc as utoipa::ToSchema>::name()
            }

            fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
                <$doc as utoipa::ToSchema>::schemas(schemas)
            }
        }
    };
}

/// A delivery's status (contract §2), shared by the queue and the API.
#[allow(dead_code)]
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = Status)]
enum StatusDoc {
    Pending,
    Succeeded,
    Failed,
    Filtered,
    Cancelled,
}
documented_as!(Status => StatusDoc);

/// What happens to a delivery when an attached plugin fails.
#[allow(dead_code)]
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = OnError)]
enum OnErrorDoc {
    /// The delivery ends `filtered`, with the error.
    Drop,
    /// Go on with the body as it was before the failing plugin.
    Deliver,
}
documented_as!(OnError => OnErrorDoc);

/// Whether a webhook's deliveries keep their subject's order (contract §7 `ordering`).
#[allow(dead_code)]
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = Ordering)]
enum OrderingDoc {
    /// No order (the default): deliveries go out as workers take them.
    None,
    /// Deliveries of events about one subject go one at a time, in acceptance order.
    Subject,
}
documented_as!(Ordering => OrderingDoc);

/// A plugin attached to a webhook (contract §5).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Attachment)]
pub(crate) struct AttachmentView {
    pub plugin_id: String,
    /// Given to the plugin as JSON text.
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    pub on_error: OnError,
}

impl From<&Attachment> for AttachmentView {
    fn from(a: &Attachment) -> AttachmentView {
        AttachmentView { plugin_id: a.plugin_id.clone(), config: a.config.clone(), on_error: a.on_error }
    }
}

/// The state of a webhook's endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EndpointState {
    /// Deliveries go out as fast as the endpoint answers.
    Healthy,
    /// Recent attempts failed or timed out: one attempt at a time until one succeeds.
    Probing,
    /// The endpoint asked for a pause (`429` or `503` with `Retry-After`): nothing is sent
    /// until `paused_until`.
    Paused,
}

/// The endpoint state fields of a webhook as the API shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub(crate) struct EndpointView {
    /// How deliveries to the endpoint are going: `healthy`, `probing` (recent attempts failed
    /// or timed out: one attempt at a time until one succeeds) or `paused` (it answered `429`
    /// or `503` with `Retry-After`).
    pub endpoint_state: EndpointState,
    /// When the endpoint entered that state (`null` when it never left `healthy`).
    pub endpoint_state_since: Option<String>,
    /// Why: the failure that began probing, or the answer that asked for the pause.
    pub endpoint_state_reason: Option<String>,
    /// Until when the endpoint asked for a pause (`null` when it is not paused).
    pub paused_until: Option<String>,
}

impl EndpointView {
    /// The view of an endpoint's stored state at `now_ms`.
    pub(crate) fn of(fields: &EndpointFields, now_ms: u64) -> EndpointView {
        let format = |ms: Option<u64>| ms.map(crate::time::format_millis);
        match fields.paused_at(now_ms) {
            Some(until) => EndpointView {
                endpoint_state: EndpointState::Paused,
                endpoint_state_since: format(fields.paused_since_ms),
                endpoint_state_reason: fields.paused_reason.clone(),
                paused_until: Some(crate::time::format_millis(until)),
            },
            None => EndpointView {
                endpoint_state: if fields.probing { EndpointState::Probing } else { EndpointState::Healthy },
                endpoint_state_since: format(fields.since_ms),
                endpoint_state_reason: fields.reason.clone().filter(|_| fields.probing),
                paused_until: None,
            },
        }
    }
}

/// A webhook subscription.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Webhook)]
pub(crate) struct WebhookView {
    pub id: String,
    pub name: String,
    pub url: String,
    pub active: bool,
    pub subscribed_actions: Vec<String>,
    /// The sources whose requests it receives (contract §10).
    pub subscribed_sources: Vec<String>,
    pub plugins: Vec<AttachmentView>,
    pub signing_secret: String,
    /// When the previous secret stops signing (`null` when there is none).
    pub previous_secret_expires_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub deactivated_at: Option<String>,
    pub deactivation_reason: Option<String>,
    /// Deliveries per second to this webhook, every process together (`null`: no limit).
    #[schema(minimum = 1, maximum = 10_000)]
    pub rate_limit: Option<u32>,
    /// Order of deliveries per subject.
    pub ordering: Ordering,
    /// A CEL expression over the event's envelope: only events for which it is `true` are
    /// delivered (`null`: every subscribed event).
    pub filter: Option<String>,
    /// Extra request headers sent with every delivery.
    pub headers: BTreeMap<String, String>,
    /// The client certificate for mutual TLS (never its key).
    pub client_certificate: Option<CertificateView>,
    /// Where deliveries go when not to `url` over HTTP (contract §9), never with its
    /// credentials: `{"type": "nats", "url": "nats://host:port", "subject": "…"}`; absent for
    /// an HTTP endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub destination: Option<serde_json::Value>,
    #[serde(flatten)]
    pub endpoint: EndpointView,
}

impl WebhookView {
    /// The view of a webhook as read now.
    pub(crate) fn of(w: &Webhook) -> WebhookView {
        WebhookView {
            id: w.id.clone(),
            name: w.name.clone(),
            url: w.url.clone(),
            active: w.active,
            subscribed_actions: w.subscribed_actions.clone(),
            subscribed_sources: w.subscribed_sources.clone(),
            plugins: w.plugins.iter().map(AttachmentView::from).collect(),
            signing_secret: w.signing_secret.clone(),
            previous_secret_expires_at: w.previous_secret_expires_at.clone(),
            created_at: w.created_at.clone(),
            updated_at: w.updated_at.clone(),
            deactivated_at: w.deactivated_at.clone(),
            deactivation_reason: w.deactivation_reason.clone(),
            rate_limit: w.rate_limit,
            ordering: w.ordering,
            filter: w.filter.clone(),
            headers: w.headers.clone(),
            client_certificate: w.client_certificate.clone(),
            destination: w.destination.as_ref().map(|d| d.spec.clone()),
            endpoint: EndpointView::of(&w.endpoint, crate::time::now_millis()),
        }
    }
}

/// A plugin as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Plugin)]
pub(crate) struct PluginView {
    pub id: String,
    pub name: String,
    pub sha256: String,
    pub size: u64,
    pub created_at: String,
    /// 1 for the first upload under its name, then 2, 3, …
    pub version: u64,
}

impl From<&Plugin> for PluginView {
    fn from(p: &Plugin) -> PluginView {
        PluginView {
            id: p.id.clone(),
            name: p.name.clone(),
            sha256: p.sha256.clone(),
            size: p.size,
            created_at: p.created_at.clone(),
            version: p.version,
        }
    }
}

/// An export as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = ReportExport)]
pub(crate) struct ExportView {
    pub id: String,
    /// `queued`, `building`, `completed` or `failed`.
    pub status: String,
    /// `pdf`, `csv` or `json`.
    pub format: String,
    pub exportable: ExportableView,
    pub created_at: String,
    pub completed_at: Option<String>,
    pub download_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The record an export is of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Exportable)]
pub(crate) struct ExportableView {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

impl From<&Export> for ExportView {
    fn from(e: &Export) -> ExportView {
        ExportView {
            id: e.id.clone(),
            status: e.status.clone(),
            format: e.format.clone(),
            exportable: ExportableView { kind: e.exportable.kind.clone(), id: e.exportable.id.clone() },
            created_at: e.created_at.clone(),
            completed_at: e.completed_at.clone(),
            download_url: e.download_url.clone(),
            error: e.error.clone(),
        }
    }
}

/// A delivery of an event, as the event lookup shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = EventDelivery)]
pub(crate) struct EventDeliveryView {
    pub id: String,
    pub webhook_id: String,
    pub status: Status,
}

impl From<&StoredEventDelivery> for EventDeliveryView {
    fn from(d: &StoredEventDelivery) -> EventDeliveryView {
        EventDeliveryView { id: d.id.clone(), webhook_id: d.webhook_id.clone(), status: d.status }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_documented_vocabulary_names_what_the_store_writes() {
        let names = |doc: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>| serde_json::to_string(&doc).unwrap();
        let statuses = names(<Status as utoipa::PartialSchema>::schema());
        for s in [Status::Pending, Status::Succeeded, Status::Failed, Status::Filtered, Status::Cancelled] {
            assert!(statuses.contains(&format!("\"{}\"", s.as_str())), "{statuses}");
        }
        let orderings = names(<Ordering as utoipa::PartialSchema>::schema());
        for o in [Ordering::None, Ordering::Subject] {
            assert!(orderings.contains(&format!("\"{}\"", o.as_str())), "{orderings}");
        }
        let on_error = names(<OnError as utoipa::PartialSchema>::schema());
        for o in [OnError::Drop, OnError::Deliver] {
            let json = serde_json::to_string(&o).unwrap();
            assert!(on_error.contains(&json), "{on_error} lacks {json}");
        }
    }

    #[test]
    fn a_pause_shows_while_it_lasts_then_the_state_under_it() {
        let values: Vec<Option<String>> = ["probing", "1000", "timed out after 10s", "5000", "2000", "HTTP 429"]
            .iter()
            .map(|v| Some((*v).to_owned()))
            .collect();
        let fields = EndpointFields::read(&values);
        let paused = EndpointView::of(&fields, 3000);
        assert_eq!(paused.endpoint_state, EndpointState::Paused);
        assert_eq!(paused.endpoint_state_reason.as_deref(), Some("HTTP 429"));
        assert_eq!(paused.paused_until, Some(crate::time::format_millis(5000)));
        let after = EndpointView::of(&fields, 6000);
        assert_eq!(after.endpoint_state, EndpointState::Probing);
        assert_eq!(after.endpoint_state_reason.as_deref(), Some("timed out after 10s"));
        assert_eq!(after.paused_until, None);
        let healthy = EndpointView::of(&EndpointFields::read(&[None, Some("1000".into()), Some("old".into())]), 6000);
        assert_eq!(healthy.endpoint_state, EndpointState::Healthy);
        assert_eq!(healthy.endpoint_state_reason, None, "a healthy endpoint has no reason");
    }
}
