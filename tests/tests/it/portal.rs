//! Portal links over raw HTTP (contract §9): made by an admin client, opened once, a session
//! of one organisation framed only where the link says, `view` changing nothing, ended by the
//! operator; never a key to the API.

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::settings::set_cookies;
use crate::support::http::{Http, Resp};
use crate::support::weir::{Tenant, Weir, raw_conn};

/// A link's token, from its URL's fragment.
pub(crate) fn token_of(link: &Value) -> String {
    link["url"].as_str().unwrap().split("#token=").nth(1).unwrap().to_owned()
}

/// Makes a link (201) with `body`.
pub(crate) async fn link(t: &Tenant, body: Value) -> Value {
    t.admin.post("/api/v2/portal_links", &body).await.expect(201).json()
}

/// Opens a link as the landing page's script does; the answer.
pub(crate) async fn open(http: &Http, token: &str) -> Resp {
    http.post("/portal/session").form(&[("token", token)]).send().await
}

/// The session cookie (`name=value`) an opened link set.
pub(crate) fn portal_cookie(resp: &Resp) -> String {
    let cookie = set_cookies(resp).into_iter().find(|c| c.starts_with("weir_portal=")).expect("a portal cookie");
    cookie.split(';').next().unwrap().to_owned()
}

fn frame_ancestors(resp: &Resp) -> String {
    let policy = resp.header("content-security-policy").unwrap_or_default();
    let directive = policy.split(';').map(str::trim).find(|d| d.starts_with("frame-ancestors")).unwrap_or_default();
    directive.trim_start_matches("frame-ancestors").trim().to_owned()
}

