//! Kafka destinations against a Kafka-protocol broker (tansu), read back by an independent
//! consumer (confluent-kafka): each delivery one record whose value is the body byte for byte
//! and whose headers carry a signature the Standard Webhooks libraries verify; keyed by the
//! event's subject, so an ordered webhook's subjects each stay on one partition in publish
//! order; the attempt records the partition and offset. A missing topic and refused
//! credentials are failed attempts in the broker's words; a broker cut off and back loses
//! nothing and writes nothing twice; the address rule
//! holds for the bootstrap servers and for every broker the metadata names; a replay goes
//! into the topic; a process killed while producing loses nothing (its heir produces the
//! rest); a frozen broker holds no HTTP webhook beside it and gets its records once it thaws.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::python;
use crate::support::receiver::Receiver;
use crate::support::tansu::{Options, Relay, Tansu};
use crate::support::weir::{Tenant, Weir, WeirBuilder, work_order_event};

async fn kafka_webhook(t: &Tenant, destination: Value) -> Value {
    let body = json!({"subscribed_actions": ["work_order_created"], "destination": destination});
    t.admin.post("/api/v2/webhooks", &body).await.expect(201).json()
}

/// The first attempt of the webhook's first delivery, once there is one.
async fn first_attempt(t: &Tenant, webhook: &Value) -> Value {
    let id = webhook["id"].as_str().unwrap().to_owned();
    eventually("an attempt", Duration::from_secs(20), async || {
        t.admin.deliveries_of(&id).await.first()?["attempts"].as_array()?.first().cloned()
    })
    .await
}

/// What the Standard Webhooks libraries say of a record's signature.
fn verdict(secret: &str, record: &Value) -> Value {
    let input = json!({"headers": record["headers"], "body": record["value"]}).to_string();
    serde_json::from_str(&python::run("verify.py", &[secret], input.as_bytes())).unwrap()
}

#[tokio::test]
async fn a_topic_gets_each_delivery_as_a_signed_record_and_each_subject_stays_on_one_partition_in_order() {
    let tansu = Tansu::start();
    tansu.create_topic("orders", 3);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook =
        kafka_webhook(&t, json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "orders"})).await;
    let id = hook["id"].as_str().unwrap().to_owned();
    assert_eq!(hook["destination"]["key"], "subject", "the default: {hook}");
    assert_eq!(hook["destination"]["tls"], false, "{hook}");
    t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"ordering": "subject"})).await.expect(200);
    let missing =
        kafka_webhook(&t, json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "nowhere"})).await;

    let mut published: Vec<(String, String)> = Vec::new();
    for i in 0..12 {
        let subject = format!("wo_{}", i % 4);
        published.push((subject.clone(), t.publisher.publish(&work_order_event(&subject)).await));
    }
    let records = tansu.read("orders", 12);
    assert_eq!(records.len(), 12, "{records:?}");
    let secret = hook["signing_secret"].as_str().unwrap();
    let mut partitions: HashMap<String, i64> = HashMap::new();
    let mut order: HashMap<String, Vec<(i64, String)>> = HashMap::new();
    for record in &records {
        let envelope: Value = serde_json::from_str(record["value"].as_str().unwrap()).expect("the body, as sent");
        let subject = envelope["subject"]["id"].as_str().unwrap().to_owned();
        assert_eq!(record["key"], subject.as_str(), "keyed by subject: {record}");
        let partition = record["partition"].as_i64().unwrap();
        assert_eq!(*partitions.entry(subject.clone()).or_insert(partition), partition, "one partition per subject");
        let event = envelope["id"].as_str().unwrap().to_owned();
        order.entry(subject).or_default().push((record["offset"].as_i64().unwrap(), event));
        assert_eq!(record["headers"]["content-type"], "application/json", "{record}");
        assert_eq!(verdict(secret, record), json!({"standardwebhooks": "ok", "svix": "ok"}), "{record}");
    }
    assert!(partitions.values().collect::<HashSet<_>>().len() > 1, "subjects spread: {partitions:?}");
    for (subject, mut events) in order {
        events.sort();
        let written: Vec<&String> = events.iter().map(|(_, e)| e).collect();
        let sent: Vec<&String> = published.iter().filter(|(s, _)| *s == subject).map(|(_, e)| e).collect();
        assert_eq!(written, sent, "{subject} in publish order");
    }
    let recorded = t.admin.settled(&id, 12).await;
    assert!(recorded.iter().all(|d| d["status"] == "succeeded"), "{recorded:?}");
    for delivery in &recorded {
        let said = delivery["attempts"][0]["response_body"].as_str().unwrap();
        let sent = delivery["request"]["body"].as_str().unwrap();
        let record = records.iter().find(|r| r["value"] == sent).expect("its body byte for byte");
        assert_eq!(said, format!("partition {} offset {}", record["partition"], record["offset"]), "{delivery}");
    }

    let failed = first_attempt(&t, &missing).await;
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("UNKNOWN_TOPIC_OR_PARTITION") && error.contains("nowhere"), "{failed}");
}

