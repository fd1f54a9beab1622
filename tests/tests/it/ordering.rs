//! Ordered delivery per subject (contract §7 `ordering`): a subject's deliveries one at a
//! time in acceptance order, a retry holding only its subject, order kept across `kill -9`
//! and (in the cluster pass) on a Redis Cluster; the setting's validation.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::receiver::{Received, Receiver, Reply};
use crate::support::weir::{Api, WeirBuilder};
use weir::store::tenants::orgs::Plan;

/// An update of work order `wo`, its number in `n` (the receiver checks the order by it).
fn update(wo: &str, n: usize) -> Value {
    json!({
        "action": "work_order_updated",
        "creator": {"id": "usr_7", "name": "Ada Lovelace"},
        "subject": {"type": "WorkOrder", "id": wo},
        "work_order": {"id": wo, "title": "Replace pump seal", "n": n},
    })
}

/// (work order, n) of each request received, in arrival order.
fn sequence(got: &[Received]) -> Vec<(String, u64)> {
    got.iter()
        .map(|r| {
            let body = r.json();
            (body["subject"]["id"].as_str().unwrap().to_owned(), body["work_order"]["n"].as_u64().unwrap())
        })
        .collect()
}

async fn ordered_webhook(api: &Api, url: &str) -> String {
    let hook = api
        .post(
            "/api/v2/webhooks",
            &json!({"url": url, "subscribed_actions": ["work_order_updated"], "ordering": "subject"}),
        )
        .await
        .expect(201)
        .json();
    assert_eq!(hook["ordering"], "subject");
    hook["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_failed_first_delivery_holds_its_subjects_next_three_until_its_retry_succeeds_while_another_goes_ahead() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "2s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    receiver.sequence(vec![Reply::Status(500), Reply::Status(200)]);
    let id = ordered_webhook(&t.admin, &receiver.url).await;

    t.publisher.publish(&update("wo_a", 1)).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    for n in 2..=4 {
        t.publisher.publish(&update("wo_a", n)).await;
    }
    t.publisher.publish(&update("wo_b", 1)).await;
    // The other subject goes ahead while wo_a's first waits for its retry (2 s)...
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(sequence(&got), vec![("wo_a".into(), 1), ("wo_b".into(), 1)]);
    // ...and wo_a's next three stay pending, never attempted.
    let deliveries = t.admin.deliveries_of(&id).await;
    let held: Vec<&Value> = deliveries.iter().filter(|d| d["attempts"].as_array().unwrap().is_empty()).collect();
    assert_eq!(held.len(), 3, "{deliveries:?}");
    assert!(held.iter().all(|d| d["status"] == "pending"));
    // The retry succeeds: then the three, in order.
    let got = receiver.wait_for(6, Duration::from_secs(15)).await;
    assert_eq!(sequence(&got)[2..], [("wo_a".into(), 1), ("wo_a".into(), 2), ("wo_a".into(), 3), ("wo_a".into(), 4)]);
    let settled = t.admin.settled(&id, 5).await;
    assert!(settled.iter().all(|d| d["status"] == "succeeded"), "{settled:?}");
    weir.stop().await;
}

#[tokio::test]
async fn three_subjects_times_fifteen_events_published_back_to_back_arrive_each_in_order_one_at_a_time() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let delay = Duration::from_millis(30);
    let receiver = Receiver::replying(Reply::Delay(delay, 200)).await;
    let id = ordered_webhook(&t.admin, &receiver.url).await;
    let subjects = ["wo_x", "wo_y", "wo_z"];
    for n in 1..=15 {
        for wo in subjects {
            t.publisher.publish(&update(wo, n)).await;
        }
    }
    let got = receiver.wait_for(45, Duration::from_secs(30)).await;
    let mut by_subject: HashMap<String, Vec<(u64, std::time::Instant)>> = HashMap::new();
    for (r, (wo, n)) in got.iter().zip(sequence(&got)) {
        by_subject.entry(wo).or_default().push((n, r.at));
    }
    for wo in subjects {
        let arrivals = &by_subject[wo];
        let order: Vec<u64> = arrivals.iter().map(|(n, _)| *n).collect();
        assert_eq!(order, (1..=15).collect::<Vec<_>>(), "{wo}");
        // One at a time: the next arrives only after the previous was answered.
        for pair in arrivals.windows(2) {
            assert!(pair[1].1.duration_since(pair[0].1) >= delay - Duration::from_millis(2), "{wo}: overlapping");
        }
    }
    // The subjects went side by side, not one after another.
    let first_of_each: Vec<usize> =
        subjects.iter().map(|wo| sequence(&got).iter().position(|(w, _)| w == wo).unwrap()).collect();
    assert!(first_of_each.iter().all(|&i| i < 6), "{first_of_each:?}");
    assert_eq!(t.admin.settled(&id, 45).await.len(), 45);
    weir.stop().await;
}

