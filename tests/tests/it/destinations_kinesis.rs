//! Amazon Kinesis Data Streams against the moto emulator: each delivery is one record, its
//! data the body byte for byte and its partition key the event's subject, so an ordered
//! webhook's events of one subject land on one shard in publish order; the attempt records the
//! shard and sequence number; a missing stream is a failed attempt in AWS's words; keys are
//! never shown; a replay goes into the stream; an endpoint that never answers holds no HTTP
//! webhook.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::destinations_aws::aws_webhook;
use crate::support::eventually;
use crate::support::moto::Moto;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, work_order_event};

#[tokio::test]
async fn a_stream_gets_each_delivery_as_a_record_and_each_subject_stays_on_one_shard_in_order() {
    let moto = Moto::start();
    moto.aws(&["create-stream", "orders", "2"]);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = aws_webhook(&t, &moto, json!({"type": "kinesis", "stream_name": "orders"})).await;
    let id = hook["id"].as_str().unwrap().to_owned();
    let shown = hook.to_string();
    assert!(!shown.contains("weir-secret-key") && !shown.contains("AKIDWEIRTEST"), "{shown}");
    assert_eq!(hook["destination"]["partition_key"], "subject", "the default: {hook}");
    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"ordering": "subject"})).await.expect(200);
    let missing = aws_webhook(&t, &moto, json!({"type": "kinesis", "stream_name": "nowhere"})).await;

    let mut published: Vec<(String, String)> = Vec::new();
    for i in 0..9 {
        let subject = format!("wo_{}", i % 3);
        published.push((subject.clone(), t.publisher.publish(&work_order_event(&subject)).await));
    }
    let records: Vec<Value> = serde_json::from_str(&moto.aws(&["read-stream", "orders", "9"])).unwrap();
    assert_eq!(records.len(), 9, "{records:?}");
    let mut shards: HashMap<String, String> = HashMap::new();
    let mut order: HashMap<String, Vec<String>> = HashMap::new();
    for record in &records {
        let envelope: Value = serde_json::from_str(record["data"].as_str().unwrap()).expect("the body, as it was sent");
        let subject = envelope["subject"]["id"].as_str().unwrap().to_owned();
        assert_eq!(record["partition_key"], subject.as_str(), "{record}");
        let shard = record["shard"].as_str().unwrap().to_owned();
        assert_eq!(shards.entry(subject.clone()).or_insert_with(|| shard.clone()), &shard, "one shard per subject");
        order.entry(subject).or_default().push(envelope["id"].as_str().unwrap().to_owned());
    }
    for (subject, events) in &order {
        let sent: Vec<&String> = published.iter().filter(|(s, _)| s == subject).map(|(_, e)| e).collect();
        assert_eq!(events.iter().collect::<Vec<_>>(), sent, "{subject} in publish order");
    }
    let recorded = t.admin.settled(&id, 9).await;
    assert!(recorded.iter().all(|d| d["status"] == "succeeded"), "{recorded:?}");
    for delivery in &recorded {
        let sent = delivery["request"]["body"].as_str().unwrap();
        assert!(records.iter().any(|r| r["data"] == sent), "its body byte for byte: {sent}");
    }
    let said = recorded[0]["attempts"][0]["response_body"].as_str().unwrap();
    assert!(said.starts_with("Kinesis shard shardId-") && said.contains(" sequence "), "{said}");
    assert!(!recorded[0].to_string().contains("weir-secret-key"));

    let failed = eventually("a failed attempt", Duration::from_secs(10), async || {
        t.admin.deliveries_of(missing["id"].as_str().unwrap()).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    let error = failed["error"].as_str().unwrap();
    assert!(error.starts_with("AWS answered 400: ResourceNotFoundException"), "{failed}");
}

#[tokio::test]
async fn an_endpoint_that_never_answers_holds_no_http_webhook_beside_it() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let hanging = Receiver::replying(Reply::Hang).await;
    let mut stuck = json!({"type": "kinesis", "stream_name": "nowhere", "region": "us-east-1",
        "access_key_id": "AKIDWEIRTEST", "secret_access_key": "weir-secret-key"});
    stuck["endpoint_url"] = json!(hanging.url.trim_end_matches("/hook"));
    let body = json!({"subscribed_actions": ["work_order_created"], "destination": stuck});
    let stuck = t.admin.post("/api/v2/webhooks", &body).await.expect(201).json();
    let http = Receiver::start().await;
    t.admin.create_webhook(&http.url, &["work_order_created"]).await;
    let started = std::time::Instant::now();
    for wo in ["wo_1", "wo_2", "wo_3"] {
        t.publisher.publish(&work_order_event(wo)).await;
    }
    http.wait_for(3, Duration::from_secs(10)).await;
    assert!(started.elapsed() < Duration::from_secs(3), "the HTTP webhook was not held by the hanging endpoint");
    let failed = eventually("a timed-out attempt", Duration::from_secs(10), async || {
        let all = t.admin.deliveries_of(stuck["id"].as_str().unwrap()).await;
        all.iter().find_map(|d| d["attempts"].as_array()?.first().cloned())
    })
    .await;
    assert!(failed["error"].as_str().unwrap().contains("timed out"), "{failed}");
}

#[tokio::test]
async fn events_published_before_the_webhook_are_replayed_into_the_stream() {
    let moto = Moto::start();
    moto.aws(&["create-stream", "replayed", "1"]);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let mut published = Vec::new();
    for wo in ["wo_1", "wo_2"] {
        published.push(t.publisher.publish(&work_order_event(wo)).await);
    }
    let hook = aws_webhook(&t, &moto, json!({"type": "kinesis", "stream_name": "replayed"})).await;
    let id = hook["id"].as_str().unwrap();
    let since = weir::time::format_millis(weir::time::now_millis() - 60_000);
    let replayed = t.admin.post(&format!("/api/v2/webhooks/{id}/replay"), &json!({"since": since})).await.expect(202);
    assert_eq!(replayed.json()["count"], 2, "{}", replayed.text());
    let records: Vec<Value> = serde_json::from_str(&moto.aws(&["read-stream", "replayed", "2"])).unwrap();
    let mut ids: Vec<String> = records
        .iter()
        .map(|r| serde_json::from_str::<Value>(r["data"].as_str().unwrap()).unwrap()["id"].as_str().unwrap().to_owned())
        .collect();
    // (Not ordered by subject: the two may be attempted at once.)
    ids.sort();
    published.sort();
    assert_eq!(ids, published, "both events");
}
