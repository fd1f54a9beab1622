//! Records' snapshots for report exports (contract §2): the newest event about a record is
//! kept without a copy while the older ones expire, an organisation keeps at most its cap,
//! and a deletion published in another partition forgets the older snapshot.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::exports::{completed, download, export, form_event};
use crate::support::eventually;
use crate::support::weir::{Weir, WeirBuilder};

#[tokio::test]
async fn the_newest_event_about_a_record_is_kept_without_a_copy_and_the_rest_expire() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let mut old = form_event("frm_keep", "old", "2026-11-22T10:00:00.000Z");
    old["id"] = json!("evt_keep-1");
    let mut new = form_event("frm_keep", "new", "2026-11-22T11:00:00.000Z");
    new["id"] = json!("evt_keep-2");
    let mut conn = crate::support::weir::raw_conn(&weir.builder);
    let keys = weir.store.keys();
    let p = keys.partition_of_subject(&t.org_id, "Form", "frm_keep");
    let pttl = |conn: &mut dyn redis::ConnectionLike, id: &str| -> i64 {
        redis::cmd("PTTL").arg(keys.event(p, &t.org_id, id)).query(conn).unwrap()
    };
    t.publisher.publish(&old).await;
    assert_eq!(pttl(&mut *conn, "evt_keep-1"), -1, "the newest event about a record does not expire");
    t.publisher.publish(&new).await;
    eventually("a superseded event expires again", Duration::from_secs(15), async || {
        (pttl(&mut *conn, "evt_keep-1") > 0).then_some(())
    })
    .await;
    assert_eq!(pttl(&mut *conn, "evt_keep-2"), -1);
    // An older event arriving late is not the newest: it is stored with its TTL at once.
    let mut late = form_event("frm_keep", "late", "2026-11-22T10:30:00.000Z");
    late["id"] = json!("evt_keep-late");
    t.publisher.publish(&late).await;
    let ttl = pttl(&mut *conn, "evt_keep-late");
    assert!(ttl > 0, "a late, older event expires: {ttl}");
    let done = completed(&t.admin, export(&t.admin, "Form", "frm_keep", "json").await["id"].as_str().unwrap()).await;
    let body = download(&weir, done["download_url"].as_str().unwrap()).await.expect(200).json();
    assert_eq!(body["record"]["title"], "new");
    let mut deleted = form_event("frm_keep", "x", "2026-11-22T12:00:00.000Z");
    deleted["action"] = json!("form_deleted");
    deleted["subject"]["deleted"] = json!(true);
    t.publisher.publish(&deleted).await;
    eventually("a deleted record's event expires again", Duration::from_secs(15), async || {
        (pttl(&mut *conn, "evt_keep-2") > 0).then_some(())
    })
    .await;
}

#[tokio::test]
async fn an_organisation_keeps_at_most_its_cap_of_snapshots_the_newest_stay() {
    let builder = WeirBuilder::shared();
    let (store, kept) = capped_snapshots(&builder, false).await;
    assert!(kept.len() <= 40 + 8, "{} snapshots kept for a cap of 40", kept.len());
    assert!(kept.len() >= 40 - 16, "{} snapshots kept: evictions stop at the cap", kept.len());
    assert!(kept.contains_key("Form:frm_0399"), "the newest record is kept");
    // Evicted records' events get their TTL back (through the released list).
    let evicted = (0..400).map(|i| format!("Form:frm_{i:04}")).find(|s| !kept.contains_key(s)).unwrap();
    let mut conn = crate::support::weir::raw_conn(&builder);
    let p = weir::store::Partition(0);
    let released: Vec<String> =
        redis::cmd("LRANGE").arg(store.keys().released_events(p)).arg(0).arg(-1).query(&mut *conn).unwrap();
    let id = evicted.replace("Form:frm_", "evt_cap_");
    assert!(released.iter().any(|r| r.ends_with(&id)), "{id} is to be released");
}

/// With history in PostgreSQL the pointers leave Redis with their events: none is evicted
/// (an older one that moved would show again).
#[tokio::test]
async fn with_history_no_snapshot_is_evicted_at_the_cap() {
    let builder = WeirBuilder::shared();
    let (_, kept) = capped_snapshots(&builder, true).await;
    assert_eq!(kept.len(), 400);
}

