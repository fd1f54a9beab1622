//! `/api/v2/portal_links` and `/api/v2/portal_sessions` (contract §9): an operator's backend
//! makes a link that opens Settings > Webhooks for one organisation inside its product, and
//! ends every portal session of it. The rules live in `crate::domain::portal`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::ApiResult;
use super::extract::{Admin, OptionalJsonObject};
use crate::domain::portal::PortalLinks;

/// `POST /api/v2/portal_links`
#[utoipa::path(post, path = "/api/v2/portal_links", tag = "portal",
    request_body(content = Option<crate::api::schema::PortalLinkRequest>, description = "What the link opens (every field optional)"),
    responses((status = 201, description = "A link to open once before `expires_at`: its token is in the URL's fragment", body = crate::domain::portal::CreatedLink),
        (status = 429, description = "The organisation holds 100 unused links already (`rate_limited`, `Retry-After` until the first expires)", body = crate::api::error::ErrorBody)))]
pub(crate) async fn create(
    State(portal): State<Arc<PortalLinks>>,
    Admin(caller): Admin,
    OptionalJsonObject(body): OptionalJsonObject,
) -> ApiResult<Response> {
    let link = portal.create(&caller.org_id, &caller.client_id, body).await?;
    Ok((StatusCode::CREATED, axum::Json(link)).into_response())
}

/// `DELETE /api/v2/portal_sessions`
#[utoipa::path(delete, path = "/api/v2/portal_sessions", tag = "portal",
    responses((status = 200, description = "Every portal session of the organisation ended, and its unused links voided: how many sessions", body = crate::api::schema::Ended)))]
pub(crate) async fn end(State(portal): State<Arc<PortalLinks>>, Admin(caller): Admin) -> ApiResult<Response> {
    let ended = portal.end_sessions(&caller.org_id).await?;
    Ok(axum::Json(json!({ "ended": ended })).into_response())
}
