//! `POST /api/v2/events`: the source of events (contract §2); `GET /api/v2/events` (the
//! event log) and `GET /api/v2/events/{id}`. A `publisher` client sends the event;
//! `crate::domain::events` validates it, builds the envelope and publishes it.
//! The answer `202` comes only once the event and all its deliveries are in Redis.
//! Publishing the same `id` again returns the first result and creates nothing.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, ApiResult, Code, FieldError};
use super::extract::{Admin, Id, MAX_JSON_BODY, Publisher, QueryRules};
use super::schema::Page;
use crate::catalog;
use crate::domain::event_log::Bounds;
use crate::domain::events::{self, Events};
use crate::telemetry::PublishSpan;
use crate::trace::TraceContext;
use crate::web::{Query, is_json, read_body};

/// `POST /api/v2/events`
#[utoipa::path(post, path = "/api/v2/events", tag = "events",
    request_body = crate::api::schema::PublishRequest,
    responses((status = 202, description = "Accepted: the event and its deliveries are stored", body = crate::api::schema::Accepted)))]
pub(crate) async fn publish(
    State(events): State<Arc<Events>>,
    Publisher(caller): Publisher,
    request: Request,
) -> ApiResult<Response> {
    let start = std::time::SystemTime::now();
    let (trace, parent_id) = TraceContext::of_request(request.headers());
    let answer = accept(&events, &caller, trace.clone(), request).await;
    let status = match &answer {
        Ok(_) => StatusCode::ACCEPTED.as_u16(),
        Err(e) => e.code.status().as_u16(),
    };
    events.traced(PublishSpan {
        route: crate::telemetry::EVENTS_ROUTE,
        parent: trace.as_ref().zip(parent_id),
        event_id: answer.as_ref().ok().map(String::as_str),
        org_id: Some(&caller.org_id),
        status,
        start,
        end: std::time::SystemTime::now(),
    });
    let id = answer?;
    Ok((StatusCode::ACCEPTED, axum::Json(super::schema::Accepted { id })).into_response())
}

/// Reads, checks and publishes the event; its id.
async fn accept(
    events: &Events,
    caller: &crate::auth::Caller,
    trace: Option<TraceContext>,
    request: Request,
) -> ApiResult<String> {
    if !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return Err(ApiError::new(Code::UnsupportedMediaType, "the request body must be application/json"));
    }
    let bytes = read_body(request.into_body(), MAX_JSON_BODY).await?;
    let mut event = events.read(&caller.org_id, &bytes).await?;
    event.trace = trace;
    events.publish(&caller.org_id, (&caller.rules, caller.token.as_ref()), &event).await?;
    Ok(event.id)
}

/// `GET /api/v2/events/{id}`: the event and the delivery to each webhook (admin and plan
/// rules apply).
#[utoipa::path(get, path = "/api/v2/events/{id}", tag = "events",
    params(("id" = String, Path)),
    responses((status = 200, description = "The event and its deliveries", body = events::EventView)))]
pub(crate) async fn get(State(events): State<Arc<Events>>, Admin(caller): Admin, Id(id): Id) -> ApiResult<Response> {
    match events.lookup(&caller.org_id, &id).await? {
        Some(event) => Ok(axum::Json(event).into_response()),
        None => Err(ApiError::not_found("event")),
    }
}

/// `GET /api/v2/events?action=&since=&until=&limit=&cursor=`: the event log, newest first
/// (admin and plan rules apply).
#[utoipa::path(get, path = "/api/v2/events", tag = "events",
    params(
        ("action" = Option<String>, Query, description = "an action of the catalogue, or source_event for sources' events"), ("since" = Option<String>, Query, description = "accepted at or after (RFC 3339)"),
        ("until" = Option<String>, Query, description = "accepted before (RFC 3339)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100), ("cursor" = Option<String>, Query),
    ),
    responses((status = 200, description = "A page of events, newest first", body = crate::api::schema::Page<crate::domain::event_log::LoggedEvent>)))]
pub(crate) async fn list(State(events): State<Arc<Events>>, Admin(caller): Admin, query: Query) -> ApiResult<Response> {
    query.only(&["action", "since", "until", "limit", "cursor"])?;
    let page = query.page(|c| events.valid_log_cursor(c))?;
    let mut errors = Vec::new();
    let action = query.get("action").filter(|s| !s.is_empty());
    if let Some(a) = action
        && !catalog::is_known(a)
        && a != catalog::SOURCE_EVENTS
    {
        errors.push(FieldError::new("action", "is not an event in the catalogue (or source_event)"));
    }
    let mut time = |name: &str| {
        let text = query.get(name).filter(|s| !s.is_empty())?;
        let ms = crate::time::parse_rfc3339(text);
        if ms.is_none() {
            errors.push(FieldError::new(name, "must be an RFC 3339 UTC timestamp such as 2026-11-22T11:00:38.123Z"));
        }
        ms
    };
    let (since_ms, until_ms) = (time("since"), time("until"));
    if let (Some(since), Some(until)) = (since_ms, until_ms)
        && until <= since
    {
        errors.push(FieldError::new("until", "must be after since"));
    }
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let bounds = Bounds { since_ms, until_ms, action };
    let (logged, next) = events.log(&caller.org_id, bounds, page.cursor.as_deref(), page.limit).await?;
    Ok(axum::Json(Page { data: logged, next_cursor: next }).into_response())
}
