//! Deliveries: how the API and the settings pages show one (the view of its row, with the
//! request of its latest attempt rebuilt), finding them for an organisation, and retrying
//! them by hand (one, or every failed one of a webhook since a time).

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::Invalid;
use super::fields::Fields;
use crate::ids::{self, Kind};
use crate::sign;
use crate::store::StoreError;
use crate::store::queue::attempts::{attempt_at, attempt_object};
use crate::store::queue::listing::{Cursor, Index, Reach};
use crate::store::queue::requeue::RetryRefused;
use crate::store::queue::row::DeliveryRow;
use crate::telemetry::Telemetry;
use crate::trace::TraceContext;

/// Most deliveries one bulk retry re-queues.
pub(crate) const MAX_BULK_RETRY: usize = 10_000;

/// Why a retry did not happen.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RetryError {
    #[error("delivery not found")]
    NotFound,
    #[error("webhook not found")]
    WebhookNotFound,
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error("the webhook of this delivery was deleted")]
    WebhookGone,
    #[error("the webhook is inactive")]
    Inactive,
    #[error("a plugin filtered this delivery")]
    Filtered,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for RetryError {
    fn from(invalid: Invalid) -> RetryError {
        RetryError::Invalid(invalid)
    }
}

/// An attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Attempt {
    pub at: String,
    /// `null` when no response came (the error says why).
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
    /// The first 1 KiB of the response body.
    pub response_body: Option<String>,
}

/// What one attached plugin did to a delivery.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PluginRun {
    pub plugin_id: String,
    /// `deliver`, `drop` or `error`.
    pub outcome: String,
    pub logs: Vec<String>,
    pub error: Option<String>,
}

/// The request of a delivery: the exact headers of its latest attempt and the body.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = DeliveryRequest)]
pub(crate) struct Request {
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub headers: Box<RawValue>,
    pub body: String,
}

/// A delivery record as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Delivery {
    pub id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub action: String,
    pub status: Status,
    #[schema(value_type = Vec<Attempt>)]
    pub attempts: Vec<Value>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub request: Request,
    #[schema(value_type = Vec<PluginRun>)]
    pub plugins: Box<RawValue>,
    /// Why the delivery was taken out of the queue without an outcome (a record that could
    /// not be read); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Delivery {
    /// The view of a delivery's row, with the request of its latest attempt rebuilt: the
    /// headers follow from the row (its signatures, the plugins' headers) and the event.
    pub(crate) fn of(row: DeliveryRow, telemetry: &Telemetry) -> Delivery {
        let id = row.id.as_str();
        let created_ms = ids::millis_of(Kind::Delivery, id).unwrap_or(0);
        let created_at = crate::time::format_millis(created_ms);
        let mut error = row.dead_letter.clone();
        let status = row.status.unwrap_or_else(|| {
            // A damaged row shows as failed (the workers dead-letter it when they meet it).
            error.get_or_insert_with(|| "the delivery record cannot be read: unknown status".into());
            Status::Failed
        });
        let next_attempt_at = match status {
            Status::Pending => row.due_ms.map(crate::time::format_millis).or_else(|| Some(created_at.clone())),
            _ => None,
        };
        let attempts: Vec<Value> = row.attempts.iter().map(|a| attempt_object(created_ms, a)).collect();
        let headers = request_headers(&row, created_ms, telemetry);
        let body = match &row.body {
            Some(body) => body.clone(),
            None => row.event.as_ref().map(|e| e.envelope.clone()).unwrap_or_default(),
        };
        let updated = updated_ms(row.updated_ms, created_ms, &row.attempts);
        Delivery {
            webhook_id: row.webhook_id.clone(),
            event_id: row.event_id.clone(),
            action: row.action.clone(),
            status,
            attempts,
            next_attempt_at,
            updated_at: updated.map(crate::time::format_millis).unwrap_or_else(|| created_at.clone()),
            created_at,
            request: Request { headers: raw(id, Some(headers), "{}"), body },
            plugins: raw(id, row.plugins.clone(), "[]"),
            error,
            id: row.id,
        }
    }
}

