//! Sources (contract §10): Weir receives providers' webhooks. Each provider's request is
//! signed by the provider's own code, accepted, forwarded byte for byte to the webhooks
//! naming the source (where the provider's code verifies it again), deduplicated, listed;
//! forged, re-timed, re-signed and oversized requests are refused and become nothing.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::api::Api;
use crate::support::eventually;
use crate::support::providers::{deliver, github_example, path_of, sign, verifies};
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, WeirBuilder};

const STRIPE_BODY: &str =
    r#"{"id":"evt_1QxA","object":"event","type":"invoice.paid","data":{"object":{"id":"in_1","amount_paid":2000}}}"#;

/// A request each provider sends, and the secret it signs with.
fn example(provider: &str) -> (&'static str, String) {
    match provider {
        "stripe" => ("whsec_test_Rk9vQmFy", STRIPE_BODY.to_owned()),
        // A payload GitHub sent, as recorded by Octokit.
        "github" => ("gh-webhook-secret", github_example("issues", "opened")),
        "shopify" => ("shpss_app_secret", r#"{"id":820982911946154500,"email":"jon@example.com"}"#.to_owned()),
        "slack" => {
            ("8f742231b10e8888abcd99yyyzzz85a5", "token=x&team_id=T1&command=%2Fweir&text=hello+world".to_owned())
        }
        "twilio" => ("twilio-auth-token", "CallSid=CA123&From=%2B15005550006&To=%2B15005550001&Body=hi".to_owned()),
        _ => ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", r#"{"type":"invoice.paid","data":{"id":1}}"#.to_owned()),
    }
}

/// A source of `provider` for `t`, and its ingest URL.
async fn source(api: &Api, provider: &str, secret: &str) -> (String, String) {
    let made = api
        .post("/api/v2/sources", &json!({"name": provider, "type": provider, "secret": secret}))
        .await
        .expect(201)
        .json();
    (made["id"].as_str().unwrap().to_owned(), made["ingest_url"].as_str().unwrap().to_owned())
}

fn now() -> u64 {
    weir::time::now_millis() / 1000
}

#[tokio::test]
async fn each_providers_own_signature_is_accepted_and_forwarded_so_its_code_verifies_it_again() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    for provider in ["stripe", "github", "shopify", "slack", "twilio", "standard_webhooks"] {
        let (secret, body) = example(provider);
        let (id, url) = source(&t.admin, provider, secret).await;
        let receiver = Receiver::start().await;
        let hook = t
            .admin
            .post("/api/v2/webhooks", &json!({"url": receiver.url, "subscribed_sources": [id]}))
            .await
            .expect(201)
            .json();
        assert_eq!(hook["subscribed_sources"], json!([id]), "{hook}");
        let headers = sign(provider, secret, (&url, now()), &body);
        let answer = deliver(&weir.http(), &path_of(&url), &headers, &body).await;
        assert_eq!(answer.status, 200, "{provider}: {}", answer.text());
        let event_id = answer.json()["id"].as_str().unwrap().to_owned();
        assert!(event_id.starts_with("evt_"), "{provider}: {event_id}");

        let got = receiver.wait_for(1, Duration::from_secs(10)).await;
        assert_eq!(got[0].body.as_ref(), body.as_bytes(), "{provider}: the body byte for byte");
        assert_eq!(got[0].header("x-weir-source"), id);
        for (name, value) in headers.iter().filter(|(n, _)| !n.to_ascii_lowercase().starts_with("webhook-")) {
            assert_eq!(&got[0].header(&name.to_ascii_lowercase()), value, "{provider}: {name} passed on");
        }
        let forwarded: serde_json::Map<String, Value> = got[0]
            .headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), json!(v.to_str().unwrap_or_default())))
            .collect();
        let forwarded = Value::Object(forwarded);
        let text = String::from_utf8_lossy(&got[0].body).into_owned();
        // Standard Webhooks' own headers are Weir's on the way out, signed with the webhook's secret.
        let (checked_secret, checked_url) = match provider {
            "standard_webhooks" => (hook["signing_secret"].as_str().unwrap().to_owned(), url.clone()),
            _ => (secret.to_owned(), url.clone()),
        };
        assert!(
            verifies(provider, &checked_secret, &checked_url, (&forwarded, &text)),
            "{provider}: its code verifies what the service behind Weir got"
        );
        let mut changed = forwarded.clone();
        changed["x-weir-source"] = json!("tampered");
        let mut bent = text.clone();
        bent.push(' ');
        assert!(
            !verifies(provider, &checked_secret, &checked_url, (&changed, &bent)),
            "{provider}: and refuses a changed body"
        );

        let events = t.admin.get("/api/v2/events?action=source_event").await.expect(200).json();
        let logged = events["data"].as_array().unwrap().iter().find(|e| e["id"] == event_id.as_str()).cloned();
        let logged = logged.unwrap_or_else(|| panic!("{provider}: {event_id} in the event log: {events}"));
        assert_eq!(logged["source"], id.as_str(), "{logged}");
        let expected_action = match provider {
            "stripe" | "standard_webhooks" => "invoice.paid",
            "github" => "issues.opened",
            "shopify" => "orders/create",
            "twilio" => "twilio.request",
            _ => "source.request",
        };
        assert_eq!(logged["action"], expected_action, "{provider}");
    }
}

