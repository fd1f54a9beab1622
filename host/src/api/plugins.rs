//! `/api/v2/plugins`: upload, list, inspect, delete and dry-run tenant plugins (contract §5).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use serde_json::value::RawValue;

use super::error::{ApiError, ApiResult, Code};
use super::extract::{Admin, Id, JsonObject, QueryRules};
use crate::app::App;
use crate::domain::fields::Fields;
use crate::domain::plugins::{self as domain, UploadError};
use crate::domain::rules;
use crate::ids::{self, Kind};
use crate::plugins::{EventMeta, Verdict};
use crate::sign;
use crate::store::plugins::{Deleted, Plugin};
use crate::web::{Query, read_body};

/// Largest plugin upload (contract §2).
pub const MAX_PLUGIN_BYTES: usize = 32 * 1024 * 1024;

/// `POST /api/v2/plugins?name=NAME` with `Content-Type: application/wasm`.
#[utoipa::path(post, path = "/api/v2/plugins", tag = "plugins",
    params(("name" = String, Query, min_length = 1, max_length = 100)),
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "A component of the weir:plugin world"),
    responses(
        (status = 201, description = "Uploaded (`Location` names it): the next version of its name", body = Plugin),
        (status = 409, description = "The organisation has the most plugins, or bytes of plugin code, its plan allows", body = crate::api::error::ErrorBody),
        (status = 429, description = "Another upload of the organisation is compiling", body = crate::api::error::ErrorBody),
    ))]
pub async fn upload(
    State(app): State<Arc<App>>,
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
    let plugin = domain::upload(&app, &caller.org_id, caller.plan, name, bytes).await.map_err(|e| match e {
        UploadError::Invalid(why) => ApiError::field("body", why),
        UploadError::Quota(why) => ApiError::conflict(why),
        UploadError::OrganisationBusy(why) => {
            ApiError { retry_after: Some(10), ..ApiError::new(Code::RateLimited, why) }
        }
        UploadError::Busy(why) => ApiError { retry_after: Some(10), ..ApiError::new(Code::Unavailable, why) },
        UploadError::Store(e) => e.into(),
    })?;
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
    responses((status = 200, description = "A page of plugins, newest first", body = crate::api::schema::Page<Plugin>)))]
pub async fn list(State(app): State<Arc<App>>, Admin(caller): Admin, query: Query) -> ApiResult<Response> {
    query.only(&["limit", "cursor", "name"])?;
    let page = query.page(|c| ids::is_valid(Kind::Plugin, c))?;
    let (plugins, next) = match query.get("name") {
        Some(name) => {
            app.store.plugin_versions(&caller.org_id, name.trim(), page.cursor.as_deref(), page.limit).await?
        }
        None => app.store.list_plugins(&caller.org_id, page.cursor.as_deref(), page.limit).await?,
    };
    Ok(axum::Json(super::schema::Page { data: plugins, next_cursor: next }).into_response())
}

async fn find(app: &App, org_id: &str, id: &str) -> ApiResult<Plugin> {
    if !ids::is_valid(Kind::Plugin, id) {
        return Err(ApiError::not_found("plugin"));
    }
    app.store.get_plugin(org_id, id).await?.ok_or_else(|| ApiError::not_found("plugin"))
}

/// `GET /api/v2/plugins/{id}`
#[utoipa::path(get, path = "/api/v2/plugins/{id}", tag = "plugins",
    params(("id" = String, Path)),
    responses((status = 200, description = "The plugin", body = Plugin)))]
pub async fn get(State(app): State<Arc<App>>, Admin(caller): Admin, Id(id): Id) -> ApiResult<Response> {
    Ok(axum::Json(find(&app, &caller.org_id, &id).await?).into_response())
}

/// `DELETE /api/v2/plugins/{id}`: `204`, or `409` while a webhook uses it.
#[utoipa::path(delete, path = "/api/v2/plugins/{id}", tag = "plugins",
    params(("id" = String, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 409, description = "Attached to a webhook", body = crate::api::error::ErrorBody),
    ))]
pub async fn delete(State(app): State<Arc<App>>, Admin(caller): Admin, Id(id): Id) -> ApiResult<Response> {
    if !ids::is_valid(Kind::Plugin, &id) {
        return Err(ApiError::not_found("plugin"));
    }
    match app.store.delete_plugin(&caller.org_id, &id).await? {
        Deleted::Deleted => {
            app.plugin_deleted(&id);
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        Deleted::NotFound => Err(ApiError::not_found("plugin")),
        Deleted::Attached => Err(ApiError::conflict("the plugin is attached to a webhook; detach it first")),
    }
}

/// The report of a dry run.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct DryRun {
    /// `deliver`, `drop` or `error`.
    pub outcome: &'static str,
    /// Why it dropped the event.
    pub reason: Option<String>,
    /// The body a delivery would carry.
    pub body: Option<String>,
    /// Extra headers a delivery would carry.
    pub headers: Vec<Header>,
    #[schema(value_type = Vec<Object>)]
    pub logs: Vec<crate::plugins::LogLine>,
    pub error: Option<String>,
    pub fuel_used: u64,
    pub fuel_budget: u64,
    pub duration_us: u64,
}

