//! Operations endpoints: liveness, readiness and metrics. They need no token.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::ApiError;
use crate::domain::operations::Operations;

/// `GET /healthz`: the process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "The process is up", body = crate::api::schema::Health)))]
pub(crate) async fn healthz() -> Response {
    axum::Json(json!({"status": "ok"})).into_response()
}

/// `GET /readyz`: the process can serve requests (Redis answers).
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, description = "Redis answers", body = crate::api::schema::Health)))]
pub(crate) async fn readyz(State(operations): State<Arc<Operations>>) -> Response {
    if operations.ready().await {
        axum::Json(json!({"status": "ready"})).into_response()
    } else {
        ApiError::unavailable().into_response()
    }
}

/// `GET /metrics`: Prometheus text format.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain; version=0.0.4", body = String)))]
pub(crate) async fn metrics(State(operations): State<Arc<Operations>>) -> Response {
    let mut response = (StatusCode::OK, operations.metrics().await).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"));
    response
}