#[tokio::test]
async fn forged_stale_resigned_and_oversized_requests_are_refused_and_become_nothing() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let (secret, body) = example("stripe");
    let (id, url) = source(&t.admin, "stripe", secret).await;
    let receiver = Receiver::start().await;
    t.admin.post("/api/v2/webhooks", &json!({"url": receiver.url, "subscribed_sources": [id]})).await.expect(201);
    let path = path_of(&url);
    let http = weir.http();
    let one_byte_off = body.replacen("2000", "2001", 1);
    let signed = sign("stripe", secret, (&url, now()), &body);
    let cases: Vec<(Vec<(String, String)>, String, u16, &str)> = vec![
        (signed.clone(), one_byte_off, 401, "invalid_signature"),
        (sign("stripe", "whsec_another", (&url, now()), &body), body.clone(), 401, "invalid_signature"),
        (sign("stripe", secret, (&url, now() - 600), &body), body.clone(), 401, "timestamp_out_of_tolerance"),
        (Vec::new(), body.clone(), 401, "missing_signature"),
    ];
    for (headers, sent, status, code) in cases {
        let answer = deliver(&http, &path, &headers, &sent).await;
        assert_eq!((answer.status, answer.error_code()), (status, code.to_owned()), "{}", answer.text());
    }
    let big = format!("{{\"id\":\"evt_big\",\"pad\":\"{}\"}}", "x".repeat(1024 * 1024));
    let answer = deliver(&http, &path, &sign("stripe", secret, (&url, now()), &big), &big).await;
    assert_eq!(answer.status, 413, "a body over 1 MiB");
    let unknown = deliver(&http, "/in/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", &signed, &body).await;
    assert_eq!(unknown.status, 404);

    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 0, "nothing was delivered");
    let events = t.admin.get("/api/v2/events").await.expect(200).json();
    assert_eq!(events["data"], json!([]), "nothing became an event: {events}");
    let listed = t.admin.get(&format!("/api/v2/sources/{id}/requests?outcome=rejected")).await.expect(200).json();
    let reasons: Vec<String> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(reasons.len(), 4, "{listed}");
    assert!(reasons[0].starts_with("missing_signature"), "{reasons:?}");
    assert!(
        reasons[1].starts_with("timestamp_out_of_tolerance") && reasons[3].starts_with("invalid_signature"),
        "{reasons:?}"
    );
    assert!(listed["data"][0].get("body").is_none(), "a rejected body is not kept");
    let rejected =
        t.admin.metric("weir_source_requests_total{outcome=\"rejected\",reason=\"invalid_signature\"}").await;
    assert!(rejected.is_some_and(|n| n >= 2.0), "{rejected:?}");
}

