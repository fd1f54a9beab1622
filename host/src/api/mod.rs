//! The HTTP API: routing, and the rule that every error — from a handler, an extractor
//! or the router itself (unknown route, wrong method) — has the contract's JSON shape.
//!
//! One file per resource: `oauth` (token endpoint), `webhooks`, `events` (publishing),
//! `deliveries` (`webhook_deliveries`), `plugins`, `exports` (report exports and their
//! downloads), `ops` (health, metrics).
//! Handlers validate input with `extract` (and `crate::domain::fields`), call the domain
//! through the one handle each takes (`state`: `State<Arc<Webhooks>>`, …), and map failures
//! through `error::ApiError`; they hold no state of their own and never reach the store.

pub(crate) mod deliveries;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod exports;
pub(crate) mod extract;
pub(crate) mod filters;
pub(crate) mod intake;
pub(crate) mod kind_schema;
pub(crate) mod oauth;
pub(crate) mod openapi;
pub(crate) mod ops;
pub(crate) mod plugins;
pub(crate) mod portal;
pub(crate) mod replay;
pub(crate) mod schema;
pub(crate) mod source_schema;
pub(crate) mod sources;
mod state;
pub(crate) mod usage;
pub(crate) mod webhooks;

use std::sync::Arc;

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use tower::{BoxError, ServiceBuilder};

use self::error::{ApiError, Code};
use crate::domain::access::Access;
use crate::domain::handles::Handles;

/// Longest one request may take, body included; beyond it the answer is `503`. Most routes
/// have a shorter budget ([`budget_of`]).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Most requests one process handles at once; beyond it requests are refused at once with
/// `503` and `Retry-After` (load shedding) rather than queued without bound.
pub(crate) const MAX_CONCURRENT_REQUESTS: usize = 1024;
const _: () = assert!(intake::MAX_REQUESTS_PER_ORG * 4 == MAX_CONCURRENT_REQUESTS);

/// `router` under the limits every request shares: its body read ahead at intake (outside
/// the slots: `intake`), a timeout, and a concurrency limit with load shedding. This is what
/// the listener serves.
pub(crate) fn service(
    router: Router,
    access: Arc<Access>,
) -> impl tower::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = Response,
    Error = Infallible,
    Future = impl Future<Output = Result<Response, Infallible>> + Send + 'static,
> + Clone
+ Send
+ 'static {
    let intake = axum::middleware::from_fn_with_state(intake::Intake::new(access), intake::intake);
    ServiceBuilder::new()
        .map_request(|request: hyper::Request<hyper::body::Incoming>| request.map(axum::body::Body::new))
        .layer(intake)
        .service(guard(router.layer(axum::middleware::from_fn(budget)), REQUEST_TIMEOUT, MAX_CONCURRENT_REQUESTS))
}

/// The longest a request of a route may hold its slot: a read or a listing [`READ_BUDGET`]
/// (one that would take longer is ended, and changes nothing); a change, and a download,
/// the whole [`REQUEST_TIMEOUT`] — a change cut short could be done and answered `503`,
/// which a client would try again.
pub(crate) fn budget_of(method: &axum::http::Method, path: &str) -> Duration {
    use axum::http::Method;
    match method {
        &Method::GET | &Method::HEAD if !path.starts_with("/exports/") => READ_BUDGET,
        _ => REQUEST_TIMEOUT,
    }
}

/// The longest a read or a listing may take.
pub(crate) const READ_BUDGET: Duration = Duration::from_secs(10);

/// Ends a request past its route's budget ([`budget_of`]) with `503`: no request holds a
/// slot longer, whatever it asked for.
async fn budget(request: Request, next: Next) -> Response {
    let budget = budget_of(request.method(), request.uri().path());
    match tokio::time::timeout(budget, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::debug!(budget = ?budget, "a request ran past its route's budget");
            ApiError { retry_after: Some(1), ..ApiError::new(Code::Unavailable, "the request took too long") }
                .into_response()
        }
    }
}

/// `router` with a per-request `timeout` and at most `max` requests at once (the rest are
/// shed at once with `503`).
fn guard<B>(
    router: Router,
    timeout: Duration,
    max: usize,
) -> impl tower::Service<
    hyper::Request<B>,
    Response = Response,
    Error = Infallible,
    Future = impl Future<Output = Result<Response, Infallible>> + Send + 'static,
> + Clone
+ Send
+ 'static
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    ServiceBuilder::new()
        .layer(HandleErrorLayer::new(overloaded))
        .load_shed()
        .concurrency_limit(max)
        .timeout(timeout)
        .service(router)
}

/// The answer when a request timed out or was shed.
async fn overloaded(error: BoxError) -> ApiError {
    if error.is::<tower::timeout::error::Elapsed>() {
        tracing::warn!("a request took longer than {REQUEST_TIMEOUT:?}");
        ApiError { retry_after: Some(1), ..ApiError::new(Code::Unavailable, "the request took too long") }
    } else if error.is::<tower::load_shed::error::Overloaded>() {
        ApiError {
            retry_after: Some(1),
            ..ApiError::new(Code::Unavailable, "too many requests in progress; retry shortly")
        }
    } else {
        tracing::error!(%error, "request failed");
        ApiError::internal()
    }
}

