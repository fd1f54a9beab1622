//! History in PostgreSQL under faults (contract §8): PostgreSQL stopped and started while
//! events are published, a mover killed with `kill -9` in the middle of a move, retention
//! dropping whole days, and no trace of any of it when history is not configured.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::postgres::{self, Postgres};
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, WeirBuilder, raw_keys, work_order_event};

fn with_history(builder: WeirBuilder, pg: &Postgres, hot: &str) -> WeirBuilder {
    builder.env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", hot)
}

async fn count(pg: &Postgres, schema: &str, table: &str) -> u64 {
    pg.count(&format!("SELECT count(*) FROM {schema}.{table}")).await
}

/// Every delivery id the organisation lists, in order.
async fn listed(api: &Api) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..2000 {
        let path = match &cursor {
            Some(c) => format!("/api/v2/webhook_deliveries?limit=100&cursor={c}"),
            None => "/api/v2/webhook_deliveries?limit=100".to_owned(),
        };
        let page = api.get(&path).await.expect(200).json();
        ids.extend(page["data"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap().to_owned()));
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return ids;
        }
    }
    panic!("the listing did not end");
}

#[tokio::test]
async fn while_postgres_is_away_publishing_and_delivery_go_on_and_moved_reads_answer_503() {
    let mut pg = Postgres::start();
    let builder = with_history(WeirBuilder::shared(), &pg, "1s");
    let schema = postgres::schema(&builder.prefix());
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let hook = hook["id"].as_str().unwrap().to_owned();
    for i in 0..5 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let early = t.admin.settled(&hook, 5).await;
    eventually("the first five moved", Duration::from_secs(30), async || {
        (count(&pg, &schema, "deliveries").await == 5).then_some(())
    })
    .await;

    // Publishing runs on its own the whole time PostgreSQL is stopped and started.
    let (published, refused, done) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let load = {
        let (publisher, published, refused, done) =
            (t.publisher.clone(), published.clone(), refused.clone(), done.clone());
        tokio::spawn(async move {
            let mut i = 0;
            while !done.load(Ordering::Relaxed) && i < 2000 {
                let resp = publisher.post("/api/v2/events", &work_order_event(&format!("load_{i}"))).await;
                let counter = if resp.status == 202 { &published } else { &refused };
                counter.fetch_add(1, Ordering::Relaxed);
                i += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    pg.stop();
    // A moved delivery cannot be read now: 503 with Retry-After, never 500.
    let moved_id = early[0]["id"].as_str().unwrap();
    let resp = t.admin.get(&format!("/api/v2/webhook_deliveries/{moved_id}")).await;
    assert_eq!(resp.status, 503, "{}", resp.text());
    assert_eq!(resp.error_code(), "unavailable");
    assert!(resp.header("retry-after").is_some());
    assert_eq!(t.admin.get("/api/v2/webhook_deliveries?limit=100").await.status, 503);
    // Readiness is Redis's: unaffected.
    assert_eq!(weir.http().get("/readyz").send().await.status, 200);
    eventually("the backlog and PostgreSQL's state in /metrics", Duration::from_secs(20), async || {
        let up = t.admin.metric("weir_history_up").await?;
        let backlog = t.admin.metric("weir_history_backlog_deliveries").await?;
        (up == 0.0 && backlog > 0.0).then_some(())
    })
    .await;
    let while_down = receiver.count();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(receiver.count() > while_down, "delivery goes on while PostgreSQL is away");
    // What is still in Redis reads as ever: an event just published, and its delivery.
    let fresh = t.publisher.publish(&work_order_event("fresh")).await;
    let live = t.admin.get(&format!("/api/v2/events/{fresh}")).await;
    assert_eq!(live.status, 200, "an event still in Redis: {}", live.text());

    pg.restart();
    tokio::time::sleep(Duration::from_secs(1)).await;
    done.store(true, Ordering::Relaxed);
    load.await.unwrap();
    let total = 6 + published.load(Ordering::Relaxed);
    assert_eq!(refused.load(Ordering::Relaxed), 0, "no publish was refused");
    receiver.wait_for(total, Duration::from_secs(60)).await;
    eventually("the backlog moved once PostgreSQL was back", Duration::from_secs(60), async || {
        let up = t.admin.metric("weir_history_up").await?;
        let backlog = t.admin.metric("weir_history_backlog_deliveries").await?;
        (up == 1.0 && backlog == 0.0 && count(&pg, &schema, "deliveries").await == total as u64).then_some(())
    })
    .await;
    let ids = listed(&t.admin).await;
    assert_eq!(ids.len(), total);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), total, "nothing listed twice");
    t.admin.get(&format!("/api/v2/webhook_deliveries/{moved_id}")).await.expect(200);
    weir.stop().await;
}

#[tokio::test]
async fn a_mover_killed_mid_move_loses_nothing_and_shows_nothing_twice() {
    let pg = postgres::shared();
    let builder = with_history(WeirBuilder::shared(), pg, "1h");
    let schema = postgres::schema(&builder.prefix());
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    for _ in 0..2 {
        t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    }
    let n = 800;
    let publishers: Vec<_> = (0..6)
        .map(|k| {
            let publisher = t.publisher.clone();
            tokio::spawn(async move {
                for i in (k..n).step_by(6) {
                    publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
                }
            })
        })
        .collect();
    for p in publishers {
        p.await.unwrap();
    }
    receiver.wait_for(2 * n, Duration::from_secs(120)).await;
    eventually("every delivery ended", Duration::from_secs(30), async || {
        (t.admin.metric("weir_queue_ready").await? == 0.0).then_some(())
    })
    .await;
    weir.stop().await;

    // A process that moves, killed as soon as the move has begun.
    let mut mover = builder.clone().env("WEIR_HISTORY_HOT", "1s").spawn();
    let at_kill = eventually("the move began", Duration::from_secs(60), async || {
        let moved = count(pg, &schema, "deliveries").await;
        (moved > 0).then_some(moved)
    })
    .await;
    mover.signal("KILL");
    eprintln!("killed with {at_kill} of {} deliveries written", 2 * n);

    let weir = builder.clone().env("WEIR_HISTORY_HOT", "1s").start().await;
    let t = t.on(&weir);
    let prefix = builder.prefix();
    eventually("the move finished", Duration::from_secs(120), async || {
        let done = count(pg, &schema, "deliveries").await == 2 * n as u64
            && count(pg, &schema, "events").await == n as u64
            && raw_keys(&builder, &format!("{prefix}:*:d:*")).is_empty()
            && raw_keys(&builder, &format!("{prefix}:*:e:*")).is_empty();
        done.then_some(())
    })
    .await;
    let ids = listed(&t.admin).await;
    assert_eq!(ids.len(), 2 * n);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 2 * n, "nothing shown twice");
    let one = t.admin.get(&format!("/api/v2/webhook_deliveries/{}", ids[n])).await.expect(200).json();
    assert_eq!(one["status"], "succeeded", "{one}");
    assert_eq!(receiver.count(), 2 * n, "nothing was sent again");
    weir.stop().await;
}

#[tokio::test]
async fn days_past_the_retention_are_dropped_whole() {
    let pg = postgres::shared();
    let builder = with_history(WeirBuilder::shared(), pg, "1s").env("WEIR_EVENT_RETENTION", "1d");
    let schema = postgres::schema(&builder.prefix());
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    eventually("today's delivery moved", Duration::from_secs(30), async || {
        (count(pg, &schema, "deliveries").await == 1).then_some(())
    })
    .await;
    weir.stop().await;
    // Days from before the retention, as an older Weir would have left them.
    let today = weir::time::now_millis() / 86_400_000;
    for day in [today - 3, today - 2] {
        for table in ["deliveries", "events", "indexes", "snapshots"] {
            pg.query(&format!(
                "CREATE TABLE {schema}.{table}_{day} PARTITION OF {schema}.{table} FOR VALUES FROM ({day}) TO ({})",
                day + 1
            ))
            .await;
        }
        pg.query(&format!("INSERT INTO {schema}.deliveries (id, day, fields) VALUES ('dlv_old_{day}', {day}, '')"))
            .await;
    }
    let partitions = async |pattern: &str| {
        pg.count(&format!(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = '{schema}' AND c.relkind = 'r' AND c.relname LIKE '{pattern}'"
        ))
        .await
    };
    assert_eq!(partitions(&format!("%_{}", today - 3)).await, 4);

    let weir = builder.start().await;
    eventually("the old days were dropped", Duration::from_secs(30), async || {
        (partitions(&format!("%_{}", today - 3)).await == 0 && partitions(&format!("%_{}", today - 2)).await == 0)
            .then_some(())
    })
    .await;
    let kept = "today's days are kept (deliveries, events, indexes, snapshot pointers)";
    assert_eq!(partitions(&format!("%_{today}")).await, 4, "{kept}");
    assert_eq!(count(pg, &schema, "deliveries").await, 1);
    weir.stop().await;
}

#[tokio::test]
async fn without_history_nothing_is_noted_for_a_move() {
    let builder = WeirBuilder::shared();
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    t.admin.settled(hook["id"].as_str().unwrap(), 1).await;
    let prefix = builder.prefix();
    for pattern in [format!("{prefix}:*:ended"), format!("{prefix}:*:accepted"), format!("{prefix}:*:jobs")] {
        let keys: Vec<String> = raw_keys(&builder, &pattern)
            .into_iter()
            .filter(|k| k.contains("history") || !k.ends_with("jobs"))
            .collect();
        assert!(keys.is_empty(), "{pattern}: {keys:?}");
    }
    weir.stop().await;
}
