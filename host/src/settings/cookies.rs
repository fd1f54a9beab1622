//! The pages' cookie names, and reading one from a request.

use axum::http::{HeaderMap, header};

/// A person's session.
pub(super) const SESSION_COOKIE: &str = "weir_session";
/// A portal session (contract §9).
pub(super) const PORTAL_COOKIE: &str = "weir_portal";

/// The value of cookie `name`, if the request sent it.
pub(super) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}
