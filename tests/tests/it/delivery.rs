//! Publishing and delivering (contract §2 events and deliveries, §4; service document §2, §5, §6).

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, WeirBuilder, work_order_event};

#[tokio::test]
async fn a_published_event_arrives_signed_with_the_contract_headers_and_envelope() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let secret = webhook["signing_secret"].as_str().unwrap();
    let mut event = work_order_event("wo_42");
    event["created_at"] = json!("2026-11-22T11:00:38.123Z");
    let event_id = t.publisher.publish(&event).await;
    assert!(event_id.starts_with("evt_"));

    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let request = &got[0];
    assert!(weir::sign::verify(secret, &request.body, &request.header("x-webhook-signature")));
    assert_eq!(request.header("x-webhook-signature"), weir::sign::signature(secret, &request.body));
    assert_eq!(request.header("content-type"), "application/json");
    assert!(request.header("user-agent").starts_with("Weir/"));
    assert_eq!(request.header("x-webhook-timestamp"), "2026-11-22T11:00:38.123Z");
    assert_eq!(request.header("x-webhook-attempt"), "1");
    let delivery_id = request.header("x-webhook-delivery");
    assert!(delivery_id.starts_with("dlv_"));

    let body = request.json();
    assert_eq!(body["id"], event_id);
    assert_eq!(body["action"], "work_order_created");
    assert_eq!(body["created_at"], "2026-11-22T11:00:38.123Z");
    assert_eq!(body["organisation"], json!({"id": t.org_id}));
    assert_eq!(body["creator"], json!({"id": "usr_7", "name": "Ada Lovelace"}));
    assert_eq!(body["subject"], json!({"type": "WorkOrder", "id": "wo_42"}));
    assert_eq!(body["work_order"], event["work_order"]);
    assert_eq!(body.as_object().unwrap().len(), 7, "{body}");

    // The delivery record shows the same request.
    let record = eventually("succeeded", Duration::from_secs(10), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery_id}")).await.expect(200).json();
        (d["status"] == "succeeded").then_some(d)
    })
    .await;
    assert_eq!(record["webhook_id"], webhook["id"]);
    assert_eq!(record["event_id"], event_id);
    assert_eq!(record["action"], "work_order_created");
    assert_eq!(record["next_attempt_at"], Value::Null);
    assert_eq!(record["request"]["body"].as_str().unwrap().as_bytes(), &request.body[..]);
    assert_eq!(record["request"]["headers"]["x-webhook-signature"], request.header("x-webhook-signature"));
    assert_eq!(record["plugins"], json!([]));
    let attempt = &record["attempts"][0];
    assert_eq!(attempt["status_code"], 200);
    assert_eq!(attempt["error"], Value::Null);
    assert_eq!(attempt["response_body"], "{\"received\":true}");
    assert!(attempt["duration_ms"].is_u64());
    assert!(weir::time::parse_rfc3339(attempt["at"].as_str().unwrap()).is_some());
}

