//! Retention per plan in PostgreSQL (contract §9 "Plans"): the deliveries and events of a
//! plan that keeps them for less than the installation move to day partitions of their own
//! class, are read from there as any other, and leave with their class's days — dropped
//! whole, while the installation's days stay.

use std::time::Duration;

use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::postgres::{self, Postgres};
use crate::support::receiver::Receiver;
use crate::support::weir::{WeirBuilder, work_order_event};

/// The span of days each retention class has to itself (`history::classes::SPAN`).
const SPAN: u64 = 1_000_000;

#[tokio::test]
async fn a_shorter_plans_deliveries_leave_postgres_with_their_own_days() {
    let pg = postgres::shared();
    let short_plan = "[plans.short]\napi_integrations = true\ndelivery_retention = \"1h\"\n";
    let builder = WeirBuilder::shared()
        .env("WEIR_HISTORY_URL", &pg.url())
        .env("WEIR_HISTORY_HOT", "1s")
        .env("WEIR_DELIVERY_RETENTION", "7d")
        .config_file(short_plan);
    let schema = postgres::schema(&builder.prefix());
    let weir = builder.start().await;
    let receiver = Receiver::start().await;
    let mut moved = Vec::new();
    for plan in [Plan::parse("short").unwrap(), Plan::pro()] {
        let t = weir.tenant(plan).await;
        let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
        let event = t.publisher.publish(&work_order_event("wo_1")).await;
        let id = t.admin.settled(hook["id"].as_str().unwrap(), 1).await[0]["id"].as_str().unwrap().to_owned();
        moved.push((t, id, event));
    }
    let partition_of = async |id: &str| {
        pg.query(&format!("SELECT tableoid::regclass::text FROM {schema}.deliveries WHERE id = '{id}'")).await
    };
    let events_in = async |table: &str| pg.count(&format!("SELECT count(*) FROM {schema}.{table}")).await;
    for (_, id, _) in &moved {
        eventually("the delivery moved to PostgreSQL", Duration::from_secs(30), async || {
            (!partition_of(id).await.trim().is_empty()).then_some(())
        })
        .await;
    }
    let today = weir::time::now_millis() / 86_400_000;
    // The 1-hour plan's class is one day: its own partition; pro's is the installation's.
    assert!(partition_of(&moved[0].1).await.contains(&format!("deliveries_{}", SPAN + today)));
    assert!(partition_of(&moved[1].1).await.contains(&format!("deliveries_{today}")));
    // The events too: the short plan's in its class's day, pro's in the installation's.
    let today_events = format!("events_{today}");
    let class_events = format!("events_{}", SPAN + today);
    eventually("both events moved", Duration::from_secs(30), async || {
        (events_in(&today_events).await == 1 && events_in(&class_events).await == 1).then_some(())
    })
    .await;
    // Read as any other moved delivery and event.
    for (t, id, event) in &moved {
        let read = t.admin.get(&format!("/api/v2/webhook_deliveries/{id}")).await.expect(200).json();
        assert_eq!(read["status"], "succeeded", "{read}");
        let read = t.admin.get(&format!("/api/v2/events/{event}")).await.expect(200).json();
        assert_eq!(read["deliveries"][0]["id"], id.as_str(), "{read}");
    }
    // An event id published again is known in its class's days.
    let again = serde_json::json!({"id": moved[0].2, "action": "work_order_created", "creator": {"id": "u", "name": "n"},
        "subject": {"type": "WorkOrder", "id": "wo_1"}, "work_order": {"id": "wo_1"}});
    moved[0].0.publisher.post("/api/v2/events", &again).await.expect(202);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 2, "nothing new: the id was known");
    weir.stop().await;

    days_past_their_class_are_dropped(&builder, pg, today).await;
}

/// Three days on for each class: the short class's day is past its day (dropped by the
/// next process's mover), the installation's is not past its week.
async fn days_past_their_class_are_dropped(builder: &WeirBuilder, pg: &Postgres, today: u64) {
    let schema = postgres::schema(&builder.prefix());
    for day in [SPAN + today - 3, today - 3] {
        for table in ["deliveries", "events"] {
            pg.query(&format!(
                "CREATE TABLE IF NOT EXISTS {schema}.{table}_{day} PARTITION OF {schema}.{table} FOR VALUES FROM ({day}) TO ({})",
                day + 1
            ))
            .await;
        }
        pg.query(&format!("INSERT INTO {schema}.deliveries (id, day, fields) VALUES ('dlv_old_{day}', {day}, '')"))
            .await;
    }
    // How many of a day's two partitions (deliveries, events) there are.
    let partitions = async |day: u64| {
        pg.count(&format!(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = '{schema}' AND c.relname IN ('deliveries_{day}', 'events_{day}')"
        ))
        .await
    };
    let weir = builder.start().await;
    eventually("the short class's old day was dropped", Duration::from_secs(30), async || {
        (partitions(SPAN + today - 3).await == 0).then_some(())
    })
    .await;
    assert_eq!(partitions(today - 3).await, 2, "the installation's days stay their week");
    assert_eq!(partitions(SPAN + today).await, 2, "today's short-class day stays until it is past");
    weir.stop().await;
}
