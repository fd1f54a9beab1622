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
        let t = weir.tenant(Plan::Pro).await;
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
    let big = weir.tenant(Plan::Pro).await;
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
        let resp = api.post("/api/v2/events", &work_order_event(&subject)).await;
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
    let mut cluster = RedisCluster::start();
    let weir = WeirBuilder::cluster(&cluster).env("WEIR_REDIS_WAIT_REPLICAS", "1").start().await;
    let t = weir.tenant(Plan::Pro).await;
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
    let t = weir.tenant(Plan::Pro).await;
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

/// The master serving `slot` now (the one holding its keys).
fn owner_of_slot(cluster: &RedisCluster, slot: u16) -> cluster::NodeInfo {
    cluster
        .masters()
        .into_iter()
        .find(|m| {
            let mut conn = cluster.node(m.port).conn();
            redis::cmd("CLUSTER").arg("COUNTKEYSINSLOT").arg(slot).query::<i64>(&mut conn).unwrap_or(0) > 0
        })
        .expect("a master holds the slot's keys")
}

/// Leaves the slot of `key` half moved, as `redis-cli --cluster reshard` does for a moment:
/// `key` on another master, the slot's other keys still on its own.
fn half_move(cluster: &RedisCluster, key: &str) {
    let slot = weir::store::core::keys::slot(key);
    let source = owner_of_slot(cluster, slot);
    let target = cluster.masters().into_iter().find(|m| m.port != source.port).expect("another master");
    let (mut from, mut to) = (cluster.node(source.port).conn(), cluster.node(target.port).conn());
    let setslot = |state: &str, node: &str| redis::cmd("CLUSTER").arg("SETSLOT").arg(slot).arg(state).arg(node).clone();
    let _: () = setslot("IMPORTING", &source.id).query(&mut to).expect("importing");
    let _: () = setslot("MIGRATING", &target.id).query(&mut from).expect("migrating");
    let _: () = redis::cmd("MIGRATE")
        .arg("127.0.0.1")
        .arg(target.port)
        .arg("")
        .arg(0)
        .arg(5000)
        .arg("KEYS")
        .arg(key)
        .query(&mut from)
        .expect("migrate the key");
    let left: i64 = redis::cmd("CLUSTER").arg("COUNTKEYSINSLOT").arg(slot).query(&mut from).unwrap();
    assert!(left > 0, "the slot's other keys are still on the old master");
}

#[tokio::test]
async fn a_slot_half_moved_by_a_reshard_still_serves_tokens_and_deliveries() {
    // Mid-reshard an API client's record is on the new master and its token still on the
    // old one; one delivery record of a partition has moved and the others not. Tokens
    // sign in, listings and reads by id find every delivery. (Its own cluster: slots are
    // left half moved.)
    let cluster = RedisCluster::start();
    let builder = WeirBuilder::cluster(&cluster).env("WEIR_REDIS_PARTITIONS", "4");
    let weir = builder.start().await;
    let t = weir.tenant(Plan::Pro).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let hook_id = hook["id"].as_str().unwrap();
    for i in 0..24 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    let settled = t.admin.settled(hook_id, 24).await;
    let ids: Vec<String> = settled.iter().map(|d| d["id"].as_str().unwrap().to_owned()).collect();

    let keys = weir::store::Keys::new(&builder.prefix(), 4);
    let client_key = keys.client(&t.admin.creds.client_id);
    half_move(&cluster, &client_key);
    for _ in 0..5 {
        let resp = t.admin.get("/api/v2/webhooks").await;
        assert_eq!(resp.status, 200, "a live token mid-reshard: {}", resp.text());
    }
    let stranger = t.admin.http.get("/api/v2/webhooks").bearer("wat_not-a-token").send().await;
    assert_eq!(stranger.status, 401, "{}", stranger.text());

    // The partition holding most deliveries (in another slot than the client's): one of
    // its records moves, the rest stay.
    let mut by_partition: HashMap<u16, Vec<&String>> = HashMap::new();
    for id in &ids {
        by_partition.entry(keys.partition_of_delivery(id).expect("a partition").0).or_default().push(id);
    }
    let record = |p: u16, id: &str| keys.delivery(weir::store::Partition(p), id);
    let client_slot = weir::store::core::keys::slot(&client_key);
    let (p, in_slot) = by_partition
        .into_iter()
        .filter(|(p, v)| weir::store::core::keys::slot(&record(*p, v[0])) != client_slot)
        .max_by_key(|(_, v)| v.len())
        .expect("a partition outside the client's slot");
    assert!(in_slot.len() >= 2, "24 deliveries over 4 partitions leave one with several: {}", in_slot.len());
    half_move(&cluster, &record(p, in_slot[0]));
    let listed = t.admin.deliveries_of(hook_id).await;
    assert_eq!(listed.len(), 24, "every delivery listed mid-reshard");
    let filtered =
        t.admin.get(&format!("/api/v2/webhook_deliveries?webhook_id={hook_id}&status=succeeded&limit=100")).await;
    assert_eq!(filtered.status, 200, "{}", filtered.text());
    assert_eq!(filtered.json()["data"].as_array().map(Vec::len), Some(24), "every delivery passes the filter");
    for id in in_slot {
        let one = t.admin.get(&format!("/api/v2/webhook_deliveries/{id}")).await;
        assert_eq!(one.status, 200, "{id} mid-reshard: {}", one.text());
        assert_eq!(one.json()["status"], "succeeded");
    }
}

