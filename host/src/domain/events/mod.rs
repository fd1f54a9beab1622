//! Events: validating one (contract §2), building its envelope (service document §2), and
//! publishing it — the one path every event takes, from API publishers and from Weir's own
//! `report_export_completed`. Publishing reads the webhooks subscribed to the action, then
//! hands the event to its partition's batch (group commit: publishes that arrive while one
//! call is in flight share the next); `202` comes once all of it is in Redis.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::Invalid;
use super::filtering::Filtering;
use super::moved::Moved;
use super::views::EventDeliveryView;
use crate::offload::Offload;
use crate::store::events::log::EventLog;
pub(crate) use crate::store::events::publish::Published;
use crate::store::events::test_events::TestEventBudget;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::webhooks::WebhookRecords;
use crate::store::{Keys, StoreError};
use crate::telemetry::Telemetry;

/// An event as `GET /api/v2/events/{id}` shows it: the envelope as published and the
/// delivery to each webhook.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[schema(as = Event)]
pub(crate) struct EventView {
    pub id: String,
    pub action: String,
    pub created_at: String,
    /// The envelope as published (service document §2).
    #[schema(value_type = Object)]
    pub envelope: Box<RawValue>,
    pub deliveries: Vec<EventDeliveryView>,
}

/// Events, for the surfaces: publish, look up, list the log, try a filter.
#[derive(Debug, Clone)]
pub(crate) struct Events {
    parts: EventsParts,
}

/// What the events' door is made of (the wiring hands each part over).
#[derive(Debug, Clone)]
pub(crate) struct EventsParts {
    pub publishing: Publishing,
    pub moved: Moved,
    pub filtering: Filtering,
    pub telemetry: Arc<Telemetry>,
    /// Each organisation's plan: how far back its event log reaches.
    pub orgs: Orgs,
    pub plans: Arc<crate::plans::Plans>,
    /// The organisation's webhooks: an event's deliveries, a test event's webhook.
    pub webhooks: WebhookRecords,
    pub log: EventLog,
    pub test_budget: TestEventBudget,
    pub keys: Keys,
    /// Where large events are read.
    pub offload: Arc<Offload>,
}

impl Events {
    pub(crate) fn new(parts: EventsParts) -> Events {
        Events { parts }
    }

    /// Reads a publish request's body as an event ([`validate`]): a large one on the tenant
    /// threads, in the organisation's slot (`crate::offload`).
    pub(crate) async fn read<'b>(&self, org_id: &str, bytes: &'b bytes::Bytes) -> Result<Event<'b>, Invalid> {
        validate::read_on(&self.parts.offload, org_id, bytes).await
    }

    /// Records a publish request's span (when traces are exported).
    pub(crate) fn traced(&self, span: crate::telemetry::PublishSpan<'_>) {
        self.parts.telemetry.publish(span);
    }

    /// Publishes a validated event of the organisation, within its plan's events of the day;
    /// `token`: its publisher's, when it was kept (`crate::shared::Tokens::owner_kept`).
    pub(crate) async fn publish(
        &self,
        org_id: &str,
        (rules, token): (&crate::plans::Rules, Option<&crate::auth::TokenProof>),
        event: &Event<'_>,
    ) -> Result<Published, PublishError> {
        let kept = token.map_or(Kept::Not, Kept::Token);
        counted::publish_counted(&self.parts.publishing, org_id, counted::By { rules, kept }, event).await
    }

    /// The organisation's event and its deliveries (`None`: unknown, or expired).
    pub(crate) async fn lookup(&self, org_id: &str, id: &str) -> Result<Option<EventView>, StoreError> {
        lookup(&self.parts, org_id, id).await
    }

    /// A page of the organisation's event log, newest first, from `cursor`.
    pub(crate) async fn log(
        &self,
        org_id: &str,
        bounds: super::event_log::Bounds<'_>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<super::event_log::LoggedEvent>, Option<String>), StoreError> {
        let plan = self.parts.orgs.org_plan_name(org_id).await?;
        let retention = self.parts.plans.event_retention(&plan);
        let log = super::event_log::Log { log: &self.parts.log, moved: &self.parts.moved, retention };
        log.list(org_id, bounds, cursor, limit).await
    }

    /// What a filter makes of an event (`POST /api/v2/filters/test`).
    pub(crate) async fn test_filter(
        &self,
        org_id: &str,
        body: serde_json::Map<String, serde_json::Value>,
    ) -> Result<super::filtering::FilterTest, super::filtering::TestError> {
        self.parts.filtering.test(&self.parts.moved, org_id, body).await
    }

    /// Whether `cursor` is one a listing of the event log gave out.
    pub(crate) fn valid_log_cursor(&self, cursor: &str) -> bool {
        super::event_log::valid_cursor(&self.parts.keys, cursor)
    }

    /// Sends a test event of `{"action"?}` (default: the webhook's first action) to the
    /// organisation's webhook; the delivery's id (`test_event`).
    pub(crate) async fn send_test(
        &self,
        org_id: &str,
        webhook_id: &str,
        body: serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, test_event::TestEventError> {
        let to = test_event::TestTo {
            publishing: &self.parts.publishing,
            webhooks: &self.parts.webhooks,
            budget: &self.parts.test_budget,
        };
        test_event::send(to, org_id, webhook_id, body).await
    }
}

/// The organisation's event and its deliveries (`None`: unknown, or expired). The event is
/// read from every partition at once (its id does not name one); its deliveries' ids are
/// derived from it for each of the organisation's webhooks (`store::events::publish`), so nothing is
/// scanned. Deliveries to webhooks deleted since are not listed.
async fn lookup(parts: &EventsParts, org_id: &str, id: &str) -> Result<Option<EventView>, StoreError> {
    // A test event is not in the event log (contract §9), and is not found as an event.
    if crate::ids::is_test_event_id(id) {
        return Ok(None);
    }
    let reads = parts.moved.reads();
    let Some((p, stored)) = reads.event(org_id, id).await? else { return Ok(None) };
    let webhooks = parts.webhooks.webhook_ids(org_id).await?;
    let deliveries = reads.event_deliveries(p, org_id, id, stored.accepted_ms, &webhooks).await?;
    let deliveries = deliveries.iter().map(EventDeliveryView::from).collect();
    let envelope = RawValue::from_string(stored.envelope)
        .map_err(|e| StoreError::Corrupt { key: format!("event {id}"), reason: e.to_string() })?;
    #[derive(serde::Deserialize)]
    struct Head {
        action: String,
    }
    let action = serde_json::from_str::<Head>(envelope.get()).map(|h| h.action).unwrap_or_default();
    Ok(Some(EventView { id: id.to_owned(), action, created_at: stored.created_at, envelope, deliveries }))
}

mod counted;
mod event;
mod operational;
mod publishing;
pub(crate) mod test_event;
mod validate;

pub(crate) use self::counted::{By, Kept, PublishError, publish_counted};
pub(crate) use self::event::{Event, FromSource};
pub(crate) use self::operational::Operational;
pub(crate) use self::publishing::{Publishing, PublishingParts};
pub(crate) use self::validate::validate;

#[cfg(test)]
mod tests;
