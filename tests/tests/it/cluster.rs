//! Weir on a real local Redis Cluster (contract §6): keys spread over the masters, operator
//! commands, a master killed under load and a reshard under load losing nothing. (The
//! delivery, queue and crash tests also run whole on a cluster: `WEIR_TEST_REDIS=cluster`.)

use std::collections::{HashMap, HashSet};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use weir::store::tenants::orgs::Plan;

use crate::support::cluster::{self, RedisCluster};
use crate::support::eventually;
use crate::support::postgres::{self, Postgres};
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, WeirBuilder, work_order_event};

/// Keys with `prefix` on each master (SCAN: a test may look at the whole key space).
fn keys_by_master(cluster: &RedisCluster, prefix: &str) -> HashMap<u16, Vec<String>> {
    cluster
        .masters()
        .into_iter()
        .filter(|m| m.slots > 0)
        .map(|m| {
            let mut conn = cluster.node(m.port).conn();
            let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}:*")).query(&mut conn).expect("KEYS");
            (m.port, keys)
        })
        .collect()
}

#[tokio::test]
async fn keys_of_many_organisations_and_one_large_fan_out_spread_over_every_master() {
    let cluster = cluster::shared();
    let builder = WeirBuilder::cluster(cluster);
    let weir = builder.start().await;
    let receiver = Receiver::start().await;
    for _ in 0..24 {
        let t = weir.tenant(Plan::pro()).await;
        t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
        for i in 0..3 {
            t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
        }
    }
    receiver.wait_for(72, Duration::from_secs(30)).await;
    let spread = keys_by_master(cluster, &builder.prefix());
    let total: usize = spread.values().map(Vec::len).sum();
    assert_eq!(spread.len(), 3);
    for (port, keys) in &spread {
        assert!(!keys.is_empty(), "master {port} holds none of {total} keys");
        assert!(keys.len() * 2 <= total, "master {port} holds {} of {total} keys", keys.len());
    }

    // One organisation's traffic: its events (by subject) and their fan-out to each of its
    // webhooks are spread over the masters, not pinned to the organisation's slot.
    let big = weir.tenant(Plan::pro()).await;
    let fan = Receiver::start().await;
    let mut hooks = Vec::new();
    for _ in 0..4 {
        hooks.push(big.admin.create_webhook(&fan.url, &["work_order_created"]).await);
    }
    for i in 0..12 {
        big.publisher.publish(&work_order_event(&format!("wo_big_{i}"))).await;
    }
    fan.wait_for(48, Duration::from_secs(20)).await;
    let keys = weir.store.keys();
    let mut masters = HashSet::new();
    for hook in &hooks {
        for d in big.admin.settled(hook["id"].as_str().unwrap(), 12).await {
            let id = d["id"].as_str().unwrap();
            masters.insert(owner_of(cluster, &keys.delivery(keys.partition_of_delivery(id).unwrap(), id)));
        }
    }
    assert!(masters.len() >= 2, "one organisation's fan-out sits on {masters:?}");
}

/// The port of the master holding `key` (the one that answers for it without `MOVED`).
fn owner_of(cluster: &RedisCluster, key: &str) -> u16 {
    let owners: Vec<u16> = cluster
        .masters()
        .into_iter()
        .filter(|m| {
            let mut conn = cluster.node(m.port).conn();
            redis::cmd("EXISTS").arg(key).query::<i64>(&mut conn) == Ok(1)
        })
        .map(|m| m.port)
        .collect();
    assert_eq!(owners.len(), 1, "{key} is on exactly one master: {owners:?}");
    owners[0]
}

