//! Recovery (contract §7 "Replay", `WEIR_EVENT_RETENTION`): the event log, backfill of
//! events from before a webhook existed, recovery after a deactivation, nothing sent twice,
//! every refusal, retention, and a replay finished by another process after `kill -9`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::events::publish::{Publication, Retention};
use weir::store::events::stored::StoredEvent;
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Api, WeirBuilder, raw_conn, raw_keys, work_order_event};

fn defect_event(id: &str) -> Value {
    json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": id}, "defect": {"id": id}})
}

fn ago(ms: u64) -> String {
    weir::time::format_millis(weir::time::now_millis() - ms)
}

async fn replay(admin: &Api, webhook: &str, body: Value) -> crate::support::http::Resp {
    admin.post(&format!("/api/v2/webhooks/{webhook}/replay"), &body).await
}

fn subjects(receiver: &Receiver) -> Vec<String> {
    let mut s: Vec<String> =
        receiver.received().iter().map(|r| r.json()["subject"]["id"].as_str().unwrap_or_default().to_owned()).collect();
    s.sort();
    s
}

#[tokio::test]
async fn a_new_webhook_is_backfilled_and_a_second_replay_sends_nothing_again() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let since = ago(1000);
    for i in 0..5 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    t.publisher.publish(&defect_event("d_1")).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();

    let resp = replay(&t.admin, id, json!({"since": since})).await.expect(202);
    let body = resp.json();
    assert_eq!(body["count"], 5, "{body}");
    assert_eq!(body["state"], "completed");
    receiver.wait_for(5, Duration::from_secs(20)).await;
    assert_eq!(subjects(&receiver), (0..5).map(|i| format!("wo_{i}")).collect::<Vec<_>>());
    let settled = t.admin.settled(id, 5).await;
    assert!(settled.iter().all(|d| d["status"] == "succeeded"), "{settled:?}");

    let again = replay(&t.admin, id, json!({"since": since})).await.expect(202).json();
    assert_eq!(again["count"], 0, "everything was delivered: {again}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 5, "nothing was sent twice");
    let status = t.admin.get(&format!("/api/v2/webhooks/{id}/replay")).await.expect(200).json();
    assert_eq!((status["count"].as_u64(), status["state"].as_str()), (Some(0), Some("completed")));
    // A window that ends before the events were accepted holds none of them.
    let early = replay(&t.admin, id, json!({"since": ago(60_000), "until": since})).await.expect(202).json();
    assert_eq!(early["count"], 0);
}

#[tokio::test]
async fn after_reactivation_a_replay_recovers_failed_deliveries_and_events_missed_while_inactive() {
    let weir = WeirBuilder::shared()
        .env("WEIR_DEACTIVATE_AFTER_FAILURES", "2")
        .env("WEIR_DEACTIVATE_AFTER", "0s")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let since = ago(1000);
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_ok")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;

    receiver.set(Reply::Status(500));
    t.publisher.publish(&work_order_event("wo_failed")).await;
    eventually("the webhook deactivated", Duration::from_secs(20), async || {
        let w = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.json();
        (w["active"] == false).then_some(())
    })
    .await;
    // Deactivation ends the pending delivery (it fails) right after the webhook is off.
    let ended = t.admin.settled(id, 2).await;
    assert!(ended.iter().any(|d| d["status"] == "failed"), "{ended:?}");
    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_missed_{i}"))).await;
    }
    let refused = replay(&t.admin, id, json!({"since": since})).await.expect(409);
    assert_eq!(refused.error_code(), "conflict");

    receiver.set(Reply::Status(200));
    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"active": true})).await.expect(200);
    let body = replay(&t.admin, id, json!({"since": since})).await.expect(202).json();
    assert_eq!(body["count"], 4, "the failed delivery and the three missed events: {body}");
    eventually("the recovered events delivered", Duration::from_secs(20), async || {
        let got: HashSet<String> = subjects(&receiver).into_iter().collect();
        ["wo_failed", "wo_missed_0", "wo_missed_1", "wo_missed_2"].iter().all(|s| got.contains(*s)).then_some(())
    })
    .await;
    let settled = t.admin.settled(id, 5).await;
    assert!(settled.iter().all(|d| d["status"] == "succeeded"), "{settled:?}");
    let ok_sent = subjects(&receiver).iter().filter(|s| *s == "wo_ok").count();
    assert_eq!(ok_sent, 1, "what had succeeded is not sent again");
}

