//! Operational events (contract §7): `webhook_delivery_failed`, `webhook_deactivated` and
//! `webhook_reactivated` reach the organisation's webhooks that subscribe, signed, with
//! their shapes; never the webhook they are about; never a secret; one per change.

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Received, Receiver, Reply};
use crate::support::weir::{WeirBuilder, work_order_event};

const OPERATIONAL: [&str; 3] = ["webhook_deactivated", "webhook_reactivated", "webhook_delivery_failed"];

fn of_action(receiver: &Receiver, action: &str) -> Vec<Received> {
    receiver.received().into_iter().filter(|r| r.json()["action"] == action).collect()
}

fn signed_with(secret: &str, r: &Received) -> bool {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&r.body);
    hex::encode(mac.finalize().into_bytes()) == r.header("x-webhook-signature")
}

#[tokio::test]
async fn failures_deactivation_and_reactivation_are_told_to_the_other_webhooks() {
    // Four attempts per delivery; the sixth failure in a row switches the webhook off.
    let weir = WeirBuilder::shared()
        .env("WEIR_DEACTIVATE_AFTER_FAILURES", "6")
        .env("WEIR_DEACTIVATE_AFTER", "0s")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let ops = Receiver::start().await;
    let watcher = t.admin.create_webhook(&ops.url, &OPERATIONAL).await;
    let secret = watcher["signing_secret"].as_str().unwrap().to_owned();
    let failing = Receiver::replying(Reply::Status(500)).await;
    let mut actions = vec!["work_order_created"];
    actions.extend(OPERATIONAL);
    let hook = t.admin.create_webhook(&failing.url, &actions).await;
    let id = hook["id"].as_str().unwrap().to_owned();

    let event_id = t.publisher.publish(&work_order_event("wo_1")).await;
    let failed = eventually("webhook_delivery_failed", Duration::from_secs(20), async || {
        of_action(&ops, "webhook_delivery_failed").into_iter().next()
    })
    .await;
    assert!(signed_with(&secret, &failed), "signed like any delivery");
    let body = failed.json();
    assert_eq!(body["creator"], json!({"id": "weir", "name": "Weir"}));
    assert_eq!(body["subject"]["type"], "WebhookDelivery");
    let snapshot = &body["webhook_delivery"];
    assert_eq!(snapshot["id"], body["subject"]["id"]);
    assert_eq!(snapshot["webhook_id"], id.as_str());
    assert_eq!(snapshot["event_id"], event_id.as_str());
    assert_eq!(
        (snapshot["action"].as_str(), snapshot["status"].as_str()),
        (Some("work_order_created"), Some("failed"))
    );
    assert_eq!(snapshot["last_attempt"]["status_code"], 500, "{snapshot}");

    t.publisher.publish(&work_order_event("wo_2")).await;
    let deactivated = eventually("webhook_deactivated", Duration::from_secs(20), async || {
        of_action(&ops, "webhook_deactivated").into_iter().next()
    })
    .await
    .json();
    assert_eq!(deactivated["subject"], json!({"type": "Webhook", "id": id}));
    let w = &deactivated["webhook"];
    assert_eq!((w["id"].as_str(), w["active"].as_bool()), (Some(id.as_str()), Some(false)));
    assert_eq!(w["deactivation_reason"], "failing");
    assert!(w.get("signing_secret").is_none(), "no secret in {w}");
    assert!(!deactivated.to_string().contains("whsec_"), "no secret anywhere");

    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"active": true})).await.expect(200);
    let reactivated = eventually("webhook_reactivated", Duration::from_secs(20), async || {
        of_action(&ops, "webhook_reactivated").into_iter().next()
    })
    .await
    .json();
    assert_eq!(reactivated["webhook"]["active"], true);
    assert!(reactivated["webhook"].get("signing_secret").is_none());

    tokio::time::sleep(Duration::from_millis(500)).await;
    // wo_2's delivery failed with the deactivation, not by running out of retries: no notice.
    assert_eq!(of_action(&ops, "webhook_delivery_failed").len(), 1);
    assert_eq!(of_action(&ops, "webhook_deactivated").len(), 1);
    // The webhook they are about got none of them, though it subscribes.
    let told: Vec<Value> = failing.received().iter().map(|r| r.json()["action"].clone()).collect();
    assert!(told.iter().all(|a| a == "work_order_created"), "{told:?}");
    // They are in the event log, and logged deliveries name them.
    let log = t.admin.get("/api/v2/events?action=webhook_deactivated").await.expect(200).json();
    assert_eq!(log["data"].as_array().map(Vec::len), Some(1), "{log}");
}

#[tokio::test]
async fn deactivating_a_webhook_with_many_pending_deliveries_is_one_event() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let ops = Receiver::start().await;
    t.admin.create_webhook(&ops.url, &OPERATIONAL).await;
    let stuck = Receiver::replying(Reply::Hang).await;
    let hook = t.admin.create_webhook(&stuck.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    for i in 0..200 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let resp = t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"active": false})).await.expect(200);
    assert_eq!(resp.json()["active"], false);
    let got = ops.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].json()["webhook"]["deactivation_reason"], "manual");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let actions: Vec<Value> = ops.received().iter().map(|r| r.json()["action"].clone()).collect();
    assert_eq!(actions, [json!("webhook_deactivated")], "one event for 200 pending deliveries");
}
