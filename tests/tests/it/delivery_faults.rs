//! Delivery under faults: slow endpoints, several processes, crashes, lost consumer groups,
//! DNS answers that change, HTTPS with a private CA.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Received, Receiver, Reply};
use crate::support::redis::RedisServer;
use crate::support::tls::TestCa;
use crate::support::weir::{WeirBuilder, work_order_event};

fn defect_event(id: &str) -> serde_json::Value {
    json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": id}, "defect": {"id": id}})
}

#[tokio::test]
async fn a_hanging_endpoint_never_delays_another_webhook() {
    let weir = WeirBuilder::shared()
        .env("WEIR_MAX_IN_FLIGHT_PER_WEBHOOK", "2")
        .env("WEIR_WORKER_CONCURRENCY", "8")
        .env("WEIR_DELIVERY_TIMEOUT", "60s")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let slow = Receiver::replying(Reply::Hang).await;
    let fast = Receiver::start().await;
    let slow_hook = t.admin.create_webhook(&slow.url, &["work_order_created"]).await;
    t.admin.create_webhook(&fast.url, &["defect_created"]).await;
    for i in 0..30 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    for i in 0..5 {
        t.publisher.publish(&defect_event(&format!("d_{i}"))).await;
    }
    // Without per-webhook caps the 30 hanging deliveries would hold all 8 workers for 60s.
    fast.wait_for(5, Duration::from_secs(20)).await;
    assert!((1..=2).contains(&slow.count()), "the hanging endpoint holds at most its cap of workers");
    let waiting = t.admin.deliveries_of(slow_hook["id"].as_str().unwrap()).await;
    assert_eq!(waiting.len(), 30);
    assert!(waiting.iter().all(|d| d["status"] == "pending"), "nothing of the slow webhook is lost");
}

#[tokio::test]
async fn two_processes_share_the_work_without_sending_twice() {
    let builder = WeirBuilder::shared();
    let first = builder.start().await;
    let second = builder.start().await;
    let t = first.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    for i in 0..200 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let got = receiver.wait_for(200, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ids: HashSet<String> = got.iter().map(|r| r.header("x-webhook-delivery")).collect();
    assert_eq!(ids.len(), 200);
    assert_eq!(receiver.count(), 200, "no delivery was sent twice");
    drop(second);
}

#[tokio::test]
async fn a_killed_process_loses_nothing_and_a_new_one_finishes_the_work() {
    let builder = WeirBuilder::shared().env("WEIR_TAKEOVER_AFTER", "2s").env("WEIR_MAX_IN_FLIGHT_PER_WEBHOOK", "8");
    // Publishing goes through an API-only node, so only the child process delivers.
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Delay(Duration::from_millis(20), 200)).await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let mut doomed = builder.spawn();
    doomed.wait_ready().await;
    for i in 0..300 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    receiver.wait_for(40, Duration::from_secs(30)).await;
    doomed.signal("KILL");
    let before = receiver.count();
    assert!(before < 300, "killed mid-run ({before} delivered)");

    let heir = builder.spawn();
    heir.wait_ready().await;
    let distinct = eventually("every event delivered at least once", Duration::from_secs(90), async || {
        let ids: HashSet<String> = receiver.received().iter().map(|r| r.header("x-webhook-delivery")).collect();
        (ids.len() == 300).then_some(ids)
    })
    .await;
    assert_eq!(distinct.len(), 300);
    let bodies: HashSet<String> =
        receiver.received().iter().map(|r| r.json()["subject"]["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(bodies.len(), 300, "every event, not just every delivery id");
}

#[tokio::test]
async fn an_attempt_made_again_after_a_crash_carries_the_next_attempt_number() {
    let builder = WeirBuilder::shared().env("WEIR_TAKEOVER_AFTER", "1s").env("WEIR_DELIVERY_TIMEOUT", "1s");
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    // The first request is never answered: the process dies while it is in flight.
    let receiver = Receiver::replying(Reply::Hang).await;
    receiver.sequence(vec![Reply::Hang, Reply::Status(200)]);
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let mut doomed = builder.spawn();
    doomed.wait_ready().await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    doomed.signal("KILL");

    let _heir = builder.spawn();
    let got = receiver.wait_for(2, Duration::from_secs(60)).await;
    assert_eq!(got[0].header("x-webhook-delivery"), got[1].header("x-webhook-delivery"));
    assert_eq!(got[0].header("x-webhook-attempt"), "1");
    assert_eq!(got[1].header("x-webhook-attempt"), "2", "the re-sent request is a new attempt");
    let d = &t.admin.settled(hook["id"].as_str().unwrap(), 1).await[0];
    assert_eq!(d["status"], "succeeded");
    assert_eq!(d["request"]["headers"]["x-webhook-attempt"], "2", "{d}");
}

#[tokio::test]
async fn a_corrupt_delivery_record_holds_up_no_other_delivery() {
    // Loads and outcomes go to Redis in batches; one bad record must fail only itself.
    let builder = WeirBuilder::shared();
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    for i in 0..40 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let deliveries = t.admin.deliveries_of(hook["id"].as_str().unwrap()).await;
    assert_eq!(deliveries.len(), 40);
    let corrupt = deliveries[20]["id"].as_str().unwrap().to_owned();
    let mut conn = crate::support::weir::raw_conn(&builder);
    let keys = api.store.keys();
    let p = keys.partition_of_delivery(&corrupt).unwrap();
    let key = keys.delivery(p, &corrupt);
    let _: () = redis::cmd("DEL").arg(&key).query(&mut *conn).unwrap();
    let _: () = redis::cmd("SET").arg(&key).arg("not a delivery").query(&mut *conn).unwrap();

    // One worker starts with all 40 entries waiting, so they are read and loaded together.
    let worker = builder.start().await;
    let got = receiver.wait_for(39, Duration::from_secs(20)).await;
    let ids: HashSet<String> = got.iter().map(|r| r.header("x-webhook-delivery")).collect();
    assert_eq!(ids.len(), 39);
    assert!(!ids.contains(&corrupt));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), 39, "the corrupt record was not sent");

    // Dead-lettered: failed with the reason, visible in the API and the metrics, and out
    // of the stream (not taken over again and again).
    let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{corrupt}")).await.expect(200).json();
    assert_eq!(d["status"], "failed", "{d}");
    assert!(d["error"].as_str().unwrap().contains("cannot be read"), "{d}");
    let listed = t.admin.get("/api/v2/webhook_deliveries?status=failed").await.expect(200).json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 1, "{listed}");
    let queue = keys.webhook_queue(p, hook["id"].as_str().unwrap());
    let queued: i64 = redis::cmd("ZCARD").arg(&queue).query(&mut *conn).unwrap();
    assert_eq!(queued, 0, "nothing left in the webhook's queue");
    let metrics = worker.http().get("/metrics").send().await.expect(200).text();
    assert!(metrics.contains("weir_dead_letters_total 1"), "{metrics}");
}