fn csrf_of(html: &str) -> String {
    html.split("name=\"_csrf\" value=\"")
        .nth(1)
        .expect("a form with a CSRF token")
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_link_opens_once_a_session_of_its_organisation_framed_where_it_says() {
    let weir = Weir::start_default().await;
    let (a, b) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    let ours = a.admin.create_webhook("http://127.0.0.1:9/ours", &["form_completed"]).await;
    let theirs = b.admin.create_webhook("http://127.0.0.1:9/theirs", &["form_completed"]).await;
    let made = link(&a, json!({"frame_ancestors": ["http://127.0.0.2:8080/"], "accent_color": "#AA3300"})).await;
    let url = made["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("http://{}/portal#token=wpt_", weir.addr)), "{url}");
    assert!(made["id"].as_str().unwrap().starts_with("ptl_"));
    let expires = weir::time::parse_rfc3339(made["expires_at"].as_str().unwrap()).unwrap();
    let left = expires.saturating_sub(weir::time::now_millis());
    assert!((295_000..=300_000).contains(&left), "five minutes by default: {left} ms");
    let token = token_of(&made);
    assert!(token.len() >= 4 + 32, "at least 128 random bits: {token}");
    // Only its hash is kept.
    let names = crate::support::weir::raw_keys(&weir.builder, "*portal*");
    assert!(names.iter().all(|k| !k.contains(&token)), "{names:?}");

    let http = weir.http();
    the_landing_page_shows_nothing(&http).await;
    let opened = open(&http, &token).await;
    assert_eq!(opened.status, 303, "{}", opened.text());
    assert_eq!(opened.header("location").as_deref(), Some("/settings/webhooks"));
    let raw = set_cookies(&opened).into_iter().find(|c| c.starts_with("weir_portal=")).unwrap();
    for flag in ["Path=/settings", "HttpOnly", "Secure", "SameSite=None", "Partitioned"] {
        assert!(raw.contains(flag), "{raw}");
    }
    let cookie = portal_cookie(&opened);

    // Once only: the second use says the link expired, framed as the link says.
    let again = open(&http, &token).await;
    assert_eq!(again.status, 410);
    assert!(again.text().contains("This link has expired"));
    assert!(set_cookies(&again).is_empty(), "no session the second time");
    assert_eq!(frame_ancestors(&again), "http://127.0.0.2:8080");
    let unknown = open(&http, "wpt_notalink").await;
    assert_eq!(unknown.status, 410);

    let list = http.get("/settings/webhooks").header("cookie", &cookie).send().await.expect(200);
    assert_eq!(frame_ancestors(&list), "http://127.0.0.2:8080");
    assert!(list.header("x-frame-options").is_none(), "frame-ancestors decides");
    let html = list.text();
    assert!(html.contains(ours["id"].as_str().unwrap()), "its organisation's webhook is listed");
    assert!(!html.contains(theirs["id"].as_str().unwrap()), "never another organisation's");
    assert!(html.contains("/settings/accent.css?c=aa3300"), "the accent colour is applied");
    assert!(!html.contains("/settings/logout"), "a portal session has no sign-out");
    assert!(
        !html.contains("Plan: pro") && !html.contains(r#"data-quota="webhooks""#),
        "the plan and its quotas are the operator's, never shown to their customer"
    );
    let css = http.get("/settings/accent.css?c=aa3300").send().await.expect(200).text();
    assert!(css.contains("--accent: #aa3300"), "{css}");
    let other = format!("/settings/webhooks/{}", theirs["id"].as_str().unwrap());
    assert_eq!(http.get(&other).header("cookie", &cookie).send().await.status, 404);

    no_key_to_the_api(&http, &cookie, &token).await;
    manage_through_the_settings_forms(&http, &cookie, &a).await;

    // The operator ends every portal session of the organisation.
    let ended = a.admin.delete("/api/v2/portal_sessions").await.expect(200).json();
    assert_eq!(ended["ended"], 1);
    let after = http.get("/settings/webhooks").header("cookie", &cookie).send().await;
    assert_eq!(after.status, 401);
    assert!(after.text().contains("This session has ended"));
    assert!(!after.text().contains(ours["id"].as_str().unwrap()));
}

/// The landing page shows nothing, may be framed, and runs no inline script.
async fn the_landing_page_shows_nothing(http: &Http) {
    let landing = http.get("/portal").send().await.expect(200);
    assert_eq!(frame_ancestors(&landing), "*", "the landing page shows nothing and may be framed");
    let page = landing.text();
    assert!(page.contains(r#"<script src="/settings/portal.js"></script>"#), "{page}");
    assert_eq!(page.matches("<script").count(), page.matches("<script src=").count(), "no inline script");
    assert!(!landing.header("content-security-policy").unwrap().contains("unsafe-inline"));
}

/// A portal session (its cookie, its value as a bearer, the link's token) is no key to the API.
async fn no_key_to_the_api(http: &Http, cookie: &str, token: &str) {
    let session = cookie.split_once('=').unwrap().1;
    for resp in [
        http.get("/api/v2/webhooks").header("cookie", cookie).send().await,
        http.get("/api/v2/webhooks").bearer(session).send().await,
        http.get("/api/v2/webhooks").bearer(token).send().await,
    ] {
        assert_eq!(resp.status, 401, "{}", resp.text());
    }
}

/// `manage` changes through the same forms as Settings, with the session's CSRF token.
async fn manage_through_the_settings_forms(http: &Http, cookie: &str, a: &Tenant) {
    let form = http.get("/settings/webhooks/new").header("cookie", cookie).send().await.expect(200).text();
    let csrf = csrf_of(&form);
    let created = http
        .post("/settings/webhooks")
        .header("cookie", cookie)
        .form(&[("_csrf", csrf.as_str()), ("url", "http://127.0.0.1:9/made"), ("subscribed_actions", "form_completed")])
        .send()
        .await;
    assert_eq!(created.status, 303, "{}", created.text());
    assert_eq!(a.admin.get("/api/v2/webhooks").await.json()["data"].as_array().unwrap().len(), 2);
    let forged = http
        .post("/settings/webhooks")
        .header("cookie", cookie)
        .form(&[("_csrf", "forged"), ("url", "http://127.0.0.1:9/x"), ("subscribed_actions", "form_completed")])
        .send()
        .await;
    assert_eq!(forged.status, 403, "CSRF as Settings");
}

#[tokio::test]
async fn a_view_link_shows_the_pages_and_changes_nothing() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let made = t.admin.create_webhook("http://127.0.0.1:9/seen", &["form_completed"]).await;
    let id = made["id"].as_str().unwrap();
    let http = weir.http();
    let opened = open(&http, &token_of(&link(&t, json!({"permissions": "view"})).await)).await;
    assert_eq!(opened.status, 303);
    let cookie = portal_cookie(&opened);
    let list = http.get("/settings/webhooks").header("cookie", &cookie).send().await.expect(200);
    assert_eq!(frame_ancestors(&list), "'none'", "no list: no framing");
    let page = http.get(&format!("/settings/webhooks/{id}")).header("cookie", &cookie).send().await.expect(200);
    for html in [list.text(), page.text()] {
        assert!(html.contains("View only"));
        assert!(!html.contains("method=\"post\""), "no control that changes anything:\n{html}");
    }
    // Every change is refused, whatever the form says.
    let changes = [
        format!("/settings/webhooks/{id}/active"),
        format!("/settings/webhooks/{id}/delete"),
        format!("/settings/webhooks/{id}/rotate_secret"),
        format!("/settings/webhooks/{id}"),
        "/settings/webhooks".to_owned(),
        "/settings/logout".to_owned(),
    ];
    for path in changes {
        let resp = http.post(&path).header("cookie", &cookie).form(&[("active", "false"), ("name", "x")]).send().await;
        assert_eq!(resp.status, 403, "{path}");
    }
    let after = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.json();
    assert_eq!((after["active"].clone(), after["name"].clone()), (made["active"].clone(), made["name"].clone()));
}

#[tokio::test]
async fn links_are_checked_expire_and_live_an_idle_hour() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    for (body, field) in [
        (json!({"ttl_seconds": 59}), "ttl_seconds"),
        (json!({"ttl_seconds": 901}), "ttl_seconds"),
        (json!({"ttl_seconds": "300"}), "ttl_seconds"),
        (json!({"permissions": "all"}), "permissions"),
        (json!({"frame_ancestors": ["https://app.example.com/path"]}), "frame_ancestors[0]"),
        (json!({"frame_ancestors": ["https://a.example; script-src *"]}), "frame_ancestors[0]"),
        (json!({"frame_ancestors": "https://app.example.com"}), "frame_ancestors"),
        (json!({"accent_color": "red"}), "accent_color"),
        (json!({"other": true}), "other"),
    ] {
        let resp = t.admin.post("/api/v2/portal_links", &body).await;
        assert_eq!(resp.status, 422, "{body}");
        assert_eq!(resp.error_fields(), [field], "{body}");
    }
    let member = weir.client(&t.org_id, false, true).await;
    assert_eq!(member.post("/api/v2/portal_links", &json!({})).await.status, 403, "admin clients only");
    assert_eq!(member.delete("/api/v2/portal_sessions").await.status, 403);

    // Past its expiry a link opens nothing (its expiry moved back in Redis: no test waits a
    // minute).
    let token = token_of(&link(&t, json!({"ttl_seconds": 60})).await);
    let key = weir.store.keys().portal_link(&weir::auth::secrets::hash(&token));
    let mut conn = raw_conn(&weir.builder);
    let _: () = redis::cmd("HSET").arg(&key).arg("expires_ms").arg(1).query(&mut *conn).unwrap();
    let http = weir.http();
    let late = open(&http, &token).await;
    assert_eq!(late.status, 410);
    assert!(set_cookies(&late).is_empty());

    // A session lives an idle hour, pushed on by each request.
    let opened = open(&http, &token_of(&link(&t, json!({})).await)).await;
    let cookie = portal_cookie(&opened);
    let session_key = weir.store.keys().portal_session(&weir::auth::secrets::hash(cookie.split_once('=').unwrap().1));
    let _: () = redis::cmd("PEXPIRE").arg(&session_key).arg(10_000).query(&mut *conn).unwrap();
    http.get("/settings/webhooks").header("cookie", &cookie).send().await.expect(200);
    let ttl: i64 = redis::cmd("PTTL").arg(&session_key).query(&mut *conn).unwrap();
    assert!((3_590_000..=3_600_000).contains(&ttl), "an idle hour again: {ttl} ms");
}

#[tokio::test]
async fn opening_links_is_limited_per_address() {
    let weir = Weir::start_default().await;
    let http = weir.http();
    let mut statuses = Vec::new();
    for _ in 0..31 {
        statuses.push(open(&http, "wpt_guess").await.status);
    }
    assert!(statuses[..30].iter().all(|s| *s == 410), "{statuses:?}");
    let last = open(&http, "wpt_guess").await;
    assert_eq!(last.status, 429);
    assert_eq!(last.header("retry-after").as_deref(), Some("60"));
}
