//! `/api/v2/sources` (contract §10): an organisation's inbound endpoints, and `POST
//! /in/<token>`, where providers deliver to them. The rules live in
//! `crate::domain::sources`; this file only translates requests and answers.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::{ApiError, ApiResult, Code};
use super::extract::{Admin, Id, JsonObject, QueryRules};
use super::schema::Page;
use crate::domain::sources::{IngestError, Ingested, RequestView, SourceError, SourceView, Sources};
use crate::ids::{self, Kind};
use crate::sources::Refusal;
use crate::telemetry::PublishSpan;
use crate::trace::TraceContext;
use crate::web::Query;

impl From<SourceError> for ApiError {
    fn from(e: SourceError) -> ApiError {
        match e {
            SourceError::Invalid(invalid) => invalid.into(),
            SourceError::NotFound => ApiError::not_found("source"),
            SourceError::Limit => ApiError::conflict(e.to_string()),
            SourceError::Sealing(why) => {
                tracing::error!(%why, "cannot seal or open a source's secrets");
                ApiError::internal()
            }
            SourceError::Store(e) => e.into(),
        }
    }
}

impl From<IngestError> for ApiError {
    fn from(e: IngestError) -> ApiError {
        match e {
            IngestError::UnknownToken => ApiError::not_found("source"),
            IngestError::Refused(ref refusal) => {
                let code = match refusal {
                    Refusal::Missing(_) => Code::MissingSignature,
                    Refusal::Stale => Code::TimestampOutOfTolerance,
                    Refusal::Invalid(_) => Code::InvalidSignature,
                };
                ApiError::new(code, e.to_string())
            }
            IngestError::NotText => ApiError::new(Code::UnsupportedMediaType, e.to_string()),
            IngestError::Throttled(secs) => ApiError::too_many(std::time::Duration::from_secs(secs), e.to_string()),
            IngestError::Quota(quota) => quota.into(),
            IngestError::Sealed => ApiError::internal(),
            IngestError::Changed => {
                ApiError { retry_after: Some(1), ..ApiError::new(Code::Unavailable, e.to_string()) }
            }
            IngestError::Store(e) => e.into(),
        }
    }
}

/// `POST /in/{token}`: a provider's webhook.
#[utoipa::path(post, path = "/in/{token}", tag = "sources",
    params(("token" = String, Path, description = "The source's ingest token (its `ingest_url`)")),
    request_body(content = String, description = "The provider's request, as it signs it (at most 1 MiB)"),
    responses(
        (status = 200, description = "Stored (as durably as a published event); a duplicate is answered with the first request's event", body = crate::api::source_schema::Ingested),
        (status = 401, description = "`invalid_signature`, `missing_signature` or `timestamp_out_of_tolerance`; nothing is kept", body = crate::api::error::ErrorBody),
        (status = 404, description = "No source has this URL", body = crate::api::error::ErrorBody),
        (status = 413, description = "The body is over 1 MiB", body = crate::api::error::ErrorBody),
        (status = 429, description = "The organisation's events of the day are used up, or too many rejected requests (`Retry-After`)", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn ingest(
    State(sources): State<Arc<Sources>>,
    Path(token): Path<String>,
    request: Request,
) -> ApiResult<Response> {
    let start = std::time::SystemTime::now();
    let (parts, body) = request.into_parts();
    let (trace, parent_id) = TraceContext::of_request(&parts.headers);
    let answer = receive(&sources, (&token, trace.as_ref()), &parts, body).await;
    let status = match &answer {
        Ok(_) => StatusCode::OK.as_u16(),
        Err(e) => e.code.status().as_u16(),
    };
    let ingested = answer.as_ref().ok();
    sources.traced(PublishSpan {
        route: crate::telemetry::INGEST_ROUTE,
        parent: trace.as_ref().zip(parent_id),
        event_id: ingested.map(|i| i.event_id.as_str()),
        org_id: ingested.map(|i| i.org_id.as_str()),
        status,
        start,
        end: std::time::SystemTime::now(),
    });
    Ok(axum::Json(json!({ "id": answer?.event_id })).into_response())
}

/// Reads a provider's request (to `token`, in `trace` when it sent one) and takes it in.
async fn receive(
    sources: &Sources,
    (token, trace): (&str, Option<&TraceContext>),
    parts: &axum::http::request::Parts,
    body: axum::body::Body,
) -> ApiResult<Ingested> {
    let address = parts.extensions.get::<crate::forwarded::ClientAddr>().map(|a| a.0.to_string()).unwrap_or_default();
    let bytes = crate::web::read_body(body, super::extract::MAX_JSON_BODY).await?;
    let path_and_query = parts.uri.path_and_query().map_or("", |p| p.as_str());
    let request = crate::domain::sources::IngestRequest {
        token,
        headers: &parts.headers,
        body: &bytes,
        path_and_query,
        address: &address,
        trace,
    };
    Ok(sources.ingest().receive(request).await?)
}

/// `POST /api/v2/sources`
#[utoipa::path(post, path = "/api/v2/sources", tag = "sources",
    request_body = crate::api::source_schema::SourceCreateRequest,
    responses(
        (status = 201, description = "Created (`Location` names it); `ingest_url` is where the provider sends", body = SourceView),
        (status = 409, description = "The organisation has the most sources allowed", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn create(
    State(sources): State<Arc<Sources>>,
    Admin(caller): Admin,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let source = sources.create(&caller.org_id, body).await?;
    let mut response = (StatusCode::CREATED, axum::Json(&source)).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("/api/v2/sources/{}", source.id)) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// `GET /api/v2/sources`
#[utoipa::path(get, path = "/api/v2/sources", tag = "sources",
    params(("limit" = Option<u32>, Query, minimum = 1, maximum = 100), ("cursor" = Option<String>, Query)),
    responses((status = 200, description = "A page of sources, newest first", body = crate::api::schema::Page<SourceView>)))]
pub(crate) async fn list(
    State(sources): State<Arc<Sources>>,
    Admin(caller): Admin,
    query: Query,
) -> ApiResult<Response> {
    query.only(&["limit", "cursor"])?;
    let page = query.page(|c| ids::is_valid(Kind::Source, c))?;
    let (listed, next) = sources.list(&caller.org_id, page.cursor.as_deref(), page.limit).await?;
    Ok(axum::Json(Page { data: listed, next_cursor: next }).into_response())
}

/// `GET /api/v2/sources/{id}`
#[utoipa::path(get, path = "/api/v2/sources/{id}", tag = "sources", params(("id" = String, Path)),
    responses((status = 200, description = "The source", body = SourceView)))]