/// The headers of a delivery's latest attempt as they were sent, as a JSON object; `{}`
/// before its first attempt.
fn request_headers(row: &DeliveryRow, created_ms: u64, telemetry: &Telemetry) -> String {
    let signatures = row.signatures.as_deref().filter(|_| row.latest > 0).and_then(sign::Signatures::decode);
    let Some(signatures) = signatures else { return "{}".to_owned() };
    let pairs = |text: Option<&str>| -> Vec<(String, String)> {
        text.and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default()
    };
    // The webhook's own headers by name: their values are its secrets, never kept with a
    // delivery (rows written before that rule kept them: they are blanked here).
    let webhook: Vec<(String, String)> =
        pairs(row.webhook_headers.as_deref()).into_iter().map(|(name, _)| (name, String::new())).collect();
    let plugins = pairs(row.headers.as_deref());
    // The latest attempt was signed when it started.
    let signed_at = row.attempts.last().and_then(|a| attempt_at(created_ms, a)).unwrap_or(0) / 1000;
    let event_created_at = row.event.as_ref().map(|e| e.created_at.as_str()).unwrap_or_default();
    let attempt = sign::Attempt { delivery_id: &row.id, number: row.latest, event_created_at, signed_at };
    let trace = match &row.event {
        Some(event) => telemetry.passed_on(event.trace_of(&row.event_id), event.trace.is_some()),
        None => telemetry.passed_on(TraceContext::for_event(&row.event_id), false),
    };
    let pairs = attempt_headers(attempt, &signatures, &webhook, &plugins, &trace);
    let map: Map<String, Value> = pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
    Value::Object(map).to_string()
}

/// The headers of an attempt, as sent and as its delivery record shows them: Weir's with
/// the signatures, the webhook's own `headers` (but those a plugin set: the plugin's win),
/// the plugins', and the trace context (a parent id of the attempt's own).
pub(crate) fn attempt_headers(
    attempt: sign::Attempt<'_>,
    signatures: &sign::Signatures,
    webhook: &[(String, String)],
    plugins: &[(String, String)],
    trace: &TraceContext,
) -> Vec<(String, String)> {
    let mut extra: Vec<(String, String)> = webhook
        .iter()
        .filter(|(name, _)| !plugins.iter().any(|(set, _)| set.eq_ignore_ascii_case(name)))
        .cloned()
        .collect();
    extra.extend(plugins.iter().cloned());
    let mut headers = sign::request_headers(attempt, signatures, &extra);
    headers.extend(trace.headers(attempt.delivery_id, attempt.number));
    headers
}

/// A JSON field of a row; one that cannot be parsed reads as `default` (and is logged), so
/// that one damaged row cannot make a listing fail.
fn raw(id: &str, text: Option<String>, default: &'static str) -> Box<RawValue> {
    let text = text.filter(|t| !t.is_empty()).unwrap_or_else(|| default.to_owned());
    RawValue::from_string(text).unwrap_or_else(|e| {
        tracing::warn!(delivery_id = %id, error = %e, "a delivery row has a field that is not JSON");
        RawValue::from_string(default.to_owned()).unwrap_or_default()
    })
}

/// When a delivery last changed: its latest attempt's end, or `updated` when something
/// later changed it without an attempt (a manual retry, its webhook going away).
fn updated_ms(updated: Option<u64>, created_ms: u64, attempts: &[Value]) -> Option<u64> {
    let attempted =
        attempts.last().and_then(|a| Some(attempt_at(created_ms, a)? + a.get(2).and_then(Value::as_u64).unwrap_or(0)));
    updated.max(attempted)
}

/// The first day whose delivery indexes may still list deliveries.
fn oldest_day(deliveries: &Deliveries) -> u32 {
    let retention = deliveries.delivery_retention.as_millis() as u64;
    crate::store::core::keys::day_of(crate::time::now_millis().saturating_sub(retention)).saturating_sub(1)
}

pub(crate) use crate::store::queue::listing::Filter;
pub(crate) use crate::store::queue::requeue::Retried;
pub(crate) use crate::store::queue::status::Status;
pub(crate) use crate::store::queue::tally::Hourly;

/// Deliveries, for the surfaces: list, read, retry.
#[derive(Debug, Clone)]
pub(crate) struct Deliveries {
    store: crate::store::Store,
    moved: super::moved::Moved,
    telemetry: std::sync::Arc<crate::telemetry::Telemetry>,
    arrivals: std::sync::Arc<crate::shared::Arrivals>,
    delivery_retention: std::time::Duration,
}

