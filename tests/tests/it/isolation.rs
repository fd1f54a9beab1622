//! Flow control (contract §7 "Isolation", `rate_limit`): endpoints that hang cannot delay a
//! healthy webhook, a failing endpoint is probed one attempt at a time until it answers, a
//! `Retry-After` pauses the whole webhook, and `rate_limit` holds across processes.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Api, WeirBuilder, raw_conn, work_order_event};

fn defect_event(id: &str) -> Value {
    json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": id}, "defect": {"id": id}})
}

async fn create_limited(admin: &Api, url: &str, actions: &[&str], rate_limit: Value) -> Value {
    let body = json!({"url": url, "subscribed_actions": actions, "rate_limit": rate_limit});
    admin.post("/api/v2/webhooks", &body).await.expect(201).json()
}

async fn webhook(admin: &Api, id: &str) -> Value {
    admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json()
}

#[tokio::test]
async fn forty_endpoints_that_never_answer_do_not_delay_a_healthy_webhook() {
    // Shipped defaults: a 10 s timeout, 32 in flight per webhook, 512 workers.
    let weir = WeirBuilder::shared()
        .without("WEIR_DELIVERY_TIMEOUT")
        .without("WEIR_RETRY_SCHEDULE")
        .without("WEIR_DELIVERY_RETENTION")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let hanging = Receiver::replying(Reply::Hang).await;
    let healthy = Receiver::start().await;
    for i in 0..40 {
        t.admin.create_webhook(&format!("{}?endpoint={i}", hanging.url), &["work_order_created"]).await;
    }
    t.admin.create_webhook(&healthy.url, &["defect_created"]).await;
    for i in 0..30 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let mut published = Vec::new();
    for i in 0..20 {
        published.push(Instant::now());
        t.publisher.publish(&defect_event(&format!("d_{i}"))).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let got = healthy.wait_for(20, Duration::from_secs(30)).await;
    let mut arrivals: Vec<Instant> = got.iter().map(|r| r.at).collect();
    arrivals.sort();
    let worst = published.iter().zip(&arrivals).map(|(p, a)| a.saturating_duration_since(*p)).max().unwrap();
    assert!(worst < Duration::from_secs(2), "a healthy delivery took {worst:?} beside 40 hanging endpoints");
    assert!(
        hanging.connections() <= 40 * 2,
        "{} connections to the hanging endpoints: each holds at most what its window allows",
        hanging.connections()
    );
}

#[tokio::test]
async fn a_failing_endpoint_is_probed_one_attempt_at_a_time_and_opens_up_after_a_success() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "30s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    receiver.sequence(vec![Reply::Status(500), Reply::Delay(Duration::from_millis(300), 200)]);
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    assert_eq!(hook["endpoint_state"], "healthy");
    t.publisher.publish(&work_order_event("wo_first")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let probing = eventually("the endpoint shown probing", Duration::from_secs(5), async || {
        let w = webhook(&t.admin, id).await;
        (w["endpoint_state"] == "probing").then_some(w)
    })
    .await;
    assert_eq!(probing["endpoint_state_reason"], "HTTP 500");
    assert!(probing["endpoint_state_since"].is_string());
    for i in 0..12 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let got = receiver.wait_for(13, Duration::from_secs(20)).await;
    // The first answer after the 500 is a success: from then on attempts overlap again.
    let second = got[1].at;
    assert!(got[2].at >= second + Duration::from_millis(250), "while probing, one attempt at a time");
    let overlapping = got.windows(2).skip(2).filter(|w| w[1].at < w[0].at + Duration::from_millis(250)).count();
    assert!(overlapping >= 3, "healthy again, attempts go out side by side ({overlapping} overlapped)");
    let healthy = eventually("the endpoint shown healthy", Duration::from_secs(5), async || {
        let w = webhook(&t.admin, id).await;
        (w["endpoint_state"] == "healthy").then_some(w)
    })
    .await;
    assert_eq!(healthy["endpoint_state_reason"], Value::Null);
    let metrics = weir.http().get("/metrics").send().await.expect(200).text();
    assert!(metrics.contains("weir_endpoint_changes_total{state=\"probing\"} 1"), "{metrics}");
    assert!(metrics.contains("weir_endpoint_changes_total{state=\"healthy\"} 1"), "{metrics}");
}

#[tokio::test]
async fn a_retry_after_pauses_every_delivery_of_the_webhook() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "5s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    receiver.sequence(vec![Reply::With(429, vec![("retry-after", "2".into())]), Reply::Status(200)]);
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    for i in 0..10 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let first = receiver.wait_for(1, Duration::from_secs(10)).await[0].at;
    let paused = eventually("the webhook shown paused", Duration::from_secs(2), async || {
        let w = webhook(&t.admin, id).await;
        (w["endpoint_state"] == "paused").then_some(w)
    })
    .await;
    assert!(paused["paused_until"].is_string());
    assert!(paused["endpoint_state_reason"].as_str().unwrap().contains("429"), "{paused}");
    let got = receiver.wait_for(11, Duration::from_secs(20)).await;
    for request in &got[1..] {
        assert!(
            request.at >= first + Duration::from_millis(1900),
            "a delivery went out {:?} after the 429 asked for 2 s",
            request.at - first
        );
    }
    let metrics = weir.http().get("/metrics").send().await.expect(200).text();
    assert!(metrics.contains("weir_endpoint_changes_total{state=\"paused\"} 1"), "{metrics}");
}

