//! Who may frame a page: the `Content-Security-Policy` of portal pages (the link's
//! `frame-ancestors`, or any site for a page that holds nothing) and the accent colour's
//! stylesheet link.

use axum::http::{HeaderValue, header};
use axum::response::Response;

use crate::domain::portal::Portal;

/// A page any site may frame (it shows nothing of an organisation).
pub(super) fn framed_anywhere(response: Response) -> Response {
    with_policy(response, "frame-ancestors *; form-action 'self'")
}

/// The page that opens a link: any site may frame it, and its form may end on the operator's
/// `refresh_url` (a redirect after a form follows `form-action`); it has no other form.
pub(super) fn landing(response: Response) -> Response {
    with_policy(response, "frame-ancestors *; form-action 'self' https: http:")
}

/// A page of a portal link: only its `frame_ancestors` may frame it (`'none'` when there
/// are none), and its brand's logo may be shown.
pub(super) fn frame_for(response: Response, portal: &Portal) -> Response {
    let ancestors = &portal.frame_ancestors;
    let list = if ancestors.is_empty() { "'none'".to_owned() } else { ancestors.join(" ") };
    let images = match portal.look.logo_url.as_deref().and_then(crate::domain::portal_look::origin) {
        Some(origin) => format!("; img-src 'self' {origin}"),
        None => String::new(),
    };
    with_policy(response, &format!("frame-ancestors {list}; form-action 'self'{images}"))
}

fn with_policy(mut response: Response, policy: &str) -> Response {
    let policy = format!("default-src 'self'; {policy}; base-uri 'none'");
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
