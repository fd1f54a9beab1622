//! Report exports (contract §2): `POST /api/v2/report_exports`, `GET /api/v2/report_exports/{id}`,
//! and the signed, token-free download link `GET /exports/{id}/download?expires=&sig=`. The
//! rules live in `crate::domain::exports`; this file only translates requests and answers.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, ApiResult, Code};
use super::extract::{AnyClient, Id, JsonObject};
use crate::domain::exports::{ExportError, Exports};
use crate::domain::views::ExportView;
use crate::web::Query;

impl From<ExportError> for ApiError {
    fn from(e: ExportError) -> ApiError {
        match e {
            ExportError::Invalid(invalid) => invalid.into(),
            ExportError::NotFound => ApiError::not_found("report export"),
            ExportError::Altered => ApiError::new(Code::Forbidden, e.to_string()),
            ExportError::Gone(why) => ApiError::new(Code::Gone, why),
            ExportError::Store(e) => e.into(),
        }
    }
}

/// `POST /api/v2/report_exports` `{"exportable": {"type", "id"}, "format": "pdf"|"csv"|"json"}`
#[utoipa::path(post, path = "/api/v2/report_exports", tag = "report exports",
    request_body = crate::api::schema::ExportRequest,
    responses((status = 202, description = "Queued (`Location` names it)", body = ExportView)))]
pub(crate) async fn create(
    State(exports): State<Arc<Exports>>,
    AnyClient(caller): AnyClient,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let export = exports.create(&caller, body).await?;
    let mut response = (StatusCode::ACCEPTED, axum::Json(&export)).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("/api/v2/report_exports/{}", export.id)) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// `GET /api/v2/report_exports/{id}`
#[utoipa::path(get, path = "/api/v2/report_exports/{id}", tag = "report exports",
    params(("id" = String, Path)),
    responses((status = 200, description = "The export", body = ExportView)))]
pub(crate) async fn get(
    State(exports): State<Arc<Exports>>,
    AnyClient(caller): AnyClient,
    Id(id): Id,
) -> ApiResult<Response> {
    Ok(axum::Json(exports.get(&caller.org_id, &id).await?).into_response())
}

/// `GET /exports/{id}/download?expires=&sig=`: no token; the link is the credential.
#[utoipa::path(get, path = "/exports/{id}/download", tag = "report exports",
    params(("id" = String, Path), ("expires" = String, Query), ("sig" = String, Query)),
    responses(
        (status = 200, description = "The file (PDF, CSV or JSON)", content(
            (Vec<u8> = "application/pdf"), (String = "text/csv"), (Object = "application/json"))),
        (status = 403, description = "The link was altered", body = crate::api::error::ErrorBody),
        (status = 410, description = "The link expired, or the export is gone", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn download(State(exports): State<Arc<Exports>>, Id(id): Id, query: Query) -> ApiResult<Response> {
    let file = exports.download(&id, query.get("expires").unwrap_or(""), query.get("sig").unwrap_or("")).await?;
    let mut response = (StatusCode::OK, file.bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(file.format.content_type()));
    let disposition = format!("attachment; filename=\"{}.{}\"", file.export_id, file.format.as_str());
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    Ok(response)
}
