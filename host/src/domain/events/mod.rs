//! Events: validating one (contract §2), building its envelope (service document §2), and
//! publishing it — the one path every event takes, from API publishers and from Weir's own
//! `report_export_completed`. Publishing reads the webhooks subscribed to the action, then
//! hands the event to its partition's batch (group commit: publishes that arrive while one
//! call is in flight share the next); `202` comes once all of it is in Redis.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::views::EventDeliveryView;
use super::{FieldError, Invalid, rules};
use crate::app::App;
use crate::catalog;
use crate::ids::{self, Kind};
use crate::store::StoreError;
pub(crate) use crate::store::events::publish::Published;
use crate::store::events::publish::{MAX_SNAPSHOT_BYTES, Publication};
use crate::store::events::stored::StoredEvent;

/// How far in the future an event's `created_at` may be (clock skew, not time travel).
const MAX_FUTURE_MS: u64 = 24 * 3600 * 1000;

/// The creator id of Weir's own (operational) events: publishers may not use it.
pub(crate) const OPERATIONAL_CREATOR: &str = "weir";

/// Whether a publisher's creator id would read as Weir's own: `weir` in any case, with
/// spaces around it or characters that show nothing (zero-width spaces and joiners, soft
/// hyphens, direction marks) anywhere in it.
fn is_reserved_creator(id: &str) -> bool {
    let shown: String = id.chars().filter(|c| !c.is_whitespace() && !is_invisible(*c)).collect();
    shown.eq_ignore_ascii_case(OPERATIONAL_CREATOR)
}

/// A character that shows nothing: Unicode's format characters most texts carry.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E007F}')
}

/// A validated event, ready to become an envelope.
#[derive(Debug)]
pub(crate) struct Event<'a> {
    pub id: String,
    /// Weir made the id just now (none given): no event had it before.
    pub fresh_id: bool,
    pub action: String,
    pub created_at: String,
    pub creator_id: String,
    pub creator_name: String,
    pub subject_type: String,
    pub subject_id: String,
    pub deleted: bool,
    pub snapshot_key: &'static str,
    pub snapshot: &'a RawValue,
    /// The W3C trace context the publisher sent (contract §7), if valid.
    pub trace: Option<crate::trace::TraceContext>,
}

impl Event<'_> {
    /// The envelope (service document §2), with the snapshot's bytes as published.
    pub(crate) fn envelope(&self, org_id: &str) -> String {
        let mut out = Vec::with_capacity(200 + self.snapshot.get().len());
        let mut push = |text: &str, value: &str| {
            out.extend_from_slice(text.as_bytes());
            // Writing a string into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut out, value);
        };
        push("{\"id\":", &self.id);
        push(",\"action\":", &self.action);
        push(",\"created_at\":", &self.created_at);
        push(",\"organisation\":{\"id\":", org_id);
        push("},\"creator\":{\"id\":", &self.creator_id);
        push(",\"name\":", &self.creator_name);
        push("},\"subject\":{\"type\":", &self.subject_type);
        push(",\"id\":", &self.subject_id);
        if self.deleted {
            out.extend_from_slice(b",\"deleted\":true");
        }
        out.extend_from_slice(b"},\"");
        out.extend_from_slice(self.snapshot_key.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(self.snapshot.get().as_bytes());
        out.push(b'}');
        // Only JSON text and valid UTF-8 strings went in.
        String::from_utf8(out).unwrap_or_default()
    }
}

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

fn text(raw: &RawValue) -> Option<String> {
    serde_json::from_str::<String>(raw.get()).ok()
}

