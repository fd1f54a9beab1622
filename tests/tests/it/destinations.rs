//! Destinations beyond HTTP (contract §9, issue 56), against a real `nats-server -js`: a
//! NATS JetStream subject gets each delivery signed as an HTTP endpoint would, acknowledged
//! by its stream; no stream, a broker down, wrong credentials are failed attempts retried
//! as HTTP's are; credentials are never shown; a hanging broker delays no HTTP webhook.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use async_nats::jetstream;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::nats::NatsServer;
use crate::support::receiver::Receiver;
use crate::support::weir::{Tenant, Weir, WeirBuilder, work_order_event};
use crate::support::{eventually, free_port};

/// A stream holding `subjects`.
pub(crate) async fn stream(js: &jetstream::Context, name: &str, subjects: &str) -> jetstream::stream::Stream {
    js.create_stream(jetstream::stream::Config {
        name: name.to_owned(),
        subjects: vec![subjects.to_owned()],
        ..Default::default()
    })
    .await
    .expect("create the stream")
}

/// `n` messages of `stream` (fewer only if they do not come within 10 s), read by a consumer
/// of its own.
pub(crate) async fn messages(stream: &jetstream::stream::Stream, n: usize) -> Vec<jetstream::Message> {
    let consumer =
        stream.create_consumer(jetstream::consumer::pull::Config { ..Default::default() }).await.expect("a consumer");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut out = Vec::new();
    while out.len() < n && Instant::now() < deadline {
        let mut batch = consumer
            .batch()
            .max_messages(n - out.len())
            .expires(Duration::from_secs(1))
            .messages()
            .await
            .expect("fetch");
        while let Some(message) = batch.next().await {
            out.push(message.expect("a message"));
        }
    }
    out
}

/// How many messages `name` holds.
pub(crate) async fn held(js: &jetstream::Context, name: &str) -> u64 {
    let mut stream = js.get_stream(name).await.expect("the stream");
    stream.info().await.map(|i| i.state.messages).unwrap_or(0)
}

fn header(message: &jetstream::Message, name: &str) -> String {
    message.headers.as_ref().and_then(|h| h.get(name)).map(|v| v.as_str().to_owned()).unwrap_or_default()
}

async fn nats_webhook(t: &Tenant, url: &str, subject: &str) -> Value {
    let body = json!({
        "subscribed_actions": ["work_order_created"],
        "destination": {"type": "nats", "url": url, "subject": subject},
    });
    t.admin.post("/api/v2/webhooks", &body).await.expect(201).json()
}

#[tokio::test]
async fn a_nats_subject_gets_signed_deliveries_its_stream_acknowledges() {
    let nats = NatsServer::start(Some(("weir", "s3cret-pass")));
    let js = nats.client().await;
    let orders = stream(&js, "ORDERS", "orders.>").await;
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = nats_webhook(&t, &nats.url(Some(("weir", "s3cret-pass"))), "orders.created").await;
    let id = hook["id"].as_str().unwrap();
    assert_eq!(hook["url"], json!(nats.url(None)), "the address without credentials");
    assert_eq!(hook["destination"], json!({"type": "nats", "url": nats.url(None), "subject": "orders.created"}));
    let read = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).text();
    assert!(!read.contains("s3cret-pass"), "credentials are never shown: {read}");

    t.publisher.publish(&work_order_event("wo_1")).await;
    let got = messages(&orders, 1).await;
    assert_eq!(got.len(), 1);
    let message = &got[0];
    assert_eq!(message.subject.as_str(), "orders.created");
    let secret = hook["signing_secret"].as_str().unwrap();
    assert!(weir::sign::verify(secret, &message.payload, &header(message, "x-webhook-signature")), "signed");
    assert!(header(message, "webhook-signature").starts_with("v1,"), "Standard Webhooks headers too");
    let body: Value = serde_json::from_slice(&message.payload).unwrap();
    assert_eq!(body["action"], "work_order_created");
    let delivery_id = header(message, "webhook-id");
    assert!(delivery_id.starts_with("dlv_"));
    assert_eq!(header(message, "Nats-Msg-Id"), delivery_id, "the stream drops a retried duplicate");

    let delivery = eventually("recorded", Duration::from_secs(10), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery_id}")).await.json();
        (d["status"] == "succeeded").then_some(d)
    })
    .await;
    let attempt = &delivery["attempts"][0];
    assert!(attempt["status_code"].is_null(), "a broker's answer has no status code: {attempt}");
    assert!(attempt["response_body"].as_str().unwrap().starts_with("PubAck stream ORDERS seq 1"), "{attempt}");
    assert!(!delivery.to_string().contains("s3cret-pass"));
}

