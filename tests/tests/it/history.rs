//! History in PostgreSQL (contract §8, `WEIR_HISTORY_URL`): ended deliveries and accepted
//! events move from Redis to a real PostgreSQL once `WEIR_HISTORY_HOT` old; every read shows
//! them as before, retries and replays work on them, PostgreSQL going away costs publishing
//! and delivery nothing, a mover killed mid-move loses nothing, and retention drops days.
//! (Run on one Redis and again on the local cluster.)

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::postgres::{self, Postgres};
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Api, Weir, WeirBuilder, raw_conn, raw_keys, work_order_event};

fn with_history(builder: WeirBuilder, pg: &Postgres, hot: &str) -> WeirBuilder {
    builder.env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", hot)
}

fn defect_event(id: &str) -> Value {
    json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": id}, "defect": {"id": id}})
}

fn ago(ms: u64) -> String {
    weir::time::format_millis(weir::time::now_millis() - ms)
}

/// Every page of a listing, followed by its cursors (`path` has a query already).
async fn pages(api: &Api, path: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let url = match &cursor {
            Some(c) => format!("{path}&cursor={c}"),
            None => path.to_owned(),
        };
        let page = api.get(&url).await.expect(200).json();
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        out.push(page);
        if cursor.is_none() {
            return out;
        }
    }
    panic!("{path}: no end after 1000 pages");
}

