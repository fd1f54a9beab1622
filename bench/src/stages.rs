//! Redis CPU per delivery, stage by stage (`WEIR_BENCH_ONLY=stages`): the store's calls as
//! the workers make them, driven in-process against a fresh Redis (AOF on), without HTTP or
//! endpoints, so each stage's cost can be read alone. A diagnostic for changing the store;
//! the scenarios measure what users run.

use std::sync::Arc;
use std::time::Duration;

use weir::store::events::publish::Publication;
use weir::store::events::stored::StoredEvent;
use weir::store::queue::attempts::attempt_json;
use weir::store::queue::claim::{Ask, ClaimRequest, Member};
use weir::store::queue::work::{Outcome, Report};
use weir::store::tenants::clients::TokenQuery;
use weir::store::tenants::webhooks::Subscriber;
use weir::store::{Partition, Settings, Store};

use crate::procs::RedisProc;

/// Publications per publish call, as concurrent publishers batch them.
const PUBLISH_BATCH: usize = 8;
/// Deliveries per load and record call.
const WORK_BATCH: usize = 8;
/// Deliveries one claim may take of the webhook (its in-flight cap).
const CLAIM_LIMIT: usize = 16;

struct Row {
    stage: &'static str,
    calls: usize,
    per_call: f64,
    micros: f64,
}

/// Runs `deliveries` deliveries to `webhooks` webhooks through every stage; prints the table.
pub async fn run(deliveries: usize, webhooks: usize) {
    let redis = RedisProc::start();
    let store = Store::connect(&Settings::single(&redis.url(), "stages")).await.expect("store");
    let p = Partition(0);
    let hooks: Vec<String> = (0..webhooks).map(|i| format!("wh_01M84FP5M57Y3F9SNPRVGM3{i:03}")).collect();
    let events = deliveries / webhooks;
    let publications = publications(&hooks, events);
    let mut rows = Vec::new();
    rows.push(
        measured(&redis, "publish", deliveries, async || {
            for batch in publications.chunks(PUBLISH_BATCH) {
                store.event_writes().publish(p, batch).await.expect("publish");
            }
            publications.len().div_ceil(PUBLISH_BATCH)
        })
        .await,
    );
    let queries: Vec<TokenQuery> =
        (0..events).map(|i| TokenQuery { client_id: format!("cli_{i}"), token_hash: "0".repeat(64) }).collect();
    rows.push(
        measured(&redis, "token lookups", deliveries, async || {
            for batch in queries.chunks(PUBLISH_BATCH) {
                store.clients().lookup_tokens(batch).await.expect("tokens");
            }
            events.div_ceil(PUBLISH_BATCH)
        })
        .await,
    );
    let pairs: Vec<(String, String)> = (0..PUBLISH_BATCH).map(|_| (ORG.into(), "work_order_created".into())).collect();
    rows.push(
        measured(&redis, "subscriber lookups", deliveries, async || {
            for _ in 0..events.div_ceil(PUBLISH_BATCH) {
                store.subscriptions().subscribers_of(&pairs).await.expect("subscribers");
            }
            events.div_ceil(PUBLISH_BATCH)
        })
        .await,
    );
    let mut claimed: Vec<(String, Member)> = Vec::new();
    rows.push(
        measured(&redis, "claim", deliveries, async || claim_all(&store, &hooks, deliveries, &mut claimed).await).await,
    );
    rows.push(
        measured(&redis, "load", deliveries, async || {
            for batch in claimed.chunks(WORK_BATCH) {
                let members: Vec<Member> = batch.iter().map(|(_, m)| m.clone()).collect();
                store.work().load(p, &members).await.expect("load");
            }
            claimed.len().div_ceil(WORK_BATCH)
        })
        .await,
    );
    rows.push(
        measured(&redis, "webhook lookups", deliveries, async || {
            for batch in claimed.chunks(WORK_BATCH) {
                let targets: Vec<(&str, &str)> = batch.iter().map(|(w, m)| (m.org.as_str(), w.as_str())).collect();
                store.targets().webhook_targets(&targets).await.expect("targets");
            }
            claimed.len().div_ceil(WORK_BATCH)
        })
        .await,
    );
    rows.push(measured(&redis, "record", deliveries, async || record_all(&store, &claimed).await).await);
    print(&rows, deliveries, webhooks);
}

/// The organisation every stage works for.
const ORG: &str = "org_01M84FP5M57Y3F9SNPRVGM36PE";
/// The time claims and records are made at.
const NOW: u64 = 1_795_345_238_000;