/// The API's routes: the token endpoint, `/api/v2`, the operations endpoints and export
/// downloads.
pub(crate) fn routes() -> Router<Handles> {
    let api = Router::new()
        .route("/webhooks/events", get(webhooks::events))
        .route("/webhooks", get(webhooks::list).post(webhooks::create))
        .route("/webhooks/{id}", get(webhooks::get).patch(webhooks::update).delete(webhooks::delete))
        .route("/webhooks/{id}/retry_failed", post(deliveries::retry_failed))
        .route("/webhooks/{id}/rotate_secret", post(webhooks::rotate_secret))
        .route("/webhooks/{id}/test", post(webhooks::test))
        .route("/webhooks/{id}/replay", get(replay::status).post(replay::replay))
        .route("/events", get(events::list).post(events::publish))
        .route("/events/{id}", get(events::get))
        .route("/filters/test", post(filters::test))
        .route("/webhook_deliveries", get(deliveries::list))
        .route("/webhook_deliveries/{id}", get(deliveries::get))
        .route("/webhook_deliveries/{id}/retry", post(deliveries::retry))
        .route("/openapi.json", get(openapi::openapi_json))
        .route("/plugins", get(plugins::list).post(plugins::upload))
        .route("/plugins/{id}", get(plugins::get).delete(plugins::delete))
        .route("/plugins/{id}/test", post(plugins::test))
        .route("/report_exports", post(exports::create))
        .route("/report_exports/{id}", get(exports::get))
        .route("/portal_links", post(portal::create))
        .route("/portal_sessions", delete(portal::end))
        .route("/usage", get(usage::get))
        .route("/sources", get(sources::list).post(sources::create))
        .route("/sources/{id}", get(sources::get).patch(sources::update).delete(sources::delete))
        .route("/sources/{id}/rotate", post(sources::rotate))
        .route("/sources/{id}/requests", get(sources::requests));
    Router::new()
        .route("/oauth/token", post(oauth::token))
        .route("/oauth/revoke", post(oauth::revoke))
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .route("/exports/{id}/download", get(exports::download))
        .route("/in/{token}", post(sources::ingest))
        .nest("/api/v2", api)
}

/// `routes` (the API's and any other surface's) with the rule that every error has the
/// contract's shape: unknown routes and methods answer it, and any other error response
/// that is not JSON (or an HTML page) is rewritten into it.
pub(crate) fn with_error_shape(routes: Router<Handles>, handles: Handles) -> Router {
    routes
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(error_shape))
        .with_state(handles)
}

async fn not_found() -> ApiError {
    ApiError::new(Code::NotFound, "no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(Code::MethodNotAllowed, "method not allowed on this route")
}

/// Rewrites any error response that is not already JSON (or an HTML page) into the
/// contract's shape, so framework rejections never leak plain-text bodies.
async fn error_shape(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if content_type.starts_with("application/json") || content_type.starts_with("text/html") {
        return response;
    }
    let code = Code::for_status(status);
    let message = match code {
        Code::Internal => "internal error".to_owned(),
        _ => status.canonical_reason().unwrap_or("error").to_lowercase(),
    };
    let mut rewritten = ApiError::new(code, message).into_response();
    *rewritten.status_mut() = status;
    for name in [header::ALLOW, header::RETRY_AFTER, header::WWW_AUTHENTICATE] {
        if let Some(value) = response.headers().get(&name) {
            rewritten.headers_mut().insert(name, value.clone());
        }
    }
    rewritten
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::StatusCode;
    use tower::{Service, ServiceExt};

    use super::*;

    fn slow_router() -> Router {
        Router::new().route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "done"
            }),
        )
    }

    fn get_slow() -> hyper::Request<Body> {
        hyper::Request::builder().uri("/slow").body(Body::empty()).unwrap_or_default()
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_past_its_timeout_gets_503() {
        let service = guard(slow_router(), Duration::from_secs(1), 10);
        let response = service.oneshot(get_slow()).await.unwrap_or_else(|e| match e {});
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(response.headers().contains_key(header::RETRY_AFTER));
    }

    #[tokio::test(start_paused = true)]
    async fn requests_beyond_the_limit_are_shed_at_once_and_the_rest_finish() {
        let mut service = guard(slow_router(), Duration::from_secs(60), 2);
        let mut running = Vec::new();
        for _ in 0..2 {
            let ready = service.ready().await.unwrap_or_else(|e| match e {});
            running.push(tokio::spawn(ready.call(get_slow())));
        }
        // Let both start (and take their slots) before the third arrives.
        tokio::time::sleep(Duration::from_millis(10)).await;
        let shed = service.clone().oneshot(get_slow()).await.unwrap_or_else(|e| match e {});
        assert_eq!(shed.status(), StatusCode::SERVICE_UNAVAILABLE, "a third request at once is shed");
        for request in running {
            let response = request.await.map(|r| r.unwrap_or_else(|e| match e {})).map(|r| r.status());
            assert_eq!(response.ok(), Some(StatusCode::OK));
        }
    }
}