#[tokio::test]
async fn a_record_is_read_in_full_as_soon_as_it_holds_more_than_publish_and_its_count() {
    // Loads and records take a record of exactly `o w e a n` as plain by its length alone;
    // any field more (here the budget a manual retry sets) must be read.
    let builder = WeirBuilder::shared();
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let event_id = t.publisher.publish(&work_order_event("wo_1")).await;
    let delivery = t.admin.deliveries_of(hook["id"].as_str().unwrap()).await[0]["id"].as_str().unwrap().to_owned();
    let keys = api.store.keys();
    let p = keys.partition_of_delivery(&delivery).unwrap();
    let key = keys.delivery(p, &delivery);
    let member =
        weir::store::queue::claim::Member { delivery: delivery.clone(), org: t.org_id.clone(), event: event_id };
    let mut conn = crate::support::weir::raw_conn(&builder);
    let fields = |conn: &mut Box<dyn redis::ConnectionLike>| {
        let mut names: Vec<String> = redis::cmd("HKEYS").arg(&key).query(&mut **conn).unwrap();
        names.sort();
        names
    };
    assert_eq!(fields(&mut conn), ["a", "e", "o", "w"], "publish writes four fields");

    let first = api.store.work().load(p, std::slice::from_ref(&member)).await.unwrap().remove(0).unwrap().unwrap();
    assert_eq!(first.attempt, 1);
    assert_eq!(fields(&mut conn), ["a", "e", "n", "o", "w"]);
    assert_eq!(fields(&mut conn).len(), weir::store::queue::row::PLAIN_ROW_FIELDS);

    let _: () = redis::cmd("HSET").arg(&key).arg("k").arg("3").query(&mut *conn).unwrap();
    let second = api.store.work().load(p, std::slice::from_ref(&member)).await.unwrap().remove(0).unwrap().unwrap();
    assert_eq!(second.attempt, 2);
    assert_eq!(second.last_place, Some(3), "a row of six fields is read");

    // A record taken as plain is recorded as one never recorded; then it is not plain.
    let _: () = redis::cmd("HDEL").arg(&key).arg("k").query(&mut *conn).unwrap();
    let recording = |attempt: u32| weir::store::queue::work::Report {
        webhook: hook["id"].as_str().unwrap().to_owned(),
        member: member.clone(),
        outcome: weir::store::queue::work::Outcome::Retry { due_ms: weir::time::now_millis() + 60_000 },
        attempt,
        attempt_json: Some(weir::store::queue::attempts::attempt_json(0, 5, Some(500), 3, None, Some("no"))),
        signature: Some(vec![7; 64]),
        changes: weir::store::queue::row::RowChanges { plugins: Some("[]".into()), ..Default::default() },
        not_the_endpoint: false,
        ordered: false,
    };
    api.store.work().record(p, &[recording(2)]).await.unwrap().remove(0).unwrap();
    api.store.work().record(p, &[recording(2)]).await.unwrap().remove(0).unwrap();
    let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery}")).await.expect(200).json();
    assert_eq!(d["attempts"].as_array().unwrap().len(), 1, "recorded once: {d}");
    api.store.work().record(p, &[recording(3)]).await.unwrap().remove(0).unwrap();
    let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery}")).await.expect(200).json();
    assert_eq!(d["attempts"].as_array().unwrap().len(), 2, "the next attempt is added to the first: {d}");
    assert_eq!(d["status"], "pending");
    assert_eq!(d["plugins"], json!([]));
}