#[tokio::test]
async fn deleted_subjects_say_so_and_snapshot_bytes_are_kept() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["defect_deleted"]).await;
    let raw = r#"{"action":"defect_deleted","creator":{"id":"u","name":"N"},"subject":{"type":"Defect","id":"d1","deleted":true},"defect":{"b": 1.50, "a": [1,2]}}"#;
    t.publisher
        .http
        .post("/api/v2/events")
        .bearer(&t.publisher.token)
        .raw("application/json", raw)
        .send()
        .await
        .expect(202);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let text = String::from_utf8_lossy(&got[0].body).into_owned();
    assert!(text.contains(r#""subject":{"type":"Defect","id":"d1","deleted":true}"#), "{text}");
    assert!(text.contains(r#""defect":{"b": 1.50, "a": [1,2]}"#), "snapshot kept byte for byte: {text}");
}

#[tokio::test]
async fn only_active_subscribed_webhooks_of_the_same_organisation_receive() {
    let weir = Weir::start_default().await;
    let a = weir.tenant(Plan::pro()).await;
    let b = weir.tenant(Plan::pro()).await;
    let subscribed = Receiver::start().await;
    let other_action = Receiver::start().await;
    let inactive = Receiver::start().await;
    let other_org = Receiver::start().await;
    a.admin.create_webhook(&subscribed.url, &["work_order_created"]).await;
    a.admin.create_webhook(&other_action.url, &["work_order_updated"]).await;
    let off = a.admin.create_webhook(&inactive.url, &["work_order_created"]).await;
    a.admin
        .patch(&format!("/api/v2/webhooks/{}", off["id"].as_str().unwrap()), &json!({"active": false}))
        .await
        .expect(200);
    b.admin.create_webhook(&other_org.url, &["work_order_created"]).await;

    a.publisher.publish(&work_order_event("wo_1")).await;
    subscribed.wait_for(1, Duration::from_secs(10)).await;
    // A second event flushes through the same queue; by then nothing else may have arrived.
    a.publisher.publish(&work_order_event("wo_2")).await;
    subscribed.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(other_action.count(), 0);
    assert_eq!(inactive.count(), 0);
    assert_eq!(other_org.count(), 0);
    assert_eq!(a.admin.deliveries_of(off["id"].as_str().unwrap()).await.len(), 0);
}

#[tokio::test]
async fn publishing_the_same_id_again_creates_nothing_new() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let mut event = work_order_event("wo_1");
    event["id"] = json!("evt_order-1001");
    assert_eq!(t.publisher.publish(&event).await, "evt_order-1001");
    event["work_order"]["title"] = json!("changed");
    assert_eq!(t.publisher.publish(&event).await, "evt_order-1001");
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let deliveries = t.admin.settled(webhook["id"].as_str().unwrap(), 1).await;
    assert_eq!(deliveries.len(), 1);
    assert_eq!(receiver.count(), 1);
    assert_eq!(receiver.received()[0].json()["work_order"]["title"], "Replace pump seal");
    // Another organisation may use the same id: ids are per organisation.
    let other = weir.tenant(Plan::pro()).await;
    assert_eq!(other.publisher.publish(&event).await, "evt_order-1001");
}

#[tokio::test]
async fn only_publishers_publish_and_no_plan_is_needed() {
    let weir = Weir::start_default().await;
    let free = weir.tenant(Plan::free()).await;
    free.publisher.post("/api/v2/events", &work_order_event("w")).await.expect(202);
    assert_eq!(free.admin.post("/api/v2/events", &work_order_event("w")).await.expect(403).error_code(), "forbidden");
    weir.http().post("/api/v2/events").json(&work_order_event("w")).send().await.expect(401);
}

#[tokio::test]
async fn delivery_lists_filter_and_paginate() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let ok = Receiver::start().await;
    let bad = Receiver::replying(Reply::Status(500)).await;
    let w1 = t.admin.create_webhook(&ok.url, &["work_order_created", "defect_created"]).await;
    let w2 = t.admin.create_webhook(&bad.url, &["work_order_created"]).await;
    let (w1, w2) = (w1["id"].as_str().unwrap().to_owned(), w2["id"].as_str().unwrap().to_owned());
    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let defect = json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": "d"}, "defect": {}});
    t.publisher.publish(&defect).await;
    t.admin.settled(&w1, 4).await;
    t.admin.settled(&w2, 3).await;

    let list = |q: String| {
        let admin = t.admin.clone();
        async move { admin.get(&format!("/api/v2/webhook_deliveries?{q}")).await.expect(200).json() }
    };
    let all = list(String::new()).await;
    assert_eq!(all["data"].as_array().unwrap().len(), 7);
    let ids: Vec<&str> = all["data"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    let times: Vec<u64> = ids.iter().map(|id| weir::ids::millis_of(weir::ids::Kind::Delivery, id).unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {ids:?}");
    assert_eq!(ids.iter().collect::<std::collections::HashSet<_>>().len(), 7);
    assert_eq!(list("status=failed".into()).await["data"].as_array().unwrap().len(), 3);
    assert_eq!(list(format!("webhook_id={w1}&action=defect_created")).await["data"].as_array().unwrap().len(), 1);
    assert_eq!(list(format!("webhook_id={w2}&status=succeeded")).await["data"].as_array().unwrap().len(), 0);
    let page = list("limit=3".into()).await;
    assert_eq!(page["data"].as_array().unwrap().len(), 3);
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let rest = list(format!("limit=10&cursor={cursor}")).await;
    assert_eq!(rest["data"].as_array().unwrap().len(), 4);
    assert_eq!(rest["next_cursor"], Value::Null);
    for bad_query in ["status=lost", "action=nope", "webhook_id=x", "limit=0", "sort=asc"] {
        t.admin.get(&format!("/api/v2/webhook_deliveries?{bad_query}")).await.expect(422);
    }
    // Other organisations see nothing, even filtering by this organisation's webhook.
    let other = weir.tenant(Plan::pro()).await;
    let theirs = other.admin.get(&format!("/api/v2/webhook_deliveries?webhook_id={w1}")).await.expect(200).json();
    assert_eq!(theirs["data"], json!([]));
    // Plan and role rules apply.
    let free = weir.tenant(Plan::free()).await;
    free.admin.get("/api/v2/webhook_deliveries").await.expect(402);
    t.publisher.get("/api/v2/webhook_deliveries").await.expect(403);
}

#[tokio::test]
async fn deleting_a_webhook_cancels_its_queued_deliveries() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "1h").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Status(500)).await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = webhook["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_1")).await;
    let d = eventually("waiting for its retry", Duration::from_secs(10), async || {
        let d = t.admin.deliveries_of(id).await.pop()?;
        d["next_attempt_at"].is_string().then_some(d)
    })
    .await;
    t.admin.delete(&format!("/api/v2/webhooks/{id}")).await.expect(204);
    let after =
        t.admin.get(&format!("/api/v2/webhook_deliveries/{}", d["id"].as_str().unwrap())).await.expect(200).json();
    assert_eq!(after["status"], "cancelled");
    assert_eq!(after["next_attempt_at"], Value::Null);
    t.admin
        .post(&format!("/api/v2/webhook_deliveries/{}/retry", d["id"].as_str().unwrap()), &json!({}))
        .await
        .expect(409);
    // Listing by the deleted webhook's id still finds its deliveries.
    assert_eq!(t.admin.deliveries_of(id).await.len(), 1);
}

