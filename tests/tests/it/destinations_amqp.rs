//! AMQP destinations (issue 56) against a real RabbitMQ node: a queue gets each delivery as
//! a persistent message with the HTTP headers and signature, confirmed by the broker; an
//! unroutable message or wrong credentials are failed attempts, retried; credentials are never
//! shown; `amqps` speaks TLS to the broker's name.

use std::time::Duration;

use lapin::options::BasicGetOptions;
use lapin::types::AMQPValue;
use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::mtls::MutualTls;
use crate::support::rabbitmq::RabbitMq;
use crate::support::weir::{Tenant, Weir, WeirBuilder, work_order_event};

async fn amqp_webhook(t: &Tenant, url: &str, exchange: &str, routing_key: &str) -> Value {
    let body = json!({
        "subscribed_actions": ["work_order_created"],
        "destination": {"type": "amqp", "url": url, "exchange": exchange, "routing_key": routing_key},
    });
    t.admin.post("/api/v2/webhooks", &body).await.expect(201).json()
}

/// The next message of `queue` (waits up to 10 s).
async fn next(channel: &lapin::Channel, queue: &str) -> lapin::message::BasicGetMessage {
    eventually("a message in the queue", Duration::from_secs(10), async || {
        channel.basic_get(queue.into(), BasicGetOptions { no_ack: true }).await.expect("basic.get")
    })
    .await
}

fn header(message: &lapin::message::BasicGetMessage, name: &str) -> String {
    let headers = message.delivery.properties.headers().clone().unwrap_or_default();
    match headers.inner().get(name) {
        Some(AMQPValue::LongString(text)) => text.to_string(),
        other => panic!("header {name}: {other:?}"),
    }
}

#[tokio::test]
async fn a_queue_gets_persistent_signed_messages_the_broker_confirms() {
    let broker = RabbitMq::start();
    let (_connection, channel) = broker.channel("orders").await;
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = amqp_webhook(&t, &format!("{}/%2f", broker.url("guest")), "", "orders").await;
    let shown = format!("amqp://127.0.0.1:{}/%2f", broker.port);
    assert_eq!(hook["url"], json!(shown), "the address without credentials");
    assert_eq!(hook["destination"], json!({"type": "amqp", "url": shown, "exchange": "", "routing_key": "orders"}));
    assert!(!hook.to_string().contains("guest"), "{hook}");

    t.publisher.publish(&work_order_event("wo_1")).await;
    let message = next(&channel, "orders").await;
    let body = &message.delivery.data;
    let secret = hook["signing_secret"].as_str().unwrap();
    assert!(weir::sign::verify(secret, body, &header(&message, "x-webhook-signature")), "signed");
    assert!(header(&message, "webhook-signature").starts_with("v1,"));
    let delivery_id = header(&message, "webhook-id");
    let properties = &message.delivery.properties;
    assert_eq!(properties.message_id().as_ref().map(|m| m.to_string()), Some(delivery_id.clone()));
    assert_eq!(*properties.delivery_mode(), Some(2), "persistent");
    assert_eq!(serde_json::from_slice::<Value>(body).unwrap()["action"], "work_order_created");
    let delivery = eventually("recorded", Duration::from_secs(10), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery_id}")).await.json();
        (d["status"] == "succeeded").then_some(d)
    })
    .await;
    let attempt = &delivery["attempts"][0];
    assert!(attempt["status_code"].is_null(), "{attempt}");
    assert_eq!(attempt["response_body"], "confirmed by the broker (the default exchange)");
}