#[tokio::test]
async fn a_fan_out_loaded_in_batches_sends_each_webhook_every_event_with_its_own_body() {
    // Loads read each event once per batch and share it among that batch's deliveries; every
    // delivery must still get its own event, signed with its own webhook's secret.
    let builder = WeirBuilder::shared();
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let mut hooks = Vec::new();
    for _ in 0..3 {
        let receiver = Receiver::start().await;
        let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
        hooks.push((receiver, hook));
    }
    let mut published = std::collections::HashMap::new();
    for i in 0..30 {
        let wo = format!("wo_{i}");
        published.insert(t.publisher.publish(&work_order_event(&wo)).await, wo);
    }
    let _worker = builder.start().await;
    for (receiver, hook) in &hooks {
        let got = receiver.wait_for(30, Duration::from_secs(20)).await;
        let secret = hook["signing_secret"].as_str().unwrap();
        let records = t.admin.deliveries_of(hook["id"].as_str().unwrap()).await;
        let mut seen = HashSet::new();
        for request in &got {
            assert!(weir::sign::verify(secret, &request.body, &request.header("x-webhook-signature")));
            let body = request.json();
            let event_id = body["id"].as_str().unwrap().to_owned();
            assert_eq!(body["subject"]["id"].as_str(), published.get(&event_id).map(String::as_str), "{body}");
            let delivery = request.header("x-webhook-delivery");
            let record = records.iter().find(|r| r["id"] == delivery.as_str()).expect("a record of the delivery");
            assert_eq!(record["event_id"], event_id.as_str());
            seen.insert(event_id);
        }
        assert_eq!(seen.len(), 30, "every event once per webhook");
    }
}

#[tokio::test]
async fn deliveries_go_over_https_with_an_extra_ca_by_http2_or_http11() {
    let ca = TestCa::new();
    let weir = WeirBuilder::shared().env("WEIR_EXTRA_CA", &ca.ca_pem.display().to_string()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    let h2 = Receiver::https(&ca, &[b"h2"]).await;
    let h1 = Receiver::https(&ca, &[b"http/1.1"]).await;
    let secret_h2 =
        t.admin.create_webhook(&h2.url, &["work_order_created"]).await["signing_secret"].as_str().unwrap().to_owned();
    t.admin.create_webhook(&h1.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let got = h2.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].version, hyper::Version::HTTP_2);
    assert!(weir::sign::verify(&secret_h2, &got[0].body, &got[0].header("x-webhook-signature")));
    let got = h1.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].version, hyper::Version::HTTP_11);

    // Without the extra CA the certificate is not trusted: the attempt fails, nothing is sent.
    let untrusting = WeirBuilder::shared().start().await;
    let u = untrusting.tenant(Plan::pro()).await;
    let receiver = Receiver::https(&ca, &[b"http/1.1"]).await;
    let hook = u.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    u.publisher.publish(&work_order_event("wo_2")).await;
    let d = u.admin.settled(hook["id"].as_str().unwrap(), 1).await.remove(0);
    assert_eq!(d["status"], "failed");
    let error = d["attempts"][0]["error"].as_str().unwrap();
    assert!(error.contains("TLS"), "{error}");
    assert_eq!(receiver.count(), 0);
}