#[tokio::test]
async fn every_refusal_of_a_replay_and_of_the_event_log() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = t.admin.create_webhook("http://127.0.0.1:9/x", &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    let field = |resp: crate::support::http::Resp| {
        assert_eq!(resp.status, 422, "{}", resp.text());
        resp.error_fields()
    };
    assert_eq!(field(replay(&t.admin, id, json!({})).await), ["since"]);
    assert_eq!(field(replay(&t.admin, id, json!({"since": "yesterday"})).await), ["since"]);
    let future = weir::time::format_millis(weir::time::now_millis() + 60_000);
    assert_eq!(field(replay(&t.admin, id, json!({"since": future})).await), ["since"]);
    // The test builder keeps deliveries a day; the event log follows it.
    let too_old = replay(&t.admin, id, json!({"since": ago(2 * 86_400_000)})).await;
    assert!(too_old.text().contains("retention"), "{}", too_old.text());
    assert_eq!(field(too_old), ["since"]);
    assert_eq!(field(replay(&t.admin, id, json!({"since": ago(1000), "until": ago(2000)})).await), ["until"]);
    assert_eq!(field(replay(&t.admin, id, json!({"since": ago(1000), "until": "soon"})).await), ["until"]);
    assert_eq!(field(replay(&t.admin, id, json!({"since": ago(1000), "other": 1})).await), ["other"]);

    replay(&t.admin, "wh_01JD0000000000000000000000", json!({"since": ago(1000)})).await.expect(404);
    let other = weir.tenant(Plan::pro()).await;
    replay(&other.admin, id, json!({"since": ago(1000)})).await.expect(404);
    other.admin.get(&format!("/api/v2/webhooks/{id}/replay")).await.expect(404);
    replay(&t.publisher, id, json!({"since": ago(1000)})).await.expect(403);
    t.publisher.get("/api/v2/events").await.expect(403);
    let free = weir.tenant(Plan::free()).await;
    let free_hook =
        free.admin.post("/api/v2/webhooks", &json!({"url": "http://127.0.0.1:9/x", "subscribed_actions": []})).await;
    let free_id = free_hook.json()["id"].as_str().unwrap_or("wh_01JD0000000000000000000000").to_owned();
    replay(&free.admin, &free_id, json!({"since": ago(1000)})).await.expect(402);
    free.admin.get("/api/v2/events").await.expect(402);
    let never = t.admin.get(&format!("/api/v2/webhooks/{id}/replay")).await.expect(200).json();
    assert_eq!((never["state"].as_str(), never["count"].as_u64()), (Some("none"), Some(0)));

    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"active": false})).await.expect(200);
    replay(&t.admin, id, json!({"since": ago(1000)})).await.expect(409);

    assert_eq!(field(t.admin.get("/api/v2/events?since=yesterday").await), ["since"]);
    assert_eq!(field(t.admin.get("/api/v2/events?action=work_order_exploded").await), ["action"]);
    let backwards = format!("/api/v2/events?since={}&until={}", ago(1000), ago(2000));
    assert_eq!(field(t.admin.get(&backwards).await), ["until"]);
    // Publishers cannot send Weir's own events.
    let own = json!({"action": "webhook_deactivated", "creator": {"id": "u", "name": "n"},
        "subject": {"type": "Webhook", "id": id}, "webhook": {"id": id}});
    let refused = t.publisher.post("/api/v2/events", &own).await;
    assert!(field(refused).contains(&"action".to_owned()));
}