#[tokio::test]
async fn a_request_sent_again_is_the_same_event_and_is_delivered_once() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let (secret, body) = example("stripe");
    let (id, url) = source(&t.admin, "stripe", secret).await;
    let receiver = Receiver::start().await;
    t.admin.post("/api/v2/webhooks", &json!({"url": receiver.url, "subscribed_sources": [id]})).await.expect(201);
    let (path, http) = (path_of(&url), weir.http());
    let first = deliver(&http, &path, &sign("stripe", secret, (&url, now()), &body), &body).await.expect(200).json();
    // Stripe retries with a new timestamp and signature, the same event id.
    let again =
        deliver(&http, &path, &sign("stripe", secret, (&url, now() + 1), &body), &body).await.expect(200).json();
    assert_eq!(first["id"], again["id"], "the first request's event");
    receiver.wait_for(1, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 1, "delivered once");
    let listed = t.admin.get(&format!("/api/v2/sources/{id}/requests")).await.expect(200).json();
    let outcomes: Vec<&str> =
        listed["data"].as_array().unwrap().iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["duplicate", "accepted"], "{listed}");
    assert_eq!(listed["data"][0]["event_id"], first["id"]);
    let other = body.replace("evt_1QxA", "evt_2QxB");
    let second = deliver(&http, &path, &sign("stripe", secret, (&url, now()), &other), &other).await.expect(200).json();
    assert_ne!(second["id"], first["id"], "another delivery id is another event");
}

