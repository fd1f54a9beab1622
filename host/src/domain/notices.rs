//! Operational events (contract §7): Weir tells an organisation's own webhooks when one of
//! its webhooks is deactivated or reactivated, and when a delivery's retries are exhausted.
//! (The fourth, `usage_limit_approaching`, is the publish path's: `events::counted`.)
//! They are ordinary events of the organisation (published, logged, signed and delivered
//! like any other, through plugins too), with three rules of their own:
//! - an event about webhook W never goes to W (a dead endpoint is not told it is dead, and
//!   two failing webhooks cannot keep notifying each other);
//! - they carry no secret: the webhook's snapshot has no `signing_secret` nor header values;
//! - one change, one event: deactivating a webhook with many pending deliveries emits one
//!   `webhook_deactivated` (its deliveries ending with it emit nothing), and a delivery of an
//!   operational event that fails emits no `webhook_delivery_failed` (no chains).
//!
//! Each event's id is derived from what it reports, so reporting the same change twice
//! publishes it once.
//!
//! Emitted after the change is stored: a process that dies in between loses the notice
//! (the change itself stands, and shows on the webhook and the delivery).

use serde_json::{Value, json};

use std::sync::Arc;

use super::events::{Operational, Publishing};
use crate::catalog;
use crate::metrics::Metrics;
use crate::store::queue::rate::Rates;
use crate::store::tenants::webhooks::Webhook;

/// An organisation's budget of `webhook_delivery_failed` notices: one every 6 s on average,
/// 10 at once. Without it, one event failing at N webhooks that all subscribe to the notice
/// would send N notices to N − 1 webhooks each (N² deliveries); beyond the budget notices
/// are dropped (counted in `weir_notices_suppressed_total` and logged).
const FAILED_NOTICE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(6);
const FAILED_NOTICE_BURST: u32 = 10;

/// A change Weir reports.
#[derive(Debug)]
pub(crate) enum Notice<'a> {
    Deactivated(&'a Webhook),
    Reactivated(&'a Webhook),
    /// A delivery's retries are exhausted: the delivery as the API shows it.
    DeliveryFailed(&'a super::deliveries::Delivery),
}

impl Notice<'_> {
    fn action(&self) -> &'static str {
        match self {
            Notice::Deactivated(_) => "webhook_deactivated",
            Notice::Reactivated(_) => "webhook_reactivated",
            Notice::DeliveryFailed(_) => "webhook_delivery_failed",
        }
    }

    /// The webhook it is about (never told).
    fn webhook_id(&self) -> &str {
        match self {
            Notice::Deactivated(w) | Notice::Reactivated(w) => &w.id,
            Notice::DeliveryFailed(d) => &d.webhook_id,
        }
    }

    /// Subject type and id, snapshot, and what makes this occurrence one (for its id).
    fn parts(&self) -> (&'static str, String, Value, String) {
        match self {
            Notice::Deactivated(w) => {
                ("Webhook", w.id.clone(), webhook_snapshot(w), w.deactivated_at.clone().unwrap_or_default())
            }
            Notice::Reactivated(w) => ("Webhook", w.id.clone(), webhook_snapshot(w), w.updated_at.clone()),
            Notice::DeliveryFailed(d) => {
                let last = d.attempts.last().map(|a| serde_json::to_value(a).unwrap_or(Value::Null));
                let snapshot = json!({
                    "id": d.id,
                    "webhook_id": d.webhook_id,
                    "event_id": d.event_id,
                    "action": d.action,
                    "status": d.status,
                    "last_attempt": last,
                });
                ("WebhookDelivery", d.id.clone(), snapshot, d.attempts.len().to_string())
            }
        }
    }
}

