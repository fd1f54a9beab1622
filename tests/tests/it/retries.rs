//! Retries: the schedule, `Retry-After`, manual retries, and deactivation after failures
//! (contract §4; service document §5, §6).

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, WeirBuilder, work_order_event};

#[tokio::test]
async fn a_manual_retry_of_a_waiting_delivery_is_one_extra_attempt_and_keeps_the_schedule() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "3s,40s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Status(500)).await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_wait")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let path = {
        let list =
            t.admin.get(&format!("/api/v2/webhook_deliveries?webhook_id={}", webhook["id"].as_str().unwrap())).await;
        format!("/api/v2/webhook_deliveries/{}", list.json()["data"][0]["id"].as_str().unwrap())
    };
    let waiting = eventually("first attempt recorded", Duration::from_secs(10), async || {
        let d = t.admin.get(&path).await.json();
        (d["attempts"].as_array()?.len() == 1 && d["next_attempt_at"].is_string()).then_some(d)
    })
    .await;
    let due = waiting["next_attempt_at"].as_str().unwrap().to_owned();

    // The extra attempt goes now; the retry it waited for keeps its time.
    t.admin.post(&format!("{path}/retry"), &json!({})).await.expect(202);
    let after = eventually("extra attempt recorded", Duration::from_secs(10), async || {
        let d = t.admin.get(&path).await.json();
        (d["attempts"].as_array()?.len() == 2 && d["next_attempt_at"].is_string()).then_some(d)
    })
    .await;
    assert_eq!(after["status"], "pending");
    assert_eq!(after["next_attempt_at"], due.as_str(), "the scheduled retry kept its time: {after}");
    assert_eq!(after["request"]["headers"]["x-webhook-attempt"], "2");

    // The scheduled retry comes at its time, and the one after it is the schedule's second
    // delay (40 s ± 20%), not a place further on.
    let third = eventually("the scheduled retry", Duration::from_secs(15), async || {
        let d = t.admin.get(&path).await.json();
        (d["attempts"].as_array()?.len() == 3 && d["next_attempt_at"].is_string()).then_some(d)
    })
    .await;
    let sent = weir::time::parse_rfc3339(third["attempts"][2]["at"].as_str().unwrap()).unwrap();
    let due_ms = weir::time::parse_rfc3339(&due).unwrap();
    assert!(sent + 50 >= due_ms, "not before its time: sent {sent}, due {due_ms}");
    let next = weir::time::parse_rfc3339(third["next_attempt_at"].as_str().unwrap()).unwrap();
    assert!((31_000..=49_000).contains(&(next - sent)), "next retry {} ms after the third attempt", next - sent);
    assert_eq!(receiver.count(), 3);
}

#[tokio::test]
async fn failed_attempts_are_retried_on_the_schedule_until_success() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    receiver.sequence(vec![Reply::Status(500), Reply::Status(302), Reply::Status(200)]);
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let got = receiver.wait_for(3, Duration::from_secs(10)).await;
    let attempts: Vec<String> = got.iter().map(|r| r.header("x-webhook-attempt")).collect();
    assert_eq!(attempts, vec!["1", "2", "3"]);
    let ids: Vec<String> = got.iter().map(|r| r.header("x-webhook-delivery")).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "one delivery id across attempts");
    assert!(got.iter().all(|r| r.body == got[0].body), "same body every attempt");
    let d = &t.admin.settled(webhook["id"].as_str().unwrap(), 1).await[0];
    assert_eq!(d["status"], "succeeded");
    let codes: Vec<Value> = d["attempts"].as_array().unwrap().iter().map(|a| a["status_code"].clone()).collect();
    assert_eq!(codes, vec![json!(500), json!(302), json!(200)]);
    assert_eq!(d["attempts"][0]["error"], "HTTP 500");
    assert_eq!(d["request"]["headers"]["x-webhook-attempt"], "3");
}

