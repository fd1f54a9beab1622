//! Events: validating one (contract §2), building its envelope (service document §2), and
//! publishing it — the one path every event takes, from API publishers and from Weir's own
//! `report_export_completed`. Publishing reads the webhooks subscribed to the action, then
//! hands the event to its partition's batch (group commit: publishes that arrive while one
//! call is in flight share the next); `202` comes once all of it is in Redis.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::views::EventDeliveryView;
use crate::app::App;
use crate::catalog;
use crate::store::StoreError;
pub(crate) use crate::store::events::publish::Published;
use crate::store::events::publish::{MAX_SNAPSHOT_BYTES, Publication};
use crate::store::events::stored::StoredEvent;

/// Publishes a validated event for an organisation. Idempotent on the event id.
pub(crate) async fn publish(app: &App, org_id: &str, event: &Event<'_>) -> Result<Published, StoreError> {
    publish_except(app, org_id, event, None).await
}

/// Publishes an event to the organisation's subscribed webhooks but `except` (an
/// operational event is never delivered to the webhook it is about).
pub(crate) async fn publish_except(
    app: &App,
    org_id: &str,
    event: &Event<'_>,
    except: Option<&str>,
) -> Result<Published, StoreError> {
    // An id seen before creates nothing new: Redis knows those of events still there; an
    // event that moved to history is looked for there.
    if !event.fresh_id && super::moved::Reads::of(app).moved_event_known(org_id, &event.id).await {
        return Ok(Published::Duplicate);
    }
    let envelope = event.envelope(org_id);
    let mut webhooks = app.publisher.subscribers(org_id, &event.action).await?;
    webhooks.retain(|w| Some(w.webhook.as_str()) != except);
    super::filtering::keep_selected(app, org_id, &envelope, &mut webhooks).await;
    // Its subject's partition — or, while that one cannot acknowledge writes (a failover
    // left its master without replicas), a standby, unless an ordered webhook receives it
    // (`store::events::standby`).
    let home = app.store.keys().partition_of_subject(org_id, &event.subject_type, &event.subject_id);
    let p = app.store.partition_for(home, webhooks.iter().any(|w| w.ordered));
    if !event.fresh_id {
        // An earlier try may have left it in its own partition, or on a standby that took
        // its partition's events during a failover: it is not published twice.
        let elsewhere = app.store.tried_elsewhere(home, p);
        if !elsewhere.is_empty() && app.store.has_event_in(&elsewhere, org_id, &event.id).await? {
            return Ok(Published::Duplicate);
        }
    }
    if p != home {
        app.store.mark_standby(home, p, app.config.delivery_retention).await?;
    }
    // Operational events are about Weir's own resources: no report exports them.
    let snapshot = envelope.len() <= MAX_SNAPSHOT_BYTES && !catalog::is_operational(&event.action);
    let accepted_ms = crate::time::now_millis();
    let as_stored = Arc::new(StoredEvent {
        created_at: event.created_at.clone(),
        envelope,
        accepted_ms,
        trace: event.trace.clone(),
    });
    let subject = format!("{}:{}", event.subject_type, event.subject_id);
    let event_ms = crate::time::parse_rfc3339(&event.created_at).unwrap_or_else(crate::time::now_millis);
    let publication = Publication {
        org_id: org_id.to_owned(),
        event_id: event.id.clone(),
        action: event.action.clone(),
        subject: subject.clone(),
        deleted: event.deleted,
        event_ms,
        logged_action: catalog::named(&event.action),
        stored: Arc::new(as_stored.encode()),
        event: as_stored,
        snapshot,
        webhooks,
    };
    let published = app.publisher.publish(p, publication).await?;
    if let Published::New { deliveries } = published {
        if event.deleted {
            forget_older_snapshots(app, (home, p), org_id, &event.id, &subject, event_ms).await;
        }
        app.metrics.events_published.inc();
        if deliveries > 0 {
            app.work_arrived(p);
        }
    }
    Ok(published)
}

/// After a record's deletion was published in `p` (its own partition being `home`), forgets
/// its older snapshot where a failover may have left one: at home, or on a standby marked for
/// it (none before a failover). A failure leaves the older snapshot exportable: logged, as the
/// deletion itself is already acknowledged.
async fn forget_older_snapshots(
    app: &App,
    (home, p): (crate::store::Partition, crate::store::Partition),
    org_id: &str,
    event_id: &str,
    subject: &str,
    deleted_ms: u64,
) {
    let elsewhere = app.store.tried_elsewhere(home, p);
    if elsewhere.is_empty() {
        return;
    }
    if let Err(e) = app.store.forget_snapshot_in(&elsewhere, org_id, subject, deleted_ms).await {
        tracing::warn!(error = %e, org_id, event_id, "cannot forget a deleted record's older snapshot; an export may still find it");
    }
}

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

super::handle!(
    /// Events, for the surfaces: publish, look up, list the log.
    Events
);

impl Events {
    /// Records a publish request's span (when traces are exported).
    pub(crate) fn traced(&self, span: crate::telemetry::PublishSpan<'_>) {
        self.app.telemetry.publish(span);
    }

    /// Publishes a validated event of the organisation.
    pub(crate) async fn publish(&self, org_id: &str, event: &Event<'_>) -> Result<Published, StoreError> {
        publish(&self.app, org_id, event).await
    }

    /// The organisation's event and its deliveries (`None`: unknown, or expired).
    pub(crate) async fn lookup(&self, org_id: &str, id: &str) -> Result<Option<EventView>, StoreError> {
        lookup(&self.app, org_id, id).await
    }

    /// A page of the organisation's event log, newest first, from `cursor`.
    pub(crate) async fn log(
        &self,
        org_id: &str,
        bounds: super::event_log::Bounds<'_>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<super::event_log::LoggedEvent>, Option<String>), StoreError> {
        super::event_log::list(&self.app, org_id, bounds, cursor, limit).await
    }

    /// What a filter makes of an event (`POST /api/v2/filters/test`).
    pub(crate) async fn test_filter(
        &self,
        org_id: &str,
        body: serde_json::Map<String, serde_json::Value>,
    ) -> Result<super::filtering::FilterTest, super::filtering::TestError> {
        super::filtering::test(&self.app, org_id, body).await
    }

    /// Whether `cursor` is one a listing of the event log gave out.
    pub(crate) fn valid_log_cursor(&self, cursor: &str) -> bool {
        super::event_log::valid_cursor(&self.app, cursor)
    }
}

/// The organisation's event and its deliveries (`None`: unknown, or expired). The event is
/// read from every partition at once (its id does not name one); its deliveries' ids are
/// derived from it for each of the organisation's webhooks (`store::events::publish`), so nothing is
/// scanned. Deliveries to webhooks deleted since are not listed.
async fn lookup(app: &App, org_id: &str, id: &str) -> Result<Option<EventView>, StoreError> {
    let reads = super::moved::Reads::of(app);
    let Some((p, stored)) = reads.event(org_id, id).await? else { return Ok(None) };
    let webhooks = app.store.webhook_ids(org_id).await?;
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

mod event;
mod validate;

pub(crate) use self::event::{Event, OPERATIONAL_CREATOR};
pub(crate) use self::validate::validate;

#[cfg(test)]
mod tests;
