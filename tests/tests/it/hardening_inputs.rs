//! What can never work is refused when saved, and what was unmetered is bounded (contract
//! §10 "Hardening"): test events on a budget in an id namespace of their own; destinations
//! whose values their protocols bound; `frame_ancestors` ports and wildcards; an SQS answer
//! without a `MessageId`; an operator's plan table merged key by key.

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::Receiver;
use crate::support::weir::{Weir, WeirBuilder, work_order_event};

#[tokio::test]
async fn test_events_are_bounded_per_webhook_and_per_organisation_and_not_counted_as_events() {
    let weir = Weir::start_default().await;
    let (t, other) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    let receiver = Receiver::start().await;
    let mut hooks = Vec::new();
    for _ in 0..7 {
        hooks.push(t.admin.create_webhook(&receiver.url, &["form_completed"]).await["id"].as_str().unwrap().to_owned());
    }
    let test = |id: &str| format!("/api/v2/webhooks/{id}/test");
    for _ in 0..10 {
        t.admin.post(&test(&hooks[0]), &json!({})).await.expect(202);
    }
    let refused = t.admin.post(&test(&hooks[0]), &json!({})).await;
    assert_eq!(refused.status, 429, "the eleventh in a minute to one webhook");
    assert_eq!(refused.error_code(), "rate_limited");
    assert!(refused.text().contains("webhook"), "{}", refused.text());
    let wait: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    // The organisation's 60: five more webhooks' ten, then the seventh's first is refused.
    for id in &hooks[1..6] {
        for _ in 0..10 {
            t.admin.post(&test(id), &json!({})).await.expect(202);
        }
    }
    let refused = t.admin.post(&test(&hooks[6]), &json!({})).await;
    assert_eq!(refused.status, 429, "the 61st from one organisation");
    assert!(refused.text().contains("organisation"), "{}", refused.text());
    // Another organisation's budget is its own.
    let theirs = other.admin.create_webhook(&receiver.url, &["form_completed"]).await;
    other.admin.post(&test(theirs["id"].as_str().unwrap()), &json!({})).await.expect(202);

    receiver.wait_for(61, Duration::from_secs(30)).await;
    let usage = t.admin.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(usage["events"]["used"], 0, "test events are not the plan's events: {usage}");
}

#[tokio::test]
async fn a_test_event_is_never_found_as_an_event_nor_makes_a_publish_a_duplicate() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    t.admin.post(&format!("/api/v2/webhooks/{id}/test"), &json!({})).await.expect(202);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let test_id = got[0].json()["id"].as_str().unwrap().to_owned();
    assert!(test_id.starts_with("evt_test_"), "a namespace of its own: {test_id}");
    assert_eq!(t.admin.get(&format!("/api/v2/events/{test_id}")).await.status, 404);
    let mut event = work_order_event("wo_1");
    event["id"] = json!(test_id);
    let refused = t.publisher.post("/api/v2/events", &event).await;
    assert_eq!(refused.status, 422, "no publisher may take a test event's id");
    assert_eq!(refused.error_fields(), ["id"]);
    event["id"] = json!("evt_real_1");
    t.publisher.post("/api/v2/events", &event).await.expect(202);
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(got[1].json()["id"], "evt_real_1", "delivered, not dropped as a duplicate");
}

/// The field a destination's `422` names.
async fn refused_field(t: &crate::support::weir::Tenant, body: Value) -> Vec<String> {
    let resp = t.admin.post("/api/v2/webhooks", &body).await;
    assert_eq!(resp.status, 422, "{body}: {}", resp.text());
    resp.error_fields()
}