#[tokio::test]
async fn the_event_log_lists_every_event_newest_first_in_pages_and_by_action() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let mut ids = Vec::new();
    for i in 0..6 {
        let event = if i % 2 == 0 { work_order_event(&format!("wo_{i}")) } else { defect_event(&format!("d_{i}")) };
        ids.push(t.publisher.publish(&event).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let all = t.admin.get("/api/v2/events").await.expect(200).json();
    let listed: Vec<&str> = all["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    let newest_first: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, newest_first, "{all}");
    let first = &all["data"][0];
    assert_eq!(first["action"], "defect_created");
    assert_eq!(first["subject"], json!({"type": "Defect", "id": "d_5"}));
    assert!(weir::time::parse_rfc3339(first["created_at"].as_str().unwrap()).is_some());
    assert!(weir::time::parse_rfc3339(first["accepted_at"].as_str().unwrap()).is_some());

    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            None => "/api/v2/events?limit=4&action=work_order_created".to_owned(),
            Some(c) => format!("/api/v2/events?limit=4&action=work_order_created&cursor={c}"),
        };
        let page = t.admin.get(&path).await.expect(200).json();
        paged.extend(page["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(paged, vec![ids[4].clone(), ids[2].clone(), ids[0].clone()]);
    let window = format!("/api/v2/events?since={}", ago(0).replace(':', "%3A"));
    assert_eq!(t.admin.get(&window).await.expect(200).json()["data"], json!([]), "nothing after now");
    // An event nothing subscribed to is kept, and found by its id.
    let event = t.admin.get(&format!("/api/v2/events/{}", ids[0])).await.expect(200).json();
    assert_eq!(event["deliveries"], json!([]));
    // Another organisation sees none of them.
    let other = weir.tenant(Plan::pro()).await;
    assert_eq!(other.admin.get("/api/v2/events").await.expect(200).json()["data"], json!([]));
}

#[tokio::test]
async fn events_leave_the_log_after_the_event_retention() {
    let weir = WeirBuilder::shared().env("WEIR_EVENT_RETENTION", "2s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let id = t.publisher.publish(&work_order_event("wo_brief")).await;
    let listed = t.admin.get("/api/v2/events").await.expect(200).json();
    assert_eq!(listed["data"][0]["id"], id.as_str());
    let hook = t.admin.create_webhook("http://127.0.0.1:9/x", &["work_order_created"]).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(t.admin.get("/api/v2/events").await.expect(200).json()["data"], json!([]));
    let too_old = replay(&t.admin, hook["id"].as_str().unwrap(), json!({"since": ago(2500)})).await;
    assert_eq!(too_old.expect(422).error_fields(), ["since"]);
}

#[tokio::test]
async fn a_replay_cut_by_kill_9_is_finished_by_another_process_without_duplicates() {
    const EVENTS: usize = 30_000;
    let builder = WeirBuilder::shared().env("WEIR_TAKEOVER_AFTER", "2s");
    // An API-only node publishes and answers; only the child processes replay and deliver.
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let since = ago(1000);
    let publications = published_directly(&api, &t.org_id, EVENTS).await;
    assert_eq!(publications, EVENTS);
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap().to_owned();

    let mut doomed = builder.spawn();
    doomed.wait_ready().await;
    let token = t.admin.token.clone();
    let resp = doomed
        .http()
        .post(&format!("/api/v2/webhooks/{id}/replay"))
        .bearer(&token)
        .json(&json!({"since": since}))
        .send()
        .await;
    let first = resp.expect(202).json();
    assert_eq!(first["state"], "running", "the window takes longer than the request: {first}");
    doomed.signal("KILL");
    let at_kill = t.admin.get(&format!("/api/v2/webhooks/{id}/replay")).await.expect(200).json();
    assert!(at_kill["count"].as_u64().unwrap() < EVENTS as u64, "{at_kill}");

    let heir = builder.spawn();
    heir.wait_ready().await;
    let done = eventually("the replay completed", Duration::from_secs(120), async || {
        let r = t.admin.get(&format!("/api/v2/webhooks/{id}/replay")).await.json();
        (r["state"] == "completed").then_some(r)
    })
    .await;
    let count = done["count"].as_u64().unwrap();
    assert!(count <= EVENTS as u64 && count + 256 >= EVENTS as u64, "{done}");
    // Exactly one delivery per event: every day index of the webhook, read whole.
    let mut conn = raw_conn(&builder);
    let mut entries = Vec::new();
    for key in raw_keys(&builder, &format!("*:wd:{id}:*")) {
        let part: Vec<String> = redis::cmd("LRANGE").arg(&key).arg(0).arg(-1).query(&mut *conn).unwrap();
        entries.extend(part);
    }
    let distinct: HashSet<&String> = entries.iter().collect();
    assert_eq!((entries.len(), distinct.len()), (EVENTS, EVENTS), "one delivery per event, none twice");
    receiver.wait_for(200, Duration::from_secs(30)).await;
    drop(heir);
}

/// Publishes `n` events about new work orders straight into the store (as the API would,
/// without `n` HTTP requests); how many were new.
async fn published_directly(weir: &crate::support::weir::Weir, org: &str, n: usize) -> usize {
    let retention = Retention { deliveries: Duration::from_secs(86_400), events: Duration::from_secs(86_400) };
    let mut by_partition: std::collections::BTreeMap<weir::store::Partition, Vec<Publication>> = Default::default();
    for i in 0..n {
        let (id, wo) = (format!("evt_replay_{i:06}"), format!("wo_{i}"));
        let envelope = json!({"id": id, "action": "work_order_created", "created_at": "2026-11-25T10:00:00.000Z",
            "organisation": {"id": org}, "creator": {"id": "u", "name": "n"},
            "subject": {"type": "WorkOrder", "id": wo}, "work_order": {"id": wo}})
        .to_string();
        let event = Arc::new(StoredEvent {
            created_at: "2026-11-25T10:00:00.000Z".into(),
            envelope,
            accepted_ms: weir::time::now_millis(),
            trace: None,
        });
        let p = weir.store.keys().partition_of_subject(org, "WorkOrder", &wo);
        by_partition.entry(p).or_default().push(Publication {
            org_id: org.to_owned(),
            event_id: id,
            action: "work_order_created".into(),
            subject: format!("WorkOrder:{wo}"),
            deleted: false,
            event_ms: weir::time::now_millis(),
            logged_action: Some("work_order_created"),
            stored: Arc::new(event.encode()),
            event,
            snapshot: false,
            webhooks: Vec::new(),
            retention,
            counted: false,
            version: u64::MAX,
            intake: None,
        });
    }
    let mut new = 0;
    for (p, publications) in by_partition {
        for chunk in publications.chunks(64) {
            let done = weir.store.event_writes().publish(p, chunk).await.unwrap();
            new += done.iter().filter(|d| matches!(d, weir::store::events::publish::Published::New { .. })).count();
        }
    }
    new
}

#[tokio::test]
async fn weir_admin_replays_to_the_end_and_the_settings_page_offers_it() {
    let builder = WeirBuilder::shared();
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let since = ago(1000);
    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap().to_owned();

    // `weir admin webhook replay`: the same rules, waiting until the window is queued.
    let mut command = crate::support::weir::weir_command();
    command.args(["admin", "webhook", "replay", &id, "--org", &t.org_id, "--since", &since]);
    for (name, value) in builder.vars() {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((printed["count"].as_u64(), printed["state"].as_str()), (Some(3), Some("completed")), "{printed}");
    receiver.wait_for(3, Duration::from_secs(20)).await;
    command.args(["--until", "soon"]);
    let refused = command.output().unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--until"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // Settings > Webhooks: the form, and how the latest replay went.
    crate::settings::user(&weir, &t.org_id, "replayer@example.com", true).await;
    let http = weir.http();
    let (_, signed_in) = crate::settings::http_sign_in(&http, "replayer@example.com", crate::settings::PASSWORD).await;
    let (session, csrf) = signed_in.expect("signed in");
    let page = http.get(&format!("/settings/webhooks/{id}")).header("cookie", &session).send().await.text();
    assert!(page.contains(r#"action="/settings/webhooks/"#) && page.contains("/replay\""), "the form is offered");
    assert!(page.contains("3 deliveries queued"), "the latest replay is shown");
    let post = |body: String| {
        http.post(&format!("/settings/webhooks/{id}/replay"))
            .header("cookie", &session)
            .raw("application/x-www-form-urlencoded", body)
            .send()
    };
    let done = post(format!("_csrf={csrf}&since={}&until=", since.replace(':', "%3A"))).await;
    assert_eq!(done.status, 303);
    assert!(done.header("location").unwrap().contains("notice=replayed"));
    let refused = post(format!("_csrf={csrf}&since=not-a-time")).await;
    assert!(refused.header("location").unwrap().contains("notice=replay_window_invalid"));
    let page = http.get(&format!("/settings/webhooks/{id}")).header("cookie", &session).send().await.text();
    assert!(page.contains("0 deliveries queued"), "the second replay sent nothing again");
}
