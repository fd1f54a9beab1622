//! The error model and limits (contract §2): one JSON shape everywhere, no 500 for client
//! mistakes, and internals never leaked.

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::weir::{Weir, WeirBuilder};

fn assert_error_shape(body: &Value, code: &str) {
    let error = &body["error"];
    assert_eq!(error["code"], code, "{body}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    if code == "validation_failed" || code == "quota_exceeded" {
        assert!(error["details"].is_array(), "{body}");
    } else {
        assert!(error.get("details").is_none(), "{body}");
    }
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_use_the_error_shape() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let http = weir.http();
    let resp = http.get("/no/such/route").send().await.expect(404);
    assert_error_shape(&resp.json(), "not_found");
    let resp = http.get("/api/v2/nothing").bearer(&t.admin.token).send().await.expect(404);
    assert_error_shape(&resp.json(), "not_found");
    let resp = http.request(hyper::Method::PUT, "/api/v2/webhooks").bearer(&t.admin.token).send().await.expect(405);
    assert_error_shape(&resp.json(), "method_not_allowed");
    let resp = http.get("/oauth/token").send().await.expect(405);
    assert_error_shape(&resp.json(), "method_not_allowed");
}

#[tokio::test]
async fn bodies_are_limited_typed_and_well_formed() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let http = weir.http();
    let big = vec![b' '; 1024 * 1024 + 1];
    let resp =
        http.post("/api/v2/webhooks").bearer(&t.admin.token).raw("application/json", big).send().await.expect(413);
    assert_error_shape(&resp.json(), "payload_too_large");
    // Just within the limit is parsed (and then refused for its content, not its size).
    let mut within = br#"{"url":"http://127.0.0.1:9/","subscribed_actions":[],"name":""#.to_vec();
    within.resize(1024 * 1024 - 2, b'a');
    within.extend_from_slice(b"\"}");
    let resp =
        http.post("/api/v2/webhooks").bearer(&t.admin.token).raw("application/json", within).send().await.expect(422);
    assert_eq!(resp.error_fields(), vec!["name"]);

    let resp = http.post("/api/v2/webhooks").bearer(&t.admin.token).raw("text/plain", "{}").send().await.expect(415);
    assert_error_shape(&resp.json(), "unsupported_media_type");
    let resp = http
        .post("/api/v2/webhooks")
        .bearer(&t.admin.token)
        .raw("application/json", "{\"url\": ")
        .send()
        .await
        .expect(422);
    assert_error_shape(&resp.json(), "validation_failed");
    assert_eq!(resp.error_fields(), vec!["body"]);
    let resp =
        http.post("/api/v2/webhooks").bearer(&t.admin.token).raw("application/json", "[1,2]").send().await.expect(422);
    assert_eq!(resp.error_fields(), vec!["body"]);
    let resp = http
        .post("/api/v2/webhooks")
        .bearer(&t.admin.token)
        .raw("application/json; charset=utf-8", "\u{feff}{}")
        .send()
        .await;
    assert_eq!(resp.status, 422);
}

#[tokio::test]
async fn the_webhook_limit_is_403_quota_exceeded() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    for i in 0..weir::store::tenants::webhooks::MAX_WEBHOOKS_PER_ORG {
        let resp = t
            .admin
            .post("/api/v2/webhooks", &json!({"url": format!("http://127.0.0.1:9/{i}"), "subscribed_actions": []}))
            .await;
        assert_eq!(resp.status, 201, "{i}");
    }
    let resp = t
        .admin
        .post("/api/v2/webhooks", &json!({"url": "http://127.0.0.1:9/x", "subscribed_actions": []}))
        .await
        .expect(403);
    assert_error_shape(&resp.json(), "quota_exceeded");
    assert_eq!(resp.error_fields(), vec!["webhooks".to_owned()]);
}

#[tokio::test]
async fn an_api_rate_limit_answers_429_per_client_and_changes_nothing() {
    const PER_SECOND: u64 = 1;
    const BURST: u64 = 3;
    let weir = WeirBuilder::shared()
        .env("WEIR_API_RATE_LIMIT", &PER_SECOND.to_string())
        .env("WEIR_API_RATE_BURST", &BURST.to_string())
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let started = std::time::Instant::now();
    let mut allowed = 0;
    let refused = loop {
        let resp = t.admin.get("/api/v2/webhooks").await;
        if resp.status == 429 {
            break resp;
        }
        assert_eq!(resp.status, 200);
        allowed += 1;
        assert!(allowed <= 100, "never limited");
    };
    // The burst, plus whatever refilled while the requests ran.
    let refilled = started.elapsed().as_secs() * PER_SECOND + 1;
    assert!(allowed >= BURST && allowed <= BURST + refilled, "{allowed} requests allowed");
    assert_error_shape(&refused.json(), "rate_limited");
    let wait: u64 = refused.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=1 + 1 / PER_SECOND).contains(&wait), "Retry-After: {wait}");

    // A refused write writes nothing; a bad token is still 401; other clients are not limited.
    let resp = t.admin.post("/api/v2/webhooks", &json!({"url": "http://127.0.0.1:9/", "subscribed_actions": []})).await;
    assert_eq!(resp.status, 429);
    weir.http().get("/api/v2/webhooks").bearer("wat_nonsense").send().await.expect(401);
    let other = weir.client(&t.org_id, true, false).await;
    other.get("/api/v2/webhooks").await.expect(200);

    // Once the wait is over, the client may call again.
    tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
    let list = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(list["data"].as_array().unwrap().len(), 0, "{list}");
}

#[tokio::test]
async fn internal_errors_say_nothing_about_internals() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let w = t.admin.create_webhook("http://127.0.0.1:9/", &[]).await;
    let id = w["id"].as_str().unwrap();
    let mut conn = crate::support::weir::raw_conn(&weir.builder);
    let key = weir.store.keys().webhook(&t.org_id, id);
    let _: () = redis::cmd("HSET").arg(&key).arg("subscribed_actions").arg("{not json").query(&mut *conn).unwrap();
    let resp = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(500);
    assert_error_shape(&resp.json(), "internal");
    let text = resp.text();
    assert!(
        !text.contains(&key) && !text.contains("subscribed_actions") && !text.to_lowercase().contains("redis"),
        "{text}"
    );
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let weir = Weir::start_default().await;
    let http = weir.http();
    assert_eq!(http.get("/healthz").send().await.expect(200).json()["status"], "ok");
    assert_eq!(http.get("/readyz").send().await.expect(200).json()["status"], "ready");
    let t = weir.tenant(Plan::pro()).await;
    let _ = t;
    let resp = http.get("/metrics").send().await.expect(200);
    assert!(resp.header("content-type").unwrap().starts_with("text/plain"));
    let text = resp.text();
    let issued = text.lines().find(|l| l.starts_with("weir_tokens_issued_total ")).expect("token counter");
    let n: f64 = issued.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(n >= 2.0, "{issued}");
}