#[tokio::test]
async fn the_url_rule_is_checked_again_at_delivery_time() {
    let builder = WeirBuilder::shared();
    // The API node still exempts loopback; the delivering node no longer does, as if the
    // host's DNS answer had changed to a private address after the webhook was created.
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let _worker = builder.clone().env("WEIR_ALLOW_PRIVATE_TARGETS", "").start().await;
    let t = api.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let d = t.admin.settled(hook["id"].as_str().unwrap(), 1).await.remove(0);
    assert_eq!(d["status"], "failed");
    for attempt in d["attempts"].as_array().unwrap() {
        let error = attempt["error"].as_str().unwrap();
        assert!(error.contains("blocked by the URL rule") && error.contains("127.0.0.1"), "{error}");
        assert_eq!(attempt["status_code"], serde_json::Value::Null);
    }
    assert_eq!(receiver.count(), 0, "no request reached the private address");
}

#[tokio::test]
async fn delivery_recovers_when_redis_comes_back_empty() {
    let mut redis = RedisServer::start();
    let weir = WeirBuilder::new(&redis.url()).start().await;
    let receiver = Receiver::start().await;
    let t = weir.tenant(Plan::pro()).await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;

    // Redis restarts with no data at all: no stream, no consumer group.
    redis.restart();
    eventually("Redis back for Weir and for this test", Duration::from_secs(20), async || {
        let ready = weir.http().get("/readyz").send().await.status == 200;
        (ready && weir.store.ping().await.is_ok()).then_some(())
    })
    .await;
    let t = weir.tenant(Plan::pro()).await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_2")).await;
    receiver.wait_for(2, Duration::from_secs(20)).await;
}

/// The `traceparent` the tests of the next release's stored form publish with.
pub(crate) const NEXT_FORM_TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// Rewrites the events of `deliveries` (as the API lists them) in Redis to the next
/// release's stored form — `W5`, `W6` with a trace — as a process of that release would have
/// stored them, checking this release wrote `W3`/`W4`; the envelopes, sorted.
pub(crate) fn store_in_next_releases_form(
    builder: &WeirBuilder,
    keys: &weir::store::Keys,
    org_id: &str,
    deliveries: &[Value],
) -> Vec<String> {
    use weir::store::events::stored::{Dictionary, StoredEvent};
    let mut conn = crate::support::weir::raw_conn(builder);
    let mut envelopes = Vec::new();
    for d in deliveries {
        let delivery = d["id"].as_str().unwrap();
        let event_id = d["event_id"].as_str().unwrap_or_else(|| panic!("{d}"));
        let key = keys.event(keys.partition_of_delivery(delivery).unwrap(), org_id, event_id);
        let stored: Vec<u8> = redis::cmd("GET").arg(&key).query(&mut *conn).unwrap();
        let event = StoredEvent::decode(&stored).expect("this release's form");
        assert!(stored.starts_with(b"W3") || stored.starts_with(b"W4"), "this release writes the vocabulary's forms");
        let next = event.encode_with(Dictionary::Tables);
        assert!(next.starts_with(if event.trace.is_some() { b"W6" } else { b"W5" }));
        let _: () = redis::cmd("SET").arg(&key).arg(&next).query(&mut *conn).unwrap();
        envelopes.push(event.envelope);
    }
    envelopes.sort();
    envelopes
}

/// `got` are the `envelopes` (sorted) byte for byte, and `wo_traced`'s kept the trace of
/// [`NEXT_FORM_TRACEPARENT`].
pub(crate) fn assert_delivered_as_published(got: &[Received], envelopes: &[String]) {
    let mut bodies: Vec<String> = got.iter().map(|r| String::from_utf8(r.body.to_vec()).unwrap()).collect();
    bodies.sort();
    assert_eq!(bodies, envelopes, "each body is the envelope as published");
    let traced = got.iter().find(|r| r.json()["subject"]["id"] == "wo_traced").expect("the traced event");
    assert!(traced.header("traceparent").contains(&NEXT_FORM_TRACEPARENT[3..35]), "the publisher's trace kept");
}

#[tokio::test]
async fn events_stored_in_the_next_releases_form_are_delivered_as_published() {
    // A rolling upgrade: a process of the next release stores events with the dictionary
    // that has entropy tables (`W5`, `W6` with a trace); this release must deliver them.
    let builder = WeirBuilder::shared();
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_plain")).await;
    t.publisher.publish_traced(&work_order_event("wo_traced"), NEXT_FORM_TRACEPARENT).await;
    let deliveries = t.admin.deliveries_of(hook["id"].as_str().unwrap()).await;
    let envelopes = store_in_next_releases_form(&builder, api.store.keys(), &t.org_id, &deliveries);
    assert_eq!(envelopes.len(), 2);

    // A worker of this release, with nothing of these events in memory, reads them back.
    let _worker = builder.start().await;
    let got = receiver.wait_for(2, Duration::from_secs(20)).await;
    assert_delivered_as_published(&got, &envelopes);
}