/// The ids a listing's pages hold, in order.
fn ids_of(pages: &[Value]) -> Vec<String> {
    pages
        .iter()
        .flat_map(|p| p["data"].as_array().cloned().unwrap_or_default())
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Everything a user reads of the organisation's deliveries and events: listings (pages
/// and cursors, each filter), each delivery and each event.
async fn every_read(admin: &Api, hooks: &[&str], deliveries: &[String], events: &[String]) -> Vec<(String, Value)> {
    let mut reads = Vec::new();
    let mut listings = vec![
        "/api/v2/webhook_deliveries?limit=4".to_owned(),
        "/api/v2/webhook_deliveries?limit=3&status=failed".to_owned(),
        "/api/v2/webhook_deliveries?limit=5&action=defect_created".to_owned(),
        "/api/v2/events?limit=4".to_owned(),
        "/api/v2/events?limit=2&action=defect_created".to_owned(),
    ];
    listings.extend(hooks.iter().map(|h| format!("/api/v2/webhook_deliveries?limit=3&webhook_id={h}")));
    for path in listings {
        let listed = pages(admin, &path).await;
        reads.push((path, Value::Array(listed)));
    }
    for id in deliveries {
        let path = format!("/api/v2/webhook_deliveries/{id}");
        reads.push((path.clone(), admin.get(&path).await.expect(200).json()));
    }
    for id in events {
        let path = format!("/api/v2/events/{id}");
        reads.push((path.clone(), admin.get(&path).await.expect(200).json()));
    }
    reads
}

/// Waits until PostgreSQL holds `deliveries` rows of this Weir and at least `events` events
/// (operational events, such as `webhook_delivery_failed`, move too), and Redis none, nor
/// any entry of the day indexes or of the event log.
async fn moved(builder: &WeirBuilder, pg: &Postgres, deliveries: u64, events: u64) {
    let schema = postgres::schema(&builder.prefix());
    let prefix = builder.prefix();
    eventually("everything moved to PostgreSQL", Duration::from_secs(60), async || {
        let rows_moved = pg.count(&format!("SELECT count(*) FROM {schema}.deliveries")).await;
        let events_moved = pg.count(&format!("SELECT count(*) FROM {schema}.events")).await;
        let rows = raw_keys(builder, &format!("{prefix}:*:d:*")).len();
        let stored = raw_keys(builder, &format!("{prefix}:*:e:*")).len();
        // The day indexes' and the event log's entries moved too: their lists are gone
        // (their bases stay).
        let lists: usize =
            ["od", "wd", "el"].iter().map(|kind| raw_keys(builder, &format!("{prefix}:*:{kind}:*")).len()).sum();
        (rows_moved == deliveries && events_moved >= events && rows == 0 && stored == 0 && lists == 0).then_some(())
    })
    .await;
}

#[tokio::test]
async fn moved_deliveries_and_events_read_exactly_as_before_the_move() {
    let pg = postgres::shared();
    let builder = with_history(WeirBuilder::shared(), pg, "1h");
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let ok = Receiver::start().await;
    let failing = Receiver::replying(Reply::Status(500)).await;
    let a = t.admin.create_webhook(&ok.url, &["work_order_created", "defect_created"]).await;
    let b = t.admin.create_webhook(&failing.url, &["work_order_created"]).await;
    let (a, b) = (a["id"].as_str().unwrap().to_owned(), b["id"].as_str().unwrap().to_owned());
    let mut events = Vec::new();
    for i in 0..9 {
        events.push(t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await);
    }
    for i in 0..3 {
        events.push(t.publisher.publish(&defect_event(&format!("d_{i}"))).await);
    }
    // One event nothing subscribed to: in the log only.
    events.push(
        t.publisher
            .publish(&json!({"action": "form_created", "creator": {"id": "u", "name": "n"},
        "subject": {"type": "Form", "id": "f_1"}, "form": {"id": "f_1"}}))
            .await,
    );
    let settled_a = t.admin.settled(&a, 12).await;
    let settled_b = t.admin.settled(&b, 9).await;
    assert!(settled_b.iter().all(|d| d["status"] == "failed"), "{settled_b:?}");
    // The failures' `webhook_delivery_failed` notices join the log a moment after the
    // deliveries settle: read it once it stays the same for a second.
    let mut last = 0;
    eventually("the event log settles", Duration::from_secs(15), async || {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let count = t.admin.get("/api/v2/events?limit=100").await.json()["data"].as_array().map_or(0, Vec::len);
        let settled = count == last && count >= 13;
        last = count;
        settled.then_some(())
    })
    .await;
    let deliveries: Vec<String> =
        settled_a.iter().chain(&settled_b).map(|d| d["id"].as_str().unwrap().to_owned()).collect();
    let before = every_read(&t.admin, &[&a, &b], &deliveries, &events).await;
    weir.stop().await;

    // Another process, with a short hot period: everything ended moves.
    let weir = builder.clone().env("WEIR_HISTORY_HOT", "1s").start().await;
    let t = t.on(&weir);
    moved(&builder, pg, 21, 13).await;
    let after = every_read(&t.admin, &[&a, &b], &deliveries, &events).await;
    assert_eq!(before.len(), after.len());
    for ((path, was), (_, is)) in before.iter().zip(&after) {
        assert_eq!(was, is, "{path} reads differently once moved");
    }
    // What waits in Redis is gone with it: no ended or accepted notes are left.
    let prefix = builder.prefix();
    for pattern in [format!("{prefix}:*:ended"), format!("{prefix}:*:accepted")] {
        assert!(raw_keys(&builder, &pattern).is_empty(), "{pattern} left in Redis");
    }
    assert_eq!(t.admin.metric("weir_history_backlog_deliveries").await, Some(0.0));
    assert_eq!(t.admin.metric("weir_history_up").await, Some(1.0));
    // An id seen before creates nothing new, moved or not.
    let mut again = work_order_event("wo_0");
    again["id"] = json!(events[0]);
    let sent = ok.count();
    assert_eq!(t.publisher.post("/api/v2/events", &again).await.expect(202).json()["id"], json!(events[0]));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ok.count(), sent, "nothing was sent for a republished id");
    assert_eq!(pages(&t.admin, "/api/v2/webhook_deliveries?limit=100").await[0]["data"].as_array().unwrap().len(), 21);
    an_export_reads_the_newest_snapshot_from_history(&t.admin).await;
    // Unknown ids stay unknown (history is asked, and has nothing).
    t.admin.get("/api/v2/webhook_deliveries/dlv_00000000000000000000000000").await.expect(404);
    t.admin.get("/api/v2/events/evt_never_published").await.expect(404);
    bases_stay_until_their_day_is_trimmed(&builder, &weir).await;
    weir.stop().await;
}

/// A report export reads the record's newest snapshot from history.
async fn an_export_reads_the_newest_snapshot_from_history(admin: &Api) {
    let export = admin
        .post("/api/v2/report_exports", &json!({"exportable": {"type": "WorkOrder", "id": "wo_3"}, "format": "json"}))
        .await;
    let export = export.expect(202).json();
    let done = eventually("the export completed", Duration::from_secs(30), async || {
        let e =
            admin.get(&format!("/api/v2/report_exports/{}", export["id"].as_str().unwrap())).await.expect(200).json();
        (e["status"] != "queued" && e["status"] != "building").then_some(e)
    })
    .await;
    assert_eq!(done["status"], "completed", "{done}");
}

