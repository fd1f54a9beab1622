//! `POST /api/v2/webhooks/{id}/replay` and `GET /api/v2/webhooks/{id}/replay` (contract §7):
//! the rules live in `crate::domain::replay`; this file only translates requests and answers.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, ApiResult};
use super::extract::{Admin, Id, JsonObject};
use crate::domain::replay::Replays;

/// `POST /api/v2/webhooks/{id}/replay` `{"since": ts, "until"?: ts}`
#[utoipa::path(post, path = "/api/v2/webhooks/{id}/replay", tag = "webhooks",
    params(("id" = String, Path)),
    request_body = crate::api::schema::ReplayRequest,
    responses(
        (status = 202, description = "Queued: `count` deliveries (all of them when `state` is `completed`; a window too large to queue within half a second goes on in the background, and `GET …/replay` shows how far it got)", body = crate::domain::replay::ReplayView),
        (status = 409, description = "The webhook is inactive, or a replay of it is still running", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn replay(
    State(replays): State<Arc<Replays>>,
    Admin(caller): Admin,
    Id(id): Id,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let view = replays.request(&caller.org_id, &id, body).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(view)).into_response())
}

/// `GET /api/v2/webhooks/{id}/replay`: the webhook's latest replay.
#[utoipa::path(get, path = "/api/v2/webhooks/{id}/replay", tag = "webhooks",
    params(("id" = String, Path)),
    responses((status = 200, description = "The latest replay (running, or ended within 7 days; `state: none` when there is none)", body = crate::domain::replay::ReplayView)))]
pub(crate) async fn status(
    State(replays): State<Arc<Replays>>,
    Admin(caller): Admin,
    Id(id): Id,
) -> ApiResult<Response> {
    match replays.status(&caller.org_id, &id).await? {
        Some(view) => Ok(axum::Json(view).into_response()),
        None => Err(ApiError::not_found("webhook")),
    }
}
