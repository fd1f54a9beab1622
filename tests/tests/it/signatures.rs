//! Standard Webhooks signatures, verified by the libraries subscribers use (the
//! `standardwebhooks` and `svix` Python packages), and signing-secret rotation (contract §2,
//! §4).

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::example_receiver::ExampleReceiver;
use crate::support::receiver::{Received, Receiver, Reply};
use crate::support::weir::{Api, Weir, WeirBuilder, raw_conn, work_order_event};
use crate::support::{free_port, python};

/// What each library says of a delivery checked with `secret`, `later` seconds after it
/// arrived.
fn verify(secret: &str, request: &Received, body: Option<&[u8]>, later: u64) -> Value {
    let headers: serde_json::Map<String, Value> = request
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), Value::String(v.to_str().unwrap_or_default().to_owned())))
        .collect();
    let body = String::from_utf8_lossy(body.unwrap_or(&request.body)).into_owned();
    let input = json!({"headers": headers, "body": body}).to_string();
    let later = later.to_string();
    let args: Vec<&str> = if later == "0" { vec![secret] } else { vec![secret, "--later", &later] };
    serde_json::from_str(&python::run("verify.py", &args, input.as_bytes())).unwrap()
}

fn accepted(verdict: &Value) -> bool {
    verdict["standardwebhooks"] == "ok" && verdict["svix"] == "ok"
}

fn refused(verdict: &Value) -> bool {
    verdict["standardwebhooks"] != "ok" && verdict["svix"] != "ok"
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[tokio::test]
async fn every_delivery_verifies_with_the_standard_webhooks_and_svix_libraries() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let secret = webhook["signing_secret"].as_str().unwrap();
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    assert_eq!(key.len(), 32, "a new secret is whsec_ + standard base64 of 32 bytes");
    assert_eq!(webhook["previous_secret_expires_at"], Value::Null);

    t.publisher.publish(&work_order_event("wo_sw")).await;
    let request = receiver.wait_for(1, Duration::from_secs(10)).await.remove(0);
    let delivery_id = request.header("x-webhook-delivery");
    assert_eq!(request.header("webhook-id"), delivery_id);
    let ts: u64 = request.header("webhook-timestamp").parse().unwrap();
    assert!(ts.abs_diff(unix_now()) <= 5, "signed when sent: {ts}");
    assert!(request.header("webhook-signature").starts_with("v1,"));
    assert!(weir::sign::verify(secret, &request.body, &request.header("x-webhook-signature")));

    assert!(accepted(&verify(secret, &request, None, 0)), "{}", verify(secret, &request, None, 0));
    let mut tampered = request.body.to_vec();
    tampered.pop();
    tampered.extend_from_slice(b",\"x\":1}");
    assert!(refused(&verify(secret, &request, Some(&tampered), 0)), "a tampered body is refused");
    let other = weir::sign::new_secret();
    assert!(refused(&verify(&other, &request, None, 0)), "a wrong secret is refused");
    let late = verify(secret, &request, None, 6 * 60);
    assert!(refused(&late), "a replay 6 minutes later is refused: {late}");
    assert!(late["standardwebhooks"].as_str().unwrap().contains("too old"), "{late}");
    assert!(accepted(&verify(secret, &request, None, 4 * 60)), "within the tolerance it passes");

    // The record shows the headers as sent.
    let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery_id}")).await.expect(200).json();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature", "x-webhook-signature"] {
        assert_eq!(d["request"]["headers"][name], request.header(name), "{name}");
    }
}

#[tokio::test]
async fn each_attempt_gets_a_fresh_timestamp_and_signature() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "1500ms").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    receiver.sequence(vec![Reply::Status(500), Reply::Status(200)]);
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let secret = webhook["signing_secret"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_retry")).await;
    let got = receiver.wait_for(2, Duration::from_secs(15)).await;
    let ts = |r: &Received| r.header("webhook-timestamp").parse::<u64>().unwrap();
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"), "one delivery, one id");
    assert!(ts(&got[1]) > ts(&got[0]), "the retry was signed when it was sent");
    assert_ne!(got[0].header("webhook-signature"), got[1].header("webhook-signature"));
    for request in &got {
        assert!(accepted(&verify(secret, request, None, 0)));
    }
}

/// Publishes one event to the webhook and returns the request it caused.
async fn deliver(t: &crate::support::weir::Tenant, receiver: &Receiver, wo: &str) -> Received {
    let before = receiver.count();
    t.publisher.publish(&work_order_event(wo)).await;
    receiver.wait_for(before + 1, Duration::from_secs(10)).await.remove(before)
}

async fn rotate(admin: &Api, webhook_id: &str, grace: &str) -> Value {
    admin
        .post(&format!("/api/v2/webhooks/{webhook_id}/rotate_secret"), &json!({"grace_period": grace}))
        .await
        .expect(200)
        .json()
}