#[tokio::test]
async fn sources_are_their_organisations_and_keep_their_secrets() {
    let weir = Weir::start_default().await;
    let (t, other) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    let (id, url) = source(&t.admin, "github", "first-secret").await;
    let read = t.admin.get(&format!("/api/v2/sources/{id}")).await.expect(200).json();
    assert_eq!(read["ingest_url"], url.as_str(), "shown on read");
    assert!(!read.to_string().contains("first-secret"), "the secret is never shown: {read}");
    let token = url.rsplit('/').next().unwrap();
    assert!(token.len() >= 22, "at least 128 bits: {token}");
    assert_eq!(other.admin.get(&format!("/api/v2/sources/{id}")).await.status, 404, "another organisation's");
    let receiver = Receiver::start().await;
    let refused = other.admin.post("/api/v2/webhooks", &json!({"url": receiver.url, "subscribed_sources": [id]})).await;
    assert_eq!((refused.status, refused.error_fields()), (422, vec!["subscribed_sources[0]".to_owned()]));

    for (body, field) in [
        (json!({"type": "stripe"}), "secret"),
        (json!({"type": "nope", "secret": "x"}), "type"),
        (json!({"type": "hmac", "secret": "k"}), "hmac"),
        (json!({"type": "hmac", "secret": "k", "hmac": {"header": "X-Sig", "algorithm": "md5"}}), "hmac.algorithm"),
        (json!({"type": "basic", "basic": {"username": "u"}}), "basic.password"),
        (json!({"type": "api_key", "secret": "k", "api_key": {"header": "X-Key", "key": "k"}}), "secret"),
        (json!({"type": "standard_webhooks", "secret": "not base64!"}), "secret"),
        (json!({"type": "none", "dedup_window": "8d"}), "dedup_window"),
    ] {
        let answer = t.admin.post("/api/v2/sources", &body).await;
        assert_eq!((answer.status, answer.error_fields()), (422, vec![field.to_owned()]), "{body}: {}", answer.text());
    }

    // Rotation: the new secret, and the old one for a day.
    let body = r#"{"action":"closed"}"#;
    t.admin.post(&format!("/api/v2/sources/{id}/rotate"), &json!({"secret": "second-secret"})).await.expect(200);
    for secret in ["first-secret", "second-secret"] {
        let answer = deliver(&weir.http(), &path_of(&url), &sign("github", secret, (&url, now()), body), body).await;
        assert_eq!(answer.status, 200, "{secret}: {}", answer.text());
    }
    let renamed = t
        .admin
        .patch(&format!("/api/v2/sources/{id}"), &json!({"name": "GitHub org", "dedup_window": "1h"}))
        .await
        .expect(200)
        .json();
    assert_eq!((renamed["name"].as_str(), renamed["dedup_window"].as_str()), (Some("GitHub org"), Some("1h")));
    let listed = t.admin.get("/api/v2/sources").await.expect(200).json();
    assert_eq!(listed["data"][0]["id"], id.as_str());
    // An operator lists them, with how their latest requests went (never a secret or URL).
    let mut command = crate::support::weir::weir_command();
    command.args(["admin", "source", "list", "--org", &t.org_id]).envs(weir.builder.vars());
    let out = command.output().expect("weir admin runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let latest = &shown[0]["latest_requests"];
    assert_eq!(shown[0]["id"].as_str(), Some(id.as_str()));
    // The same GitHub delivery sent twice (each time with another secret): one event.
    assert_eq!((latest["accepted"].as_u64(), latest["duplicate"].as_u64()), (Some(1), Some(1)), "{shown}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(token), "no ingest URL: {shown}");
    t.admin.delete(&format!("/api/v2/sources/{id}")).await.expect(204);
    let gone = deliver(&weir.http(), &path_of(&url), &sign("github", "second-secret", (&url, now()), body), body).await;
    assert_eq!(gone.status, 404, "a deleted source's URL answers nothing");
}

#[tokio::test]
async fn a_sources_events_go_through_filters_and_are_replayed() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let (secret, paid) = example("stripe");
    let (id, url) = source(&t.admin, "stripe", secret).await;
    let (paid_only, by_header) = (Receiver::start().await, Receiver::start().await);
    let filter = format!(
        "event.action == \"invoice.paid\" && event.body.data.object.amount_paid > 1000 && event.source == \"{id}\""
    );
    let filtered = json!({"url": paid_only.url, "subscribed_sources": [id], "filter": filter});
    let hook = t.admin.post("/api/v2/webhooks", &filtered).await.expect(201).json();
    let header_filter = json!({"url": by_header.url, "subscribed_sources": [id], "filter": "event.headers[\"stripe-signature\"].startsWith(\"t=\")"});
    t.admin.post("/api/v2/webhooks", &header_filter).await.expect(201);
    let created = paid.replace("invoice.paid", "customer.created").replace("evt_1QxA", "evt_3QxC");
    for body in [&paid, &created] {
        deliver(&weir.http(), &path_of(&url), &sign("stripe", secret, (&url, now()), body), body).await.expect(200);
    }
    by_header.wait_for(2, Duration::from_secs(10)).await;
    let got = paid_only.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].body.as_ref(), paid.as_bytes());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(paid_only.count(), 1, "the filter saw event.action, event.body and event.source");

    let since = weir::time::format_millis(weir::time::now_millis() - 60_000);
    let hook_id = hook["id"].as_str().unwrap();
    let replayed =
        t.admin.post(&format!("/api/v2/webhooks/{hook_id}/replay"), &json!({"since": since})).await.expect(202).json();
    assert_eq!(replayed["count"], 0, "what was delivered is left alone: {replayed}");
    // A webhook made later gets the source's events of the window by replay.
    let late = Receiver::start().await;
    let made = t
        .admin
        .post("/api/v2/webhooks", &json!({"url": late.url, "subscribed_sources": [id]}))
        .await
        .expect(201)
        .json();
    let late_id = made["id"].as_str().unwrap();
    let replayed =
        t.admin.post(&format!("/api/v2/webhooks/{late_id}/replay"), &json!({"since": since})).await.expect(202).json();
    assert_eq!(replayed["count"], 2, "{replayed}");
    let got = late.wait_for(2, Duration::from_secs(10)).await;
    let mut bodies: Vec<&[u8]> = got.iter().map(|r| r.body.as_ref()).collect();
    bodies.sort();
    let mut sent = [paid.as_bytes(), created.as_bytes()];
    sent.sort();
    assert_eq!(bodies, sent, "replayed as the provider sent them");
}