#[tokio::test]
async fn a_master_added_after_weir_started_runs_scripts_it_was_never_sent() {
    // A reshard gives a partition's slot to a master that joined after Weir connected and
    // has never been sent a script: a script redirected there (`MOVED`) is answered
    // `NOSCRIPT`, and `SCRIPT LOAD` goes only to the masters the client knew (one full run
    // of the reshard test answered a publish 500 that way). Scripts a node lacks are now
    // sent with their source (`EVAL`), which follows the redirect.
    let mut cluster = RedisCluster::start();
    let builder = WeirBuilder::cluster(&cluster).env("WEIR_REDIS_PARTITIONS", "4");
    let weir = builder.start().await;
    let t = weir.tenant(Plan::Pro).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_before")).await;
    receiver.wait_for(1, Duration::from_secs(20)).await;

    let new_master = cluster.add_master();
    cluster.wait_healthy(3);
    // A partition nothing has been published to, whose slot moves whole to the new master.
    let keys = weir::store::Keys::new(&builder.prefix(), 4);
    let used = keys.partition_of_subject(&t.org_id, "WorkOrder", "wo_before");
    let (subject, p) = (0..)
        .map(|i| format!("wo_{i}"))
        .map(|s| {
            let p = keys.partition_of_subject(&t.org_id, "WorkOrder", &s);
            (s, p)
        })
        .find(|(_, p)| *p != used)
        .expect("another partition");
    let slot = weir::store::core::keys::slot(&keys.ready(p));
    move_slot(&cluster, slot, new_master);

    let resp = t.publisher.post("/api/v2/events", &work_order_event(&subject)).await;
    assert_eq!(resp.status, 202, "a publish to a slot now on the new master: {}", resp.text());
    let got = receiver.wait_for(2, Duration::from_secs(20)).await;
    assert!(got.iter().any(|d| d.json()["subject"]["id"] == subject.as_str()), "delivered from the new master");
    let mut conn = cluster.node(new_master).conn();
    let there: i64 = redis::cmd("CLUSTER").arg("COUNTKEYSINSLOT").arg(slot).query(&mut conn).unwrap();
    assert!(there > 1, "the event and its delivery were written on the new master");
}

/// Moves `slot` whole, keys and all, to the master on `target` (what a reshard does to
/// each slot), and waits until every master agrees.
fn move_slot(cluster: &RedisCluster, slot: u16, target: u16) {
    let masters = cluster.masters();
    // The master serving `slot` as the node on `port` sees it.
    let owner = |port: u16| {
        cluster.view_of(port).and_then(|view| view.into_iter().find(|n| n.master && n.serves(slot)).map(|n| n.port))
    };
    let source = owner(target).expect("a master serves the slot");
    let id = |port: u16| masters.iter().find(|m| m.port == port).expect("a master").id.clone();
    let (mut from, mut to) = (cluster.node(source).conn(), cluster.node(target).conn());
    let setslot = |args: &[&str]| redis::cmd("CLUSTER").arg("SETSLOT").arg(slot).arg(args).clone();
    let _: () = setslot(&["IMPORTING", &id(source)]).query(&mut to).expect("importing");
    let _: () = setslot(&["MIGRATING", &id(target)]).query(&mut from).expect("migrating");
    loop {
        let batch: Vec<String> =
            redis::cmd("CLUSTER").arg("GETKEYSINSLOT").arg(slot).arg(100).query(&mut from).unwrap();
        if batch.is_empty() {
            break;
        }
        let _: () = redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(target)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(&batch)
            .query(&mut from)
            .expect("migrate keys");
    }
    for m in &masters {
        let _: () = setslot(&["NODE", &id(target)]).query(&mut cluster.node(m.port).conn()).expect("node");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !masters.iter().all(|m| owner(m.port) == Some(target)) {
        assert!(std::time::Instant::now() < deadline, "the masters never agreed the slot moved");
        std::thread::sleep(Duration::from_millis(100));
    }
}
