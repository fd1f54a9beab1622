//! Cutting portal access ends it (contract §10 "Hardening"): `DELETE /api/v2/portal_sessions`
//! also voids the organisation's unused links, `weir admin client revoke` ends the sessions
//! of that client's links and voids its unused ones, an organisation holds at most 100
//! unused links, and no session outlives twelve hours.

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::portal::{link, open, portal_cookie, token_of};
use crate::support::http::Http;
use crate::support::weir::{Tenant, Weir, raw_conn, raw_keys, weir_command};

/// A portal session's answer for the webhook list.
async fn list_status(http: &Http, cookie: &str) -> u16 {
    http.get("/settings/webhooks").header("cookie", cookie).send().await.status
}

/// A link made and opened: its session's cookie.
async fn session(http: &Http, t: &Tenant) -> String {
    let made = link(t, json!({})).await;
    let opened = open(http, &token_of(&made)).await;
    assert_eq!(opened.status, 303, "{}", opened.text());
    portal_cookie(&opened)
}

#[tokio::test]
async fn ending_the_sessions_also_voids_the_links_not_yet_used() {
    let weir = Weir::start_default().await;
    let (t, other) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    let http = weir.http();
    let cookie = session(&http, &t).await;
    let unused = token_of(&link(&t, json!({})).await);
    let others = session(&http, &other).await;

    let ended = t.admin.delete("/api/v2/portal_sessions").await.expect(200).json();
    assert_eq!(ended["ended"], 1);
    assert_eq!(list_status(&http, &cookie).await, 401);
    let late = open(&http, &unused).await;
    assert_eq!(late.status, 410, "a link made before the end opens nothing after it");
    assert!(late.text().contains("expired"), "{}", late.text());
    assert_eq!(list_status(&http, &others).await, 200, "another organisation's session goes on");
    // A link made after the end works.
    let fresh = session(&http, &t).await;
    assert_eq!(list_status(&http, &fresh).await, 200);
}

#[tokio::test]
async fn revoking_a_client_ends_the_sessions_of_its_links_and_voids_its_unused_ones() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let second = weir.client(&t.org_id, true, false).await;
    let by_second = Tenant { org_id: t.org_id.clone(), admin: second.clone(), publisher: t.publisher.clone() };
    let http = weir.http();
    let revoked_session = session(&http, &t).await;
    let revoked_unused = token_of(&link(&t, json!({})).await);
    let kept_session = session(&http, &by_second).await;
    let kept_unused = token_of(&link(&by_second, json!({})).await);

    // As an operator revokes it: `weir admin client revoke`, against the same Redis.
    let mut command = weir_command();
    command.args(["admin", "client", "revoke", &t.admin.creds.client_id]).env_clear();
    for (k, v) in weir.builder.vars() {
        command.env(k, v);
    }
    let output = command.env("PATH", std::env::var("PATH").unwrap_or_default()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    assert_eq!(list_status(&http, &revoked_session).await, 401, "its links' sessions end");
    assert_eq!(open(&http, &revoked_unused).await.status, 410, "its unused links open nothing");
    assert_eq!(list_status(&http, &kept_session).await, 200, "another client's session goes on");
    let opened = open(&http, &kept_unused).await;
    assert_eq!(opened.status, 303, "another client's link still opens");
    assert_eq!(t.admin.post("/api/v2/portal_links", &json!({})).await.status, 401, "nor can it make more");
}

#[tokio::test]
async fn an_organisation_holds_at_most_a_hundred_unused_links() {
    let weir = Weir::start_default().await;
    let (t, other) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    let mut tokens = Vec::new();
    for _ in 0..100 {
        tokens.push(token_of(&link(&t, json!({"ttl_seconds": 120})).await));
    }
    let refused = t.admin.post("/api/v2/portal_links", &json!({})).await;
    assert_eq!(refused.status, 429, "{}", refused.text());
    assert_eq!(refused.error_code(), "rate_limited");
    assert!(refused.text().contains("100 unused portal links"), "{}", refused.text());
    let wait: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=120).contains(&wait), "until the first of them expires: {wait}");
    // Another organisation is not bounded by this one's links.
    link(&other, json!({})).await;
    // A link used leaves room for one more.
    assert_eq!(open(&weir.http(), &tokens[0]).await.status, 303);
    link(&t, json!({})).await;
    assert_eq!(t.admin.post("/api/v2/portal_links", &json!({})).await.status, 429);
}

#[tokio::test]
async fn a_session_used_all_day_still_ends_twelve_hours_after_it_opened() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let http = weir.http();
    let cookie = session(&http, &t).await;
    assert_eq!(list_status(&http, &cookie).await, 200);
    // Opened twelve hours and a second ago (however often used since).
    let keys = raw_keys(&weir.builder, &format!("{}:portal-session:*", weir.builder.prefix()));
    assert_eq!(keys.len(), 1, "{keys:?}");
    let opened = weir::time::now_millis() - 12 * 3600 * 1000 - 1000;
    let mut conn = raw_conn(&weir.builder);
    let _: () = redis::cmd("HSET").arg(&keys[0]).arg("opened_ms").arg(opened).query(&mut *conn).unwrap();
    assert_eq!(list_status(&http, &cookie).await, 401);
}