#[tokio::test]
async fn requests_acknowledged_before_a_kill_9_are_all_forwarded_and_each_is_one_event() {
    let builder = WeirBuilder::shared().env("WEIR_TAKEOVER_AFTER", "2s");
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let made = t.admin.post("/api/v2/sources", &json!({"type": "none"})).await.expect(201).json();
    let (id, path) = (made["id"].as_str().unwrap().to_owned(), path_of(made["ingest_url"].as_str().unwrap()));
    let receiver = Receiver::replying(Reply::Delay(Duration::from_millis(20), 200)).await;
    t.admin.post("/api/v2/webhooks", &json!({"url": receiver.url, "subscribed_sources": [id]})).await.expect(201);
    let mut doomed = builder.spawn();
    doomed.wait_ready().await;
    let http = doomed.http();
    for i in 0..100 {
        let body = format!(r#"{{"n":{i}}}"#);
        deliver(&http, &path, &[], &body).await.expect(200);
    }
    doomed.signal("KILL");
    let heir = builder.spawn();
    heir.wait_ready().await;
    let bodies = eventually("every acknowledged request forwarded", Duration::from_secs(60), async || {
        let got: HashSet<Vec<u8>> = receiver.received().iter().map(|r| r.body.to_vec()).collect();
        (got.len() == 100).then_some(got)
    })
    .await;
    assert_eq!(bodies.len(), 100);
    let listed = t.admin.get("/api/v2/events?action=source_event&limit=100").await.expect(200).json();
    let ids: HashSet<&str> = listed["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 100, "each request is one event in the log");
    if let Some(cursor) = listed["next_cursor"].as_str() {
        let rest = t.admin.get(&format!("/api/v2/events?action=source_event&cursor={cursor}")).await.expect(200).json();
        assert_eq!(rest["data"], json!([]), "and no more");
    }
}

#[tokio::test]
async fn a_source_is_made_and_a_webhook_named_after_it_from_the_pages() {
    use crate::settings::{PASSWORD, http_sign_in, user};
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "sources@example.com", true).await;
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "sources@example.com", PASSWORD).await;
    let (cookie, csrf) = session.expect("signed in");
    let made = http
        .post("/settings/sources")
        .header("cookie", &cookie)
        .form(&[("_csrf", csrf.as_str()), ("type", "github"), ("name", "GitHub org"), ("secret", "s3cret")])
        .send()
        .await;
    assert_eq!(made.status, 303, "{}", made.text());
    let listed = t.admin.get("/api/v2/sources").await.expect(200).json();
    let id = listed["data"][0]["id"].as_str().unwrap().to_owned();
    let new = http.get("/settings/webhooks/new").header("cookie", &cookie).send().await.expect(200).text();
    assert!(new.contains(&format!(r#"name="subscribed_sources" value="{id}""#)) && new.contains("GitHub org"), "{new}");
    let receiver = Receiver::start().await;
    let form = [
        ("_csrf", csrf.as_str()),
        ("url", receiver.url.as_str()),
        ("_sources", "1"),
        ("subscribed_sources", id.as_str()),
    ];
    let created = http.post("/settings/webhooks").header("cookie", &cookie).form(&form).send().await;
    assert_eq!(created.status, 303, "{}", created.text());
    let hooks = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(hooks["data"][0]["subscribed_sources"], json!([id]), "{hooks}");
    let url = listed["data"][0]["ingest_url"].as_str().unwrap().to_owned();
    let body = r#"{"action":"opened"}"#;
    deliver(&weir.http(), &path_of(&url), &sign("github", "s3cret", (&url, now()), body), body).await.expect(200);
    assert_eq!(receiver.wait_for(1, Duration::from_secs(10)).await[0].body.as_ref(), body.as_bytes());
}
