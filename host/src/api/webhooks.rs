//! `/api/v2/webhooks`: the subscriptions (service document §4, contract §2). The rules live
//! in `crate::domain::webhooks`; this file only translates requests and answers.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::ApiResult;
use super::extract::{Admin, Id, JsonObject, OptionalJsonObject, QueryRules};
use super::schema::Page;
use crate::catalog;
use crate::domain::views::WebhookView;
use crate::domain::webhooks::Webhooks;
use crate::ids::{self, Kind};
use crate::web::Query;

/// `GET /api/v2/webhooks/events`
#[utoipa::path(get, path = "/api/v2/webhooks/events", tag = "webhooks",
    responses((status = 200, description = "The catalogue of actions", body = crate::api::schema::Catalogue)))]
pub(crate) async fn events(_caller: Admin) -> Response {
    axum::Json(json!({ "categories": catalog::CATEGORIES })).into_response()
}

/// `POST /api/v2/webhooks`
#[utoipa::path(post, path = "/api/v2/webhooks", tag = "webhooks",
    request_body = crate::api::schema::WebhookCreateRequest,
    responses(
        (status = 201, description = "Created (`Location` names it)", body = WebhookView),
        (status = 409, description = "The organisation has the most webhooks allowed", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn create(
    State(webhooks): State<Arc<Webhooks>>,
    Admin(caller): Admin,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let webhook = webhooks.create(&caller.org_id, body).await?;
    let location = format!("/api/v2/webhooks/{}", webhook.id);
    let mut response = (StatusCode::CREATED, axum::Json(webhook)).into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// `GET /api/v2/webhooks`
#[utoipa::path(get, path = "/api/v2/webhooks", tag = "webhooks",
    params(("limit" = Option<u32>, Query, minimum = 1, maximum = 100), ("cursor" = Option<String>, Query)),
    responses((status = 200, description = "A page of webhooks, newest first", body = crate::api::schema::Page<WebhookView>)))]
pub(crate) async fn list(
    State(webhooks): State<Arc<Webhooks>>,
    Admin(caller): Admin,
    query: Query,
) -> ApiResult<Response> {
    query.only(&["limit", "cursor"])?;
    let page = query.page(|c| ids::is_valid(Kind::Webhook, c))?;
    let (listed, next) = webhooks.list(&caller.org_id, page.cursor.as_deref(), page.limit).await?;
    Ok(axum::Json(Page { data: listed, next_cursor: next }).into_response())
}

/// `GET /api/v2/webhooks/{id}`
#[utoipa::path(get, path = "/api/v2/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path)),
    responses((status = 200, description = "The webhook", body = WebhookView)))]
pub(crate) async fn get(
    State(webhooks): State<Arc<Webhooks>>,
    Admin(caller): Admin,
    Id(id): Id,
) -> ApiResult<Response> {
    Ok(axum::Json(webhooks.find(&caller.org_id, &id).await?).into_response())
}

/// `PATCH /api/v2/webhooks/{id}`
#[utoipa::path(patch, path = "/api/v2/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path)),
    request_body = crate::api::schema::WebhookUpdateRequest,
    responses((status = 200, description = "The changed webhook", body = WebhookView)))]
pub(crate) async fn update(
    State(webhooks): State<Arc<Webhooks>>,
    Admin(caller): Admin,
    Id(id): Id,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    Ok(axum::Json(webhooks.update(&caller.org_id, &id, body).await?).into_response())
}

/// `DELETE /api/v2/webhooks/{id}`
#[utoipa::path(delete, path = "/api/v2/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path)),
    responses((status = 204, description = "Deleted; its queued deliveries are cancelled")))]
pub(crate) async fn delete(
    State(webhooks): State<Arc<Webhooks>>,
    Admin(caller): Admin,
    Id(id): Id,
) -> ApiResult<Response> {
    webhooks.delete(&caller.org_id, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/v2/webhooks/{id}/rotate_secret` `{"grace_period"?: "24h"}`
#[utoipa::path(post, path = "/api/v2/webhooks/{id}/rotate_secret", tag = "webhooks",
    params(("id" = String, Path)),
    request_body(content = Option<crate::api::schema::RotateSecretRequest>, description = "Optional"),
    responses((status = 200, description = "The webhook with its new `signing_secret`", body = WebhookView)))]
pub(crate) async fn rotate_secret(
    State(webhooks): State<Arc<Webhooks>>,
    Admin(caller): Admin,
    Id(id): Id,
    OptionalJsonObject(body): OptionalJsonObject,
) -> ApiResult<Response> {
    Ok(axum::Json(webhooks.rotate_secret(&caller.org_id, &id, body).await?).into_response())
}

/// `POST /api/v2/webhooks/{id}/test`
#[utoipa::path(post, path = "/api/v2/webhooks/{id}/test", tag = "webhooks", operation_id = "send_test_event",
    params(("id" = String, Path)),
    request_body(content = Option<crate::api::schema::TestEventRequest>, description = "Which action (default: the webhook's first)"),
    responses(
        (status = 202, description = "An example event of the action queued to this webhook alone, its envelope marked `\"test\": true`", body = crate::api::schema::TestEventQueued),
        (status = 409, description = "The webhook is inactive", body = crate::api::error::ErrorBody),
        (status = 429, description = "10 test events in the last minute to this webhook, or 60 from the organisation (`rate_limited`, `Retry-After`)", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn test(
    State(events): State<Arc<crate::domain::events::Events>>,
    Admin(caller): Admin,
    Id(id): Id,
    OptionalJsonObject(body): OptionalJsonObject,
) -> ApiResult<Response> {
    let delivery = events.send_test(&caller.org_id, &id, body).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(json!({ "delivery_id": delivery }))).into_response())
}
