//! Test events (contract §9): `POST /api/v2/webhooks/{id}/test` sends an example event of
//! one of the webhook's actions to it alone — through its filter, signed, marked
//! `"test": true` — and nowhere else: not in the event log, never replayed.

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::support::receiver::Receiver;
use crate::support::weir::Weir;

#[tokio::test]
async fn a_test_event_goes_to_its_webhook_alone_signed_and_marked() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let (receiver, bystander) = (Receiver::start().await, Receiver::start().await);
    let hook = t.admin.create_webhook(&receiver.url, &["form_completed", "defect_created"]).await;
    let other = t.admin.create_webhook(&bystander.url, &["form_completed", "defect_created"]).await;
    let id = hook["id"].as_str().unwrap();

    let queued = t.admin.post(&format!("/api/v2/webhooks/{id}/test"), &json!({})).await.expect(202).json();
    let delivery = queued["delivery_id"].as_str().unwrap();
    assert!(delivery.starts_with("dlv_"), "{queued}");
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let body = got[0].json();
    assert_eq!(body["test"], true, "{body}");
    assert_eq!(body["action"], "form_completed", "the webhook's first action by default");
    assert_eq!(body["organisation"]["id"], t.org_id.as_str());
    assert_eq!(got[0].header("webhook-id"), delivery, "the delivery's id as any other");
    let signature = got[0].header("webhook-signature");
    assert!(signature.starts_with("v1,"), "signed as any other: {signature}");
    let secret = hook["signing_secret"].as_str().unwrap();
    assert!(weir::sign::verify(secret, &got[0].body, &got[0].header("x-webhook-signature")));

    let chosen =
        t.admin.post(&format!("/api/v2/webhooks/{id}/test"), &json!({"action": "defect_created"})).await.expect(202);
    assert!(chosen.json()["delivery_id"].as_str().unwrap() != delivery);
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(got[1].json()["action"], "defect_created");
    let shown = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery}")).await.expect(200).json();
    assert_eq!(shown["status"], "succeeded", "{shown}");

    // Nowhere else: no other webhook, not the event log, not a replay.
    let events = t.admin.get("/api/v2/events").await.expect(200).json();
    assert_eq!(events["data"].as_array().unwrap().len(), 0, "not in the event log: {events}");
    let since = weir::time::format_millis(weir::time::now_millis() - 60_000);
    let other_id = other["id"].as_str().unwrap();
    let replayed =
        t.admin.post(&format!("/api/v2/webhooks/{other_id}/replay"), &json!({"since": since})).await.expect(202).json();
    assert_eq!(replayed["count"], 0, "never replayed: {replayed}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(bystander.count(), 0);
    assert_eq!(receiver.count(), 2);
}

#[tokio::test]
async fn a_test_event_is_refused_what_it_cannot_be_sent_to() {
    let weir = Weir::start_default().await;
    let (t, other) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["form_completed"]).await;
    let id = hook["id"].as_str().unwrap();
    let path = format!("/api/v2/webhooks/{id}/test");
    for (body, field) in [
        (json!({"action": "defect_created"}), "action"),
        (json!({"action": 3}), "action"),
        (json!({"other": 1}), "other"),
    ] {
        let resp = t.admin.post(&path, &body).await;
        assert_eq!(resp.status, 422, "{body}");
        assert_eq!(resp.error_fields(), [field]);
    }
    assert_eq!(other.admin.post(&path, &json!({})).await.status, 404, "another organisation's webhook");
    assert_eq!(t.admin.post("/api/v2/webhooks/wh_nope/test", &json!({})).await.status, 404);
    assert_eq!(t.publisher.post(&path, &json!({})).await.status, 403, "admin clients only");

    // Through the webhook's filter: one that does not select the example sends nothing.
    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"filter": "event.test != true"})).await.expect(200);
    let filtered = t.admin.post(&path, &json!({})).await;
    assert_eq!(filtered.status, 422, "{}", filtered.text());
    assert_eq!(filtered.error_fields(), ["action"]);
    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"filter": "event.test == true"})).await.expect(200);
    t.admin.post(&path, &json!({})).await.expect(202);
    receiver.wait_for(1, Duration::from_secs(10)).await;

    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"active": false})).await.expect(200);
    assert_eq!(t.admin.post(&path, &json!({})).await.status, 409, "an inactive webhook");
    assert_eq!(receiver.count(), 1);
}
