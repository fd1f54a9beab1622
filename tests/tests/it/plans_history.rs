//! Retention per plan in PostgreSQL (contract §9 "Plans"): the deliveries of a plan that
//! keeps them for less than the installation move to day partitions of their own class,
//! are read from there as any other, and leave with their class's days — dropped whole,
//! while the installation's days stay.

use std::time::Duration;

use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::postgres;
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
        t.publisher.publish(&work_order_event("wo_1")).await;
        let id = t.admin.settled(hook["id"].as_str().unwrap(), 1).await[0]["id"].as_str().unwrap().to_owned();
        moved.push((t, id));
    }
    let partition_of = async |id: &str| {
        pg.query(&format!("SELECT tableoid::regclass::text FROM {schema}.deliveries WHERE id = '{id}'")).await
    };
    for (_, id) in &moved {
        eventually("the delivery moved to PostgreSQL", Duration::from_secs(30), async || {
            (!partition_of(id).await.trim().is_empty()).then_some(())
        })
        .await;
    }
    let today = weir::time::now_millis() / 86_400_000;
    // The 1-hour plan's class is one day: its own partition; pro's is the installation's.
    assert!(partition_of(&moved[0].1).await.contains(&format!("deliveries_{}", SPAN + today)));
    assert!(partition_of(&moved[1].1).await.contains(&format!("deliveries_{today}")));
    // Read as any other moved delivery.
    for (t, id) in &moved {
        let read = t.admin.get(&format!("/api/v2/webhook_deliveries/{id}")).await.expect(200).json();
        assert_eq!(read["status"], "succeeded", "{read}");
    }
    weir.stop().await;

    // Three days on for each class: the short class's day is past its day, the
    // installation's is not past its week.
    for day in [SPAN + today - 3, today - 3] {
        pg.query(&format!(
            "CREATE TABLE IF NOT EXISTS {schema}.deliveries_{day} PARTITION OF {schema}.deliveries FOR VALUES FROM ({day}) TO ({})",
            day + 1
        ))
        .await;
        pg.query(&format!("INSERT INTO {schema}.deliveries (id, day, fields) VALUES ('dlv_old_{day}', {day}, '')"))
            .await;
    }
    let exists = async |day: u64| {
        pg.count(&format!(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = '{schema}' AND c.relname = 'deliveries_{day}'"
        ))
        .await
            == 1
    };
    let weir = builder.start().await;
    eventually("the short class's old day was dropped", Duration::from_secs(30), async || {
        (!exists(SPAN + today - 3).await).then_some(())
    })
    .await;
    assert!(exists(today - 3).await, "the installation's days stay their week");
    assert!(exists(SPAN + today).await, "today's short-class day stays until it is past");
    weir.stop().await;
}