pub(crate) async fn get(State(sources): State<Arc<Sources>>, Admin(caller): Admin, Id(id): Id) -> ApiResult<Response> {
    Ok(axum::Json(sources.find(&caller.org_id, &id).await?).into_response())
}

/// `PATCH /api/v2/sources/{id}`
#[utoipa::path(patch, path = "/api/v2/sources/{id}", tag = "sources", params(("id" = String, Path)),
    request_body = crate::api::source_schema::SourceUpdateRequest,
    responses((status = 200, description = "The changed source", body = SourceView)))]
pub(crate) async fn update(
    State(sources): State<Arc<Sources>>,
    Admin(caller): Admin,
    Id(id): Id,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    Ok(axum::Json(sources.update(&caller.org_id, &id, body).await?).into_response())
}

/// `DELETE /api/v2/sources/{id}`
#[utoipa::path(delete, path = "/api/v2/sources/{id}", tag = "sources", params(("id" = String, Path)),
    responses((status = 204, description = "Deleted: its ingest URL answers 404 from now on")))]
pub(crate) async fn delete(
    State(sources): State<Arc<Sources>>,
    Admin(caller): Admin,
    Id(id): Id,
) -> ApiResult<Response> {
    sources.delete(&caller.org_id, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/v2/sources/{id}/rotate` `{"secret": …}`
#[utoipa::path(post, path = "/api/v2/sources/{id}/rotate", tag = "sources", params(("id" = String, Path)),
    request_body = crate::api::source_schema::SourceRotateRequest,
    responses((status = 200, description = "The source; its old secret is accepted for 24 hours more", body = SourceView)))]
pub(crate) async fn rotate(
    State(sources): State<Arc<Sources>>,
    Admin(caller): Admin,
    Id(id): Id,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    Ok(axum::Json(sources.rotate(&caller.org_id, &id, body).await?).into_response())
}

/// `GET /api/v2/sources/{id}/requests`
#[utoipa::path(get, path = "/api/v2/sources/{id}/requests", tag = "sources",
    params(("id" = String, Path), ("outcome" = Option<String>, Query, description = "accepted, duplicate or rejected"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100), ("cursor" = Option<String>, Query)),
    responses((status = 200, description = "The source's latest requests (the last 1,000), newest first", body = crate::api::schema::Page<RequestView>)))]
pub(crate) async fn requests(
    State(sources): State<Arc<Sources>>,
    Admin(caller): Admin,
    Id(id): Id,
    query: Query,
) -> ApiResult<Response> {
    query.only(&["limit", "cursor", "outcome"])?;
    let page = query.page(|c| ids::is_valid(Kind::SourceRequest, c))?;
    let outcome = query.get("outcome");
    if outcome.is_some_and(|o| !matches!(o, "accepted" | "duplicate" | "rejected")) {
        return Err(ApiError::field("outcome", "must be accepted, duplicate or rejected"));
    }
    let (listed, next) = sources.requests(&caller.org_id, &id, (outcome, page.cursor.as_deref()), page.limit).await?;
    Ok(axum::Json(Page { data: listed, next_cursor: next }).into_response())
}
