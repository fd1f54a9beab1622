//! Report exports' snapshot pointers move to PostgreSQL with their events (issue 58: moved
//! history leaves next to nothing in Redis): once a record's newest event moved, Redis keeps
//! nothing of the record; exports read the newer of Redis's pointer and history's; a
//! deletion moves as a tombstone and hides what moved before it. (Run on one Redis and
//! again on the local cluster.)

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::exports::{completed, download, export, form_event};
use crate::support::eventually;
use crate::support::postgres::{self, Postgres};
use crate::support::weir::{Api, Weir, WeirBuilder, raw_conn, raw_keys};

fn ago(minutes: u64) -> String {
    weir::time::format_millis(weir::time::now_millis() - minutes * 60_000)
}

fn deletion(form: &str, at: &str) -> Value {
    let mut deleted = form_event(form, "gone", at);
    deleted["action"] = json!("form_deleted");
    deleted["subject"]["deleted"] = json!(true);
    deleted
}

/// The title of the form a JSON export of `form` holds.
async fn exported_title(weir: &Weir, api: &Api, form: &str) -> Value {
    let done = completed(api, export(api, "Form", form, "json").await["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    download(weir, done["download_url"].as_str().unwrap()).await.expect(200).json()["record"]["title"].clone()
}

/// Waits until every event and every snapshot pointer left Redis.
async fn all_moved(builder: &WeirBuilder) {
    let prefix = builder.prefix();
    eventually("events and snapshot pointers moved", Duration::from_secs(60), async || {
        let events = raw_keys(builder, &format!("{prefix}:*:e:*")).len();
        let pointers = raw_keys(builder, &format!("{prefix}:*:snap:*")).len();
        (events == 0 && pointers == 0).then_some(())
    })
    .await;
}

async fn moved_pointers(pg: &Postgres, builder: &WeirBuilder, condition: &str) -> u64 {
    let schema = postgres::schema(&builder.prefix());
    pg.count(&format!("SELECT count(*) FROM {schema}.snapshots WHERE {condition}")).await
}

#[tokio::test]
async fn snapshot_pointers_move_with_their_events_and_the_newest_still_wins() {
    let pg = postgres::shared();
    let builder = WeirBuilder::shared().env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", "1s");
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    t.publisher.publish(&form_event("frm_1", "first", &ago(180))).await;
    t.publisher.publish(&form_event("frm_1", "second", &ago(120))).await;
    t.publisher.publish(&form_event("frm_2", "kept", &ago(120))).await;
    t.publisher.publish(&form_event("frm_3", "made", &ago(120))).await;
    t.publisher.publish(&deletion("frm_3", &ago(60))).await;
    all_moved(&builder).await;
    // One row per record (the newest), the deletion's a tombstone.
    assert_eq!(moved_pointers(pg, &builder, "true").await, 3);
    assert_eq!(moved_pointers(pg, &builder, "gone").await, 1);
    assert_eq!(exported_title(&weir, &t.admin, "frm_1").await, "second");
    assert_eq!(exported_title(&weir, &t.admin, "frm_2").await, "kept");
    let no_snapshot = json!({"exportable": {"type": "Form", "id": "frm_3"}, "format": "json"});
    t.admin.post("/api/v2/report_exports", &no_snapshot).await.expect(422);

    // An event older than what moved, published now, does not replace it; a newer one does.
    t.publisher.publish(&form_event("frm_1", "older", &ago(150))).await;
    assert_eq!(exported_title(&weir, &t.admin, "frm_1").await, "second");
    t.publisher.publish(&form_event("frm_1", "newest", &ago(1))).await;
    assert_eq!(exported_title(&weir, &t.admin, "frm_1").await, "newest");
    // A deletion hides what moved before it at once; a record made again after its
    // deletion moved is exported again.
    t.publisher.publish(&deletion("frm_2", &ago(30))).await;
    let deleted = json!({"exportable": {"type": "Form", "id": "frm_2"}, "format": "json"});
    t.admin.post("/api/v2/report_exports", &deleted).await.expect(422);
    t.publisher.publish(&form_event("frm_3", "again", &ago(1))).await;
    assert_eq!(exported_title(&weir, &t.admin, "frm_3").await, "again");

    // All of it moved too: the same answers from history alone.
    all_moved(&builder).await;
    assert_eq!(moved_pointers(pg, &builder, "gone").await, 1, "frm_2's deletion; frm_3's replaced");
    assert_eq!(exported_title(&weir, &t.admin, "frm_1").await, "newest");
    assert_eq!(exported_title(&weir, &t.admin, "frm_3").await, "again");
    t.admin.post("/api/v2/report_exports", &deleted).await.expect(422);
    weir.stop().await;
}

/// Every snapshot pointer in Redis: (hash key, `Type:id`, value).
fn pointers_in_redis(builder: &WeirBuilder) -> Vec<(String, String, String)> {
    let mut conn = raw_conn(builder);
    let mut all = Vec::new();
    for key in raw_keys(builder, &format!("{}:*:snap:*", builder.prefix())) {
        let fields: Vec<(String, String)> = redis::cmd("HGETALL").arg(&key).query(&mut *conn).unwrap();
        all.extend(fields.into_iter().map(|(field, value)| (key.clone(), field, value)));
    }
    all
}

/// Puts back pointers as a release before pointers moved left them: in Redis, their events
/// moved, no row in history, no partition swept yet. How many partitions there are.
async fn as_an_earlier_release_left(builder: &WeirBuilder, pg: &Postgres, left: &[(String, String, String)]) -> usize {
    let mut conn = raw_conn(builder);
    for (key, field, value) in left {
        let _: () = redis::cmd("HSET").arg(key).arg(field).arg(value).query(&mut *conn).unwrap();
    }
    let swept = raw_keys(builder, &format!("{}:*:swept", builder.prefix()));
    for key in &swept {
        let _: () = redis::cmd("DEL").arg(key).query(&mut *conn).unwrap();
    }
    pg.query(&format!("DELETE FROM {}.snapshots", postgres::schema(&builder.prefix()))).await;
    swept.len()
}

#[tokio::test]
async fn pointers_an_earlier_release_left_in_redis_are_swept_to_history() {
    let pg = postgres::shared();
    let builder = WeirBuilder::shared().env("WEIR_HISTORY_URL", &pg.url());
    let (hot, moving) = (builder.clone().env("WEIR_HISTORY_HOT", "1h"), builder.clone().env("WEIR_HISTORY_HOT", "1s"));
    // Published while nothing moves; the pointer as it was then, before its event moved.
    let weir = hot.start().await;
    let t = weir.tenant(Plan::pro()).await;
    t.publisher.publish(&form_event("frm_1", "left behind", &ago(60))).await;
    // Another organisation's too: a sweep walks every organisation's hash.
    let other = weir.tenant(Plan::pro()).await;
    other.publisher.publish(&form_event("frm_1", "the other's", &ago(60))).await;
    let mut left = pointers_in_redis(&builder);
    assert_eq!(left.len(), 2, "{left:?}");
    weir.stop().await;
    let weir = moving.start().await;
    all_moved(&builder).await;
    weir.stop().await;
    // A record whose event is still in Redis: its pointer must stay.
    let weir = hot.start().await;
    t.on(&weir).publisher.publish(&form_event("frm_2", "live", &ago(30))).await;
    weir.stop().await;
    // One more whose event is nowhere (gone with its retention): it pointed at nothing.
    let (key, _, _) = left[0].clone();
    let dangling = format!("{} evt_01JZZZZZZZZZZZZZZZZZZZZZZZ", weir::time::now_millis() - 86_400_000);
    left.push((key, "Form:frm_9".to_owned(), dangling));
    let partitions = as_an_earlier_release_left(&builder, pg, &left).await;
    assert!(partitions > 0, "the move swept every partition once");
    assert_eq!(moved_pointers(pg, &builder, "true").await, 0);

    // Nothing moves in this run: only the sweep can take them.
    let weir = hot.start().await;
    let (t, other) = (t.on(&weir), other.on(&weir));
    let here = eventually("left-behind pointers swept", Duration::from_secs(60), async || {
        let swept = raw_keys(&builder, &format!("{}:*:swept", builder.prefix())).len();
        (swept == partitions).then(|| pointers_in_redis(&builder))
    })
    .await;
    let fields: Vec<&str> = here.iter().map(|(_, field, _)| field.as_str()).collect();
    assert_eq!(fields, ["Form:frm_2"], "only the pointer whose event is still in Redis stays");
    assert_eq!(moved_pointers(pg, &builder, "true").await, 2, "the two frm_1's, not the dangling one");
    assert_eq!(exported_title(&weir, &t.admin, "frm_1").await, "left behind");
    assert_eq!(exported_title(&weir, &other.admin, "frm_1").await, "the other's");
    assert_eq!(exported_title(&weir, &t.admin, "frm_2").await, "live");
    let nowhere = json!({"exportable": {"type": "Form", "id": "frm_9"}, "format": "json"});
    t.admin.post("/api/v2/report_exports", &nowhere).await.expect(422);
    weir.stop().await;
}
