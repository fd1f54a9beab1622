//! A source as a process keeps it (so that taking a request in reads nothing from Redis
//! before its publish): each change made elsewhere — another process, or the test's own
//! store — holds the very next request, which is taken as the source and plan are now.

use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use sha2::Sha256;
use weir::store::tenants::orgs::Plan;

use crate::support::api::Api;
use crate::support::http::Resp;
use crate::support::providers::{deliver, path_of};
use crate::support::weir::{Weir, WeirBuilder};

/// An `hmac` source signing in `header`, and its ingest URL.
async fn hmac_source(api: &Api, header: &str, secret: &str) -> (String, String) {
    let settings = json!({"header": header, "algorithm": "sha256", "encoding": "hex", "prefix": "sha256="});
    let body = json!({"name": "billing", "type": "hmac", "secret": secret, "hmac": settings});
    let made = api.post("/api/v2/sources", &body).await.expect(201).json();
    (made["id"].as_str().unwrap().to_owned(), made["ingest_url"].as_str().unwrap().to_owned())
}

/// Sends `body` to an ingest URL through `weir`, signed with `secret` in `header`.
async fn send(weir: &Weir, url: &str, (header, secret): (&str, &str), body: &str) -> Resp {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body.as_bytes());
    let signature = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    deliver(&weir.http(), &path_of(url), &[(header.to_owned(), signature)], body).await
}

#[tokio::test]
async fn a_source_changed_on_another_process_takes_the_next_request_as_it_is_now() {
    let a = Weir::start_default().await;
    let b = a.builder.start().await;
    let on_a = a.tenant(Plan::pro()).await;
    let on_b = on_a.on(&b);
    let (id, url) = hmac_source(&on_a.admin, "X-Sig", "first").await;
    // A keeps the source.
    for n in 0..2 {
        let body = format!(r#"{{"n":{n}}}"#);
        assert_eq!(send(&a, &url, ("X-Sig", "first"), &body).await.status, 200);
    }
    let stale_before = on_a.admin.metric("weir_stale_publishes_total").await.unwrap_or(0.0);

    // Its header changed on B: what A kept would accept the old one; the next request is held
    // to the source as it is now.
    let moved = json!({"hmac": {"header": "X-Other", "algorithm": "sha256", "encoding": "hex", "prefix": "sha256="}});
    on_b.admin.patch(&format!("/api/v2/sources/{id}"), &moved).await.expect(200);
    let old = send(&a, &url, ("X-Sig", "first"), r#"{"n":2}"#).await;
    assert_eq!((old.status, old.error_code()), (401, "missing_signature".to_owned()), "{}", old.text());
    let stale_after = on_a.admin.metric("weir_stale_publishes_total").await.unwrap_or(0.0);
    assert!(stale_after > stale_before, "the kept copy's publish was refused as stale");
    let new = send(&a, &url, ("X-Other", "first"), r#"{"n":3}"#).await;
    assert_eq!(new.status, 200, "{}", new.text());

    // Rotated on B: A takes the new secret at once (and the old one for a day).
    on_b.admin.post(&format!("/api/v2/sources/{id}/rotate"), &json!({"secret": "second"})).await.expect(200);
    for (n, secret) in [(4, "second"), (5, "first")] {
        let answer = send(&a, &url, ("X-Other", secret), &format!(r#"{{"n":{n}}}"#)).await;
        assert_eq!(answer.status, 200, "{secret}: {}", answer.text());
    }

    // Deleted on B: A's copy opens nothing.
    on_b.admin.delete(&format!("/api/v2/sources/{id}")).await.expect(204);
    let gone = send(&a, &url, ("X-Other", "second"), r#"{"n":6}"#).await;
    assert_eq!(gone.status, 404, "{}", gone.text());
    let events = on_a.admin.get("/api/v2/events?action=source_event").await.expect(200).json();
    assert_eq!(events["data"].as_array().map(Vec::len), Some(5), "one event per accepted request: {events}");
}

#[tokio::test]
async fn a_plan_changed_elsewhere_holds_a_sources_next_request() {
    let weir = WeirBuilder::shared()
        .config_file("[plans.closed]\napi_integrations = true\nevents_per_day = 0\n")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let (id, url) = hmac_source(&t.admin, "X-Sig", "k").await;
    assert_eq!(send(&weir, &url, ("X-Sig", "k"), r#"{"n":1}"#).await.status, 200);
    weir.store.plan_changes().set_org_plan(&t.org_id, Plan::parse("closed").unwrap()).await.unwrap();
    let refused = send(&weir, &url, ("X-Sig", "k"), r#"{"n":2}"#).await;
    assert_eq!((refused.status, refused.error_code()), (429, "quota_exceeded".to_owned()), "{}", refused.text());
    assert!(refused.header("retry-after").is_some(), "a provider is told when to come back");
    weir.store.plan_changes().set_org_plan(&t.org_id, Plan::pro()).await.unwrap();
    assert_eq!(send(&weir, &url, ("X-Sig", "k"), r#"{"n":3}"#).await.status, 200);
    let listed = t.admin.get(&format!("/api/v2/sources/{id}/requests")).await.expect(200).json();
    let outcomes: Vec<&str> =
        listed["data"].as_array().unwrap().iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["accepted", "rejected", "accepted"], "{listed}");
}
