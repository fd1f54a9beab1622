//! `webhook_deliveries`: inspect and retry deliveries (service document §1, §4; contract §2).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::{ApiError, ApiResult, FieldError};
use super::extract::{Admin, JsonObject, Query};
use super::fields::Fields;
use super::webhooks::find;
use crate::App;
use crate::catalog;
use crate::ids::{self, Kind};
use crate::queue::RetryRefused;
use crate::store::deliveries::Status;

/// Most index entries one list request looks at before answering with a cursor.
const SCAN_LIMIT: usize = 2000;
/// Most deliveries one bulk retry re-queues.
const MAX_BULK_RETRY: usize = 10_000;

/// `GET /api/v2/webhook_deliveries?webhook_id=&status=&action=&limit=&cursor=`
pub async fn list(State(app): State<Arc<App>>, Admin(caller): Admin, query: Query) -> ApiResult<Response> {
    query.only(&["webhook_id", "status", "action", "limit", "cursor"])?;
    let page = query.page(|c| ids::is_valid(Kind::Delivery, c))?;
    let mut errors = Vec::new();
    let status = query.get("status").filter(|s| !s.is_empty());
    if let Some(s) = status
        && Status::parse(s).is_none()
    {
        errors.push(FieldError::new("status", "must be pending, succeeded, failed, filtered or cancelled"));
    }
    let action = query.get("action").filter(|s| !s.is_empty());
    if let Some(a) = action
        && !catalog::is_known(a)
    {
        errors.push(FieldError::new("action", "is not an event in the catalogue"));
    }
    let webhook = query.get("webhook_id").filter(|s| !s.is_empty());
    if let Some(w) = webhook
        && !ids::is_valid(Kind::Webhook, w)
    {
        errors.push(FieldError::new("webhook_id", "is not a webhook id"));
    }
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    // A live webhook of the organisation has its own index; otherwise (deleted webhook, or
    // no filter) the organisation's index is scanned.
    let index = match webhook {
        Some(w) if app.store.webhook_exists(&caller.org_id, w).await? => app.store.key(&["wh", w, "dlvs"]),
        _ => app.store.key(&["org", &caller.org_id, "dlvs"]),
    };
    let keep = |s: &str, a: &str, w: &str| {
        status.is_none_or(|want| want == s)
            && action.is_none_or(|want| want == a)
            && webhook.is_none_or(|want| want == w)
    };
    let (ids, next) = app.store.scan_deliveries(&index, page.cursor.as_deref(), page.limit, SCAN_LIMIT, keep).await?;
    let deliveries: Vec<_> =
        app.store.get_deliveries(&ids).await?.into_iter().flatten().filter(|d| d.org_id == caller.org_id).collect();
    Ok(axum::Json(json!({ "data": deliveries, "next_cursor": next })).into_response())
}

/// `GET /api/v2/webhook_deliveries/{id}`
pub async fn get(State(app): State<Arc<App>>, Admin(caller): Admin, Path(id): Path<String>) -> ApiResult<Response> {
    let delivery = find_delivery(&app, &caller.org_id, &id).await?;
    Ok(axum::Json(delivery).into_response())
}

async fn find_delivery(app: &App, org_id: &str, id: &str) -> ApiResult<crate::store::deliveries::Delivery> {
    if !ids::is_valid(Kind::Delivery, id) {
        return Err(ApiError::not_found("delivery"));
    }
    app.store.get_delivery(org_id, id).await?.ok_or_else(|| ApiError::not_found("delivery"))
}

fn refused(reason: RetryRefused) -> ApiError {
    match reason {
        RetryRefused::NotFound => ApiError::not_found("delivery"),
        RetryRefused::WebhookGone => ApiError::conflict("the webhook of this delivery was deleted"),
        RetryRefused::Inactive => {
            ApiError::conflict("the webhook is inactive; reactivate it first (PATCH active: true)")
        }
        RetryRefused::Filtered => ApiError::conflict("a plugin filtered this delivery: there is no request to send"),
    }
}

/// `POST /api/v2/webhook_deliveries/{id}/retry`: one more attempt, same body, signed with
/// the webhook's current secret.
pub async fn retry(State(app): State<Arc<App>>, Admin(caller): Admin, Path(id): Path<String>) -> ApiResult<Response> {
    find_delivery(&app, &caller.org_id, &id).await?;
    let queue = &app.queue;
    let (queued, refusal) =
        queue.retry(&caller.org_id, std::slice::from_ref(&id), false, app.config.delivery_retention).await?;
    if queued == 0 {
        return Err(refused(refusal.unwrap_or(RetryRefused::NotFound)));
    }
    let delivery = find_delivery(&app, &caller.org_id, &id).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(delivery)).into_response())
}

/// `POST /api/v2/webhooks/{id}/retry_failed` `{"since": ts}`: re-queues the webhook's
/// failed deliveries created at or after `since`, one attempt each.
pub async fn retry_failed(
    State(app): State<Arc<App>>,
    Admin(caller): Admin,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let webhook = find(&app, &caller.org_id, &id).await?;
    let mut fields = Fields::new(body);
    let since = fields.required_string("since");
    let since_ms = since.as_deref().and_then(crate::time::parse_rfc3339);
    if since.is_some() && since_ms.is_none() {
        fields.error("since", "must be an RFC 3339 UTC timestamp such as 2026-11-22T11:00:38.123Z");
    }
    fields.finish()?;
    let since_ms = since_ms.ok_or_else(ApiError::internal)?;
    if !webhook.active {
        return Err(ApiError::conflict("the webhook is inactive; reactivate it first (PATCH active: true)"));
    }
    let index = app.store.key(&["wh", &id, "dlvs"]);
    let lower = ids::lower_bound(Kind::Delivery, since_ms);
    let failed = |s: &str, _: &str, _: &str| s == "failed";
    let mut candidates = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let (page, next) = app.store.scan_deliveries(&index, cursor.as_deref(), 500, 5000, failed).await?;
        let mut reached_older = false;
        for delivery in page {
            if delivery < lower {
                reached_older = true;
                break;
            }
            candidates.push(delivery);
        }
        match next {
            Some(c) if !reached_older && c >= lower && candidates.len() < MAX_BULK_RETRY => cursor = Some(c),
            _ => break,
        }
    }
    candidates.truncate(MAX_BULK_RETRY);
    let queue = &app.queue;
    let (count, _) = queue.retry(&caller.org_id, &candidates, true, app.config.delivery_retention).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(json!({ "count": count }))).into_response())
}
