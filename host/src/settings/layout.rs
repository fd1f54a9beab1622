//! The layout every page shares: head, header and headers. A person's pages carry Weir's name
//! and a sign-out; a portal session's pages carry the operator's (its link's `brand`, a
//! "back" link to `return_url`, its accent and theme) and no Weir name at all, and tell the
//! page framing them their height (`assets/frame.js`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::escape::{csrf_field, esc};
use crate::domain::portal::Portal;

/// Who is looking at a page (for the header).
#[derive(Debug, Clone)]
pub(crate) struct Viewer<'a> {
    pub email: &'a str,
    pub admin: bool,
    pub csrf: &'a str,
    /// A portal session: what its link shows; no person to name, no sign-out.
    pub portal: Option<&'a Portal>,
}

/// What surrounds a page's body.
struct Chrome {
    /// Names the site in the title.
    site: String,
    /// The header's content (empty: no header).
    header: String,
    /// Attributes of `<html>`.
    root: String,
    /// Stylesheets and scripts beyond the shared ones.
    head: String,
}

impl Chrome {
    fn weir(nav: String) -> Chrome {
        Chrome {
            site: "Weir".to_owned(),
            header: format!(r#"<a class="brand" href="/settings/webhooks">Weir · Settings</a>{nav}"#),
            root: String::new(),
            head: String::new(),
        }
    }

    /// A portal page: the operator's brand, back link, accent and theme (`viewing`: a session
    /// that may look only, which the header says).
    fn portal(portal: &Portal, viewing: Option<bool>) -> Chrome {
        let look = &portal.look;
        let logo = look
            .logo_url
            .as_deref()
            .map(|u| format!(r#"<img src="{}" alt="" height="24">"#, esc(u)))
            .unwrap_or_default();
        let brand = match (&look.brand_name, viewing) {
            (Some(name), Some(_)) => format!(r#"<a class="brand" href="/settings/webhooks">{logo}{}</a>"#, esc(name)),
            (Some(name), None) => format!(r#"<span class="brand">{logo}{}</span>"#, esc(name)),
            (None, _) => String::new(),
        };
        let back = look.return_url.as_deref().map(|u| {
            let to = look.brand_name.as_deref().map(|n| format!(" to {}", esc(n))).unwrap_or_default();
            format!(r#"<a class="back" href="{}" target="_top">← Back{to}</a>"#, esc(u))
        });
        let only = (viewing == Some(false)).then(|| r#"<span class="who">View only</span>"#.to_owned());
        let nav = match [back, only].into_iter().flatten().collect::<Vec<_>>() {
            parts if parts.is_empty() => String::new(),
            parts => format!(r#"<nav aria-label="Account">{}</nav>"#, parts.concat()),
        };
        let mut root = look.theme.as_deref().map(|t| format!(r#" data-theme="{}""#, esc(t))).unwrap_or_default();
        let mut head = portal.accent.as_deref().map(super::framing::accent_link).unwrap_or_default();
        if viewing.is_some() && !portal.frame_ancestors.is_empty() {
            root.push_str(&format!(r#" data-frame-origins="{}""#, esc(&portal.frame_ancestors.join(" "))));
            head.push_str(r#"<script src="/settings/frame.js" defer></script>"#);
        }
        let site = look.brand_name.clone().unwrap_or_else(|| "Webhooks".to_owned());
        Chrome { site, header: format!("{brand}{nav}"), root, head }
    }
}

/// A full page: the layout around `body`.
pub(crate) fn page(status: StatusCode, title: &str, viewer: Option<&Viewer<'_>>, body: &str) -> Response {
    let chrome = match viewer {
        Some(Viewer { portal: Some(portal), admin, .. }) => Chrome::portal(portal, Some(*admin)),
        Some(v) => Chrome::weir(format!(
            r#"<nav aria-label="Account"><span class="who">{email}{role}</span>
<form method="post" action="/settings/logout" class="inline">{csrf}<button type="submit" class="link">Sign out</button></form></nav>"#,
            email = esc(v.email),
            role = if v.admin { " (admin)" } else { " (read only)" },
            csrf = csrf_field(v.csrf),
        )),
        None => Chrome::weir(String::new()),
    };
    render(status, title, &chrome, body)
}

/// A page of a portal link that opens no session (it expired, or was used): the link's
/// brand and theme when it is known, and no Weir name either way.
pub(crate) fn link_page(status: StatusCode, title: &str, portal: Option<&Portal>, body: &str) -> Response {
    let chrome = match portal {
        Some(portal) => Chrome::portal(portal, None),
        None => Chrome { site: "Webhooks".to_owned(), header: String::new(), root: String::new(), head: String::new() },
    };
    render(status, title, &chrome, body)
}

fn render(status: StatusCode, title: &str, chrome: &Chrome, body: &str) -> Response {
    let header = match chrome.header.as_str() {
        "" => String::new(),
        content => format!("<header>{content}</header>"),
    };
    let html = format!(
        r##"<!doctype html>
<html lang="en"{root}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{title} · {site}</title>
<link rel="stylesheet" href="/settings/app.css"><link rel="stylesheet" href="/settings/kinds.css">{head}
<script src="/settings/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
{header}
<main id="main" tabindex="-1">
{body}
</main>
</body>
</html>"##,
        root = chrome.root,
        title = esc(title),
        site = esc(&chrome.site),
        head = chrome.head,
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The organisation's sections (webhooks, the log of their deliveries, the event catalogue,
/// the sources providers send to),
/// `current` marked as the page shown.
pub(crate) fn section_nav(current: &str) -> String {
    let links: String =
        [("webhooks", "Webhooks"), ("deliveries", "Deliveries"), ("events", "Events"), ("sources", "Sources")]
            .iter()
            .map(|(path, name)| {
                let here = if *path == current { r#" aria-current="page""# } else { "" };
                format!(r#"<a href="/settings/{path}"{here}>{name}</a>"#)
            })
            .collect();
    format!(r#"<nav class="tabs sections" aria-label="Sections">{links}</nav>"#)
}