#[tokio::test]
async fn records_go_by_event_id_or_without_a_key_when_the_destination_says() {
    let tansu = Tansu::start();
    tansu.create_topic("keys", 2);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    for key in ["event", "none"] {
        kafka_webhook(&t, json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "keys", "key": key}))
            .await;
    }
    let event = t.publisher.publish(&work_order_event("wo_1")).await;
    let records = tansu.read("keys", 2);
    let keys: HashSet<Option<&str>> = records.iter().map(|r| r["key"].as_str()).collect();
    assert_eq!(keys, HashSet::from([Some(event.as_str()), None]), "{records:?}");
}

// Multi-threaded: the relay's tasks run while the consumer (a child process) reads through it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_cut_off_and_back_loses_nothing_and_writes_nothing_twice() {
    // Weir reaches the broker only through the relay: the metadata names the relay too.
    let port = crate::support::free_port();
    let tansu = Tansu::start_with(Options { advertised: Some(format!("127.0.0.1:{port}")), ..Options::default() });
    tansu.create_topic("cut", 1);
    let relay = Relay::start_on(port, &tansu.address()).await;
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = kafka_webhook(
        &t,
        json!({"type": "kafka", "bootstrap_servers": format!("127.0.0.1:{port}"),
        "topic": "cut"}),
    )
    .await;
    let id = hook["id"].as_str().unwrap().to_owned();
    for i in 0..5 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    t.admin.settled(&id, 5).await;
    relay.cut();
    for i in 5..10 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let refused = eventually("a failed attempt while cut off", Duration::from_secs(20), async || {
        let all = t.admin.deliveries_of(&id).await;
        all.iter().find_map(|d| d["attempts"].as_array()?.iter().find(|a| a["error"].is_string()).cloned())
    })
    .await;
    assert!(refused["error"].as_str().unwrap().contains("connection failed"), "{refused}");
    relay.restore().await;
    let recorded = t.admin.settled(&id, 10).await;
    assert!(recorded.iter().all(|d| d["status"] == "succeeded"), "{recorded:?}");
    let records = tansu.read("cut", 10);
    let ids: HashSet<&str> = records.iter().map(|r| r["headers"]["webhook-id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 10, "every delivery");
    assert_eq!(tansu.held("cut"), 10, "none twice");
}

#[tokio::test]
async fn refused_credentials_are_a_failed_attempt_in_the_brokers_words_and_never_shown() {
    let tansu = Tansu::start_with(Options { authentication: true, ..Options::default() });
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let signed = |mechanism: &str| {
        json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "orders",
            "sasl": {"mechanism": mechanism, "username": "weir", "password": "wrong-pass-word"}})
    };
    let scram = kafka_webhook(&t, signed("scram-sha-512")).await;
    assert_eq!(scram["destination"]["sasl"], json!({"mechanism": "scram-sha-512", "username": "weir"}));
    assert!(!scram.to_string().contains("wrong-pass-word"), "{scram}");
    let plain = kafka_webhook(&t, signed("plain")).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    // SCRAM: the broker's own words (librdkafka reads the same `e=unknown-user`).
    let failed = first_attempt(&t, &scram).await;
    assert_eq!(failed["error"], "authentication failed: unknown-user", "{failed}");
    assert!(failed["status_code"].is_null(), "{failed}");
    // PLAIN: this broker offers SCRAM-SHA-512 only and closes the connection at the
    // handshake (as it does to librdkafka): a failed attempt all the same.
    let failed = first_attempt(&t, &plain).await;
    assert!(failed["error"].as_str().unwrap().contains("the connection closed"), "{failed}");
    let shown = t.admin.get(&format!("/api/v2/webhooks/{}", scram["id"].as_str().unwrap())).await.expect(200).text();
    assert!(!shown.contains("wrong-pass-word"), "{shown}");
}

#[tokio::test]
async fn the_address_rule_holds_for_every_bootstrap_server_and_every_broker_the_metadata_names() {
    // Only 127.0.0.1 is exempt here: 127.0.0.2 stands for an address the rule refuses.
    let tansu = Tansu::start_with(Options { advertised: Some("127.0.0.2:9".into()), ..Options::default() });
    tansu.create_topic("named", 1);
    let weir = WeirBuilder::shared().env("WEIR_ALLOW_PRIVATE_TARGETS", "127.0.0.1/32").start().await;
    let t = weir.tenant(Plan::pro()).await;
    for servers in ["127.0.0.2:9092".to_owned(), format!("{},127.0.0.2:9092", tansu.address())] {
        let body = json!({"subscribed_actions": ["work_order_created"],
            "destination": {"type": "kafka", "bootstrap_servers": servers, "topic": "named"}});
        let refused = t.admin.post("/api/v2/webhooks", &body).await.expect(422).json();
        assert!(refused.to_string().contains("destination.bootstrap_servers"), "{refused}");
    }
    let hook =
        kafka_webhook(&t, json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "named"})).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let failed = first_attempt(&t, &hook).await;
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("blocked by the URL rule") && error.contains("127.0.0.2"), "{failed}");
}