#[tokio::test]
async fn no_stream_and_a_broker_down_are_failed_attempts_retried_until_it_takes_them() {
    let mut nats = NatsServer::start(None);
    let weir = WeirBuilder::shared()
        .env("WEIR_RETRY_SCHEDULE", "300ms,300ms,300ms,300ms,300ms,1s,1s,1s,1s,1s,1s,1s,1s,1s")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = nats_webhook(&t, &nats.url(None), "late.orders").await;
    let id = hook["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_1")).await;
    let failed = eventually("a failed attempt", Duration::from_secs(10), async || {
        let all = t.admin.deliveries_of(id).await;
        let attempts = all.first()?["attempts"].as_array()?.clone();
        attempts.first().cloned()
    })
    .await;
    assert_eq!(failed["error"], "no stream holds subject late.orders", "{failed}");
    let js = nats.client().await;
    let late = stream(&js, "LATE", "late.>").await;
    t.admin.settled(id, 1).await;

    // The broker goes away; what is published meanwhile waits and arrives once it is back.
    nats.stop();
    for i in 2..=4 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    eventually("attempts failing while it is down", Duration::from_secs(15), async || {
        let all = t.admin.deliveries_of(id).await;
        all.iter()
            .any(|d| d["attempts"].as_array().is_some_and(|a| !a.is_empty()) && d["status"] == "pending")
            .then_some(())
    })
    .await;
    nats.restart();
    let all = t.admin.settled(id, 4).await;
    assert!(all.iter().all(|d| d["status"] == "succeeded"), "{all:?}");
    let got = messages(&late, 4).await;
    let ids: HashSet<String> = got.iter().map(|m| header(m, "webhook-id")).collect();
    assert_eq!(ids.len(), 4, "every delivery arrived");
    assert_eq!(held(&js, "LATE").await, 4, "and none twice (the stream's duplicate window)");
}