impl Deliveries {
    pub(crate) fn new(
        moved: &super::moved::Moved,
        telemetry: &std::sync::Arc<crate::telemetry::Telemetry>,
        arrivals: &std::sync::Arc<crate::shared::Arrivals>,
        (store, delivery_retention): (&crate::store::Store, std::time::Duration),
    ) -> Deliveries {
        Deliveries {
            store: store.clone(),
            moved: moved.clone(),
            telemetry: telemetry.clone(),
            arrivals: arrivals.clone(),
            delivery_retention,
        }
    }
}

impl Deliveries {
    /// How many deliveries of each of `webhook_ids` (the organisation's) an attempt ended
    /// `succeeded` and `failed` in each of the last 24 hours (the pages' charts).
    pub(crate) async fn hourly(&self, org_id: &str, webhook_ids: &[&str]) -> Result<Vec<Hourly>, StoreError> {
        self.store.deliveries().hourly(org_id, webhook_ids, crate::time::now_millis()).await
    }

    /// Whether `cursor` is one a listing of this data set gave out.
    pub(crate) fn valid_cursor(&self, cursor: &str) -> bool {
        valid_cursor(self, cursor)
    }

    /// A page of the organisation's deliveries, newest first (see [`list`]).
    pub(crate) async fn list(
        &self,
        org_id: &str,
        filter: Filter<'_>,
        cursor: Option<&str>,
        limit: usize,
        scan: usize,
    ) -> Result<(Vec<Delivery>, Option<String>), StoreError> {
        list(self, org_id, filter, cursor, limit, scan).await
    }

    /// The organisation's delivery, or `NotFound`.
    pub(crate) async fn find(&self, org_id: &str, id: &str) -> Result<Delivery, RetryError> {
        find(self, org_id, id).await
    }

    /// One more attempt of a delivery (see [`retry`]).
    pub(crate) async fn retry(&self, org_id: &str, id: &str) -> Result<(Delivery, Retried), RetryError> {
        retry(self, org_id, id).await
    }

    /// One more attempt of each failed delivery of a webhook since a time (see
    /// [`retry_failed`]).
    pub(crate) async fn retry_failed(
        &self,
        org_id: &str,
        webhook_id: &str,
        body: Map<String, Value>,
    ) -> Result<usize, RetryError> {
        retry_failed(self, org_id, webhook_id, body).await
    }
}

/// Whether `cursor` is one a listing of this data set gave out.
fn valid_cursor(deliveries: &Deliveries, cursor: &str) -> bool {
    Cursor::parse(cursor, deliveries.store.keys().partition_count(), crate::store::queue::listing::newest_day())
        .is_some()
}

/// A page of the organisation's deliveries, newest first (of one webhook when `filter`
/// names one: its own index while it exists, the organisation's once it was deleted, an
/// empty last page when it was never the organisation's), from `cursor`.
async fn list(
    deliveries: &Deliveries,
    org_id: &str,
    filter: Filter<'_>,
    cursor: Option<&str>,
    limit: usize,
    scan: usize,
) -> Result<(Vec<Delivery>, Option<String>), StoreError> {
    let index = match filter.webhook {
        Some(w) if deliveries.store.webhooks().webhook_exists(org_id, w).await? => Index::Webhook(w),
        // Deleted: its own index went with it; its deliveries are found in the organisation's.
        Some(w) if deliveries.store.webhooks().webhook_was_deleted(org_id, w).await? => Index::Org(org_id),
        // Never the organisation's (another's, or none): nothing to list.
        Some(_) => return Ok((Vec::new(), None)),
        None => Index::Org(org_id),
    };
    let reads = deliveries.moved.reads();
    let reach = Reach { limit, scan, oldest_day: oldest_day(deliveries), moved: reads.moved() };
    let (ids, next) = deliveries.store.deliveries().list_deliveries(index, filter, cursor, reach).await?;
    let deliveries = reads
        .rows(&ids)
        .await?
        .into_iter()
        .flatten()
        .filter(|d| d.org_id == org_id)
        .map(|d| Delivery::of(d, &deliveries.telemetry))
        .collect();
    Ok((deliveries, next))
}

/// The organisation's delivery, or `NotFound`.
pub(crate) async fn find(deliveries: &Deliveries, org_id: &str, id: &str) -> Result<Delivery, RetryError> {
    if !ids::is_valid(Kind::Delivery, id) {
        return Err(RetryError::NotFound);
    }
    deliveries
        .moved
        .reads()
        .row(org_id, id)
        .await?
        .map(|d| Delivery::of(d, &deliveries.telemetry))
        .ok_or(RetryError::NotFound)
}

