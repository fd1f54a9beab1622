//! AWS destinations (issue 56) against the moto emulator: SQS (standard and FIFO), SNS and
//! EventBridge get each delivery signed with Signature Version 4 and, for SQS and SNS, the
//! HTTP headers as message attributes the consumer verifies; a FIFO queue keeps each subject
//! in order; a missing queue is a failed attempt; keys are never shown. (moto does not check
//! signatures: `sigv4.rs` is checked against AWS's published example instead.)

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::moto::Moto;
use crate::support::weir::{Tenant, Weir, work_order_event};

pub(crate) async fn aws_webhook(t: &Tenant, moto: &Moto, mut destination: Value) -> Value {
    for (k, v) in [("region", "us-east-1"), ("access_key_id", "AKIDWEIRTEST"), ("secret_access_key", "weir-secret-key")]
    {
        destination[k] = json!(v);
    }
    destination["endpoint_url"] = json!(moto.endpoint);
    let body = json!({"subscribed_actions": ["work_order_created"], "destination": destination});
    t.admin.post("/api/v2/webhooks", &body).await.expect(201).json()
}

fn received(moto: &Moto, queue_url: &str, n: usize) -> Vec<Value> {
    serde_json::from_str(&moto.aws(&["receive", queue_url, &n.to_string()])).unwrap()
}

#[tokio::test]
async fn an_sqs_queue_gets_signed_messages_and_a_fifo_queue_keeps_each_subject_in_order() {
    let moto = Moto::start();
    let queue = moto.aws(&["create-queue", "orders"]);
    let fifo = moto.aws(&["create-queue", "orders.fifo"]);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = aws_webhook(&t, &moto, json!({"type": "sqs", "queue_url": queue})).await;
    assert_eq!(hook["url"], json!(queue));
    let shown = hook.to_string();
    assert!(!shown.contains("weir-secret-key") && !shown.contains("AKIDWEIRTEST"), "{shown}");
    aws_webhook(&t, &moto, json!({"type": "sqs", "queue_url": fifo})).await;

    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_{}", i % 2))).await;
    }
    let got = received(&moto, &queue, 3);
    assert_eq!(got.len(), 3);
    let secret = hook["signing_secret"].as_str().unwrap();
    for message in &got {
        let body = message["body"].as_str().unwrap();
        let signature = message["attributes"]["x-webhook-signature"].as_str().unwrap();
        assert!(weir::sign::verify(secret, body.as_bytes(), signature), "signed: {message}");
        assert!(message["attributes"]["webhook-id"].as_str().unwrap().starts_with("dlv_"));
    }
    let ordered = received(&moto, &fifo, 3);
    assert_eq!(ordered.len(), 3);
    let groups: Vec<&str> = ordered.iter().map(|m| m["group"].as_str().unwrap()).collect();
    assert!(groups.iter().all(|g| *g == "wo_0" || *g == "wo_1"), "the subject id is the group: {groups:?}");
    let delivery = t.admin.get(&format!("/api/v2/webhooks/{}", hook["id"].as_str().unwrap())).await;
    assert_eq!(delivery.status, 200);
    let recorded = eventually("recorded", Duration::from_secs(10), async || {
        let all = t.admin.deliveries_of(hook["id"].as_str().unwrap()).await;
        (all.len() == 3 && all.iter().all(|d| d["status"] == "succeeded")).then_some(all)
    })
    .await;
    let attempt = &recorded[0]["attempts"][0];
    assert!(attempt["response_body"].as_str().unwrap().starts_with("SQS MessageId "), "{attempt}");
    assert!(!recorded[0].to_string().contains("weir-secret-key"));
}

