//! Deliveries: finding them for an organisation, and retrying them by hand (one, or every
//! failed one of a webhook since a time).

use serde_json::{Map, Value};

use super::Invalid;
use super::fields::Fields;
use crate::App;
use crate::ids::{self, Kind};
use crate::store::StoreError;
use crate::store::deliveries::{Cursor, Delivery, Filter, Index, Status};
use crate::store::queue::RetryRefused;

/// Most deliveries one bulk retry re-queues.
pub const MAX_BULK_RETRY: usize = 10_000;

/// Why a retry did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RetryError {
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

/// The first day whose delivery indexes may still list records.
fn oldest_day(app: &App) -> u32 {
    let retention = app.config.delivery_retention.as_millis() as u64;
    crate::store::keys::day_of(crate::time::now_millis().saturating_sub(retention)).saturating_sub(1)
}

/// Whether `cursor` is one a listing of this data set gave out.
pub fn valid_cursor(app: &App, cursor: &str) -> bool {
    Cursor::parse(cursor, app.store.keys().partition_count()).is_some()
}

/// A page of the organisation's deliveries, newest first (of one webhook when `filter`
/// names one: its own index while it exists, else the organisation's), from `cursor`.
pub async fn list(
    app: &App,
    org_id: &str,
    filter: Filter<'_>,
    cursor: Option<&str>,
    limit: usize,
    scan: usize,
) -> Result<(Vec<Delivery>, Option<String>), StoreError> {
    let index = match filter.webhook {
        Some(w) if app.store.webhook_exists(org_id, w).await? => Index::Webhook(w),
        _ => Index::Org(org_id),
    };
    let (ids, next) = app.store.list_deliveries(index, filter, cursor, limit, scan, oldest_day(app)).await?;
    let deliveries =
        app.store.get_deliveries(&ids).await?.into_iter().flatten().filter(|d| d.org_id == org_id).collect();
    Ok((deliveries, next))
}

/// The organisation's delivery, or `NotFound`.
pub async fn find(app: &App, org_id: &str, id: &str) -> Result<Delivery, RetryError> {
    if !ids::is_valid(Kind::Delivery, id) {
        return Err(RetryError::NotFound);
    }
    app.store.get_delivery(org_id, id).await?.ok_or(RetryError::NotFound)
}

/// One more attempt of a delivery, same body, signed with the webhook's current secret.
pub async fn retry(app: &App, org_id: &str, id: &str) -> Result<Delivery, RetryError> {
    let delivery = find(app, org_id, id).await?;
    match app.store.get_webhook(org_id, &delivery.webhook_id).await? {
        None => return Err(RetryError::WebhookGone),
        Some(w) if !w.active => return Err(RetryError::Inactive),
        Some(_) => {}
    }
    let replies = app
        .store
        .retry_deliveries(org_id, std::slice::from_ref(&delivery.id), false, app.config.delivery_retention)
        .await?;
    match replies.into_iter().next() {
        Some(Ok(())) => {}
        Some(Err(RetryRefused::Filtered)) => return Err(RetryError::Filtered),
        Some(Err(RetryRefused::WebhookGone | RetryRefused::Inactive)) => return Err(RetryError::WebhookGone),
        Some(Err(_)) | None => return Err(RetryError::NotFound),
    }
    if let Some(p) = app.store.keys().partition_of_delivery(&delivery.id) {
        app.work_arrived(p);
    }
    find(app, org_id, id).await
}

/// One more attempt of each failed delivery of a webhook created at or after `since`
/// (`{"since": ts}`); how many were queued.
pub async fn retry_failed(
    app: &App,
    org_id: &str,
    webhook_id: &str,
    body: Map<String, Value>,
) -> Result<usize, RetryError> {
    if !ids::is_valid(Kind::Webhook, webhook_id) {
        return Err(RetryError::WebhookNotFound);
    }
    let webhook = app.store.get_webhook(org_id, webhook_id).await?.ok_or(RetryError::WebhookNotFound)?;
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
    let oldest = crate::store::keys::day_of(since_ms).max(oldest_day(app));
    loop {
        let (page, next) =
            app.store.list_deliveries(Index::Webhook(webhook_id), filter, cursor.as_deref(), 500, 5000, oldest).await?;
        candidates.extend(page.into_iter().filter(|d| *d >= lower));
        match next {
            Some(c) if candidates.len() < MAX_BULK_RETRY => cursor = Some(c),
            _ => break,
        }
    }
    candidates.truncate(MAX_BULK_RETRY);
    let replies = app.store.retry_deliveries(org_id, &candidates, true, app.config.delivery_retention).await?;
    let queued = replies.iter().filter(|r| r.is_ok()).count();
    if queued > 0 {
        for p in app.store.keys().partitions() {
            app.work_arrived(p);
        }
    }
    Ok(queued)
}