#[tokio::test]
async fn unroutable_messages_and_wrong_credentials_are_failed_attempts() {
    let broker = RabbitMq::start();
    let weir =
        WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "300ms,300ms,300ms,300ms,1s,1s,1s,1s,1s,1s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = amqp_webhook(&t, &broker.url("guest"), "", "not-yet").await;
    let id = hook["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_1")).await;
    let failed = eventually("a failed attempt", Duration::from_secs(10), async || {
        t.admin.deliveries_of(id).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    assert!(
        failed["error"].as_str().unwrap().starts_with("unroutable: no queue is bound to routing key not-yet"),
        "{failed}"
    );
    // The queue appears: the retry is taken.
    let (_connection, channel) = broker.channel("not-yet").await;
    t.admin.settled(id, 1).await;
    assert_eq!(t.admin.deliveries_of(id).await[0]["status"], "succeeded");
    next(&channel, "not-yet").await;

    let wrong = amqp_webhook(&t, &broker.url("not-the-password"), "", "not-yet").await;
    let wrong_id = wrong["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_2")).await;
    let attempt = eventually("a refused connection", Duration::from_secs(15), async || {
        t.admin.deliveries_of(wrong_id).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    assert!(attempt["error"].as_str().unwrap().starts_with("connection failed"), "{attempt}");
    assert!(!attempt.to_string().contains("not-the-password"), "{attempt}");
}

#[tokio::test]
async fn a_broker_down_then_back_gets_every_delivery() {
    let mut broker = RabbitMq::start();
    let (connection, channel) = broker.channel("outage").await;
    let weir = WeirBuilder::shared()
        // About a minute of retries: RabbitMQ took over 20 s to start again beside the cluster pass.
        .env("WEIR_RETRY_SCHEDULE", &format!("500ms,500ms,1s,1s{}", ",2s".repeat(30)))
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = amqp_webhook(&t, &broker.url("guest"), "", "outage").await;
    let id = hook["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_0")).await;
    next(&channel, "outage").await;
    t.admin.settled(id, 1).await;
    drop((channel, connection));

    // The pooled connection dies with the broker; what is published meanwhile waits for it.
    broker.stop();
    for i in 1..=3 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    eventually("attempts failing while it is down", Duration::from_secs(20), async || {
        let all = t.admin.deliveries_of(id).await;
        all.iter()
            .any(|d| d["status"] == "pending" && d["attempts"].as_array().is_some_and(|a| !a.is_empty()))
            .then_some(())
    })
    .await;
    broker.restart();
    // The consumer declares its queue again as it reconnects (a node killed with -9 may come
    // back without a queue it declared a moment before: its messages are then unroutable).
    let (_connection, channel) = broker.channel("outage").await;
    let all = t.admin.settled(id, 4).await;
    assert!(all.iter().all(|d| d["status"] == "succeeded"), "{all:?}");
    let mut ids = std::collections::HashSet::new();
    while ids.len() < 3 {
        ids.insert(header(&next(&channel, "outage").await, "webhook-id"));
    }
    assert_eq!(ids.len(), 3, "the three published while it was down");
}

#[tokio::test]
async fn an_amqps_broker_gets_messages_over_tls_to_a_name_weir_trusts() {
    let certs = MutualTls::new();
    let (broker, tls_port) = RabbitMq::start_tls(&certs);
    let (_connection, channel) = broker.channel("secure").await;
    let ca = certs.ca_pem.display().to_string();
    let weir = WeirBuilder::shared().env("WEIR_EXTRA_CA", &ca).start().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = amqp_webhook(&t, &format!("amqps://guest:guest@localhost:{tls_port}"), "", "secure").await;
    assert_eq!(hook["url"], json!(format!("amqps://localhost:{tls_port}/%2f")), "{hook}");
    t.publisher.publish(&work_order_event("wo_1")).await;
    let message = next(&channel, "secure").await;
    let secret = hook["signing_secret"].as_str().unwrap();
    assert!(weir::sign::verify(secret, &message.delivery.data, &header(&message, "x-webhook-signature")));
    let id = hook["id"].as_str().unwrap();
    let delivery = &t.admin.settled(id, 1).await[0];
    assert_eq!(delivery["status"], "succeeded", "{delivery}");

    // A process that does not trust the broker's CA sends nothing to it.
    let untrusting = Weir::start_default().await;
    let t2 = untrusting.tenant(Plan::pro()).await;
    let hook = amqp_webhook(&t2, &format!("amqps://guest:guest@localhost:{tls_port}"), "", "secure").await;
    let id = hook["id"].as_str().unwrap();
    t2.publisher.publish(&work_order_event("wo_2")).await;
    let attempt = eventually("a refused handshake", Duration::from_secs(15), async || {
        t2.admin.deliveries_of(id).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    let error = attempt["error"].as_str().unwrap();
    assert!(error.starts_with("connection failed") && error.contains("certificate"), "{attempt}");
}