/// What moved keeps a base per list in Redis (day indexes and event log hours) until its
/// day is trimmed.
async fn bases_stay_until_their_day_is_trimmed(builder: &WeirBuilder, weir: &Weir) {
    let prefix = builder.prefix();
    let bases = || {
        let mut conn = raw_conn(builder);
        let mut kinds = HashSet::new();
        for key in raw_keys(builder, &format!("{prefix}:*:lb")) {
            let fields: Vec<String> = redis::cmd("HKEYS").arg(&key).query(&mut *conn).unwrap();
            kinds.extend(fields.iter().filter_map(|f| f.split(':').nth(2).map(str::to_owned)));
        }
        kinds
    };
    assert_eq!(bases(), HashSet::from(["od".to_owned(), "wd".to_owned(), "el".to_owned()]));
    weir.store
        .trim()
        .trim_deliveries(weir::time::now_millis() + 86_400_000 + 90_000, &|_| Duration::from_secs(90))
        .await
        .unwrap();
    assert_eq!(bases(), HashSet::new(), "the trimmed day's bases are gone");
}

#[tokio::test]
async fn listings_running_while_rows_move_list_each_delivery_once() {
    let pg = postgres::shared();
    let builder = with_history(WeirBuilder::shared(), pg, "1h");
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let ok = Receiver::start().await;
    let hook = t.admin.create_webhook(&ok.url, &["work_order_created"]).await;
    let hook = hook["id"].as_str().unwrap().to_owned();
    let n = 1200;
    let publishers: Vec<_> = (0..4)
        .map(|k| {
            let publisher = t.publisher.clone();
            tokio::spawn(async move {
                for i in (k..n).step_by(4) {
                    publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
                }
            })
        })
        .collect();
    for p in publishers {
        p.await.unwrap();
    }
    ok.wait_for(n, Duration::from_secs(60)).await;
    t.admin.settled(&hook, 100).await;
    let listing = "/api/v2/webhook_deliveries?limit=20&status=succeeded";
    let all = ids_of(&pages(&t.admin, listing).await);
    assert_eq!(all.len(), n);
    let log = "/api/v2/events?limit=50";
    let logged = ids_of(&pages(&t.admin, log).await);
    assert_eq!(logged.len(), n);
    weir.stop().await;

    let weir = builder.clone().env("WEIR_HISTORY_HOT", "1s").start().await;
    let t = t.on(&weir);
    // Page through again and again while the rows move: each listing is the same.
    let schema = postgres::schema(&builder.prefix());
    let count = async || pg.count(&format!("SELECT count(*) FROM {schema}.deliveries")).await as usize;
    let mut overlapped = 0;
    for _ in 0..40 {
        let before = count().await;
        let listed = ids_of(&pages(&t.admin, listing).await);
        let listed_log = ids_of(&pages(&t.admin, log).await);
        let after = count().await;
        assert_eq!(listed, all, "a listing while {before}..{after} of {n} had moved");
        assert_eq!(listed_log, logged, "the event log while {before}..{after} of {n} had moved");
        if before < n && after > before {
            overlapped += 1;
        }
        if before == n {
            break;
        }
    }
    assert!(overlapped > 0, "no listing ran while rows moved");
    moved(&builder, pg, n as u64, n as u64).await;
    assert_eq!(ids_of(&pages(&t.admin, listing).await), all);
    assert_eq!(ids_of(&pages(&t.admin, log).await), logged);
    weir.stop().await;
}