#[tokio::test]
async fn deliveries_fail_after_the_last_scheduled_attempt_and_redirects_are_not_followed() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let target = Receiver::start().await;
    let receiver = Receiver::replying(Reply::With(307, vec![("location", target.url.clone())])).await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    // Schedule 50ms,100ms,200ms: four attempts in all.
    let d = &t.admin.settled(webhook["id"].as_str().unwrap(), 1).await[0];
    assert_eq!(d["status"], "failed");
    assert_eq!(d["attempts"].as_array().unwrap().len(), 4);
    assert!(d["attempts"].as_array().unwrap().iter().all(|a| a["status_code"] == 307));
    assert_eq!(receiver.count(), 4);
    assert_eq!(target.count(), 0, "the redirect was not followed");
}

#[tokio::test]
async fn retry_after_is_honoured_up_to_twice_the_scheduled_delay() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "400ms,400ms").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    receiver.sequence(vec![
        Reply::With(429, vec![("retry-after", "1".into())]),
        Reply::With(503, vec![("retry-after", "60".into())]),
        Reply::Status(200),
    ]);
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let first = eventually("first retry scheduled", Duration::from_secs(10), async || {
        let d = t.admin.deliveries_of(webhook["id"].as_str().unwrap()).await.pop()?;
        (d["attempts"].as_array()?.len() == 1 && d["next_attempt_at"].is_string()).then_some(d)
    })
    .await;
    let at = weir::time::parse_rfc3339(first["attempts"][0]["at"].as_str().unwrap()).unwrap();
    let next = weir::time::parse_rfc3339(first["next_attempt_at"].as_str().unwrap()).unwrap();
    let delay = next - at;
    // Retry-After: 1s asks for more than the 400ms ±20% delay: honoured, capped at 800ms.
    assert!((800..1800).contains(&delay), "delay {delay}ms");
    let got = receiver.wait_for(3, Duration::from_secs(10)).await;
    let gap = got[2].at - got[1].at;
    assert!(gap >= Duration::from_millis(790), "Retry-After: 60 capped at 800ms, not ignored: {gap:?}");
    assert!(gap < Duration::from_secs(30), "Retry-After: 60 capped: {gap:?}");
}

#[tokio::test]
async fn gone_deactivates_at_once() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "1h").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = webhook["id"].as_str().unwrap();
    receiver.set(Reply::Status(500));
    t.publisher.publish(&work_order_event("wo_1")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    receiver.set(Reply::Status(410));
    t.publisher.publish(&work_order_event("wo_2")).await;
    let w = eventually("deactivated", Duration::from_secs(10), async || {
        let w = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json();
        (w["active"] == false).then_some(w)
    })
    .await;
    assert_eq!(w["deactivation_reason"], "gone");
    assert!(w["deactivated_at"].is_string());
    // The first delivery, waiting an hour for its retry, failed with the webhook.
    let all = t.admin.settled(id, 2).await;
    assert!(all.iter().all(|d| d["status"] == "failed"), "{all:?}");
    // New events are not queued for it.
    t.publisher.publish(&work_order_event("wo_3")).await;
    assert_eq!(t.admin.deliveries_of(id).await.len(), 2);
}

