//! `webhook_deliveries`: inspect and retry deliveries (service document §1, §4; contract §2).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, ApiResult, FieldError};
use super::extract::{Admin, Id, JsonObject, QueryRules};
use super::schema::{Count, Page};
use crate::catalog;
use crate::domain::deliveries::{Deliveries, Filter, Retried, Status};
use crate::ids::{self, Kind};
use crate::web::Query;

/// Most index entries one list request looks at before answering with a cursor.
const SCAN_LIMIT: usize = 2000;

/// `GET /api/v2/webhook_deliveries?webhook_id=&status=&action=&limit=&cursor=`
#[utoipa::path(get, path = "/api/v2/webhook_deliveries", tag = "deliveries",
    params(
        ("webhook_id" = Option<String>, Query), ("status" = Option<Status>, Query), ("action" = Option<String>, Query),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100), ("cursor" = Option<String>, Query),
    ),
    responses((status = 200, description = "A page of deliveries, newest first", body = crate::api::schema::Page<crate::domain::deliveries::Delivery>)))]
pub(crate) async fn list(
    State(deliveries): State<Arc<Deliveries>>,
    Admin(caller): Admin,
    query: Query,
) -> ApiResult<Response> {
    query.only(&["webhook_id", "status", "action", "limit", "cursor"])?;
    let page = query.page(|c| deliveries.valid_cursor(c))?;
    let mut errors = Vec::new();
    let status = query.get("status");
    let status_filter = status.and_then(Status::parse);
    if status.is_some() && status_filter.is_none() {
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
    let filter = Filter { status: status_filter, action, webhook };
    let (listed, next) =
        deliveries.list(&caller.org_id, filter, page.cursor.as_deref(), page.limit, SCAN_LIMIT).await?;
    Ok(axum::Json(Page { data: listed, next_cursor: next }).into_response())
}

/// `GET /api/v2/webhook_deliveries/{id}`
#[utoipa::path(get, path = "/api/v2/webhook_deliveries/{id}", tag = "deliveries",
    params(("id" = String, Path)),
    responses((status = 200, description = "The delivery", body = crate::domain::deliveries::Delivery)))]
pub(crate) async fn get(
    State(deliveries): State<Arc<Deliveries>>,
    Admin(caller): Admin,
    Id(id): Id,
) -> ApiResult<Response> {
    Ok(axum::Json(deliveries.find(&caller.org_id, &id).await?).into_response())
}

/// `POST /api/v2/webhook_deliveries/{id}/retry`: one more attempt, same body, signed with
/// the webhook's current secret.
#[utoipa::path(post, path = "/api/v2/webhook_deliveries/{id}/retry", tag = "deliveries",
    params(("id" = String, Path)),
    responses(
        (status = 202, description = "A new attempt is queued", body = crate::domain::deliveries::Delivery),
        (status = 200, description = "An attempt of this delivery was already queued or in flight: this retry joined it, and no second attempt is queued", body = crate::domain::deliveries::Delivery),
        (status = 409, description = "The webhook is inactive, or the delivery cannot be retried", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn retry(
    State(deliveries): State<Arc<Deliveries>>,
    Admin(caller): Admin,
    Id(id): Id,
) -> ApiResult<Response> {
    let (delivery, retried) = deliveries.retry(&caller.org_id, &id).await?;
    let status = match retried {
        Retried::Queued => StatusCode::ACCEPTED,
        // Nothing new was accepted: the attempt already queued (or in flight) stands.
        Retried::Merged => StatusCode::OK,
    };
    Ok((status, axum::Json(delivery)).into_response())
}

/// `POST /api/v2/webhooks/{id}/retry_failed` `{"since": ts}`: re-queues the webhook's
/// failed deliveries created at or after `since`, one attempt each.
#[utoipa::path(post, path = "/api/v2/webhooks/{id}/retry_failed", tag = "deliveries",
    params(("id" = String, Path)),
    request_body = crate::api::schema::RetryFailedRequest,
    responses(
        (status = 202, description = "The failed deliveries re-queued", body = crate::api::schema::Count),
        (status = 409, description = "The webhook is inactive", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn retry_failed(
    State(deliveries): State<Arc<Deliveries>>,
    Admin(caller): Admin,
    Id(id): Id,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let count = deliveries.retry_failed(&caller.org_id, &id, body).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(Count { count: count as u64 })).into_response())
}