/// A webhook as an operational event shows it: the resource without its secrets (no
/// `signing_secret`; its `headers` by name, each value empty; the client certificate's
/// view only, as always).
pub(crate) fn webhook_snapshot(w: &Webhook) -> Value {
    let mut value = serde_json::to_value(super::views::WebhookView::of(w)).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.remove("signing_secret");
        let names: serde_json::Map<String, Value> =
            w.headers.keys().map(|name| (name.clone(), Value::String(String::new()))).collect();
        map.insert("headers".into(), Value::Object(names));
    }
    value
}

/// The port operational events go out by: what webhooks, the recorder and the export
/// builders are handed instead of publishing itself.
#[derive(Debug, Clone)]
pub(crate) struct Notices {
    publishing: Publishing,
    /// Each organisation's budget of `webhook_delivery_failed` notices.
    rates: Rates,
    metrics: Arc<Metrics>,
}

impl Notices {
    pub(crate) fn new(publishing: &Publishing, rates: Rates, metrics: &Arc<Metrics>) -> Notices {
        Notices { publishing: publishing.clone(), rates, metrics: metrics.clone() }
    }

    /// Publishes a notice to the organisation's webhooks that subscribe to it (not the one
    /// it is about). A failure is logged, not returned: the change it reports is stored already.
    pub(crate) async fn emit(&self, org_id: &str, notice: Notice<'_>) {
        emit(self, org_id, notice).await
    }

    /// Publishes an event Weir itself makes for the organisation (a completed export's
    /// `report_export_completed`); unlike a notice, a failure is returned, to try again.
    pub(crate) async fn publish(
        &self,
        org_id: &str,
        event: &super::events::Event<'_>,
    ) -> Result<(), crate::store::StoreError> {
        self.publishing.publish(org_id, event).await.map(|_| ())
    }
}

async fn emit(notices: &Notices, org_id: &str, notice: Notice<'_>) {
    if let Notice::DeliveryFailed(d) = &notice
        && catalog::is_operational(&d.action)
    {
        return;
    }
    if let Notice::DeliveryFailed(d) = &notice {
        match notices.rates.take_notice(org_id, FAILED_NOTICE_INTERVAL, FAILED_NOTICE_BURST).await {
            Ok(None) => {}
            Ok(Some(_)) => {
                notices.metrics.notices_suppressed.inc();
                tracing::info!(org_id = %org_id, delivery_id = %d.id, "webhook_delivery_failed not published: the organisation's notice budget is spent");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, org_id = %org_id, "cannot take from the notice budget; the notice is not published");
                return;
            }
        }
    }
    let action = notice.action();
    let (subject_type, subject_id, snapshot, occasion) = notice.parts();
    let about = Operational { action, subject: (subject_type, &subject_id), snapshot, occasion: &occasion };
    notices.publishing.publish_operational(org_id, about, Some(notice.webhook_id())).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::queue::endpoint::EndpointFields;

    #[test]
    fn a_webhooks_snapshot_has_no_secret_and_header_names_only() {
        let webhook = Webhook {
            id: "wh_1".into(),
            org_id: "org_1".into(),
            name: "n".into(),
            url: "https://127.0.0.1/x".into(),
            active: false,
            subscribed_actions: vec!["work_order_created".into()],
            subscribed_sources: Vec::new(),
            plugins: Vec::new(),
            signing_secret: "whsec_SECRET".into(),
            previous_secret: None,
            previous_secret_expires_at: None,
            created_at: "t".into(),
            updated_at: "t".into(),
            deactivated_at: Some("t".into()),
            deactivation_reason: Some("failing".into()),
            rate_limit: None,
            ordering: Default::default(),
            filter: None,
            headers: [("Authorization".to_owned(), "Bearer gateway-key".to_owned())].into(),
            client_certificate: None,
            client_secret: None,
            destination: None,
            endpoint: EndpointFields::default(),
        };
        let snapshot = webhook_snapshot(&webhook);
        let text = snapshot.to_string();
        assert!(!text.contains("whsec_SECRET") && !text.contains("gateway-key"), "{text}");
        assert_eq!(snapshot["headers"], json!({"Authorization": ""}));
        assert_eq!(snapshot["id"], "wh_1");
    }
}
