//! `GET /api/v2/usage` (contract §9 "Plans"): where the caller's organisation stands
//! against its plan — any client of the organisation may ask.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};

use super::error::ApiResult;
use super::extract::{AnyClient, QueryRules};
use crate::domain::usage::Usage;
use crate::web::Query;

/// `GET /api/v2/usage`
#[utoipa::path(get, path = "/api/v2/usage", tag = "usage",
    responses(
        (status = 200, description = "The organisation's plan, its events of today (UTC) and what it keeps, each against its plan's limit (`null`: no limit)", body = crate::domain::usage::UsageView),
    ))]
pub(crate) async fn get(
    State(usage): State<Arc<Usage>>,
    AnyClient(caller): AnyClient,
    query: Query,
) -> ApiResult<Response> {
    query.only(&[])?;
    Ok(axum::Json(usage.of(&caller.org_id).await?).into_response())
}