#[tokio::test]
async fn sns_and_eventbridge_take_their_messages_and_a_missing_queue_fails_the_attempt() {
    let moto = Moto::start();
    let from_topic = moto.aws(&["create-queue", "from-topic"]);
    let topic = moto.aws(&["create-topic", "orders", &from_topic]);
    let from_bus = moto.aws(&["create-queue", "from-bus"]);
    moto.aws(&["route-bus", &from_bus]);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let sns = aws_webhook(&t, &moto, json!({"type": "sns", "topic_arn": topic})).await;
    let bus =
        aws_webhook(&t, &moto, json!({"type": "eventbridge", "event_bus_name": "default", "source": "acme.weir"}))
            .await;
    let missing =
        aws_webhook(&t, &moto, json!({"type": "sqs", "queue_url": format!("{}/123456789012/nowhere", moto.endpoint)}))
            .await;
    t.publisher.publish(&work_order_event("wo_1")).await;

    let via_topic = received(&moto, &from_topic, 1);
    assert_eq!(via_topic.len(), 1, "published to the topic");
    let secret = sns["signing_secret"].as_str().unwrap();
    let message = &via_topic[0];
    let signature = message["attributes"]["x-webhook-signature"].as_str().unwrap();
    assert!(weir::sign::verify(secret, message["body"].as_str().unwrap().as_bytes(), signature), "{message}");

    let via_bus = received(&moto, &from_bus, 1);
    assert_eq!(via_bus.len(), 1, "put on the bus");
    let event: Value = serde_json::from_str(via_bus[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(event["detail-type"], "work_order_created", "{event}");
    assert_eq!(event["source"], "acme.weir");
    assert_eq!(event["detail"]["action"], "work_order_created", "the body as Detail: {event}");
    let bus_attempt = eventually("recorded", Duration::from_secs(10), async || {
        t.admin.deliveries_of(bus["id"].as_str().unwrap()).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    assert!(bus_attempt["response_body"].as_str().unwrap().starts_with("EventBridge EventId "), "{bus_attempt}");

    let failed = eventually("a failed attempt", Duration::from_secs(10), async || {
        t.admin.deliveries_of(missing["id"].as_str().unwrap()).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    assert!(failed["error"].as_str().unwrap().starts_with("AWS answered 400"), "{failed}");
}

#[tokio::test]
async fn settings_make_an_sqs_destination_and_keep_its_keys_on_edit() {
    use crate::settings::{PASSWORD, http_sign_in, user};
    let moto = Moto::start();
    let queue = moto.aws(&["create-queue", "from-settings"]);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "admin@example.com", true).await;
    let http = weir.http();
    let (cookie, csrf) = http_sign_in(&http, "admin@example.com", PASSWORD).await.1.unwrap();
    let form = |name: &'static str, key: &'static str, secret: &'static str| {
        vec![
            ("_csrf", csrf.clone()),
            ("name", name.to_owned()),
            ("subscribed_actions", "work_order_created".to_owned()),
            ("destination_type", "sqs".to_owned()),
            ("destination_queue_url", queue.clone()),
            ("destination_region", "us-east-1".to_owned()),
            ("destination_endpoint_url", moto.endpoint.clone()),
            ("destination_access_key_id", key.to_owned()),
            ("destination_secret_access_key", secret.to_owned()),
        ]
    };
    let post = |path: String, pairs: Vec<(&'static str, String)>| {
        let (http, cookie) = (http.clone(), cookie.clone());
        async move {
            let sent: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            http.post(&path).header("cookie", &cookie).form(&sent).send().await
        }
    };
    let created = post("/settings/webhooks".into(), form("To SQS", "AKIDFORM", "form-secret")).await;
    assert_eq!(created.status, 303, "{}", created.text());
    let hook = t.admin.get("/api/v2/webhooks").await.json()["data"][0].clone();
    assert_eq!(hook["destination"]["queue_url"], json!(queue), "{hook}");
    let id = hook["id"].as_str().unwrap();
    let page = http.get(&format!("/settings/webhooks/{id}")).header("cookie", &cookie).send().await.expect(200).text();
    assert!(!page.contains("form-secret") && !page.contains("AKIDFORM"), "keys are never shown");
    // Saved again with the keys left empty: the stored ones stay.
    let saved = post(format!("/settings/webhooks/{id}"), form("Renamed", "", "")).await;
    assert_eq!(saved.status, 303, "{}", saved.text());
    t.publisher.publish(&work_order_event("wo_1")).await;
    assert_eq!(received(&moto, &queue, 1).len(), 1, "delivered with the kept keys");
}