#[tokio::test]
async fn events_published_before_the_webhook_are_replayed_into_the_topic() {
    let tansu = Tansu::start();
    tansu.create_topic("replayed", 1);
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let mut published = Vec::new();
    for wo in ["wo_1", "wo_2"] {
        published.push(t.publisher.publish(&work_order_event(wo)).await);
    }
    let hook =
        kafka_webhook(&t, json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "replayed"})).await;
    let id = hook["id"].as_str().unwrap();
    let since = weir::time::format_millis(weir::time::now_millis() - 60_000);
    let replayed = t.admin.post(&format!("/api/v2/webhooks/{id}/replay"), &json!({"since": since})).await.expect(202);
    assert_eq!(replayed.json()["count"], 2, "{}", replayed.text());
    let records = tansu.read("replayed", 2);
    let mut ids: Vec<String> = records
        .iter()
        .map(|r| {
            serde_json::from_str::<Value>(r["value"].as_str().unwrap()).unwrap()["id"].as_str().unwrap().to_owned()
        })
        .collect();
    ids.sort();
    published.sort();
    assert_eq!(ids, published, "both events");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_killed_while_producing_loses_nothing_and_a_new_one_finishes_the_work() {
    let tansu = Tansu::start();
    tansu.create_topic("crash", 2);
    let builder = WeirBuilder::shared().env("WEIR_TAKEOVER_AFTER", "2s");
    // Publishing goes through an API-only node, so only the child process produces.
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    kafka_webhook(&t, json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "crash"})).await;
    let mut published = HashSet::new();
    for i in 0..300 {
        published.insert(t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await);
    }
    let mut doomed = builder.spawn();
    doomed.wait_ready().await;
    eventually("some records produced", Duration::from_secs(60), async || (tansu.held("crash") >= 20).then_some(()))
        .await;
    doomed.signal("KILL");
    let before = tansu.held("crash");
    assert!(before < 300, "killed mid-run ({before} produced)");
    let heir = builder.spawn();
    heir.wait_ready().await;
    // Each event at least once: a record the killed process had sent but not yet recorded is
    // produced again by its heir (under a new producer id, so the broker keeps both).
    let missing = eventually("every event produced", Duration::from_secs(60), async || {
        let held = tansu.held("crash");
        let events: HashSet<String> = (held >= 300)
            .then(|| tansu.read("crash", held))?
            .iter()
            .map(|r| serde_json::from_str::<Value>(r["value"].as_str()?).ok()?["id"].as_str().map(str::to_owned))
            .collect::<Option<_>>()?;
        (events.len() >= published.len()).then(|| published.difference(&events).count())
    })
    .await;
    assert_eq!(missing, 0, "every event at least once");
    drop(heir);
}

#[tokio::test]
async fn a_frozen_broker_holds_no_http_webhook_beside_it_and_gets_its_records_once_it_thaws() {
    let tansu = Tansu::start();
    tansu.create_topic("frozen", 1);
    let weir = WeirBuilder::shared()
        .env("WEIR_DELIVERY_TIMEOUT", "2s")
        .env("WEIR_RETRY_SCHEDULE", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let stuck =
        kafka_webhook(&t, json!({"type": "kafka", "bootstrap_servers": tansu.address(), "topic": "frozen"})).await;
    let http = Receiver::start().await;
    t.admin.create_webhook(&http.url, &["work_order_created"]).await;
    // Frozen: it accepts connections (the kernel does) and answers nothing.
    tansu.freeze(true);
    let started = std::time::Instant::now();
    for wo in ["wo_1", "wo_2", "wo_3"] {
        t.publisher.publish(&work_order_event(wo)).await;
    }
    http.wait_for(3, Duration::from_secs(10)).await;
    assert!(started.elapsed() < Duration::from_secs(2), "the HTTP webhook was not held by the frozen broker");
    let id = stuck["id"].as_str().unwrap().to_owned();
    let failed = eventually("a timed-out attempt", Duration::from_secs(20), async || {
        let all = t.admin.deliveries_of(&id).await;
        all.iter().find_map(|d| d["attempts"].as_array()?.iter().find(|a| a["error"].is_string()).cloned())
    })
    .await;
    assert!(failed["error"].as_str().unwrap().contains("timed out"), "{failed}");
    tansu.freeze(false);
    let recorded = t.admin.settled(&id, 3).await;
    assert!(recorded.iter().all(|d| d["status"] == "succeeded"), "{recorded:?}");
    let records = tansu.read("frozen", 3);
    let ids: HashSet<&str> = records.iter().map(|r| r["headers"]["webhook-id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3, "every delivery: {records:?}");
}