#[tokio::test]
async fn destinations_that_can_never_work_are_refused_when_saved() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let actions = json!(["work_order_created"]);
    let amqp = |url: String, exchange: Option<&str>| {
        let mut destination = json!({"type": "amqp", "url": url, "routing_key": "q"});
        if let Some(exchange) = exchange {
            destination["exchange"] = json!(exchange);
        }
        json!({"subscribed_actions": actions, "destination": destination})
    };
    let long_vhost = format!("amqp://127.0.0.1:5672/{}", "v".repeat(256));
    assert_eq!(refused_field(&t, amqp(long_vhost, Some("x"))).await, ["destination.url"]);
    let long_user = format!("amqp://{}:p@127.0.0.1:5672/v", "u".repeat(256));
    assert_eq!(refused_field(&t, amqp(long_user, Some("x"))).await, ["destination.url"]);
    let long_exchange = "e".repeat(256);
    assert_eq!(
        refused_field(&t, amqp("amqp://127.0.0.1/v".into(), Some(&long_exchange))).await,
        ["destination.exchange"]
    );
    assert_eq!(refused_field(&t, amqp("amqp://127.0.0.1/v".into(), None)).await, ["destination.exchange"]);
    assert_eq!(refused_field(&t, amqp("amqp://127.0.0.1:0/v".into(), Some(""))).await, ["destination.url"]);
    let nats = |url: String| json!({"subscribed_actions": actions, "destination": {"type": "nats", "url": url, "subject": "s"}});
    assert_eq!(refused_field(&t, nats("nats://127.0.0.1:0".into())).await, ["destination.url"]);
    let long_name = format!("nats://{}@127.0.0.1:4222", "u".repeat(70_000));
    assert_eq!(refused_field(&t, nats(long_name)).await, ["destination.url"]);
    let http = json!({"url": "http://127.0.0.1:0/hook", "subscribed_actions": actions});
    assert_eq!(refused_field(&t, http).await, ["url"]);
    // `""` is the default exchange, and within the bounds all is taken.
    let within = amqp(format!("amqp://{}:p@127.0.0.1:5672/{}", "u".repeat(255), "v".repeat(255)), Some(""));
    t.admin.post("/api/v2/webhooks", &within).await.expect(201);
}

#[tokio::test]
async fn frame_ancestors_take_real_ports_and_no_wildcard_over_a_public_suffix() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    for origin in [
        "https://app.example:0",
        "https://app.example:99999",
        "https://app.example:08080",
        "https://*.com",
        "https://*.co.uk",
        "https://*.github.io",
    ] {
        let body = json!({"frame_ancestors": ["https://ok.example", origin]});
        let resp = t.admin.post("/api/v2/portal_links", &body).await;
        assert_eq!(resp.status, 422, "{origin}");
        assert_eq!(resp.error_fields(), ["frame_ancestors[1]"], "{origin}");
    }
    let fine =
        json!({"frame_ancestors": ["https://app.example:8080", "https://*.example.com", "https://*.acme.co.uk"]});
    t.admin.post("/api/v2/portal_links", &fine).await.expect(201);
}

#[tokio::test]
async fn an_sqs_answer_without_a_message_id_is_a_failed_attempt() {
    // An endpoint that answers 200 and nothing else (a proxy, a misconfigured emulator).
    let impostor = Receiver::start().await;
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "10s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let endpoint = format!("http://{}", impostor.addr);
    let body = json!({"subscribed_actions": ["work_order_created"], "destination": {"type": "sqs",
        "queue_url": format!("{endpoint}/123456789012/orders"), "region": "us-east-1",
        "access_key_id": "AKID", "secret_access_key": "SECRET", "endpoint_url": endpoint}});
    let hook = t.admin.post("/api/v2/webhooks", &body).await.expect(201).json();
    t.publisher.publish(&work_order_event("wo_1")).await;
    let id = hook["id"].as_str().unwrap();
    let attempt = eventually("an attempt", Duration::from_secs(10), async || {
        t.admin.deliveries_of(id).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    let error = attempt["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("AWS answered 200 without a MessageId"), "{attempt}");
    assert_eq!(impostor.count(), 1, "the request was made");
    assert_eq!(t.admin.deliveries_of(id).await[0]["status"], "pending", "and will be retried");
}

#[tokio::test]
async fn a_pro_table_that_sets_only_the_documented_limits_keeps_pros_api() {
    let weir = WeirBuilder::shared().config_file("[plans.pro]\nevents_per_day = 1000\n").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let usage = t.admin.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(usage["events"]["limit"], 1000, "{usage}");
    assert_eq!(usage["webhooks"]["limit"], 500, "the shipped table's other keys stay: {usage}");
    t.publisher.publish(&work_order_event("wo_1")).await;
}