#[tokio::test]
async fn order_is_kept_across_kill_9_of_the_process_holding_the_head() {
    let builder = WeirBuilder::shared().env("WEIR_TAKEOVER_AFTER", "2s").env("WEIR_DELIVERY_TIMEOUT", "30s");
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    receiver.sequence(vec![Reply::Hang, Reply::Status(200)]);
    let id = ordered_webhook(&t.admin, &receiver.url).await;

    let mut doomed = builder.spawn();
    doomed.wait_ready().await;
    for n in 1..=5 {
        t.publisher.publish(&update("wo_k", n)).await;
    }
    // The head is in flight in the doomed process (its endpoint never answers): kill it.
    receiver.wait_for(1, Duration::from_secs(10)).await;
    doomed.signal("KILL");
    let heir = builder.spawn();
    heir.wait_ready().await;
    // Its lease runs out, the same delivery is attempted again, then the rest in order.
    let got = receiver.wait_for(6, Duration::from_secs(30)).await;
    let order: Vec<u64> = sequence(&got).iter().map(|(_, n)| *n).collect();
    assert_eq!(order, vec![1, 1, 2, 3, 4, 5]);
    let settled = t.admin.settled(&id, 5).await;
    assert!(settled.iter().all(|d| d["status"] == "succeeded"), "{settled:?}");
    drop(heir);
    api.stop().await;
}

#[tokio::test]
async fn ordering_is_none_or_subject_and_a_retried_old_delivery_goes_behind_pending_ones() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "50ms").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let plain = t.admin.create_webhook(&receiver.url, &["work_order_updated"]).await;
    assert_eq!(plain["ordering"], "none");
    let path = format!("/api/v2/webhooks/{}", plain["id"].as_str().unwrap());
    for bad in [json!("fifo"), json!("Subject"), json!(1), json!(true), json!({"by": "subject"})] {
        let resp = t.admin.patch(&path, &json!({"ordering": bad})).await;
        assert_eq!(resp.status, 422, "{bad}");
        assert_eq!(resp.error_fields(), vec!["ordering".to_owned()]);
    }
    assert_eq!(t.admin.patch(&path, &json!({"ordering": "subject"})).await.expect(200).json()["ordering"], "subject");
    assert_eq!(t.admin.patch(&path, &json!({"ordering": null})).await.expect(200).json()["ordering"], "none");

    // A delivery that failed for good, retried by hand while newer ones of its subject are
    // held behind a head, goes behind them (it must not overtake pending newer ones).
    let failing = Receiver::replying(Reply::Status(500)).await;
    let id = ordered_webhook(&t.admin, &failing.url).await;
    t.publisher.publish(&update("wo_r", 1)).await;
    let failed = t.admin.settled(&id, 1).await;
    assert_eq!(failed[0]["status"], "failed");
    let first = failed[0]["id"].as_str().unwrap().to_owned();
    failing.sequence(vec![Reply::Hang]);
    t.publisher.publish(&update("wo_r", 2)).await;
    t.publisher.publish(&update("wo_r", 3)).await;
    failing.wait_for(3, Duration::from_secs(10)).await;
    t.admin.post(&format!("/api/v2/webhook_deliveries/{first}/retry"), &json!({})).await;
    let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{first}")).await.expect(200).json();
    assert_eq!(d["status"], "pending");
    assert_eq!(d["attempts"].as_array().unwrap().len(), 2, "not attempted again yet: {d}");
    weir.stop().await;
}