#[tokio::test]
async fn bad_destinations_are_refused_and_wrong_credentials_fail_attempts() {
    let nats = NatsServer::start(Some(("weir", "right")));
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    for (destination, field) in [
        (json!({"type": "nats", "url": nats.url(None), "subject": "orders.*"}), "destination.subject"),
        (json!({"type": "nats", "url": "http://127.0.0.1:1", "subject": "a"}), "destination.url"),
        (json!({"type": "nats", "subject": "a"}), "destination.url"),
        (json!({"type": "pigeon"}), "destination.type"),
        (json!("nats://127.0.0.1"), "destination"),
    ] {
        let body = json!({"subscribed_actions": ["work_order_created"], "destination": destination});
        let refused = t.admin.post("/api/v2/webhooks", &body).await.expect(422).json();
        assert_eq!(refused["error"]["details"][0]["field"], field, "{refused}");
    }
    let both = json!({"url": "http://127.0.0.1:9/x", "subscribed_actions": ["work_order_created"],
        "destination": {"type": "nats", "url": nats.url(None), "subject": "a"}});
    assert_eq!(t.admin.post("/api/v2/webhooks", &both).await.expect(422).json()["error"]["details"][0]["field"], "url");
    assert!(t.admin.get("/api/v2/webhooks").await.json()["data"].as_array().unwrap().is_empty(), "nothing stored");

    // Without the loopback exemption, a broker on a private address is refused as a URL is.
    let strict = WeirBuilder::shared().without("WEIR_ALLOW_PRIVATE_TARGETS").start().await;
    let s = strict.tenant(Plan::pro()).await;
    let body = json!({"subscribed_actions": ["work_order_created"],
        "destination": {"type": "nats", "url": nats.url(None), "subject": "a"}});
    let refused = s.admin.post("/api/v2/webhooks", &body).await.expect(422).json();
    assert_eq!(refused["error"]["details"][0]["field"], "destination.url", "{refused}");
    assert!(refused.to_string().contains("not a public address"), "{refused}");
    // An AWS endpoint on a private address: the field that names it.
    let sqs = json!({"type": "sqs", "queue_url": "http://127.0.0.1:5000/123456789012/q", "region": "us-east-1",
        "access_key_id": "AKIDEXAMPLE", "secret_access_key": "secret", "endpoint_url": "http://127.0.0.1:5000"});
    let body = json!({"subscribed_actions": ["work_order_created"], "destination": sqs});
    let refused = s.admin.post("/api/v2/webhooks", &body).await.expect(422).json();
    assert_eq!(refused["error"]["details"][0]["field"], "destination.endpoint_url", "{refused}");

    let wrong = nats_webhook(&t, &nats.url(Some(("weir", "wrong"))), "orders.created").await;
    let id = wrong["id"].as_str().unwrap();
    t.publisher.publish(&work_order_event("wo_1")).await;
    let attempt = eventually("a failed attempt", Duration::from_secs(10), async || {
        t.admin.deliveries_of(id).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await;
    let error = attempt["error"].as_str().unwrap().to_lowercase();
    assert!(error.starts_with("connection failed") && error.contains("authorization"), "{attempt}");
    assert!(!attempt.to_string().contains("wrong"), "the password is not in the attempt: {attempt}");
}

#[tokio::test]
async fn a_hanging_broker_delays_no_http_webhook() {
    // A "broker" that takes connections and never says a word.
    let silent = std::net::TcpListener::bind(("127.0.0.1", free_port())).unwrap();
    let port = silent.local_addr().unwrap().port();
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let stuck = nats_webhook(&t, &format!("nats://127.0.0.1:{port}"), "orders.created").await;
    for i in 0..10 {
        let published = Instant::now();
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
        receiver.wait_for(i + 1, Duration::from_secs(5)).await;
        assert!(published.elapsed() < Duration::from_secs(2), "event {i} took {:?}", published.elapsed());
    }
    let attempt = eventually("the hanging broker's attempt failed", Duration::from_secs(15), async || {
        let all = t.admin.deliveries_of(stuck["id"].as_str().unwrap()).await;
        all.iter().find_map(|d| d["attempts"].as_array()?.first().cloned())
    })
    .await;
    assert!(
        attempt["error"].as_str().unwrap().contains("connection failed")
            || attempt["error"].as_str().unwrap().contains("timed out"),
        "{attempt}"
    );
    drop(silent);
}

#[tokio::test]
async fn settings_and_the_api_keep_a_destinations_credentials_when_it_is_sent_back_as_shown() {
    use crate::settings::{PASSWORD, http_sign_in, user};
    let nats = NatsServer::start(Some(("weir", "form-pass")));
    let js = nats.client().await;
    let forms = stream(&js, "FORMS", "forms.>").await;
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "admin@example.com", true).await;
    let http = weir.http();
    let (cookie, csrf) = http_sign_in(&http, "admin@example.com", PASSWORD).await.1.unwrap();
    let server = nats.url(Some(("weir", "form-pass")));
    let form = |name: &'static str, server: String| {
        vec![
            ("_csrf", csrf.clone()),
            ("name", name.to_owned()),
            ("subscribed_actions", "work_order_created".to_owned()),
            ("destination_type", "nats".to_owned()),
            ("destination_url", server),
            ("destination_subject", "forms.created".to_owned()),
        ]
    };
    let pairs = form("To the bus", server);
    let sent: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let created = http.post("/settings/webhooks").header("cookie", &cookie).form(&sent).send().await;
    assert_eq!(created.status, 303, "{}", created.text());
    let hook = t.admin.get("/api/v2/webhooks").await.json()["data"][0].clone();
    assert_eq!(hook["destination"]["subject"], "forms.created", "{hook}");
    let id = hook["id"].as_str().unwrap();
    let page = http.get(&format!("/settings/webhooks/{id}")).header("cookie", &cookie).send().await.expect(200).text();
    assert!(
        page.contains(&format!(r#"value="{}""#, nats.url(None))) && !page.contains("form-pass"),
        "shown without credentials"
    );
    // Saved again as shown (no password typed): the stored credentials stay.
    let pairs = form("Renamed", nats.url(None));
    let sent: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let saved = http.post(&format!("/settings/webhooks/{id}")).header("cookie", &cookie).form(&sent).send().await;
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(t.admin.get(&format!("/api/v2/webhooks/{id}")).await.json()["name"], "Renamed");
    t.publisher.publish(&work_order_event("wo_1")).await;
    assert_eq!(messages(&forms, 1).await.len(), 1, "delivered with the kept credentials");
    // Through the API alike: the destination PATCHed back as it reads keeps its credentials.
    let read = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json();
    let patch = json!({"name": "Renamed again", "destination": read["destination"]});
    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &patch).await.expect(200);
    t.publisher.publish(&work_order_event("wo_2")).await;
    assert_eq!(messages(&forms, 2).await.len(), 2, "delivered with the kept credentials");
}

#[tokio::test]
async fn a_broker_attempt_is_a_messaging_span_and_counted_by_kind() {
    use crate::support::otlp::Collector;
    const PRODUCER: i64 = 4;
    let nats = NatsServer::start(None);
    let js = nats.client().await;
    stream(&js, "TRACED", "traced.>").await;
    let collector = Collector::start();
    let weir = WeirBuilder::shared()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint())
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = nats_webhook(&t, &nats.url(None), "traced.orders").await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    t.admin.settled(hook["id"].as_str().unwrap(), 1).await;
    let span = collector.span("the attempt span", |s| s["kind"] == PRODUCER).await;
    assert_eq!(span["name"], "publish traced.orders", "{span}");
    assert_eq!(span["attributes"]["messaging.system"], "nats");
    assert_eq!(span["attributes"]["messaging.destination.name"], "traced.orders");
    assert!(span["attributes"]["http.response.status_code"].is_null(), "{span}");
    let metrics = weir.http().get("/metrics").send().await.text();
    assert!(
        metrics.contains("weir_attempts_total{result=\"success\",class=\"ack\",destination=\"nats\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn test_events_and_replays_reach_a_broker_as_any_delivery() {
    let nats = NatsServer::start(None);
    let js = nats.client().await;
    let replays = stream(&js, "REPLAYS", "replays.>").await;
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    // Events published before the webhook exists, then replayed into the stream.
    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let hook = nats_webhook(&t, &nats.url(None), "replays.orders").await;
    let id = hook["id"].as_str().unwrap();
    let since = weir::time::format_millis(weir::time::now_millis() - 60_000);
    let replayed = t.admin.post(&format!("/api/v2/webhooks/{id}/replay"), &json!({"since": since})).await.expect(202);
    assert_eq!(replayed.json()["count"], 3, "{}", replayed.text());
    let queued = t.admin.post(&format!("/api/v2/webhooks/{id}/test"), &json!({})).await.expect(202).json();
    let got = messages(&replays, 4).await;
    assert_eq!(got.len(), 4, "three replayed events and a test event");
    let bodies: Vec<Value> = got.iter().map(|m| serde_json::from_slice(&m.payload).unwrap()).collect();
    assert_eq!(bodies.iter().filter(|b| b["test"] == true).count(), 1, "{bodies:?}");
    let test = got.iter().find(|m| header(m, "webhook-id") == queued["delivery_id"].as_str().unwrap());
    assert!(test.is_some(), "the test delivery's id travels as with HTTP");
    let secret = hook["signing_secret"].as_str().unwrap();
    assert!(got.iter().all(|m| weir::sign::verify(secret, &m.payload, &header(m, "x-webhook-signature"))));
}

#[tokio::test]
async fn a_killed_process_loses_nothing_sent_to_a_broker_and_the_stream_keeps_each_once() {
    let nats = NatsServer::start(None);
    let js = nats.client().await;
    let crashes = stream(&js, "CRASH", "crash.>").await;
    let builder = WeirBuilder::shared().env("WEIR_TAKEOVER_AFTER", "2s").env("WEIR_MAX_IN_FLIGHT_PER_WEBHOOK", "2");
    // Publishing goes through an API-only node, so only the child process delivers.
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    // 50 deliveries a second: the kill lands mid-run whatever the machine's speed.
    let body = json!({"subscribed_actions": ["work_order_created"], "rate_limit": 50,
        "destination": {"type": "nats", "url": nats.url(None), "subject": "crash.orders"}});
    t.admin.post("/api/v2/webhooks", &body).await.expect(201);
    for i in 0..300 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let mut doomed = builder.spawn();
    doomed.wait_ready().await;
    eventually("some delivered", Duration::from_secs(30), async || (held(&js, "CRASH").await >= 20).then_some(()))
        .await;
    doomed.signal("KILL");
    let before = held(&js, "CRASH").await;
    assert!(before < 300, "killed mid-run ({before} in the stream)");
    let heir = builder.spawn();
    heir.wait_ready().await;
    eventually("every delivery in the stream", Duration::from_secs(90), async || {
        (held(&js, "CRASH").await >= 300).then_some(())
    })
    .await;
    let got = messages(&crashes, 300).await;
    let ids: HashSet<String> = got.iter().map(|m| header(m, "webhook-id")).collect();
    assert_eq!(ids.len(), 300, "every delivery");
    assert_eq!(
        held(&js, "CRASH").await,
        300,
        "each once: a resent message carries its delivery id and the stream drops it"
    );
    let subjects: HashSet<String> = got
        .iter()
        .map(|m| serde_json::from_slice::<Value>(&m.payload).unwrap()["subject"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(subjects.len(), 300, "every event");
}
