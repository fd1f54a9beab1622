//! Settings > Webhooks: server-rendered pages for the people of an organisation (service
//! document §1, §3). Webhooks made here and through the API are the same resource. The
//! pages work on every plan (only the API needs API integrations); everyone may look, only
//! admins may change. No front-end build: HTML from [`html`], a small stylesheet and an
//! optional copy-to-clipboard script.
//!
//! - `session`: sign-in, sessions, CSRF, the sign-in throttle.
//! - `webhooks`: the list, create, edit, plugins, rotate the secret, deactivate/reactivate,
//!   delete.
//! - `deliveries`: one delivery, and retrying it.
//! - `replay`: a webhook's replay form and its latest replay.

mod chart;
mod cookies;
mod deliveries;
mod destination_form;
mod escape;
mod events;
mod failures;
mod framing;
mod health;
pub(crate) mod html;
mod layout;
mod log;
mod pages;
mod portal;
mod replay;
mod search;
mod session;
mod sources;
mod status;
mod test_event;
mod try_filter;
mod usage;
mod viewing;
mod webhook_deliveries;
mod webhook_forms;
mod webhook_page;
mod webhooks;
mod when;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use std::sync::Arc;

use crate::domain::access::Access;
use crate::domain::handles::Handles;

/// The settings routes (under `/settings`) and the portal's (`/portal`); every page looks at
/// its cookies once, in `viewing`.
pub(crate) fn router(access: Arc<Access>) -> Router<Handles> {
    let pages = Router::new()
        .route("/settings", get(|| async { html::see_other("/settings/webhooks") }))
        .route("/settings/login", get(session::login_form).post(session::login))
        .route("/settings/logout", post(session::logout))
        .route("/settings/webhooks", get(webhooks::list).post(webhooks::create))
        .route("/settings/webhooks/new", get(webhooks::new_form))
        .route("/settings/webhooks/try_filter", post(try_filter::on_new))
        .route("/settings/webhooks/{id}/try_filter", post(try_filter::on_webhook))
        .route("/settings/webhooks/{id}", get(webhooks::show).post(webhooks::update))
        .route("/settings/webhooks/{id}/plugins", post(webhooks::update_plugins))
        .route("/settings/webhooks/{id}/active", post(webhooks::set_active))
        .route("/settings/webhooks/{id}/rotate_secret", post(webhooks::rotate_secret))
        .route("/settings/webhooks/{id}/retry_failed", post(webhook_deliveries::retry_failed))
        .route("/settings/webhooks/{id}/replay", post(replay::replay))
        .route("/settings/webhooks/{id}/test", post(test_event::send))
        .route("/settings/webhooks/{id}/delete", get(webhooks::delete_confirm).post(webhooks::delete))
        .route("/settings/events", get(events::catalogue))
        .route("/settings/sources", get(sources::list).post(sources::create))
        .route("/settings/sources/{id}", get(sources::show))
        .route("/settings/sources/{id}/delete", post(sources::delete))
        .route("/settings/search", get(search::search))
        .route("/settings/deliveries", get(log::log))
        .route("/settings/deliveries/{id}", get(deliveries::show))
        .route("/settings/deliveries/{id}/retry", post(deliveries::retry))
        .route_layer(axum::middleware::from_fn_with_state(access, viewing::layer));
    Router::new()
        .merge(pages)
        .route("/portal", get(portal::landing))
        .route("/portal/session", post(portal::exchange))
        .route("/settings/accent.css", get(portal::accent))
        .route("/settings/app.css", get(|| async { asset("text/css; charset=utf-8", include_str!("assets/app.css")) }))
        .route("/settings/kinds.css", get(|| async { asset("text/css; charset=utf-8", destination_form::kinds_css()) }))
        .route(
            "/settings/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", include_str!("assets/app.js")) }),
        )
        .route(
            "/settings/frame.js",
            get(|| async { asset("text/javascript; charset=utf-8", include_str!("assets/frame.js")) }),
        )
        .route(
            "/settings/portal.js",
            get(|| async { asset("text/javascript; charset=utf-8", include_str!("assets/portal.js")) }),
        )
}

fn asset(content_type: &'static str, body: impl IntoResponse) -> Response {
    let mut response = body.into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    response
}