/// Checks every field of an event (contract §2). All problems are reported at once.
pub(crate) fn validate(mut fields: BTreeMap<String, &RawValue>) -> Result<Event<'_>, Invalid> {
    let mut errors: Vec<FieldError> = Vec::new();
    let mut error = |field: &str, message: &str| errors.push(FieldError::new(field, message));

    let fresh_id = !fields.contains_key("id");
    let id = match fields.remove("id") {
        None => ids::new(Kind::Event),
        Some(raw) => match text(raw) {
            Some(id) if id.starts_with(ids::OPERATIONAL_EVENT_PREFIX) => {
                error("id", "must not start with `evt_weir_`: those ids are Weir's own (operational events)");
                String::new()
            }
            Some(id) if ids::is_event_id(&id) => id,
            _ => {
                error("id", "must be a string `evt_` followed by up to 100 letters, digits, `_` or `-`");
                String::new()
            }
        },
    };
    let action = match fields.remove("action").map(text) {
        None => {
            error("action", "is required");
            String::new()
        }
        Some(Some(a)) if catalog::is_operational(&a) => {
            error("action", "is an operational event: only Weir emits it");
            String::new()
        }
        Some(Some(a)) if catalog::is_known(&a) => a,
        Some(Some(_)) => {
            error("action", "is not an event in the catalogue (GET /api/v2/webhooks/events)");
            String::new()
        }
        Some(None) => {
            error("action", "must be a string");
            String::new()
        }
    };
    let created_at = match fields.remove("created_at") {
        None => crate::time::now_rfc3339(),
        Some(raw) => match text(raw).as_deref().and_then(crate::time::parse_rfc3339) {
            // A far-future time would make this event the newest snapshot of its record for ever.
            Some(ms) if ms > crate::time::now_millis() + MAX_FUTURE_MS => {
                error("created_at", "must not be more than a day in the future");
                String::new()
            }
            Some(ms) => crate::time::format_millis(ms),
            None => {
                error("created_at", "must be an RFC 3339 UTC timestamp such as 2026-11-22T11:00:38.123Z");
                String::new()
            }
        },
    };
    let (creator_id, creator_name) = match fields.remove("creator") {
        None => {
            error("creator", "is required");
            None
        }
        Some(raw) => object_fields(raw, "creator", &["id", "name"], &[], &mut errors),
    }
    .map_or((String::new(), String::new()), |(m, _)| (m[0].clone(), m[1].clone()));
    if is_reserved_creator(&creator_id) {
        errors.push(FieldError::new("creator.id", "must not be `weir`: Weir's own events carry that creator"));
    }
    let mut deleted = false;
    let (subject_type, subject_id) = match fields.remove("subject") {
        None => {
            errors.push(FieldError::new("subject", "is required"));
            None
        }
        Some(raw) => object_fields(raw, "subject", &["type", "id"], &["deleted"], &mut errors),
    }
    .map_or((String::new(), String::new()), |(m, optional)| {
        match optional.get("deleted").map(|raw| raw.get()) {
            None | Some("false") => {}
            Some("true") => deleted = true,
            Some(_) => errors.push(FieldError::new("subject.deleted", "must be true or false")),
        }
        (m[0].clone(), m[1].clone())
    });

    // What is left must be exactly one snapshot key; with several, the one matching the
    // subject is kept and the others are reported.
    let mut candidates: Vec<(&'static str, &RawValue)> = Vec::new();
    for (name, raw) in fields {
        match catalog::SNAPSHOT_KEYS.iter().find(|k| **k == name) {
            Some(key) => candidates.push((key, raw)),
            None => errors.push(FieldError::new(name, "unknown field")),
        }
    }
    let expected = catalog::snapshot_key_of_type(&subject_type);
    let chosen = candidates.iter().position(|(k, _)| Some(*k) == expected).unwrap_or(0);
    for (i, (key, _)) in candidates.iter().enumerate() {
        if i != chosen {
            errors.push(FieldError::new(*key, "an event carries exactly one snapshot"));
        }
    }
    let Some(&(snapshot_key, snapshot)) = candidates.get(chosen) else {
        if errors.is_empty() {
            errors.push(FieldError::new(
                "snapshot",
                "one snapshot key (named after the subject, e.g. work_order) is required",
            ));
        }
        return Err(Invalid(errors));
    };
    if !snapshot.get().trim_start().starts_with('{') {
        errors.push(FieldError::new(snapshot_key, "must be an object"));
    } else if let Err(why) = rules::readable_json(snapshot.get(), rules::MAX_SNAPSHOT_DEPTH) {
        errors.push(FieldError::new(snapshot_key, why));
    } else if !subject_type.is_empty() && expected != Some(snapshot_key) {
        errors.push(FieldError::new(
            snapshot_key,
            format!(
                "does not match the subject type `{subject_type}` (expected `{}`)",
                catalog::subject_type(snapshot_key)
            ),
        ));
    } else if !action.is_empty()
        && let Some(wanted) = catalog::snapshot_key_for(&action)
        && wanted != snapshot_key
    {
        errors.push(FieldError::new(snapshot_key, format!("`{action}` carries a `{wanted}` snapshot")));
    }
    if !errors.is_empty() {
        return Err(Invalid(errors));
    }
    Ok(Event {
        id,
        fresh_id,
        action,
        created_at,
        creator_id,
        creator_name,
        subject_type,
        subject_id,
        deleted,
        snapshot_key,
        snapshot,
        trace: None,
    })
}

/// Reads an object with required string fields `required` (each an id or short text:
/// [`rules::short_text`]) and optional fields `optional` (checked by the caller, given
/// back as raw JSON); other fields are refused. Returns the required values in order, and
/// the optional ones present. Each error names the field at fault and what is wrong.
fn object_fields<'a>(
    raw: &'a RawValue,
    name: &str,
    required: &[&str],
    optional: &[&str],
    errors: &mut Vec<FieldError>,
) -> Option<(Vec<String>, BTreeMap<String, &'a RawValue>)> {
    if !raw.get().trim_start().starts_with('{') {
        errors.push(FieldError::new(name, "must be an object"));
        return None;
    }
    let mut map: BTreeMap<String, &RawValue> = match serde_json::from_str(raw.get()) {
        Ok(map) => map,
        Err(_) => {
            let why = rules::readable_json(raw.get(), 1).err().unwrap_or_else(|| "must be an object".into());
            errors.push(FieldError::new(name, why));
            return None;
        }
    };
    let mut values = Vec::new();
    let before = errors.len();
    for field in required {
        let at = format!("{name}.{field}");
        let Some(value) = map.remove(*field) else {
            errors.push(FieldError::new(at, "is required"));
            continue;
        };
        match serde_json::from_str::<String>(value.get()) {
            Ok(text) => match rules::short_text(&text) {
                Ok(()) => values.push(text),
                Err(why) => errors.push(FieldError::new(at, why)),
            },
            Err(_) if value.get().starts_with('"') => {
                let why = rules::readable_json(value.get(), 0).err().unwrap_or_else(|| "must be a string".into());
                errors.push(FieldError::new(at, why));
            }
            Err(_) => errors.push(FieldError::new(at, "must be a string")),
        }
    }
    let mut present = BTreeMap::new();
    for (key, value) in map {
        if optional.contains(&key.as_str()) {
            present.insert(key, value);
        } else {
            errors.push(FieldError::new(format!("{name}.{key}"), "unknown field"));
        }
    }
    (errors.len() == before).then_some((values, present))
}

#[cfg(test)]
mod tests;
