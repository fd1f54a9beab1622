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
use crate::support::weir::{Api, Weir, WeirBuilder, raw_keys};

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
