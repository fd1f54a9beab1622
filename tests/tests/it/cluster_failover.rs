//! Publishing through a Redis Cluster failover (contract §6): a master that fails over to a
//! replica without one of its own, with and without history moving meanwhile — no
//! acknowledged event lost, and every refusal a `503` with `Retry-After`.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;
use weir::store::tenants::orgs::Plan;
use weir::store::{Keys, Partition};

use crate::support::cluster::RedisCluster;
use crate::support::eventually;
use crate::support::postgres::{self, Postgres};
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, Tenant, WeirBuilder, work_order_event};

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

/// Subjects and ids of accepted events.
type Accepted = Vec<(String, String)>;

async fn fails_over(history: Option<&Postgres>) {
    let cluster = RedisCluster::start_quick_failover();
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
    let (mut cluster, victim, (during, refused_during)) = kill_a_master(cluster, &t.publisher).await;

    // Once the cluster is `ok`, its new master has no replica: its partitions cannot
    // acknowledge a write, and their events go to a standby.
    let (after, refused_after) = publish_counting(&t.publisher, "work_order_created", "after", 200).await;
    eprintln!(
        "before: 50 accepted; during: {} accepted, {refused_during} refused; after: {} accepted, {refused_after} refused",
        during.len(),
        after.len()
    );
    assert!(after.len() >= 198, "at least 99% accepted once the cluster is ok: {} of 200", after.len());
    let all: Accepted = before.iter().chain(&during).chain(&after).cloned().collect();
    let keys = weir::store::Keys::new("", 16);
    let shunned = standbys_took_events(&t, &keys, &after).await;
    deleted_on_a_standby(&t, &keys, &before, &shunned).await;

    // An event whose id the publisher chose, accepted on a standby (as if its 202 were lost).
    let twice_subject = (0..)
        .map(|i| format!("twice_{i}"))
        .find(|s| shunned.contains(&keys.partition_of_subject(&t.org_id, "WorkOrder", s)))
        .unwrap();
    let mut twice = work_order_event(&twice_subject);
    twice["action"] = Value::from("work_order_completed");
    twice["id"] = Value::from("evt_sent_twice");
    t.publisher.publish(&twice).await;
    // Every accepted event is delivered.
    eventually(&format!("all {} accepted events delivered", all.len()), Duration::from_secs(90), async || {
        let got: HashSet<String> =
            receiver.received().iter().map(|r| r.json()["subject"]["id"].as_str().unwrap().to_owned()).collect();
        all.iter().all(|(subject, _)| got.contains(subject)).then_some(())
    })
    .await;
    ordered_events_wait_for_their_partition(&t, &receiver, ordered["id"].as_str().unwrap(), &keys).await;

    // The failed node comes back as the new master's replica: its partitions take events
    // again.
    cluster.node_mut(victim).restart();
    cluster.wait_replicas_online();
    sent_again_after_the_failover(&builder, &t, (&twice, &twice_subject), completed["id"].as_str().unwrap()).await;
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

/// Kills a master as a crash would (no clean shutdown) while events are published, and
/// waits for its replica to take over: the cluster, the failed node's port, and what was
/// accepted and refused meanwhile.
async fn kill_a_master(mut cluster: RedisCluster, publisher: &Api) -> (RedisCluster, u16, (Accepted, usize)) {
    let victim = cluster.masters()[1].port;
    cluster.node_mut(victim).stop();
    let during = tokio::spawn({
        let api = publisher.clone();
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
    let cluster = healthy.await.unwrap();
    assert!(!cluster.masters().iter().any(|m| m.port == victim), "a replica took over");
    (cluster, victim, during.await.unwrap())
}

/// Every event accepted after the failover is found by id; those whose own partition is on
/// the failed master's replica went to a standby. Those partitions.
async fn standbys_took_events(t: &Tenant, keys: &Keys, after: &Accepted) -> HashSet<Partition> {
    let mut on_standby = 0;
    let mut shunned = HashSet::new();
    for (subject, id) in after {
        let event = t.admin.get(&format!("/api/v2/events/{id}")).await.expect(200).json();
        let delivery = event["deliveries"][0]["id"].as_str().expect("its delivery").to_owned();
        let home = keys.partition_of_subject(&t.org_id, "WorkOrder", subject);
        if keys.partition_of_delivery(&delivery) != Some(home) {
            on_standby += 1;
            shunned.insert(home);
        }
    }
    assert!(on_standby > 20, "{on_standby} of 200 on a standby");
    shunned
}

/// A record made before the failure, at home, and deleted now, on a standby: no export
/// finds its old snapshot at home.
async fn deleted_on_a_standby(t: &Tenant, keys: &Keys, before: &Accepted, shunned: &HashSet<Partition>) {
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
}

/// The ordered webhook's events: those whose partition is the failed master's wait (503);
/// the others are accepted and delivered, none through a standby (each delivery is in its
/// subject's own partition, the partition a delivery id names).
async fn ordered_events_wait_for_their_partition(t: &Tenant, receiver: &Receiver, ordered: &str, keys: &Keys) {
    let (kept, waited) = publish_counting(&t.publisher, "work_order_updated", "ordered", 20).await;
    assert!(waited > 0, "some subjects live on the failed master's partitions");
    assert!(!kept.is_empty());
    eventually("the ordered webhook's accepted events delivered", Duration::from_secs(60), async || {
        let got: HashSet<String> =
            receiver.received().iter().map(|r| r.json()["subject"]["id"].as_str().unwrap().to_owned()).collect();
        kept.iter().all(|(subject, _)| got.contains(subject)).then_some(())
    })
    .await;
    let deliveries = t.admin.deliveries_of(ordered).await;
    let mut checked = 0;
    for (subject, event_id) in &kept {
        let d = deliveries.iter().find(|d| d["event_id"] == event_id.as_str()).expect("its delivery");
        let home = keys.partition_of_subject(&t.org_id, "WorkOrder", subject);
        assert_eq!(keys.partition_of_delivery(d["id"].as_str().unwrap()), Some(home), "{d}");
        checked += 1;
    }
    assert_eq!(checked, kept.len());
}

/// Once the failed node is back: the event accepted on a standby, sent again through
/// another process, is not stored a second time in its own partition, and that process
/// publishes to the partition again.
async fn sent_again_after_the_failover(
    builder: &WeirBuilder,
    t: &Tenant,
    (twice, twice_subject): (&Value, &str),
    completed: &str,
) {
    let (keys, org) = (weir::store::Keys::new("", 16), &t.org_id);
    let other = builder.start().await;
    // Its first look at the cluster reads the standbys' marks (one every 250 ms).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let again = Api { http: other.http(), token: t.publisher.token.clone(), creds: t.publisher.creds.clone() };
    again.post("/api/v2/events", twice).await.expect(202);
    let home = keys.partition_of_subject(org, "WorkOrder", twice_subject);
    let probe =
        (0..).map(|i| format!("back_{i}")).find(|s| keys.partition_of_subject(org, "WorkOrder", s) == home).unwrap();
    let mut probe_event = work_order_event(&probe);
    probe_event["action"] = Value::from("work_order_completed");
    let probe_id = again.post("/api/v2/events", &probe_event).await.expect(202).json()["id"].clone();
    let deliveries = t.admin.deliveries_of(completed).await;
    let of_twice: Vec<&Value> = deliveries.iter().filter(|d| d["event_id"] == "evt_sent_twice").collect();
    let ids: Vec<&Value> = of_twice.iter().map(|d| &d["id"]).collect();
    assert_eq!(of_twice.len(), 1, "stored once: {ids:?}");
    assert_ne!(keys.partition_of_delivery(of_twice[0]["id"].as_str().unwrap()), Some(home), "on its standby");
    let of_probe = deliveries.iter().find(|d| d["event_id"] == probe_id).expect("the probe's delivery");
    assert_eq!(keys.partition_of_delivery(of_probe["id"].as_str().unwrap()), Some(home), "{of_probe}");
}
