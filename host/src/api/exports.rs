//! Report exports (contract §2): `POST /api/v2/report_exports`, `GET /api/v2/report_exports/{id}`,
//! and the signed, token-free download link `GET /exports/{id}/download?expires=&sig=`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, ApiResult, Code};
use super::extract::{AnyClient, Id, JsonObject};
use crate::app::App;
use crate::catalog;
use crate::domain::fields::{Fields, short_text};
use crate::exports::link::{self, LinkError};
use crate::exports::render::Format;
use crate::ids::{self, Kind};
use crate::store::exports::{Export, Exportable};
use crate::web::Query;

/// `POST /api/v2/report_exports` `{"exportable": {"type", "id"}, "format": "pdf"|"csv"|"json"}`
#[utoipa::path(post, path = "/api/v2/report_exports", tag = "report exports",
    request_body = crate::api::schema::ExportRequest,
    responses((status = 202, description = "Queued (`Location` names it)", body = Export)))]
pub async fn create(
    State(app): State<Arc<App>>,
    AnyClient(caller): AnyClient,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let mut fields = Fields::new(body);
    let exportable = fields.object("exportable", true);
    let format = fields.required_string("format");
    let format = match format.as_deref().map(Format::parse) {
        Some(Some(f)) => Some(f),
        Some(None) => {
            fields.error("format", "must be pdf, csv or json");
            None
        }
        None => None,
    };
    let mut target = None;
    if let Some(map) = exportable {
        let mut inner = Fields::new(map);
        let kind = inner.required_string("type");
        let id = inner.required_string("id").and_then(|id| short_text(&mut inner, "id", id));
        if let Some(k) = &kind
            && catalog::snapshot_key_of_type(k).is_none()
        {
            inner.error("type", "is not a record type Weir knows (Form, WorkOrder, Asset, …)");
        }
        let leftover = inner.remaining();
        for name in leftover {
            inner.error(name, "unknown field");
        }
        let errors = inner.into_errors();
        if errors.is_empty() {
            target = kind.zip(id);
        }
        for e in errors {
            fields.error(format!("exportable.{}", e.field), e.message);
        }
    }
    fields.finish()?;
    let ((kind, record_id), format) = target.zip(format).ok_or_else(ApiError::internal)?;
    if app.store.snapshot(&caller.org_id, &kind, &record_id).await?.is_none() {
        return Err(ApiError::field(
            "exportable",
            format!("Weir has not seen {kind} {record_id} in any published event, so it has nothing to export"),
        ));
    }
    let export = Export {
        id: ids::new(Kind::ReportExport),
        status: "queued".into(),
        format: format.as_str().into(),
        exportable: Exportable { kind, id: record_id },
        created_at: crate::time::now_rfc3339(),
        completed_at: None,
        download_url: None,
        error: None,
        org_id: caller.org_id.clone(),
        client_id: caller.client_id.clone(),
        client_name: caller.client_name.clone(),
        published: false,
    };
    app.store.create_export(&export, app.config.delivery_retention.as_millis() as u64).await?;
    let mut response = (StatusCode::ACCEPTED, axum::Json(&export)).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("/api/v2/report_exports/{}", export.id)) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// `GET /api/v2/report_exports/{id}`
#[utoipa::path(get, path = "/api/v2/report_exports/{id}", tag = "report exports",
    params(("id" = String, Path)),
    responses((status = 200, description = "The export", body = Export)))]
pub async fn get(State(app): State<Arc<App>>, AnyClient(caller): AnyClient, Id(id): Id) -> ApiResult<Response> {
    if !ids::is_valid(Kind::ReportExport, &id) {
        return Err(ApiError::not_found("report export"));
    }
    let export =
        app.store.get_export(&caller.org_id, &id).await?.ok_or_else(|| ApiError::not_found("report export"))?;
    Ok(axum::Json(export).into_response())
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
pub async fn download(State(app): State<Arc<App>>, Id(id): Id, query: Query) -> ApiResult<Response> {
    let expires = query.get("expires").unwrap_or("");
    let sig = query.get("sig").unwrap_or("");
    let key = app.export_link_key().await?;
    let now = crate::time::now_millis() / 1000;
    match link::verify(&key, &id, expires, sig, now) {
        Err(LinkError::Altered) => return Err(ApiError::new(Code::Forbidden, "this download link is not valid")),
        Err(LinkError::Expired) => return Err(ApiError::new(Code::Gone, "this download link has expired")),
        Ok(()) => {}
    }
    let export = app.store.export_any_org(&id).await?;
    let file = app.store.export_file(&id).await?;
    let (Some(export), Some(file)) = (export, file) else {
        return Err(ApiError::new(Code::Gone, "this export is no longer available"));
    };
    let format = Format::parse(&export.format).unwrap_or(Format::Json);
    let mut response = (StatusCode::OK, file).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(format.content_type()));
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{}.{}\"", export.id, format.as_str())) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    Ok(response)
}
