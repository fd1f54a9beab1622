//! `POST /api/v2/events`: the source of events (contract §2), and `GET /api/v2/events/{id}`. A `publisher` client sends
//! the event; `crate::domain::events` validates it, builds the envelope and publishes it.
//! The answer `202` comes only once the event and all its deliveries are in Redis.
//! Publishing the same `id` again returns the first result and creates nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::value::RawValue;

use super::error::{ApiError, ApiResult, Code};
use super::extract::{Admin, Id, MAX_JSON_BODY, Publisher};
use crate::app::App;
use crate::domain::events;
use crate::web::{is_json, read_body};

/// `POST /api/v2/events`
#[utoipa::path(post, path = "/api/v2/events", tag = "events",
    request_body = crate::api::schema::PublishRequest,
    responses((status = 202, description = "Accepted: the event and its deliveries are stored", body = crate::api::schema::Accepted)))]
pub async fn publish(
    State(app): State<Arc<App>>,
    Publisher(caller): Publisher,
    request: Request,
) -> ApiResult<Response> {
    if !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return Err(ApiError::new(Code::UnsupportedMediaType, "the request body must be application/json"));
    }
    let bytes = read_body(request.into_body(), MAX_JSON_BODY).await?;
    let fields: BTreeMap<String, &RawValue> =
        serde_json::from_slice(&bytes).map_err(|e| ApiError::field("body", format!("must be a JSON object: {e}")))?;
    let event = events::validate(fields)?;
    events::publish(&app, &caller.org_id, &event).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(super::schema::Accepted { id: event.id })).into_response())
}

/// `GET /api/v2/events/{id}`: the event and the delivery to each webhook (admin and plan
/// rules apply).
#[utoipa::path(get, path = "/api/v2/events/{id}", tag = "events",
    params(("id" = String, Path)),
    responses((status = 200, description = "The event and its deliveries", body = events::EventView)))]
pub async fn get(State(app): State<Arc<App>>, Admin(caller): Admin, Id(id): Id) -> ApiResult<Response> {
    match events::lookup(&app, &caller.org_id, &id).await? {
        Some(event) => Ok(axum::Json(event).into_response()),
        None => Err(ApiError::not_found("event")),
    }
}
