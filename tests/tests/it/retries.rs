//! Manual retries and the retry schedule.

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{WeirBuilder, work_order_event};

#[tokio::test]
async fn a_manual_retry_of_a_waiting_delivery_is_one_extra_attempt_and_keeps_the_schedule() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "3s,40s").start().await;
    let t = weir.tenant(Plan::Pro).await;
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