#[tokio::test]
async fn sustained_failures_deactivate_and_reactivation_resumes() {
    let weir = WeirBuilder::shared()
        .env("WEIR_DEACTIVATE_AFTER_FAILURES", "3")
        .env("WEIR_DEACTIVATE_AFTER", "150ms")
        .env("WEIR_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms,100ms")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Status(500)).await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = webhook["id"].as_str().unwrap();
    let path = format!("/api/v2/webhooks/{id}");
    t.publisher.publish(&work_order_event("wo_1")).await;
    let w = eventually("auto-deactivated", Duration::from_secs(10), async || {
        let w = t.admin.get(&path).await.expect(200).json();
        (w["active"] == false).then_some(w)
    })
    .await;
    assert_eq!(w["deactivation_reason"], "failing");
    let attempts_seen = receiver.count();
    assert!((3..=4).contains(&attempts_seen), "deactivated after 3 failures spanning 150ms: {attempts_seen}");
    let d = &t.admin.settled(id, 1).await[0];
    assert_eq!(d["status"], "failed");
    // Nothing is queued while inactive, and retrying is refused.
    t.publisher.publish(&work_order_event("wo_2")).await;
    assert_eq!(t.admin.deliveries_of(id).await.len(), 1);
    let dlv = d["id"].as_str().unwrap();
    assert_eq!(
        t.admin.post(&format!("/api/v2/webhook_deliveries/{dlv}/retry"), &json!({})).await.expect(409).error_code(),
        "conflict"
    );
    t.admin.post(&format!("{path}/retry_failed"), &json!({"since": "2020-01-01T00:00:00Z"})).await.expect(409);

    // Reactivate: the streak is cleared, new events flow, failed ones can be re-queued.
    receiver.set(Reply::Status(200));
    let w = t.admin.patch(&path, &json!({"active": true})).await.expect(200).json();
    assert_eq!(w["active"], true);
    assert_eq!(w["deactivated_at"], Value::Null);
    assert_eq!(w["deactivation_reason"], Value::Null);
    t.publisher.publish(&work_order_event("wo_3")).await;
    let resp =
        t.admin.post(&format!("{path}/retry_failed"), &json!({"since": "2020-01-01T00:00:00Z"})).await.expect(202);
    assert_eq!(resp.json()["count"], 1);
    let all = t.admin.settled(id, 2).await;
    assert!(all.iter().all(|d| d["status"] == "succeeded"), "{all:?}");
}

#[tokio::test]
async fn a_delivery_can_be_retried_by_hand_with_the_same_id_and_body() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let d = t.admin.settled(webhook["id"].as_str().unwrap(), 1).await.remove(0);
    let dlv = d["id"].as_str().unwrap();
    let resp = t.admin.post(&format!("/api/v2/webhook_deliveries/{dlv}/retry"), &json!({})).await.expect(202);
    assert_eq!(resp.json()["status"], "pending");
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(got[1].header("x-webhook-delivery"), dlv);
    assert_eq!(got[1].header("x-webhook-attempt"), "2");
    assert_eq!(got[1].body, got[0].body);
    let d = t.admin.settled(webhook["id"].as_str().unwrap(), 1).await.remove(0);
    assert_eq!(d["attempts"].as_array().unwrap().len(), 2);

    // Unknown, malformed and other organisations' deliveries are 404.
    let other = weir.tenant(Plan::pro()).await;
    other.admin.post(&format!("/api/v2/webhook_deliveries/{dlv}/retry"), &json!({})).await.expect(404);
    other.admin.get(&format!("/api/v2/webhook_deliveries/{dlv}")).await.expect(404);
    t.admin.post("/api/v2/webhook_deliveries/dlv_00000000000000000000000000/retry", &json!({})).await.expect(404);
    t.admin.get("/api/v2/webhook_deliveries/nope").await.expect(404);
}

#[tokio::test]
async fn a_manual_retry_of_a_failed_delivery_is_one_attempt() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Status(500)).await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = webhook["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_1")).await;
    let d = t.admin.settled(id, 1).await.remove(0);
    assert_eq!(d["status"], "failed");
    let dlv = d["id"].as_str().unwrap();
    t.admin.post(&format!("/api/v2/webhook_deliveries/{dlv}/retry"), &json!({})).await.expect(202);
    let d = eventually("retried", Duration::from_secs(30), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{dlv}")).await.json();
        (d["status"] == "failed" && d["attempts"].as_array()?.len() == 5).then_some(d)
    })
    .await;
    assert_eq!(d["request"]["headers"]["x-webhook-attempt"], "5");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(receiver.count(), 5, "no schedule of retries after a manual one");
}