#[tokio::test]
async fn rotation_signs_with_both_secrets_during_the_grace_period_and_only_the_new_after() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = webhook["id"].as_str().unwrap();
    let s0 = webhook["signing_secret"].as_str().unwrap().to_owned();

    let rotated = rotate(&t.admin, id, "1h").await;
    let s1 = rotated["signing_secret"].as_str().unwrap().to_owned();
    assert_ne!(s1, s0);
    assert_eq!(STANDARD.decode(s1.strip_prefix("whsec_").unwrap()).unwrap().len(), 32);
    let expires = weir::time::parse_rfc3339(rotated["previous_secret_expires_at"].as_str().unwrap()).unwrap();
    let in_an_hour = weir::time::now_millis() + 3_600_000;
    assert!(expires.abs_diff(in_an_hour) < 10_000, "grace ends in an hour");
    let got = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json();
    assert_eq!(got["signing_secret"], s1.as_str());

    let during = deliver(&t, &receiver, "wo_r1").await;
    assert_eq!(during.header("webhook-signature").split(' ').count(), 2, "new, then previous");
    assert!(accepted(&verify(&s1, &during, None, 0)), "the new secret verifies");
    assert!(accepted(&verify(&s0, &during, None, 0)), "the old secret verifies during the grace period");
    assert!(weir::sign::verify(&s1, &during.body, &during.header("x-webhook-signature")));

    // Rotating again keeps only the latest previous secret.
    let s2 = rotate(&t.admin, id, "1h").await["signing_secret"].as_str().unwrap().to_owned();
    let again = deliver(&t, &receiver, "wo_r2").await;
    assert!(accepted(&verify(&s2, &again, None, 0)));
    assert!(accepted(&verify(&s1, &again, None, 0)));
    assert!(refused(&verify(&s0, &again, None, 0)), "the secret before the previous one is gone");

    // After the grace period only the new secret signs.
    let s3 = rotate(&t.admin, id, "1s").await["signing_secret"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let after = deliver(&t, &receiver, "wo_r3").await;
    assert_eq!(after.header("webhook-signature").split(' ').count(), 1);
    assert!(accepted(&verify(&s3, &after, None, 0)));
    assert!(refused(&verify(&s2, &after, None, 0)), "the old secret fails after the grace period");
    let got = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json();
    assert_eq!(got["previous_secret_expires_at"], Value::Null);

    // No grace period: the old secret stops at once. No body: the default (24h).
    let rotated = rotate(&t.admin, id, "0s").await;
    assert_eq!(rotated["previous_secret_expires_at"], Value::Null);
    let s4 = rotated["signing_secret"].as_str().unwrap().to_owned();
    let now = deliver(&t, &receiver, "wo_r4").await;
    assert!(accepted(&verify(&s4, &now, None, 0)));
    assert!(refused(&verify(&s3, &now, None, 0)));
    let path = format!("/api/v2/webhooks/{id}/rotate_secret");
    let default = t.admin.http.post(&path).bearer(&t.admin.token).send().await.expect(200).json();
    let expires = weir::time::parse_rfc3339(default["previous_secret_expires_at"].as_str().unwrap()).unwrap();
    assert!(expires.abs_diff(weir::time::now_millis() + 86_400_000) < 10_000, "default grace is 24h");
}

#[tokio::test]
async fn rotation_checks_its_input_and_its_tenant() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let webhook = t.admin.create_webhook("http://127.0.0.1:9/h", &["work_order_created"]).await;
    let id = webhook["id"].as_str().unwrap();
    let path = format!("/api/v2/webhooks/{id}/rotate_secret");
    for bad in [json!({"grace_period": "8d"}), json!({"grace_period": "soon"}), json!({"grace_period": 5})] {
        let resp = t.admin.post(&path, &bad).await.expect(422);
        assert_eq!(resp.error_fields(), vec!["grace_period"], "{bad}");
    }
    assert_eq!(t.admin.post(&path, &json!({"grace": "1h"})).await.expect(422).error_fields(), vec!["grace"]);
    let other = weir.tenant(Plan::pro()).await;
    other.admin.post(&path, &json!({})).await.expect(404);
    other.admin.post("/api/v2/webhooks/wh_nope/rotate_secret", &json!({})).await.expect(404);
    let unchanged = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json();
    assert_eq!(unchanged["signing_secret"], webhook["signing_secret"], "refused rotations change nothing");
    t.publisher.post(&path, &json!({})).await.expect(403);
}

#[tokio::test]
async fn the_example_receiver_accepts_either_listed_signature_through_a_rotation() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let port = free_port();
    let webhook = t.admin.create_webhook(&format!("http://127.0.0.1:{port}/hook"), &["work_order_created"]).await;
    let old = webhook["signing_secret"].as_str().unwrap();
    let mut receiver = ExampleReceiver::start(old, port, None).await;
    rotate(&t.admin, webhook["id"].as_str().unwrap(), "1h").await;
    let event_id = t.publisher.publish(&work_order_event("wo_x")).await;
    let line = receiver.next(Duration::from_secs(10)).await.expect("accepted with the previous secret");
    assert_eq!(line["event"]["id"], event_id);
}

#[tokio::test]
async fn a_secret_made_before_standard_webhooks_signs_both_header_families() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = webhook["id"].as_str().unwrap();
    // The old format: whsec_ + URL-safe base64 without padding of 32 bytes.
    let bytes: [u8; 32] = [0xfb; 32];
    let old = format!("whsec_{}", URL_SAFE_NO_PAD.encode(bytes));
    let key = weir.store.keys().webhook(&t.org_id, id);
    let mut conn = raw_conn(&weir.builder);
    redis::cmd("HSET").arg(&key).arg("signing_secret").arg(&old).exec(conn.as_mut()).unwrap();

    let request = deliver(&t, &receiver, "wo_old").await;
    assert!(weir::sign::verify(&old, &request.body, &request.header("x-webhook-signature")));
    let equivalent = format!("whsec_{}", STANDARD.encode(bytes));
    assert!(accepted(&verify(&equivalent, &request, None, 0)), "the key is the URL-safe decoding of the secret");

    let rotated = rotate(&t.admin, id, "0s").await;
    let new = rotated["signing_secret"].as_str().unwrap();
    assert_eq!(
        STANDARD.decode(new.strip_prefix("whsec_").unwrap()).unwrap().len(),
        32,
        "rotating gives a standard secret"
    );
    let request = deliver(&t, &receiver, "wo_new").await;
    assert!(accepted(&verify(new, &request, None, 0)));
}
