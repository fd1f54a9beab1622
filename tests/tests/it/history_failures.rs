//! PostgreSQL failing in the ways an operator's server does (issue 53): a statement it
//! cancels (`statement_timeout`, 57014) or a lock it cannot take (`lock_timeout`, 55P03)
//! is `503` with `Retry-After`, never `500`, and logged once, not once per request; once it
//! is known frozen, publishes that carry an id of their own no longer wait for it; and a
//! replay asked for while it is away is answered as queued, never `503` with its job going
//! on behind the client's back.

use std::time::{Duration, Instant};

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::exports::{completed, export};
use crate::support::eventually;
use crate::support::postgres::{self, Postgres};
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, Tenant, WeirBuilder, work_order_event};

fn with_history(pg: &Postgres) -> WeirBuilder {
    WeirBuilder::shared().env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", "1s")
}

/// Drops Weir's sessions: the next statements open new ones, with the role's settings.
async fn reconnect_weir(pg: &Postgres) {
    pg.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'weir'").await;
}

#[tokio::test]
async fn a_statement_postgresql_cancels_or_a_lock_it_cannot_take_is_503_and_logged_once() {
    let pg = Postgres::start();
    let builder = with_history(&pg);
    let schema = postgres::schema(&builder.prefix());
    // The organisation is made by a Weir of this process; the requests go to a `weir serve`
    // of the same data set, whose log is read.
    let maker = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let made = maker.tenant(Plan::pro()).await;
    let log = crate::support::temp_dir("pg-fail").join("weir.log");
    let serve = builder.spawn_logging_to(&log);
    serve.wait_ready().await;
    let to = |api: &Api| Api { http: serve.http(), ..api.clone() };
    let t = Tenant { org_id: made.org_id.clone(), admin: to(&made.admin), publisher: to(&made.publisher) };
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let hook = hook["id"].as_str().unwrap().to_owned();
    t.publisher.publish(&work_order_event("wo_1")).await;
    let moved = t.admin.settled(&hook, 1).await[0]["id"].as_str().unwrap().to_owned();
    eventually("the delivery moved", Duration::from_secs(30), async || {
        (pg.count(&format!("SELECT count(*) FROM {schema}.deliveries")).await == 1).then_some(())
    })
    .await;

    let _held = pg.hold_lock(&format!("{schema}.deliveries"), 60).await;
    for setting in ["lock_timeout = '200ms'", "lock_timeout = 0, statement_timeout = '300ms'"] {
        for part in setting.split(", ") {
            pg.query(&format!("ALTER ROLE weir SET {part}")).await;
        }
        reconnect_weir(&pg).await;
        for _ in 0..20 {
            let resp = t.admin.get(&format!("/api/v2/webhook_deliveries/{moved}")).await;
            assert_eq!(resp.status, 503, "{setting}: {}", resp.text());
            assert_eq!(resp.error_code(), "unavailable");
            assert!(resp.header("retry-after").is_some(), "{setting}");
        }
    }
    let logged = std::fs::read_to_string(&log).unwrap();
    let lines = logged.lines().filter(|l| l.contains("answered 503")).count();
    assert!((1..=2).contains(&lines), "40 requests answered 503 were logged {lines} times:\n{logged}");
    maker.stop().await;
}

#[tokio::test]
async fn once_postgresql_is_known_frozen_publishes_with_their_own_ids_do_not_wait_for_it() {
    let pg = Postgres::start();
    let weir = with_history(&pg).start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let with_id = |i: usize| {
        let mut event = work_order_event(&format!("wo_{i}"));
        event["id"] = json!(weir::ids::new(weir::ids::Kind::Event));
        event
    };
    t.publisher.publish(&with_id(0)).await;

    let frozen = pg.freeze();
    // The first question waits its short deadline and finds PostgreSQL down…
    let started = Instant::now();
    t.publisher.publish(&with_id(1)).await;
    let first = started.elapsed();
    assert!(first < Duration::from_secs(4), "the first publish waited {first:?}");
    // … and from then on none waits for it.
    let mut slowest = Duration::ZERO;
    for i in 2..22 {
        let started = Instant::now();
        t.publisher.publish(&with_id(i)).await;
        slowest = slowest.max(started.elapsed());
    }
    drop(frozen);
    assert!(slowest < Duration::from_millis(500), "a publish waited {slowest:?} for a frozen PostgreSQL");
    receiver.wait_for(22, Duration::from_secs(30)).await;
    weir.stop().await;
}

#[tokio::test]
async fn a_replay_asked_for_while_postgresql_is_away_is_answered_as_queued_and_done_when_it_is_back() {
    let mut pg = Postgres::start();
    let builder = with_history(&pg);
    let schema = postgres::schema(&builder.prefix());
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let hook = hook["id"].as_str().unwrap().to_owned();
    let since = weir::time::format_millis(weir::time::now_millis() - 1000);
    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    t.admin.settled(&hook, 3).await;
    eventually("the events moved", Duration::from_secs(30), async || {
        (pg.count(&format!("SELECT count(*) FROM {schema}.events")).await == 3).then_some(())
    })
    .await;

    pg.stop();
    let asked = t.admin.post(&format!("/api/v2/webhooks/{hook}/replay"), &json!({"since": since})).await;
    assert_eq!(asked.status, 202, "queued, never 503: {}", asked.text());
    assert_eq!(asked.json()["state"], "running", "{}", asked.text());
    pg.restart();
    eventually("the replay completed once PostgreSQL was back", Duration::from_secs(60), async || {
        let status = t.admin.get(&format!("/api/v2/webhooks/{hook}/replay")).await.expect(200).json();
        (status["state"] == "completed").then_some(())
    })
    .await;
    weir.stop().await;
}

/// A record whose newest event is still in Redis is exported while PostgreSQL is away (its
/// pointer there is not needed); one Redis knows nothing of is answered `503`, not `422`
/// (history may know it).
#[tokio::test]
async fn a_recent_records_export_does_not_wait_for_postgresql() {
    let mut pg = Postgres::start();
    let weir = WeirBuilder::shared().env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", "1h").start().await;
    let t = weir.tenant(Plan::pro()).await;
    t.publisher.publish(&work_order_event("wo_recent")).await;
    eventually("PostgreSQL answered once", Duration::from_secs(30), async || {
        (t.admin.metric("weir_history_up").await == Some(1.0)).then_some(())
    })
    .await;
    pg.stop();
    let export = export(&t.admin, "WorkOrder", "wo_recent", "json").await;
    let done = completed(&t.admin, export["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    let never = json!({"exportable": {"type": "WorkOrder", "id": "wo_never"}, "format": "json"});
    let unknown = t.admin.post("/api/v2/report_exports", &never).await;
    assert_eq!(unknown.status, 503, "history may know it: {}", unknown.text());
    weir.stop().await;
}