#[tokio::test]
async fn a_master_failover_mid_sequence_keeps_each_subjects_order() {
    let mut cluster = crate::support::cluster::RedisCluster::start_quick_failover();
    let weir = WeirBuilder::cluster(&cluster).env("WEIR_REDIS_WAIT_REPLICAS", "1").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    ordered_webhook(&t.admin, &receiver.url).await;
    let subjects = ["wo_f1", "wo_f2", "wo_f3", "wo_f4"];
    let victim = cluster.masters()[1].port;
    for n in 1..=20 {
        if n == 8 {
            let pid = cluster.node(victim).pid();
            let killed = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
            assert!(killed.success());
        }
        for wo in subjects {
            // The same id until it is accepted (publishing is idempotent): acceptance order
            // is publishing order, through the failover.
            let mut event = update(wo, n);
            event["id"] = json!(format!("evt_{wo}_{n}"));
            let mut tries = 0;
            while t.publisher.post("/api/v2/events", &event).await.status != 202 {
                tries += 1;
                assert!(tries < 300, "{wo} {n} never accepted");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    // (Under load the cluster may take a little longer to promote the replica.)
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while cluster.masters().iter().any(|m| m.port == victim) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!cluster.masters().iter().any(|m| m.port == victim), "a replica took over");
    let got = receiver.wait_for(80, Duration::from_secs(60)).await;
    for wo in subjects {
        let order: Vec<u64> = sequence(&got).into_iter().filter(|(w, _)| w == wo).map(|(_, n)| n).collect();
        // At least once: an attempt cut by the failover may come twice, but never after a
        // later one.
        assert!(order.windows(2).all(|p| p[0] <= p[1]), "{wo}: {order:?}");
        let mut distinct = order.clone();
        distinct.dedup();
        assert_eq!(distinct, (1..=20).collect::<Vec<_>>(), "{wo}");
    }
    cluster.node_mut(victim).restart();
    weir.stop().await;
}

#[tokio::test]
async fn a_delivery_its_plugin_filters_releases_the_next_of_its_subject() {
    use crate::support::plugins::plugin_wasm;
    use crate::support::weir::export_event;
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let filter = t.admin.upload_plugin("filter", plugin_wasm("report_export_filter")).await;
    let config = json!({"exportable_types": ["Form"], "exportable_ids": ["frm_1"], "creator_ids": ["cli_a"]});
    let hook = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"url": receiver.url, "subscribed_actions": ["report_export_completed"], "ordering": "subject",
                    "plugins": [{"plugin_id": filter["id"], "config": config}]}),
        )
        .await
        .expect(201)
        .json();
    // Two events about one export: the first is filtered, the second must still go.
    let mut dropped = export_event("rex_1", ("Form", "frm_2"), "cli_a");
    dropped["id"] = json!("evt_rex_first");
    let mut kept = export_event("rex_1", ("Form", "frm_1"), "cli_a");
    kept["id"] = json!("evt_rex_second");
    t.publisher.publish(&dropped).await;
    t.publisher.publish(&kept).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].json()["id"], "evt_rex_second");
    let settled = t.admin.settled(hook["id"].as_str().unwrap(), 2).await;
    let mut statuses: Vec<&str> = settled.iter().map(|d| d["status"].as_str().unwrap()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, ["filtered", "succeeded"]);
    weir.stop().await;
}