#[tokio::test]
async fn records_go_with_their_day_and_events_expire() {
    let weir =
        WeirBuilder::shared().env("WEIR_DELIVERY_RETENTION", "90s").env("WEIR_RETRY_SCHEDULE", "20s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    // A second webhook whose endpoint keeps failing: its delivery is still pending (a
    // retry waits) when its day is trimmed.
    let failing = Receiver::replying(Reply::Status(500)).await;
    let waiting = t.admin.create_webhook(&failing.url, &["work_order_created"]).await;
    let event_id = t.publisher.publish(&work_order_event("wo_1")).await;
    // A newer event about the same work order: the first is no longer its newest snapshot,
    // so it expires like any other (the newest is kept for report exports).
    let mut newer = work_order_event("wo_1");
    newer["created_at"] = json!(weir::time::format_millis(weir::time::now_millis() + 1000));
    t.publisher.publish(&newer).await;
    let d = t.admin.settled(webhook["id"].as_str().unwrap(), 2).await.pop().unwrap();
    failing.wait_for(2, Duration::from_secs(10)).await;
    let pending = t.admin.deliveries_of(waiting["id"].as_str().unwrap()).await.pop().unwrap();
    assert_eq!(pending["status"], "pending");
    let mut conn = crate::support::weir::raw_conn(&weir.builder);
    let keys = weir.store.keys();
    let key_of = |d: &Value| {
        let id = d["id"].as_str().unwrap();
        keys.delivery(keys.partition_of_delivery(id).unwrap(), id)
    };
    let (delivery_key, pending_key) = (key_of(&d), key_of(&pending));
    let event_key = keys.event(keys.partition_of_subject(&t.org_id, "WorkOrder", "wo_1"), &t.org_id, &event_id);
    eventually("the superseded event has its TTL back", Duration::from_secs(15), async || {
        let ttl: i64 = redis::cmd("PTTL").arg(&event_key).query(&mut *conn).unwrap();
        (ttl > 0).then_some(())
    })
    .await;
    let ttl: i64 = redis::cmd("PTTL").arg(&event_key).query(&mut *conn).unwrap();
    assert!(ttl > 0 && ttl <= 90_000, "{event_key}: {ttl}");
    let ttl: i64 = redis::cmd("PTTL").arg(&delivery_key).query(&mut *conn).unwrap();
    assert_eq!(ttl, -1, "a record has no TTL of its own: it goes with its day");

    // Days are trimmed whole: a cutoff in tomorrow takes today's records and indexes.
    let seen = weir
        .store
        .trim()
        .trim_deliveries(weir::time::now_millis() + 86_400_000 + 90_000, &|_| Duration::from_secs(90))
        .await
        .unwrap();
    assert!(seen >= 4, "{seen} records looked at");
    let exists: bool = redis::cmd("EXISTS").arg(&delivery_key).query(&mut *conn).unwrap();
    assert!(!exists, "a final record goes with its day");
    let ttl: i64 = redis::cmd("PTTL").arg(&pending_key).query(&mut *conn).unwrap();
    assert!(ttl > 0 && ttl <= 90_000, "a pending record is kept, with the retention period as its TTL: {ttl}");
    assert_eq!(t.admin.deliveries_of(webhook["id"].as_str().unwrap()).await.len(), 0);
    t.admin.get(&format!("/api/v2/webhook_deliveries/{}", d["id"].as_str().unwrap())).await.expect(404);
    // The next trim starts after the day it reached: nothing is looked at twice.
    let again = weir
        .store
        .trim()
        .trim_deliveries(weir::time::now_millis() + 86_400_000 + 90_000, &|_| Duration::from_secs(90))
        .await
        .unwrap();
    assert_eq!(again, 0);
}

#[tokio::test]
async fn metrics_count_events_deliveries_and_attempts() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    t.admin.settled(webhook["id"].as_str().unwrap(), 1).await;
    let text = weir.http().get("/metrics").send().await.expect(200).text();
    let value = |name: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"))
    };
    assert!(value("weir_events_published_total ") >= 1.0);
    assert!(value("weir_deliveries_total{status=\"succeeded\"} ") >= 1.0);
    assert!(value("weir_attempts_total{result=\"success\",class=\"2xx\",destination=\"http\"} ") >= 1.0);
    assert!(value("weir_attempt_duration_seconds_count{result=\"success\"} ") >= 1.0);
    assert!(value("weir_queue_ready ") >= 0.0);
    assert!(value("weir_queue_scheduled ") >= 0.0);
    assert!(value("weir_deliveries_in_flight ") >= 0.0);
}

#[tokio::test]
async fn a_fan_out_to_webhooks_on_one_host_reuses_its_connections() {
    // 10 webhooks on one host, each with the default window (32 in flight): up to 320
    // requests at once to that host, more than hyper's usual idle pool per host. Every
    // connection must be kept for the next attempts, not closed and made again.
    let weir = Weir::start_default().await;
    let window = weir.builder.config().max_in_flight_per_webhook;
    let t = weir.tenant(Plan::pro()).await;
    // Slow while the events are published, so that a backlog builds; then fast.
    let receiver = Receiver::replying(Reply::Delay(Duration::from_millis(300), 200)).await;
    let webhooks = 10;
    for i in 0..webhooks {
        t.admin.create_webhook(&format!("{}/{i}", receiver.url), &["work_order_created"]).await;
    }
    let events = 200;
    for i in 0..events {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    receiver.set(Reply::Status(200));
    receiver.wait_for(events * webhooks, Duration::from_secs(60)).await;
    let connections = receiver.connections();
    assert!(
        connections <= webhooks * window + window,
        "{connections} connections for {} deliveries, at most {} at a time: the pool closed and reopened them",
        events * webhooks,
        webhooks * window
    );
}
