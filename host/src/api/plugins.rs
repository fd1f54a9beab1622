//! `/api/v2/plugins`: upload, list, inspect, delete and dry-run tenant plugins (contract §5).
//! The rules live in `crate::domain::plugins`; this file only translates requests and answers.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, ApiResult, Code};
use super::extract::{Admin, Id, JsonObject, QueryRules};
use crate::domain::plugins::{DryRun, PluginRequestError, Plugins, UploadRefused};
use crate::domain::rules;
use crate::domain::views::PluginView;
use crate::ids::{self, Kind};
use crate::web::{Query, read_body};

/// Largest plugin upload (contract §2).
pub(crate) const MAX_PLUGIN_BYTES: usize = 32 * 1024 * 1024;

impl From<PluginRequestError> for ApiError {
    fn from(e: PluginRequestError) -> ApiError {
        match e {
            PluginRequestError::NotFound => ApiError::not_found("plugin"),
            PluginRequestError::Attached => ApiError::conflict(e.to_string()),
            PluginRequestError::Invalid(invalid) => invalid.into(),
            PluginRequestError::Store(e) => e.into(),
        }
    }
}

impl From<UploadRefused> for ApiError {
    fn from(e: UploadRefused) -> ApiError {
        match e {
            UploadRefused::Invalid(why) => ApiError::field("body", why),
            UploadRefused::Quota(quota) => quota.into(),
            UploadRefused::OrganisationBusy(why) => {
                ApiError { retry_after: Some(10), ..ApiError::new(Code::RateLimited, why) }
            }
            UploadRefused::Busy(why) => ApiError { retry_after: Some(10), ..ApiError::new(Code::Unavailable, why) },
            UploadRefused::Store(e) => e.into(),
        }
    }
}

/// `POST /api/v2/plugins?name=NAME` with `Content-Type: application/wasm`.
#[utoipa::path(post, path = "/api/v2/plugins", tag = "plugins",
    params(("name" = String, Query, min_length = 1, max_length = 100)),
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "A component of the weir:plugin world"),
    responses(
        (status = 201, description = "Uploaded (`Location` names it): the next version of its name", body = PluginView),
        (status = 409, description = "The organisation has the most plugins, or bytes of plugin code, its plan allows", body = crate::api::error::ErrorBody),
        (status = 429, description = "Another upload of the organisation is compiling", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn upload(
    State(plugins): State<Arc<Plugins>>,
    Admin(caller): Admin,
    query: Query,
    request: Request,
) -> ApiResult<Response> {
    query.only(&["name"])?;
    let content_type = request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if content_type.split(';').next().unwrap_or("").trim() != "application/wasm" {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "upload the component with Content-Type: application/wasm",
        ));
    }
    let name = match query.get("name").map(|n| rules::name(n, 100)) {
        Some(Ok(name)) => name,
        Some(Err(why)) => return Err(ApiError::field("name", why)),
        None => return Err(ApiError::field("name", "is required (?name=…)")),
    };
    let bytes = read_body(request.into_body(), MAX_PLUGIN_BYTES).await?;
    if bytes.is_empty() {
        return Err(ApiError::field("body", "is empty: send the component's bytes"));
    }
    let plugin = plugins.upload(&caller.org_id, &caller.rules, name, bytes).await?;
    let mut response = (StatusCode::CREATED, axum::Json(&plugin)).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("/api/v2/plugins/{}", plugin.id)) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// `GET /api/v2/plugins`, or with `?name=` the versions of one plugin, newest first.
#[utoipa::path(get, path = "/api/v2/plugins", tag = "plugins",
    params(("limit" = Option<u32>, Query, minimum = 1, maximum = 100), ("cursor" = Option<String>, Query),
        ("name" = Option<String>, Query, description = "Only the versions uploaded under this name, newest first")),
    responses((status = 200, description = "A page of plugins, newest first", body = crate::api::schema::Page<PluginView>)))]
pub(crate) async fn list(
    State(plugins): State<Arc<Plugins>>,
    Admin(caller): Admin,
    query: Query,
) -> ApiResult<Response> {
    query.only(&["limit", "cursor", "name"])?;
    let page = query.page(|c| ids::is_valid(Kind::Plugin, c))?;
    let (plugins, next) = plugins.list(&caller.org_id, query.get("name"), page.cursor.as_deref(), page.limit).await?;
    Ok(axum::Json(super::schema::Page { data: plugins, next_cursor: next }).into_response())
}

/// `GET /api/v2/plugins/{id}`
#[utoipa::path(get, path = "/api/v2/plugins/{id}", tag = "plugins",
    params(("id" = String, Path)),
    responses((status = 200, description = "The plugin", body = PluginView)))]
pub(crate) async fn get(State(plugins): State<Arc<Plugins>>, Admin(caller): Admin, Id(id): Id) -> ApiResult<Response> {
    Ok(axum::Json(plugins.find(&caller.org_id, &id).await?).into_response())
}

/// `DELETE /api/v2/plugins/{id}`: `204`, or `409` while a webhook uses it.
#[utoipa::path(delete, path = "/api/v2/plugins/{id}", tag = "plugins",
    params(("id" = String, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 409, description = "Attached to a webhook", body = crate::api::error::ErrorBody),
    ))]
pub(crate) async fn delete(
    State(plugins): State<Arc<Plugins>>,
    Admin(caller): Admin,
    Id(id): Id,
) -> ApiResult<Response> {
    plugins.delete(&caller.org_id, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/v2/plugins/{id}/test`: runs the plugin once and reports everything. The
/// event is given as `event` — in the shape `POST /api/v2/events` takes, or the envelope
/// exactly as a subscriber received it (with `organisation`) — or as `delivery_id`, to rerun
/// the plugin on the event of a real delivery. `config` is the attachment's config.
#[utoipa::path(post, path = "/api/v2/plugins/{id}/test", tag = "plugins",
    params(("id" = String, Path)),
    request_body = crate::api::schema::DryRunRequest,
    responses((status = 200, description = "The verdict of one run", body = DryRun)))]
pub(crate) async fn test(
    State(plugins): State<Arc<Plugins>>,
    Admin(caller): Admin,
    Id(id): Id,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    Ok(axum::Json(plugins.dry_run(&caller.org_id, &id, body).await?).into_response())
}