#[tokio::test]
async fn moved_work_is_retried_and_replayed_and_becomes_live_again() {
    let pg = postgres::shared();
    let builder = with_history(WeirBuilder::shared(), pg, "1s");
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let since = ago(2000);
    let receiver = Receiver::replying(Reply::Status(500)).await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let hook = hook["id"].as_str().unwrap().to_owned();
    let mut events = Vec::new();
    for i in 0..3 {
        events.push(t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await);
    }
    let failed = t.admin.settled(&hook, 3).await;
    assert!(failed.iter().all(|d| d["status"] == "failed"));
    moved(&builder, pg, 3, 3).await;
    receiver.set(Reply::Status(200));
    let sent_before = receiver.count();

    // A manual retry of a moved delivery: live again, delivered, and listed once.
    let first = failed[0]["id"].as_str().unwrap();
    t.admin.post(&format!("/api/v2/webhook_deliveries/{first}/retry"), &json!({})).await.expect(202);
    eventually("the retried delivery succeeded", Duration::from_secs(20), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{first}")).await.expect(200).json();
        (d["status"] == "succeeded").then_some(())
    })
    .await;
    assert_eq!(receiver.count(), sent_before + 1);
    // retry_failed reaches the two still in history.
    let resp = t.admin.post(&format!("/api/v2/webhooks/{hook}/retry_failed"), &json!({"since": since})).await;
    assert_eq!(resp.expect(202).json()["count"], 2);
    let settled = t.admin.settled(&hook, 3).await;
    assert!(settled.iter().all(|d| d["status"] == "succeeded"), "{settled:?}");
    assert_eq!(receiver.count(), sent_before + 3, "each sent once more");
    for d in &settled {
        let was = failed.iter().find(|f| f["id"] == d["id"]).unwrap();
        let n = |d: &Value| d["attempts"].as_array().unwrap().len();
        assert_eq!(n(d), n(was) + 1, "the failed attempts are kept, and one more: {d}");
    }
    // They move again, and read the same after.
    moved(&builder, pg, 3, 3).await;
    assert_eq!(t.admin.settled(&hook, 3).await, settled);

    // Replays over moved events: a new webhook gets them all; the old one nothing again.
    let second = Receiver::start().await;
    let new_hook = t.admin.create_webhook(&second.url, &["work_order_created"]).await;
    let new_hook = new_hook["id"].as_str().unwrap().to_owned();
    let replay = t.admin.post(&format!("/api/v2/webhooks/{new_hook}/replay"), &json!({"since": since})).await;
    assert_eq!(replay.expect(202).json()["count"], 3);
    second.wait_for(3, Duration::from_secs(20)).await;
    let again = t.admin.post(&format!("/api/v2/webhooks/{hook}/replay"), &json!({"since": since})).await;
    assert_eq!(again.expect(202).json()["count"], 0, "succeeded deliveries are kept as they are");
    t.admin.settled(&new_hook, 3).await;
    assert_eq!(receiver.count(), sent_before + 3);
    // The event shows its deliveries to both webhooks.
    let event = t.admin.get(&format!("/api/v2/events/{}", events[0])).await.expect(200).json();
    let to: HashSet<&str> =
        event["deliveries"].as_array().unwrap().iter().map(|d| d["webhook_id"].as_str().unwrap()).collect();
    assert_eq!(to, HashSet::from([hook.as_str(), new_hook.as_str()]), "{event}");
    moved(&builder, pg, 6, 3).await;
    let listed = ids_of(&pages(&t.admin, "/api/v2/webhook_deliveries?limit=2").await);
    assert_eq!(listed.len(), 6);
    assert_eq!(listed.iter().collect::<HashSet<_>>().len(), 6, "nothing listed twice: {listed:?}");
    weir.stop().await;
}

#[tokio::test]
async fn events_stored_in_the_next_releases_form_read_back_from_history() {
    // The next release stores events with the dictionary that has entropy tables (`W5`, `W6`
    // with a trace); the mover copies stored bytes as they are, so this release must read
    // that form from PostgreSQL too, and deliver it again when moved work is retried.
    use crate::delivery_faults::{NEXT_FORM_TRACEPARENT, assert_delivered_as_published, store_in_next_releases_form};
    let pg = postgres::shared();
    let builder = with_history(WeirBuilder::shared(), pg, "1h");
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Status(500)).await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let hook = hook["id"].as_str().unwrap().to_owned();
    let events = vec![
        t.publisher.publish(&work_order_event("wo_plain")).await,
        t.publisher.publish_traced(&work_order_event("wo_traced"), NEXT_FORM_TRACEPARENT).await,
    ];
    let failed = t.admin.settled(&hook, 2).await;
    assert!(failed.iter().all(|d| d["status"] == "failed"), "{failed:?}");
    let reads = async |t: &crate::support::weir::Tenant| {
        let mut out = Vec::new();
        for id in &events {
            out.push(t.admin.get(&format!("/api/v2/events/{id}")).await.expect(200).json());
        }
        out
    };
    let before = reads(&t).await;

    // Rewritten in Redis to the next release's form, as its process would have stored them.
    let envelopes = store_in_next_releases_form(&builder, weir.store.keys(), &t.org_id, &failed);
    weir.stop().await;

    let weir = builder.clone().env("WEIR_HISTORY_HOT", "1s").start().await;
    let t = t.on(&weir);
    moved(&builder, pg, 2, 2).await;
    let schema = postgres::schema(&builder.prefix());
    let next_form = format!(
        "SELECT count(*) FROM {schema}.events WHERE get_byte(stored, 0) = 87 AND get_byte(stored, 1) IN (53, 54)"
    );
    assert_eq!(pg.count(&next_form).await, 2, "both events moved in the next release's form");
    assert_eq!(reads(&t).await, before, "events read from history as published");

    // Retried from history: live again, and sent byte for byte, the trace kept.
    receiver.set(Reply::Status(200));
    let sent_before = receiver.count();
    for d in &failed {
        let id = d["id"].as_str().unwrap();
        t.admin.post(&format!("/api/v2/webhook_deliveries/{id}/retry"), &json!({})).await.expect(202);
    }
    let got = receiver.wait_for(sent_before + 2, Duration::from_secs(20)).await;
    assert_delivered_as_published(&got[sent_before..], &envelopes);
    weir.stop().await;
}