/// One stage: `work` run, and Redis's CPU over it per delivery; `work` says how many calls
/// it made.
async fn measured(redis: &RedisProc, stage: &'static str, deliveries: usize, work: impl AsyncFnOnce() -> usize) -> Row {
    let cpu = redis.cpu_seconds().await;
    let calls = work().await;
    row(stage, calls, deliveries, redis.cpu_seconds().await - cpu)
}

/// `events` events, each about a new record, to every webhook of `hooks`.
fn publications(hooks: &[String], events: usize) -> Vec<Publication> {
    let week = Duration::from_secs(7 * 86_400);
    // The shipped defaults: deliveries and the event log kept a week.
    let retention = weir::store::events::publish::Retention { deliveries: week, events: week };
    let event = Arc::new(StoredEvent {
        created_at: "2026-11-22T11:00:38.123Z".into(),
        envelope: envelope(),
        accepted_ms: weir::time::now_millis(),
        trace: None,
    });
    let stored = Arc::new(event.encode());
    (0..events)
        .map(|i| Publication {
            org_id: ORG.into(),
            event_id: format!("evt_bench_{i:08}"),
            action: "work_order_created".into(),
            subject: format!("WorkOrder:wo_{i}"),
            deleted: false,
            event_ms: NOW + i as u64,
            logged_action: Some("work_order_created"),
            event: event.clone(),
            stored: stored.clone(),
            snapshot: true,
            webhooks: hooks.iter().map(|w| Subscriber { webhook: w.clone(), ordered: false, filter: None }).collect(),
            retention,
            counted: true,
            version: u64::MAX,
            intake: None,
        })
        .collect()
}

/// Claims every delivery of partition 0 into `claimed`; how many calls it took.
async fn claim_all(store: &Store, hooks: &[String], deliveries: usize, claimed: &mut Vec<(String, Member)>) -> usize {
    let mut calls = 0;
    while claimed.len() < deliveries && calls < deliveries {
        let asks: Vec<Ask> = hooks.iter().map(|w| Ask { webhook: w.clone(), limit: CLAIM_LIMIT }).collect();
        let request = ClaimRequest { asks: &asks, excluded: &[], budget: CLAIM_LIMIT * hooks.len(), hints_wanted: 32 };
        let got = store.claims().claim(Partition(0), &request, NOW, NOW + 60_000).await.expect("claim");
        calls += 1;
        claimed.extend(got.deliveries);
    }
    calls
}

/// Records every claimed delivery as succeeded at its first attempt; how many calls it took.
async fn record_all(store: &Store, claimed: &[(String, Member)]) -> usize {
    for batch in claimed.chunks(WORK_BATCH) {
        let reports: Vec<Report> = batch
            .iter()
            .map(|(w, m)| Report {
                webhook: w.clone(),
                member: m.clone(),
                outcome: Outcome::Succeeded,
                attempt: 1,
                attempt_json: Some(attempt_json(NOW, NOW + 5, Some(200), 3, None, Some("ok"))),
                signature: Some(vec![0xab; 64]),
                changes: Default::default(),
                not_the_endpoint: false,
                ordered: false,
            })
            .collect();
        store.work().record(Partition(0), &reports).await.expect("record");
    }
    claimed.len().div_ceil(WORK_BATCH)
}

fn print(rows: &[Row], deliveries: usize, webhooks: usize) {
    println!("Redis CPU per delivery by stage ({deliveries} deliveries to {webhooks} webhook(s), one Redis, AOF on):");
    println!();
    println!("| stage | calls | deliveries per call | Redis CPU per delivery |");
    println!("|---|---|---|---|");
    let mut total = 0.0;
    for r in rows {
        println!("| {} | {} | {:.1} | {:.1} µs |", r.stage, r.calls, r.per_call, r.micros);
        total += r.micros;
    }
    println!("| all | | | {total:.1} µs |");
}

fn row(stage: &'static str, calls: usize, deliveries: usize, cpu_seconds: f64) -> Row {
    Row {
        stage,
        calls,
        per_call: deliveries as f64 / calls.max(1) as f64,
        micros: cpu_seconds * 1e6 / deliveries.max(1) as f64,
    }
}

/// An envelope like the scenarios' (about 1 KB).
fn envelope() -> String {
    let description =
        "Replace the worn mechanical seal on the feed pump and check the impeller for cavitation damage. ".repeat(7);
    serde_json::json!({
        "id": "evt_bench", "action": "work_order_created", "created_at": "2026-11-22T11:00:38.123Z",
        "organisation": {"id": "org_01M84FP5M57Y3F9SNPRVGM36PE"},
        "creator": {"id": "usr_bench", "name": "Bench Publisher"},
        "subject": {"type": "WorkOrder", "id": "wo_1"},
        "work_order": {"id": "wo_1", "title": "Pump maintenance", "status": "open", "priority": 2, "description": description},
    })
    .to_string()
}