/// The times the receiver got `n` requests, after waiting for them.
async fn spread(receiver: &Receiver, n: usize) -> Duration {
    let got = receiver.wait_for(n, Duration::from_secs(60)).await;
    let first = got.iter().map(|r| r.at).min().unwrap();
    let last = got.iter().map(|r| r.at).max().unwrap();
    last - first
}

#[tokio::test]
async fn a_rate_limit_spreads_deliveries_and_an_unlimited_sibling_is_not_held() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let limited = Receiver::start().await;
    let free = Receiver::start().await;
    let hook = create_limited(&t.admin, &limited.url, &["work_order_created"], json!(5)).await;
    assert_eq!(hook["rate_limit"], 5);
    t.admin.create_webhook(&free.url, &["work_order_created"]).await;
    for i in 0..30 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    free.wait_for(30, Duration::from_secs(5)).await;
    let took = spread(&limited, 30).await;
    assert!(took >= Duration::from_secs(5), "30 deliveries at 5/s took {took:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(limited.count(), 30, "each delivery was attempted once");
    let deliveries = t.admin.deliveries_of(hook["id"].as_str().unwrap()).await;
    assert!(deliveries.iter().all(|d| d["attempts"].as_array().unwrap().len() == 1), "no attempt was made twice");
}

#[tokio::test]
async fn a_rate_limit_holds_for_two_processes_together() {
    let builder = WeirBuilder::shared();
    let first = builder.start().await;
    let _second = builder.start().await;
    let t = first.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    create_limited(&t.admin, &receiver.url, &["work_order_created"], json!(10)).await;
    for i in 0..40 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let took = spread(&receiver, 40).await;
    assert!(took >= Duration::from_millis(3_500), "40 deliveries at 10/s over two processes took {took:?}");
}

#[tokio::test]
async fn rate_limit_is_validated_changed_and_removed() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    for bad in [json!(0), json!(10_001), json!(2.5), json!("5"), json!(-1)] {
        let body = json!({"url": receiver.url, "subscribed_actions": ["work_order_created"], "rate_limit": bad});
        let resp = t.admin.post("/api/v2/webhooks", &body).await.expect(422);
        assert_eq!(resp.error_fields(), ["rate_limit"], "{bad}");
    }
    let hook = create_limited(&t.admin, &receiver.url, &["work_order_created"], json!(10_000)).await;
    let path = format!("/api/v2/webhooks/{}", hook["id"].as_str().unwrap());
    assert_eq!(t.admin.patch(&path, &json!({"rate_limit": 1})).await.expect(200).json()["rate_limit"], 1);
    assert_eq!(t.admin.patch(&path, &json!({"rate_limit": null})).await.expect(200).json()["rate_limit"], Value::Null);
    t.admin.patch(&path, &json!({"rate_limit": 0})).await.expect(422);
    let plain = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    assert_eq!(plain["rate_limit"], Value::Null);
}

#[test]
fn a_rate_budget_grants_a_burst_at_once_and_a_spent_one_waits_for_half_a_burst() {
    // `lua/limit.lua` itself, at 100 deliveries/s (an interval of 10 ms) with a burst of 50.
    // A claim asks its budget for as many as its lane has room for, which may be more than
    // a burst: against a full budget that is granted a burst with no wait (a wait would hold
    // back a webhook whose claim then gives most of the grant back unused). Once the budget
    // is spent, the next claim waits until half a burst is there, not a whole one: it comes
    // back while the budget still fills, so coming back late loses no rate.
    let builder = WeirBuilder::shared();
    let mut conn = raw_conn(&builder);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let key = format!("{}limit-test:{nanos}", builder.prefix());
    let script = redis::Script::new(include_str!("../../../host/src/store/lua/limit.lua"));
    let mut call = |mode: &str, n: u32| -> (i64, Duration) {
        let (_, granted, _, wait): (String, i64, String, u64) =
            script.key(&key).arg(10_000).arg(50).arg(mode).arg(n).invoke(&mut *conn).expect("limit.lua");
        (granted, Duration::from_micros(wait))
    };
    assert_eq!(call("take", 64), (50, Duration::ZERO), "a full budget grants a burst to an ask over it, at once");
    let (granted, wait) = call("take", 64);
    assert!(granted <= 1, "a spent budget grants what refilled since: {granted}");
    assert!(
        wait > Duration::from_millis(150) && wait <= Duration::from_millis(250),
        "a spent budget waits for half a burst (250 ms), not a whole one: {wait:?}"
    );
    // Three fifths of a burst given back (a claim that found fewer deliveries than granted).
    call("give", 30);
    let (granted, wait) = call("take", 64);
    assert!((25..50).contains(&granted), "about three fifths of a burst is there again: {granted}");
    assert_eq!(wait, Duration::ZERO, "a grant of half a burst or more is a batch: no wait ({granted} granted)");
}