#[tokio::test]
async fn admin_commands_run_against_the_cluster() {
    let cluster = cluster::shared();
    let builder = WeirBuilder::cluster(cluster);
    let admin = |args: &[&str]| -> Value {
        let out = crate::support::weir::weir_command()
            .arg("admin")
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("WEIR_REDIS_CLUSTER", cluster.seeds())
            .env("WEIR_REDIS_PREFIX", builder.prefix())
            .output()
            .expect("weir admin");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    let org = admin(&["org", "create", "--name", "Clustered", "--plan", "free"]);
    let org_id = org["id"].as_str().unwrap();
    assert_eq!(admin(&["org", "set-plan", org_id, "--plan", "pro"])["plan"], "pro");
    let client = admin(&["client", "create", "--org", org_id, "--name", "ops", "--admin", "--publisher"]);

    let weir = builder.start().await;
    let creds = crate::support::weir::Credentials {
        client_id: client["client_id"].as_str().unwrap().to_owned(),
        client_secret: client["client_secret"].as_str().unwrap().to_owned(),
    };
    let token = weir.token(&creds).await;
    let api = Api { http: weir.http(), token, creds };
    let receiver = Receiver::start().await;
    api.create_webhook(&receiver.url, &["work_order_created"]).await;
    api.publish(&work_order_event("wo_admin")).await;
    let got = receiver.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(got[0].json()["organisation"]["id"], org["id"]);

    let revoked = admin(&["client", "revoke", &api.creds.client_id]);
    assert_eq!(revoked["revoked"], true);
    api.get("/api/v2/webhooks").await.expect(401);
}

/// Publishes distinct events until `stop`; the subjects of those acknowledged (202). Any
/// answer but 202 or `503 unavailable` with `Retry-After` fails the test.
async fn publish_until(api: Api, tag: &'static str, stop: Arc<AtomicBool>) -> (HashSet<String>, usize) {
    let (mut acked, mut unavailable) = (HashSet::new(), 0);
    for i in 0..100_000 {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let subject = format!("{tag}_{i}");
        // A publish left unanswered fails the test (once, in a full run under load, one hung
        // here for minutes: a hang would otherwise hold the whole run).
        let event = work_order_event(&subject);
        let answer = tokio::time::timeout(Duration::from_secs(30), api.post("/api/v2/events", &event)).await;
        let resp = answer.unwrap_or_else(|_| panic!("publish {subject} unanswered after 30 s"));
        match resp.status {
            202 => {
                acked.insert(subject);
            }
            503 => {
                assert!(resp.header("retry-after").is_some(), "503 without Retry-After");
                assert_eq!(resp.error_code(), "unavailable");
                unavailable += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => panic!("publish answered {other}: {}", resp.text()),
        }
    }
    (acked, unavailable)
}

/// Runs two publishers for `total`, calling `disturb` (on a blocking thread) after `after`.
async fn load_while(
    api: &Api,
    after: Duration,
    total: Duration,
    disturb: impl FnOnce() + Send + 'static,
) -> HashSet<String> {
    let stop = Arc::new(AtomicBool::new(false));
    let a = tokio::spawn(publish_until(api.clone(), "a", stop.clone()));
    let b = tokio::spawn(publish_until(api.clone(), "b", stop.clone()));
    tokio::time::sleep(after).await;
    tokio::task::spawn_blocking(disturb).await.unwrap();
    tokio::time::sleep(total.saturating_sub(after)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut acked, n503a) = a.await.unwrap();
    let (acked_b, n503b) = b.await.unwrap();
    eprintln!("{} acknowledged, {} answered 503", acked.len() + acked_b.len(), n503a + n503b);
    acked.extend(acked_b);
    acked
}

async fn all_arrive(receiver: &Receiver, acked: &HashSet<String>) {
    eventually(&format!("all {} acknowledged events delivered", acked.len()), Duration::from_secs(90), async || {
        let got: HashSet<String> =
            receiver.received().iter().map(|r| r.json()["subject"]["id"].as_str().unwrap().to_owned()).collect();
        acked.is_subset(&got).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_master_killed_under_load_loses_no_acknowledged_event() {
    let mut cluster = RedisCluster::start_quick_failover();
    let weir = WeirBuilder::cluster(&cluster).env("WEIR_REDIS_WAIT_REPLICAS", "1").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    for _ in 0..3 {
        t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    }
    let victim = cluster.masters()[1].port;
    let pid = cluster.node(victim).pid();
    let acked = load_while(&t.publisher, Duration::from_secs(2), Duration::from_secs(12), move || {
        let killed = Command::new("kill").args(["-KILL", &pid.to_string()]).status().expect("kill");
        assert!(killed.success());
    })
    .await;
    assert!(acked.len() > 50, "the load ran: {}", acked.len());
    all_arrive(&receiver, &acked).await;
    assert!(!cluster.masters().iter().any(|m| m.port == victim), "a replica took over");
    // The operator brings the lost node back; it rejoins as the new master's replica, so
    // writes there can be acknowledged by a replica again. Weir needs no restart.
    cluster.node_mut(victim).restart();
    cluster.wait_healthy(3);
    cluster.wait_replicas_online();
    let after = t.publisher.publish(&work_order_event("after_failover")).await;
    assert!(!after.is_empty());
    eventually("the event after the failover arrives three times", Duration::from_secs(30), async || {
        let n = receiver.received().iter().filter(|r| r.json()["subject"]["id"] == "after_failover").count();
        (n >= 3).then_some(())
    })
    .await;
}

#[tokio::test]
async fn adding_a_master_and_resharding_under_load_loses_nothing() {
    let mut cluster = RedisCluster::start();
    let builder = WeirBuilder::cluster(&cluster);
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    for _ in 0..3 {
        t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    }
    let new_master = cluster.add_master();
    cluster.wait_healthy(3);
    let seed = cluster.masters()[0].port;
    let acked = load_while(&t.publisher, Duration::from_secs(1), Duration::from_secs(8), move || {
        cluster::reshard(seed, new_master, 2000);
    })
    .await;
    assert!(acked.len() > 50, "the load ran: {}", acked.len());
    all_arrive(&receiver, &acked).await;
    cluster.wait_healthy(4);
    let spread = keys_by_master(&cluster, &builder.prefix());
    assert!(spread.get(&new_master).is_some_and(|k| !k.is_empty()), "the new master took keys: {:?}", spread.keys());
}

/// Publishes `events` (each with its own subject, `prefix_i`), ten at a time; the ids of
/// those answered 202, and how many were answered 503 (with `Retry-After`). Any other answer
/// fails the test.
async fn publish_counting(api: &Api, action: &str, prefix: &str, events: usize) -> (Vec<(String, String)>, usize) {
    let mut accepted = Vec::new();
    let mut refused = 0;
    for chunk in (0..events).collect::<Vec<_>>().chunks(10) {
        let sends: Vec<_> = chunk
            .iter()
            .map(|i| {
                let subject = format!("{prefix}_{i}");
                let mut event = work_order_event(&subject);
                event["action"] = Value::from(action);
                let api = api.clone();
                tokio::spawn(async move { (subject, api.post("/api/v2/events", &event).await) })
            })
            .collect();
        for send in sends {
            let (subject, resp) = send.await.unwrap();
            match resp.status {
                202 => accepted.push((subject, resp.json()["id"].as_str().unwrap().to_owned())),
                503 => {
                    assert!(resp.headers.contains_key("retry-after"), "a 503 says when to come back");
                    eprintln!("{prefix}: 503 {}", String::from_utf8_lossy(&resp.body));
                    refused += 1;
                }
                other => panic!("publishing answered {other}: {}", String::from_utf8_lossy(&resp.body)),
            }
        }
    }
    (accepted, refused)
}

#[tokio::test]
async fn publishing_stays_available_when_a_master_fails_over_to_a_replica_without_one() {
    fails_over(None).await;
}

/// The same with history in PostgreSQL and a hot period of a second: what ended moves
/// while the failover happens, and an id sent again is known once its event moved.
#[tokio::test]
async fn publishing_stays_available_through_a_failover_while_history_moves() {
    fails_over(Some(postgres::shared())).await;
}

async fn fails_over(history: Option<&Postgres>) {
    let mut cluster = RedisCluster::start_quick_failover();
    let mut builder = WeirBuilder::cluster(&cluster).env("WEIR_REDIS_WAIT_REPLICAS", "1");
    if let Some(pg) = history {
        builder = builder.env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", "1s");
    }
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    // Receives only the event sent twice below.
    let completed = t.admin.create_webhook(&receiver.url, &["work_order_completed"]).await;
    // An ordered webhook's events (another action) must wait for their own partition.
    let ordered = t
        .admin
        .post(
            "/api/v2/webhooks",
            &serde_json::json!({"url": receiver.url, "subscribed_actions": ["work_order_updated"], "ordering": "subject"}),
        )
        .await
        .expect(201)
        .json();
    let (before, refused) = publish_counting(&t.publisher, "work_order_created", "before", 50).await;
    assert_eq!((before.len(), refused), (50, 0), "all accepted before the failure");

    let victim = cluster.masters()[1].port;
    // Killed as a crash would (no clean shutdown).
    cluster.node_mut(victim).stop();
    let during = tokio::spawn({
        let api = t.publisher.clone();
        async move { publish_counting(&api, "work_order_created", "during", 30).await }
    });
    let healthy = tokio::task::spawn_blocking(move || {
        // Until the failure is noticed the nodes still say `ok`: wait for the replica to
        // take the victim's slots first.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while cluster.masters().iter().any(|m| m.port == victim && m.slots > 0) {
            assert!(std::time::Instant::now() < deadline, "no replica took over");
            std::thread::sleep(Duration::from_millis(100));
        }
        cluster.wait_healthy(3);
        cluster
    });
    let mut cluster = healthy.await.unwrap();
    let (during, refused_during) = during.await.unwrap();
    assert!(!cluster.masters().iter().any(|m| m.port == victim), "a replica took over");

    // Once the cluster is `ok`, its new master has no replica: its partitions cannot
    // acknowledge a write, and their events go to a standby.
    let (after, refused_after) = publish_counting(&t.publisher, "work_order_created", "after", 200).await;
    eprintln!(
        "before: 50 accepted; during: {} accepted, {refused_during} refused; after: {} accepted, {refused_after} refused",
        during.len(),
        after.len()
    );
    assert!(after.len() >= 198, "at least 99% accepted once the cluster is ok: {} of 200", after.len());

    // Every accepted event is found by id and delivered.
    let all: Vec<(String, String)> = before.iter().chain(&during).chain(&after).cloned().collect();
    let keys = weir::store::Keys::new("", 16);
    let mut on_standby = 0;
    let mut shunned = HashSet::new();
    for (subject, id) in &after {
        let event = t.admin.get(&format!("/api/v2/events/{id}")).await.expect(200).json();
        let delivery = event["deliveries"][0]["id"].as_str().expect("its delivery").to_owned();
        let home = keys.partition_of_subject(&t.org_id, "WorkOrder", subject);
        if keys.partition_of_delivery(&delivery) != Some(home) {
            on_standby += 1;
            shunned.insert(home);
        }
    }
    // Those whose own partition is on the failed master's replica went to a standby.
    assert!(on_standby > 20, "{on_standby} of 200 on a standby");

    // A record made before the failure, at home, and deleted now, on a standby: no export
    // finds its old snapshot at home.
    let (gone, _) = before
        .iter()
        .find(|(subject, _)| shunned.contains(&keys.partition_of_subject(&t.org_id, "WorkOrder", subject)))
        .expect("a record made before the failure lives on the failed master's partitions");
    let mut deletion = work_order_event(gone);
    deletion["action"] = Value::from("work_order_deleted");
    deletion["subject"]["deleted"] = Value::from(true);
    t.publisher.publish(&deletion).await;
    let export = serde_json::json!({"exportable": {"type": "WorkOrder", "id": gone}, "format": "json"});
    t.admin.post("/api/v2/report_exports", &export).await.expect(422);

    // An event whose id the publisher chose, accepted on a standby (as if its 202 were lost).
    let twice_subject = (0..)
        .map(|i| format!("twice_{i}"))
        .find(|s| shunned.contains(&keys.partition_of_subject(&t.org_id, "WorkOrder", s)))
        .unwrap();
    let mut twice = work_order_event(&twice_subject);
    twice["action"] = Value::from("work_order_completed");
    twice["id"] = Value::from("evt_sent_twice");
    t.publisher.publish(&twice).await;
    eventually(&format!("all {} accepted events delivered", all.len()), Duration::from_secs(90), async || {
        let got: HashSet<String> =
            receiver.received().iter().map(|r| r.json()["subject"]["id"].as_str().unwrap().to_owned()).collect();
        all.iter().all(|(subject, _)| got.contains(subject)).then_some(())
    })
    .await;

    // The ordered webhook's events: those whose partition is the failed master's wait (503);
    // the others are accepted and delivered.
    let (kept, waited) = publish_counting(&t.publisher, "work_order_updated", "ordered", 20).await;
    assert!(waited > 0, "some subjects live on the failed master's partitions");
    assert!(!kept.is_empty());
    eventually("the ordered webhook's accepted events delivered", Duration::from_secs(60), async || {
        let got: HashSet<String> =
            receiver.received().iter().map(|r| r.json()["subject"]["id"].as_str().unwrap().to_owned()).collect();
        kept.iter().all(|(subject, _)| got.contains(subject)).then_some(())
    })
    .await;
    // None of them went to a standby: each delivery is in its subject's own partition (the
    // partition a delivery id names).
    let org = &t.org_id;
    let deliveries = t.admin.deliveries_of(ordered["id"].as_str().unwrap()).await;
    let mut checked = 0;
    for (subject, event_id) in &kept {
        let d = deliveries.iter().find(|d| d["event_id"] == event_id.as_str()).expect("its delivery");
        let home = keys.partition_of_subject(org, "WorkOrder", subject);
        assert_eq!(keys.partition_of_delivery(d["id"].as_str().unwrap()), Some(home), "{d}");
        checked += 1;
    }
    assert_eq!(checked, kept.len());

    // The failed node comes back as the new master's replica: its partitions take events
    // again. The event accepted on a standby, sent again through another process, is not
    // stored a second time in its own partition.
    cluster.node_mut(victim).restart();
    cluster.wait_replicas_online();
    let other = builder.start().await;
    // Its first look at the cluster reads the standbys' marks (one every 250 ms).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let again = Api { http: other.http(), token: t.publisher.token.clone(), creds: t.publisher.creds.clone() };
    again.post("/api/v2/events", &twice).await.expect(202);
    let home = keys.partition_of_subject(org, "WorkOrder", &twice_subject);
    let probe =
        (0..).map(|i| format!("back_{i}")).find(|s| keys.partition_of_subject(org, "WorkOrder", s) == home).unwrap();
    let mut probe_event = work_order_event(&probe);
    probe_event["action"] = Value::from("work_order_completed");
    let probe_id = again.post("/api/v2/events", &probe_event).await.expect(202).json()["id"].clone();
    let deliveries = t.admin.deliveries_of(completed["id"].as_str().unwrap()).await;
    let of_twice: Vec<&Value> = deliveries.iter().filter(|d| d["event_id"] == "evt_sent_twice").collect();
    let ids: Vec<&Value> = of_twice.iter().map(|d| &d["id"]).collect();
    assert_eq!(of_twice.len(), 1, "stored once: {ids:?}");
    assert_ne!(keys.partition_of_delivery(of_twice[0]["id"].as_str().unwrap()), Some(home), "on its standby");
    // The other process publishes to that partition again (so the event above went there).
    let of_probe = deliveries.iter().find(|d| d["event_id"] == probe_id).expect("the probe's delivery");
    assert_eq!(keys.partition_of_delivery(of_probe["id"].as_str().unwrap()), Some(home), "{of_probe}");
    if let Some(pg) = history {
        // What was accepted at home and on standbys moves, and reads the same from there.
        let schema = postgres::schema(&builder.prefix());
        eventually("the failover's deliveries moved", Duration::from_secs(60), async || {
            let moved = pg.count(&format!("SELECT count(*) FROM {schema}.deliveries")).await as usize;
            (moved >= all.len()).then_some(())
        })
        .await;
        for (subject, id) in after.iter().step_by(10) {
            let event = t.admin.get(&format!("/api/v2/events/{id}")).await.expect(200).json();
            assert_eq!(event["envelope"]["subject"]["id"], subject.as_str(), "{event}");
        }
    }
}
