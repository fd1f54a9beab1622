//! Deliveries: finding them for an organisation (shown as `delivery_view` makes them), and
//! retrying them by hand (one, or every failed one of a webhook since a time).

use serde_json::{Map, Value};

use super::Invalid;
pub(crate) use super::delivery_view::{Delivery, attempt_headers};
use super::fields::Fields;
use crate::ids::{self, Kind};
use crate::store::Keys;
use crate::store::StoreError;
use crate::store::queue::cursor::Cursor;
use crate::store::queue::listing::Listings;
use crate::store::queue::listing::{Index, Reach};
use crate::store::queue::requeue::{Requeue, RetryRefused};
use crate::store::queue::tally::Tallies;
use crate::store::tenants::webhooks::WebhookRecords;

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
    doors: DeliveryDoors,
    moved: super::moved::Moved,
    telemetry: std::sync::Arc<crate::telemetry::Telemetry>,
    arrivals: std::sync::Arc<crate::shared::Arrivals>,
    delivery_retention: std::time::Duration,
}

/// The store's concerns the deliveries' door reads and writes: listings and hourly tallies,
/// the webhooks they belong to, manual retries.
#[derive(Debug, Clone)]
pub(crate) struct DeliveryDoors {
    pub keys: Keys,
    pub listings: Listings,
    pub tallies: Tallies,
    pub webhooks: WebhookRecords,
    pub requeue: Requeue,
}

impl Deliveries {
    pub(crate) fn new(
        doors: DeliveryDoors,
        moved: &super::moved::Moved,
        (telemetry, arrivals): (&std::sync::Arc<crate::telemetry::Telemetry>, &std::sync::Arc<crate::shared::Arrivals>),
        delivery_retention: std::time::Duration,
    ) -> Deliveries {
        Deliveries {
            doors,
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
        self.doors.tallies.hourly(org_id, webhook_ids, crate::time::now_millis()).await
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
    Cursor::parse(cursor, deliveries.doors.keys.partition_count(), crate::store::queue::listing::newest_day()).is_some()
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
        Some(w) if deliveries.doors.webhooks.webhook_exists(org_id, w).await? => Index::Webhook(w),
        // Deleted: its own index went with it; its deliveries are found in the organisation's.
        Some(w) if deliveries.doors.webhooks.webhook_was_deleted(org_id, w).await? => Index::Org(org_id),
        // Never the organisation's (another's, or none): nothing to list.
        Some(_) => return Ok((Vec::new(), None)),
        None => Index::Org(org_id),
    };
    let reads = deliveries.moved.reads();
    let reach = Reach { limit, scan, oldest_day: oldest_day(deliveries), moved: reads.moved() };
    let (ids, next) = deliveries.doors.listings.list_deliveries(index, filter, cursor, reach).await?;
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
    match deliveries.doors.webhooks.get_webhook(org_id, &delivery.webhook_id).await? {
        None => return Err(RetryError::WebhookGone),
        Some(w) if !w.active => return Err(RetryError::Inactive),
        Some(_) => {}
    }
    // A delivery that moved to history is live in Redis again.
    deliveries.moved.reads().revive(std::slice::from_ref(&delivery.id)).await?;
    let replies = deliveries
        .doors
        .requeue
        .retry_deliveries(org_id, std::slice::from_ref(&delivery.id), false, deliveries.delivery_retention)
        .await?;
    let retried = match replies.into_iter().next() {
        Some(Ok(retried)) => retried,
        Some(Err(RetryRefused::Filtered)) => return Err(RetryError::Filtered),
        Some(Err(RetryRefused::WebhookGone | RetryRefused::Inactive)) => return Err(RetryError::WebhookGone),
        Some(Err(_)) | None => return Err(RetryError::NotFound),
    };
    if let Some(p) = deliveries.doors.keys.partition_of_delivery(&delivery.id) {
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
        deliveries.doors.webhooks.get_webhook(org_id, webhook_id).await?.ok_or(RetryError::WebhookNotFound)?;
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
            .doors
            .listings
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
        deliveries.doors.requeue.retry_deliveries(org_id, &candidates, true, deliveries.delivery_retention).await?;
    let queued = replies.iter().filter(|r| matches!(r, Ok(Retried::Queued))).count();
    if queued > 0 {
        for p in deliveries.doors.keys.partitions() {
            deliveries.arrivals.arrived(p);
        }
    }
    Ok(queued)
}
