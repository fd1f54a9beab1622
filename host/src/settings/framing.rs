//! Who may frame a page: the `Content-Security-Policy` of portal pages (the link's
//! `frame-ancestors`, or any site for a page that holds nothing) and the accent colour's
//! stylesheet link.

use axum::http::{HeaderValue, header};
use axum::response::Response;

/// A page any site may frame (it shows nothing of an organisation).
pub(super) fn framed_anywhere(response: Response) -> Response {
    with_ancestors(response, "*")
}

/// A page only `ancestors` may frame (`'none'` when there are none).
pub(super) fn frame_for(response: Response, ancestors: &[String]) -> Response {
    let list = if ancestors.is_empty() { "'none'".to_owned() } else { ancestors.join(" ") };
    with_ancestors(response, &list)
}

fn with_ancestors(mut response: Response, list: &str) -> Response {
    let policy = format!("default-src 'self'; frame-ancestors {list}; form-action 'self'; base-uri 'none'");
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
        // `frame-ancestors` decides; X-Frame-Options has no list and would forbid it.
        headers.remove(header::X_FRAME_OPTIONS);
    }
    response
}

/// The stylesheet link of an accent colour (`#RRGGBB`; anything but hex digits is dropped).
pub(super) fn accent_link(accent: &str) -> String {
    let hex: String = accent.chars().filter(char::is_ascii_hexdigit).take(6).collect();
    format!(r#"<link rel="stylesheet" href="/settings/accent.css?c={hex}">"#)
}