/// A header a plugin set.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// `POST /api/v2/plugins/{id}/test`: runs the plugin once and reports everything. The
/// event is given as `event` — in the shape `POST /api/v2/events` takes, or the envelope
/// exactly as a subscriber received it (with `organisation`) — or as `delivery_id`, to rerun
/// the plugin on the event of a real delivery. `config` is the attachment's config.
#[utoipa::path(post, path = "/api/v2/plugins/{id}/test", tag = "plugins",
    params(("id" = String, Path)),
    request_body = crate::api::schema::DryRunRequest,
    responses((status = 200, description = "The verdict of one run", body = DryRun)))]
pub async fn test(
    State(app): State<Arc<App>>,
    Admin(caller): Admin,
    Id(id): Id,
    JsonObject(body): JsonObject,
) -> ApiResult<Response> {
    let plugin = find(&app, &caller.org_id, &id).await?;
    let mut fields = Fields::new(body);
    let event = fields.object("event", false);
    let delivery_id = fields.string("delivery_id");
    let config = fields.object("config", false).unwrap_or_default();
    if event.is_some() == delivery_id.is_some() && !fields.has_errors() {
        fields.error("event", "give either `event` or `delivery_id`");
    }
    fields.finish()?;
    let envelope = match (event, delivery_id) {
        (Some(event), _) => envelope_of_event(event, &caller.org_id)?,
        (None, Some(delivery_id)) => envelope_of_delivery(&app, &caller.org_id, &delivery_id).await?,
        (None, None) => return Err(ApiError::internal()),
    };
    let meta = EventMeta::from_envelope(&envelope).ok_or_else(ApiError::internal)?;
    let wasm = if app.plugins.is_compiled(&plugin.sha256) {
        None
    } else {
        app.store.get_plugin_wasm(&caller.org_id, &plugin.id).await?
    };
    let config = Value::Object(config).to_string();
    let report = app
        .plugins
        .call(&caller.org_id, plugin.sha256.clone(), wasm, Arc::new(meta), Arc::from(envelope.as_str()), config)
        .await;
    let (outcome, reason, out_body, headers, error) = match report.result {
        Ok(Verdict::Deliver { body, headers }) => ("deliver", None, Some(body.unwrap_or(envelope)), headers, None),
        Ok(Verdict::Drop(reason)) => ("drop", Some(reason), None, Vec::new(), None),
        Err(e) => ("error", None, None, Vec::new(), Some(e.to_string())),
    };
    // Only the headers a delivery would carry: Weir sets its own (the signature among them;
    // a dry run has no secret to sign with).
    let headers: Vec<Header> = headers
        .into_iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value))
        .filter(|(name, _)| !sign::is_reserved(name))
        .map(|(name, value)| Header { name, value })
        .collect();
    Ok(axum::Json(DryRun {
        outcome,
        reason,
        body: out_body,
        headers,
        logs: report.logs,
        error,
        fuel_used: report.fuel_used,
        fuel_budget: app.plugins.limits().fuel,
        duration_us: report.duration.as_micros() as u64,
    })
    .into_response())
}

/// The envelope of an event given to a dry run: validated like a published one. A
/// delivered envelope's `organisation` is accepted (the dry run runs as the caller's).
fn envelope_of_event(mut event: serde_json::Map<String, Value>, org_id: &str) -> ApiResult<String> {
    if let Some(organisation) = event.remove("organisation") {
        let ok = organisation.as_object().is_some_and(|o| o.len() == 1 && o.get("id").is_some_and(Value::is_string));
        if !ok {
            return Err(ApiError::field("event.organisation", "must be an object {\"id\": \"org_…\"}"));
        }
    }
    let event_text = Value::Object(event).to_string();
    let raw: BTreeMap<String, &RawValue> =
        serde_json::from_str(&event_text).map_err(|e| ApiError::field("event", e.to_string()))?;
    let event = crate::domain::events::validate(raw).map_err(|e| e.within("event"))?;
    Ok(event.envelope(org_id))
}

/// The envelope of a delivery's event, as published (before any plugin ran).
async fn envelope_of_delivery(app: &App, org_id: &str, delivery_id: &str) -> ApiResult<String> {
    let not_found = || ApiError::field("delivery_id", "no such delivery in this organisation");
    if !ids::is_valid(Kind::Delivery, delivery_id) {
        return Err(not_found());
    }
    let delivery = app.store.get_delivery(org_id, delivery_id).await?.ok_or_else(not_found)?;
    let expired = || ApiError::field("delivery_id", "the event of this delivery has expired");
    let p = app.store.keys().partition_of_delivery(delivery_id).ok_or_else(not_found)?;
    let event = app.store.event(p, org_id, &delivery.event_id).await?.ok_or_else(expired)?;
    Ok(event.envelope)
}
