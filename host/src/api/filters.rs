//! `POST /api/v2/filters/test` (contract §8): a filter tried on an event before it is
//! saved; the rules live in `crate::domain::filtering`.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};

use super::error::ApiResult;
use super::extract::{Admin, JsonObject};
use crate::domain::events::Events;

/// `POST /api/v2/filters/test` `{"filter", "event"}` or `{"filter", "event_id"}`
#[utoipa::path(post, path = "/api/v2/filters/test", tag = "webhooks",
    request_body = crate::api::schema::FilterTestRequest,
    responses(
        (status = 200, description = "What the filter makes of the event: `match` (it would be delivered), and `error` when the evaluation failed (then it would not)", body = crate::domain::filtering::FilterTest),
        (status = 404, description = "No event of the organisation with that `event_id`", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn test(
    State(events): State<Arc<Events>>,
    Admin(caller): Admin,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let tried = events.test_filter(&caller.org_id, body).await?;
    Ok(axum::Json(tried).into_response())
}
