//! A broker's deliveries with history in PostgreSQL (contract §8 and §9): a delivery to a
//! NATS JetStream subject moves to PostgreSQL like any other and reads back the same — its
//! broker's answer in place of a status code — and a manual retry revives it from there.

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::destinations::{held, messages, stream};
use crate::support::eventually;
use crate::support::nats::NatsServer;
use crate::support::postgres;
use crate::support::weir::{WeirBuilder, work_order_event};

#[tokio::test]
async fn a_brokers_delivery_moves_to_history_and_reads_back_the_same() {
    let nats = NatsServer::start(None);
    let js = nats.client().await;
    let orders = stream(&js, "MOVED", "moved.>").await;
    let pg = postgres::shared();
    let builder = WeirBuilder::shared().env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", "1s");
    let schema = postgres::schema(&builder.prefix());
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let body = json!({"subscribed_actions": ["work_order_created"],
        "destination": {"type": "nats", "url": nats.url(None), "subject": "moved.created"}});
    let hook = t.admin.post("/api/v2/webhooks", &body).await.expect(201).json();
    let hook = hook["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_1")).await;
    assert_eq!(messages(&orders, 1).await.len(), 1);
    let before: Value = t.admin.settled(hook, 1).await.remove(0);
    let id = before["id"].as_str().unwrap();
    eventually("the delivery moved to PostgreSQL", Duration::from_secs(30), async || {
        (pg.count(&format!("SELECT count(*) FROM {schema}.deliveries WHERE id = '{id}'")).await == 1).then_some(())
    })
    .await;
    let after = t.admin.get(&format!("/api/v2/webhook_deliveries/{id}")).await.expect(200).json();
    assert_eq!(after, before, "read from history as it read from Redis");
    let attempt = &after["attempts"][0];
    assert!(attempt["status_code"].is_null() && attempt["response_body"].as_str().unwrap().starts_with("PubAck"));

    // Sent again by hand: revived from history, attempted again with the same id, which the
    // stream's duplicate window recognises.
    t.admin.post(&format!("/api/v2/webhook_deliveries/{id}/retry"), &json!({})).await.expect(202);
    let again = eventually("a second attempt", Duration::from_secs(15), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{id}")).await.json();
        (d["attempts"].as_array().map_or(0, Vec::len) == 2 && d["status"] == "succeeded").then_some(d)
    })
    .await;
    assert!(again["attempts"][1]["response_body"].as_str().unwrap().contains("a duplicate"), "{again}");
    assert_eq!(held(&js, "MOVED").await, 1, "the stream holds it once");
    weir.stop().await;
}