/// One more attempt of a delivery, same body, signed with the webhook's current secret: the
/// delivery, and whether this call queued the attempt ([`Retried::Queued`]) or joined one
/// already queued or in flight ([`Retried::Merged`]: a retry never queues a second attempt
/// of a delivery beside one that has not gone out).
async fn retry(deliveries: &Deliveries, org_id: &str, id: &str) -> Result<(Delivery, Retried), RetryError> {
    let delivery = find(deliveries, org_id, id).await?;
    match deliveries.store.webhooks().get_webhook(org_id, &delivery.webhook_id).await? {
        None => return Err(RetryError::WebhookGone),
        Some(w) if !w.active => return Err(RetryError::Inactive),
        Some(_) => {}
    }
    // A delivery that moved to history is live in Redis again.
    deliveries.moved.reads().revive(std::slice::from_ref(&delivery.id)).await?;
    let replies = deliveries
        .store
        .queue()
        .retry_deliveries(org_id, std::slice::from_ref(&delivery.id), false, deliveries.delivery_retention)
        .await?;
    let retried = match replies.into_iter().next() {
        Some(Ok(retried)) => retried,
        Some(Err(RetryRefused::Filtered)) => return Err(RetryError::Filtered),
        Some(Err(RetryRefused::WebhookGone | RetryRefused::Inactive)) => return Err(RetryError::WebhookGone),
        Some(Err(_)) | None => return Err(RetryError::NotFound),
    };
    if let Some(p) = deliveries.store.keys().partition_of_delivery(&delivery.id) {
        deliveries.arrivals.arrived(p);
    }
    Ok((find(deliveries, org_id, id).await?, retried))
}

/// One more attempt of each failed delivery of a webhook created at or after `since`
/// (`{"since": ts}`); how many were queued.
async fn retry_failed(
    deliveries: &Deliveries,
    org_id: &str,
    webhook_id: &str,
    body: Map<String, Value>,
) -> Result<usize, RetryError> {
    if !ids::is_valid(Kind::Webhook, webhook_id) {
        return Err(RetryError::WebhookNotFound);
    }
    let webhook =
        deliveries.store.webhooks().get_webhook(org_id, webhook_id).await?.ok_or(RetryError::WebhookNotFound)?;
    let mut fields = Fields::new(body);
    let since = fields.required_string("since");
    let since_ms = since.as_deref().and_then(crate::time::parse_rfc3339);
    if since.is_some() && since_ms.is_none() {
        fields.error("since", "must be an RFC 3339 UTC timestamp such as 2026-11-22T11:00:38.123Z");
    }
    fields.finish()?;
    let since_ms = since_ms.ok_or_else(|| Invalid::field("since", "is required"))?;
    if !webhook.active {
        return Err(RetryError::Inactive);
    }
    let lower = ids::lower_bound(Kind::Delivery, since_ms);
    let filter = Filter { status: Some(Status::Failed), ..Filter::default() };
    let mut candidates = Vec::new();
    let mut cursor: Option<String> = None;
    let oldest = crate::store::core::keys::day_of(since_ms).max(oldest_day(deliveries));
    let reads = deliveries.moved.reads();
    let reach = Reach { limit: 500, scan: 5000, oldest_day: oldest, moved: reads.moved() };
    loop {
        let (page, next) = deliveries
            .store
            .deliveries()
            .list_deliveries(Index::Webhook(webhook_id), filter, cursor.as_deref(), reach)
            .await?;
        candidates.extend(page.into_iter().filter(|d| *d >= lower));
        match next {
            Some(c) if candidates.len() < MAX_BULK_RETRY => cursor = Some(c),
            _ => break,
        }
    }
    candidates.truncate(MAX_BULK_RETRY);
    // Those that moved to history are live in Redis again.
    for chunk in candidates.chunks(500) {
        reads.revive(chunk).await?;
    }
    let replies =
        deliveries.store.queue().retry_deliveries(org_id, &candidates, true, deliveries.delivery_retention).await?;
    let queued = replies.iter().filter(|r| matches!(r, Ok(Retried::Queued))).count();
    if queued > 0 {
        for p in deliveries.store.keys().partitions() {
            deliveries.arrivals.arrived(p);
        }
    }
    Ok(queued)
}
