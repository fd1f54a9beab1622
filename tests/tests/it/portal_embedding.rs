//! The portal as the operator's own (contract §10): a link's `brand` replaces Weir's name
//! (and shows its logo), `return_url` is a "back" link out of the frame, `refresh_url` takes a
//! frame whose link was used or expired back through the operator's backend to a new link,
//! and `theme` (or the browser's preference) draws the pages dark. Over raw HTTP and in
//! Chromium, framed by a page on another origin.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use weir::store::tenants::orgs::Plan;

use crate::portal::{link, open, portal_cookie, token_of};
use crate::portal_browser::framed_shows;
use crate::support::browser::Browser;
use crate::support::eventually;
use crate::support::weir::Weir;

/// The operator's product on `ip`:`port`: `/` frames `first`, `/new-link` is its
/// backend making a new link (here: `next`, made beforehand) and sending the frame to it,
/// `/logo.svg` its logo. Its origin.
async fn operator_site(ip: &str, port: u16, first: &str, next: &str) -> String {
    let listener = tokio::net::TcpListener::bind((ip, port)).await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let page = format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>Acme</title></head><body style="margin:0"><h1 style="font:16px sans-serif;margin:8px">Acme — Settings</h1><iframe src="{first}" style="border:0;width:1000px;height:700px"></iframe></body></html>"#
    );
    let next = next.to_owned();
    tokio::spawn(async move {
        // A few requests per test, each connection on its own (a browser may open one and
        // send nothing on it); bounded by the test's life.
        for _ in 0..50 {
            let Ok((stream, _)) = listener.accept().await else { return };
            tokio::spawn(answer(stream, page.clone(), next.clone()));
        }
    });
    origin
}

const LOGO: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><rect width="24" height="24" fill="#a30"/></svg>"##;

/// One request of the operator's site, answered.
async fn answer(mut stream: tokio::net::TcpStream, page: String, next: String) {
    let mut buf = [0u8; 4096];
    let n = stream.read(&mut buf).await.unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..n]);
    let path = head.split_whitespace().nth(1).unwrap_or("/");
    let reply = match path {
        "/new-link" => {
            format!("HTTP/1.1 303 See Other\r\nlocation: {next}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        }
        "/logo.svg" => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: image/svg+xml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{LOGO}",
            LOGO.len()
        ),
        _ => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        ),
    };
    let _ = stream.write_all(reply.as_bytes()).await;
}

#[tokio::test]
async fn a_link_carries_the_operators_brand_back_link_refresh_url_and_theme() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let body = json!({"frame_ancestors": ["http://127.0.0.2:8080"],
        "brand": {"name": "Acme Cloud", "logo_url": "https://cdn.acme.example/logo.svg"},
        "return_url": "https://app.acme.example/settings", "refresh_url": "http://127.0.0.2:8080/new-link",
        "theme": "dark"});
    let made = link(&t, body).await;
    let http = weir.http();
    let opened = open(&http, &token_of(&made)).await;
    assert_eq!(opened.status, 303, "{}", opened.text());
    let list = http.get("/settings/webhooks").header("cookie", &portal_cookie(&opened)).send().await.expect(200);
    let html = list.text();
    assert!(html.contains("<title>Webhooks · Acme Cloud</title>"), "{html}");
    assert!(html.contains(r#"<img src="https://cdn.acme.example/logo.svg" alt="" height="24">Acme Cloud"#), "{html}");
    assert!(html.contains(r#"href="https://app.acme.example/settings" target="_top">← Back to Acme Cloud"#), "{html}");
    assert!(html.contains(r#"data-theme="dark""#), "{html}");
    assert!(!html.contains("Weir"), "the operator's name, never Weir's: {html}");
    let policy = list.header("content-security-policy").unwrap_or_default();
    assert!(policy.contains("img-src 'self' https://cdn.acme.example;"), "its logo may load: {policy}");

    // Used: the frame goes to the operator's backend for a new link, not to "expired".
    let again = open(&http, &token_of(&made)).await;
    assert_eq!(again.status, 303);
    assert_eq!(again.header("location").as_deref(), Some("http://127.0.0.2:8080/new-link"));
    assert!(again.header("set-cookie").is_none(), "no session");
    // Without one, the expired page is under the operator's name.
    let plain = link(&t, json!({"brand": {"name": "Acme Cloud"}})).await;
    assert_eq!(open(&http, &token_of(&plain)).await.status, 303);
    let expired = open(&http, &token_of(&plain)).await;
    assert_eq!(expired.status, 410);
    let page = expired.text();
    assert!(page.contains("This link has expired") && page.contains("Acme Cloud") && !page.contains("Weir"), "{page}");
    let unknown = open(&http, "wpt_nosuchlink").await.text();
    assert!(unknown.contains("This link has expired") && !unknown.contains("Weir"), "{unknown}");

    let refused = t
        .admin
        .post(
            "/api/v2/portal_links",
            &json!({"refresh_url": "http://app.acme.example/new-link", "return_url": "javascript:history.back()",
                "brand": {"logo_url": "https://user:pw@cdn.acme.example/l.svg"}, "theme": "blue"}),
        )
        .await
        .expect(422);
    assert_eq!(refused.error_fields(), ["return_url", "refresh_url", "theme", "brand.name", "brand.logo_url"]);
}

#[tokio::test]
async fn a_frame_shown_again_gets_a_new_session_through_the_operators_backend() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    t.admin.create_webhook("http://127.0.0.1:9/erp", &["form_completed"]).await;
    let probe = tokio::net::TcpListener::bind(("127.0.0.2", 0)).await.unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let origin = format!("http://127.0.0.2:{port}");
    let body = json!({"frame_ancestors": [origin], "brand": {"name": "Acme Cloud", "logo_url": format!("{origin}/logo.svg")},
        "return_url": format!("{origin}/"), "refresh_url": format!("{origin}/new-link")});
    let first = link(&t, body.clone()).await;
    let next = link(&t, body).await;
    let site = operator_site("127.0.0.2", port, first["url"].as_str().unwrap(), next["url"].as_str().unwrap()).await;
    assert_eq!(site, origin);

    let browser = Browser::start(1100, 900).await;
    browser.goto(&format!("{site}/")).await;
    browser.find("iframe").await;
    browser.frame(0).await;
    let shown = framed_shows(&browser, "Acme Cloud").await;
    assert!(shown.contains("← Back to Acme Cloud") && !shown.contains("Weir"), "{shown}");
    let logo = "const i = document.querySelector('.brand img'); return i && i.complete ? i.naturalWidth : 0;";
    eventually("the operator's logo loads", Duration::from_secs(10), async || {
        (browser.run(logo).await.as_u64().unwrap_or(0) > 0).then_some(())
    })
    .await;
    assert_eq!(browser.run("return document.querySelector('a.back').target;").await, "_top");

    // The host page shown again: its frame's link was used, and the operator's backend
    // hands the frame a new one.
    browser.top().await;
    browser.goto(&format!("{site}/")).await;
    browser.frame(0).await;
    let again = framed_shows(&browser, "Acme Cloud").await;
    assert!(again.contains("http://127.0.0.1:9/erp"), "the webhooks again, not 'expired': {again}");
    assert!(!again.contains("expired"), "{again}");

    // Dark, as the browser prefers (and the host page, whose colour scheme the frame follows).
    browser.prefer_scheme("dark").await;
    let dark = browser.run("return getComputedStyle(document.body).backgroundColor;").await;
    assert_eq!(dark, "rgb(13, 17, 23)");
    browser.top().await;
    browser.screenshot("portal-embedded-dark").await;
}