/// 400 records of one organisation published with a cap of 40 snapshots, on one partition
/// (`history`: as with history in PostgreSQL): the store, and the pointers Redis kept.
async fn capped_snapshots(
    builder: &WeirBuilder,
    history: bool,
) -> (weir::store::Store, std::collections::HashMap<String, String>) {
    use weir::store::events::publish::Publication;
    use weir::store::events::stored::StoredEvent;
    let mut settings = builder.config().store_settings().expect("redis");
    settings.snapshots_per_org = 40;
    settings.partitions = 1;
    settings.history = history;
    let store = weir::store::Store::connect(&settings).await.unwrap();
    let p = weir::store::Partition(0);
    let org = "org_01CAPTEST0000000000000000";
    let event = Arc::new(StoredEvent {
        created_at: "2026-11-22T10:00:00.000Z".into(),
        envelope: "{}".into(),
        accepted_ms: weir::time::now_millis(),
        trace: None,
    });
    let stored = Arc::new(event.encode());
    let batch: Vec<Publication> = (0..400)
        .map(|i| Publication {
            org_id: org.into(),
            event_id: format!("evt_cap_{i:04}"),
            action: "form_completed".into(),
            subject: format!("Form:frm_{i:04}"),
            deleted: false,
            event_ms: 1_795_000_000_000 + i,
            logged_action: None,
            event: event.clone(),
            stored: stored.clone(),
            snapshot: true,
            webhooks: Vec::new(),
            retention: weir::store::events::publish::Retention {
                deliveries: Duration::from_secs(600),
                events: Duration::ZERO,
            },
            counted: false,
            version: u64::MAX,
            intake: None,
        })
        .collect();
    for chunk in batch.chunks(10) {
        store.event_writes().publish(p, chunk).await.unwrap();
    }
    let mut conn = crate::support::weir::raw_conn(builder);
    let kept = redis::cmd("HGETALL").arg(store.keys().snapshots(p, org)).query(&mut *conn).unwrap();
    (store, kept)
}

/// A failover can leave a record's snapshot pointers in two partitions (an event published
/// while its own partition could not acknowledge writes goes to a standby): a deletion
/// published in either forgets the older pointer in the other, whichever way round.
#[tokio::test]
async fn a_deletion_published_in_another_partition_forgets_the_records_older_snapshot() {
    use weir::store::events::publish::{Publication, Retention};
    use weir::store::events::stored::StoredEvent;
    let builder = WeirBuilder::shared();
    let settings = builder.config().store_settings().expect("redis");
    let store = weir::store::Store::connect(&settings).await.unwrap();
    let org = "org_01STANDBYSNAPSHOT00000000";
    let retention = Retention { deliveries: Duration::from_secs(600), events: Duration::ZERO };
    let publish = async |p: u16, id: &str, record: &str, ms: u64, deleted: bool| {
        let event = Arc::new(StoredEvent {
            created_at: "2026-11-22T10:00:00.000Z".into(),
            envelope: json!({"id": id, "form": {"id": record, "title": id}}).to_string(),
            accepted_ms: weir::time::now_millis(),
            trace: None,
        });
        let publication = Publication {
            org_id: org.into(),
            event_id: id.into(),
            action: if deleted { "form_deleted" } else { "form_completed" }.into(),
            subject: format!("Form:{record}"),
            deleted,
            event_ms: ms,
            logged_action: None,
            stored: Arc::new(event.encode()),
            event,
            snapshot: true,
            webhooks: Vec::new(),
            retention,
            counted: false,
            version: u64::MAX,
            intake: None,
        };
        store.event_writes().publish(weir::store::Partition(p), &[publication]).await.unwrap();
    };
    // The event the record's newest pointer points at, if any.
    let newest = async |record: &str| {
        let pointer = store.exports().newest_pointer(org, "Form", record).await.unwrap();
        pointer.map(|pointer| pointer.event_id)
    };
    let (home, standby) = (weir::store::Partition(0), weir::store::Partition(1));
    let t0 = 1_795_000_000_000;

    // Made at home, deleted on a standby: home's pointer is forgotten and its event released.
    publish(0, "evt_made_home", "frm_a", t0, false).await;
    publish(1, "evt_deleted_standby", "frm_a", t0 + 1, true).await;
    assert_eq!(newest("frm_a").await.as_deref(), Some("evt_made_home"), "left at home");
    assert_eq!(store.exports().forget_snapshot_in(&[home], org, "Form:frm_a", t0 + 1).await.unwrap(), 1);
    assert_eq!(newest("frm_a").await, None);
    let mut conn = crate::support::weir::raw_conn(&builder);
    let released: Vec<String> =
        redis::cmd("LRANGE").arg(store.keys().released_events(home)).arg(0).arg(-1).query(&mut *conn).unwrap();
    assert!(released.iter().any(|r| r.ends_with(" evt_made_home")), "{released:?}");

    // Updated on a standby, deleted at home: the standby's pointer is forgotten.
    publish(0, "evt_b_home", "frm_b", t0, false).await;
    publish(1, "evt_b_standby", "frm_b", t0 + 1, false).await;
    publish(0, "evt_b_deleted", "frm_b", t0 + 2, true).await;
    assert_eq!(newest("frm_b").await.as_deref(), Some("evt_b_standby"));
    assert_eq!(store.exports().forget_snapshot_in(&[standby], org, "Form:frm_b", t0 + 2).await.unwrap(), 1);
    assert_eq!(newest("frm_b").await, None);

    // A pointer newer than the deletion (the record made again) stays.
    publish(1, "evt_c_again", "frm_c", t0 + 5, false).await;
    publish(0, "evt_c_deleted", "frm_c", t0 + 4, true).await;
    assert_eq!(store.exports().forget_snapshot_in(&[standby], org, "Form:frm_c", t0 + 4).await.unwrap(), 0);
    assert_eq!(newest("frm_c").await.as_deref(), Some("evt_c_again"));
}
