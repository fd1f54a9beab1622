//! Opening a portal link (contract §9): `GET /portal#token=…` is a page whose script
//! (`/settings/portal.js`: no inline script) posts the fragment's token to
//! `POST /portal/session`, which exchanges it once for a portal session and goes on to
//! Settings > Webhooks. The session's cookie is `SameSite=None; Secure; Partitioned` (CHIPS):
//! a browser that blocks third-party cookies still keeps a partitioned one for the site that
//! frames Weir (and only there), so the portal works inside the operator's product and in a
//! tab of its own. `Secure` is always set: browsers treat loopback as secure, and anywhere else
//! the portal is served over HTTPS. A link that has expired or was used sends the frame to its
//! `refresh_url` when it has one (the operator's backend makes a new link there), else says
//! so under the link's brand.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::cookies::PORTAL_COOKIE;
use super::framing::{frame_for, framed_anywhere};
use super::html;
use super::layout::link_page;
use super::session::Form;
use crate::domain::portal::{ExchangeRefused, PortalLinks};
use crate::forwarded::ClientAddr;

/// `GET /portal`: the page that opens a link (it holds nothing: any page may frame it; what
/// the link opens answers with the link's own `frame-ancestors`).
pub(super) async fn landing() -> Response {
    let body = r#"<h1>Opening webhooks…</h1>
<form id="exchange" method="post" action="/portal/session"><input type="hidden" name="token"><noscript><p>This page needs JavaScript to open the link.</p></noscript></form>
<p id="missing" hidden>This link is incomplete. Open Webhooks again from the product you came from.</p>
<script src="/settings/portal.js"></script>"#;
    super::framing::landing(link_page(StatusCode::OK, "Opening", None, body))
}

/// `POST /portal/session` with `token`: the link exchanged for a session, or a page that
/// says why not.
pub(super) async fn exchange(State(portal): State<Arc<PortalLinks>>, request: Request) -> Response {
    let address = request.extensions().get::<ClientAddr>().map(|c| c.0.to_string()).unwrap_or_default();
    let form = match Form::read(request).await {
        Ok(form) => form,
        Err(refused) => return framed_anywhere(refused),
    };
    let token = form.get("token").unwrap_or("").trim().to_owned();
    match portal.exchange(&token, &address).await {
        Ok(opened) => {
            let mut response = html::see_other("/settings/webhooks");
            let cookie = format!(
                "{PORTAL_COOKIE}={}; Path=/settings; HttpOnly; Secure; SameSite=None; Partitioned",
                opened.token
            );
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            frame_for(response, &opened.portal)
        }
        Err(ExchangeRefused::Expired(Some(link))) if link.look.refresh_url.is_some() => {
            // The operator's backend makes a new link there and sends the frame on to it.
            let to = link.look.refresh_url.as_deref().unwrap_or_default();
            frame_for(html::see_other(to), &link)
        }
        Err(ExchangeRefused::Expired(link)) => {
            let page = link_page(
                StatusCode::GONE,
                "Link expired",
                link.as_ref(),
                "<h1>This link has expired</h1><p>It was already used, or it is too old. Open Webhooks again from the product you came from.</p>",
            );
            match link {
                Some(link) => frame_for(page, &link),
                None => framed_anywhere(page),
            }
        }
        Err(ExchangeRefused::Throttled) => {
            let message = "<h1>Too many links opened</h1><p>Too many links were opened from this address. Try again in a minute.</p>";
            let mut page = link_page(StatusCode::TOO_MANY_REQUESTS, "Try again", None, message);
            page.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
            framed_anywhere(page)
        }
        Err(ExchangeRefused::Store(_)) => framed_anywhere(html::store_down()),
    }
}

/// The accent's custom properties: the colour, the text drawn on it (white, or dark where
/// white would read below 4.5:1 on it), and the colours for text on the page: on the light
/// page the accent darkened until it reads at 4.5:1 or better, on the dark page lightened.
fn accent_css(hex: &str) -> String {
    let rgb: Vec<f64> = (0..3).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_or(0.0, f64::from)).collect();
    let on_white = |rgb: &[f64]| 1.05 / (luminance(rgb) + 0.05);
    let on_dark = |rgb: &[f64]| (luminance(rgb) + 0.05) / (luminance(&DARK_PAGE) + 0.05);
    let ink = if on_white(&rgb) >= 4.5 { "#fff" } else { "#1b1f24" };
    let mut text = rgb.clone();
    while on_white(&text) < 4.5 {
        text.iter_mut().for_each(|c| *c *= 0.9);
    }
    let mut light = rgb.clone();
    while on_dark(&light) < 4.5 {
        light.iter_mut().for_each(|c| *c = 255.0 - (255.0 - *c) * 0.9);
    }
    let hex_of = |rgb: &[f64]| rgb.iter().map(|c| format!("{:02x}", c.round() as u8)).collect::<String>();
    format!(
        ":root {{ --accent: #{hex}; --accent-ink: {ink}; --accent-text: #{}; --accent-text-dark: #{}; }}\n",
        hex_of(&text),
        hex_of(&light)
    )
}

/// The dark scheme's page colour (`app.css`), #0d1117.
const DARK_PAGE: [f64; 3] = [13.0, 17.0, 23.0];

/// WCAG's relative luminance of an sRGB colour (0–255 a channel).
fn luminance(rgb: &[f64]) -> f64 {
    let linear = |c: f64| {
        let c = c / 255.0;
        if c <= 0.039_28 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    };
    0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])
}

/// `GET /settings/accent.css?c=RRGGBB`: the pages' accent colour (a stylesheet, so the
/// pages' policy allows no inline style).
pub(super) async fn accent(query: crate::web::Query) -> Response {
    let colour =
        query.get("c").filter(|c| c.len() == 6 && c.bytes().all(|b| b.is_ascii_hexdigit())).unwrap_or("0550ae");
    let css = accent_css(colour);
    let mut response = axum::response::IntoResponse::into_response(css);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/css; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accent_white_would_not_read_on_gets_dark_text_and_a_darker_link_colour() {
        // #ffcc00: white on it is about 1.6:1.
        let yellow = accent_css("ffcc00");
        assert!(yellow.contains("--accent: #ffcc00; --accent-ink: #1b1f24;"), "{yellow}");
        let text = yellow.split("--accent-text: #").nth(1).unwrap();
        let rgb: Vec<f64> =
            (0..3).map(|i| f64::from(u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())).collect();
        assert!(1.05 / (luminance(&rgb) + 0.05) >= 4.5, "links in {text} read at 4.5:1 on white");
        // A dark accent keeps white text and is its own link colour.
        assert!(
            accent_css("0550ae").starts_with(":root { --accent: #0550ae; --accent-ink: #fff; --accent-text: #0550ae;")
        );
        // On the dark page a dark accent is lightened until it reads at 4.5:1.
        let dark = accent_css("0550ae");
        let text = dark.split("--accent-text-dark: #").nth(1).unwrap();
        let rgb: Vec<f64> =
            (0..3).map(|i| f64::from(u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())).collect();
        assert!((luminance(&rgb) + 0.05) / (luminance(&DARK_PAGE) + 0.05) >= 4.5, "{text}");
        assert!((1.05 / (luminance(&[255.0, 255.0, 255.0]) + 0.05) - 1.0).abs() < 1e-9);
    }
}
