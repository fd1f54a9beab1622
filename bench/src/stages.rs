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
    let week = Duration::from_secs(7 * 86_400);
    // The shipped defaults: deliveries and the event log kept a week.
    let retention = weir::store::events::publish::Retention { deliveries: week, events: week };
    let org = "org_01M84FP5M57Y3F9SNPRVGM36PE";
    let hooks: Vec<String> = (0..webhooks).map(|i| format!("wh_01M84FP5M57Y3F9SNPRVGM3{i:03}")).collect();
    let events = deliveries / webhooks;
    let mut rows = Vec::new();

    let now = weir::time::now_millis();
    let event = Arc::new(StoredEvent {
        created_at: "2026-11-22T11:00:38.123Z".into(),
        envelope: envelope(),
        accepted_ms: now,
        trace: None,
    });
    let stored = Arc::new(event.encode());
    let publications: Vec<Publication> = (0..events)
        .map(|i| Publication {
            org_id: org.into(),
            event_id: format!("evt_bench_{i:08}"),
            action: "work_order_created".into(),
            subject: format!("WorkOrder:wo_{i}"),
            deleted: false,
            event_ms: 1_795_345_238_000 + i as u64,
            logged_action: Some("work_order_created"),
            event: event.clone(),
            stored: stored.clone(),
            snapshot: true,
            webhooks: hooks.iter().map(|w| Subscriber { webhook: w.clone(), ordered: false, filter: None }).collect(),
            retention,
            counted: true,
            version: u64::MAX,
        })
        .collect();
    let cpu = redis.cpu_seconds().await;
    let mut calls = 0;
    for batch in publications.chunks(PUBLISH_BATCH) {
        store.events().publish(p, batch).await.expect("publish");
        calls += 1;
    }
    rows.push(row("publish", calls, deliveries, redis.cpu_seconds().await - cpu));

    let queries: Vec<TokenQuery> =
        (0..events).map(|i| TokenQuery { client_id: format!("cli_{i}"), token_hash: "0".repeat(64) }).collect();
    let cpu = redis.cpu_seconds().await;
    for batch in queries.chunks(PUBLISH_BATCH) {
        store.tenants().lookup_tokens(batch).await.expect("tokens");
    }
    rows.push(row("token lookups", events.div_ceil(PUBLISH_BATCH), deliveries, redis.cpu_seconds().await - cpu));
    let pairs: Vec<(String, String)> = (0..PUBLISH_BATCH).map(|_| (org.into(), "work_order_created".into())).collect();
    let cpu = redis.cpu_seconds().await;
    for _ in 0..events.div_ceil(PUBLISH_BATCH) {
        store.webhooks().subscribers_of(&pairs).await.expect("subscribers");
    }
    rows.push(row("subscriber lookups", events.div_ceil(PUBLISH_BATCH), deliveries, redis.cpu_seconds().await - cpu));

    let now = 1_795_345_238_000;
    let cpu = redis.cpu_seconds().await;
    let mut claimed: Vec<(String, Member)> = Vec::new();
    let mut calls = 0;
    while claimed.len() < deliveries && calls < deliveries {
        let asks: Vec<Ask> = hooks.iter().map(|w| Ask { webhook: w.clone(), limit: CLAIM_LIMIT }).collect();
        let got = store
            .queue()
            .claim(
                p,
                &ClaimRequest { asks: &asks, excluded: &[], budget: CLAIM_LIMIT * webhooks, hints_wanted: 32 },
                now,
                now + 60_000,
            )
            .await
            .expect("claim");
        calls += 1;
        claimed.extend(got.deliveries);
    }
    rows.push(row("claim", calls, deliveries, redis.cpu_seconds().await - cpu));

    let cpu = redis.cpu_seconds().await;
    let mut calls = 0;
    for batch in claimed.chunks(WORK_BATCH) {
        let members: Vec<Member> = batch.iter().map(|(_, m)| m.clone()).collect();
        store.queue().load(p, &members).await.expect("load");
        calls += 1;
    }
    rows.push(row("load", calls, deliveries, redis.cpu_seconds().await - cpu));

    let cpu = redis.cpu_seconds().await;
    let mut calls = 0;
    for batch in claimed.chunks(WORK_BATCH) {
        let targets: Vec<(&str, &str)> = batch.iter().map(|(w, m)| (m.org.as_str(), w.as_str())).collect();
        store.endpoints().webhook_targets(&targets).await.expect("targets");
        calls += 1;
    }
    rows.push(row("webhook lookups", calls, deliveries, redis.cpu_seconds().await - cpu));

    let cpu = redis.cpu_seconds().await;
    let mut calls = 0;
    for batch in claimed.chunks(WORK_BATCH) {
        let reports: Vec<Report> = batch
            .iter()
            .map(|(w, m)| Report {
                webhook: w.clone(),
                member: m.clone(),
                outcome: Outcome::Succeeded,
                attempt: 1,
                attempt_json: Some(attempt_json(now, now + 5, Some(200), 3, None, Some("ok"))),
                signature: Some(vec![0xab; 64]),
                changes: Default::default(),
                proxy_failed: false,
                ordered: false,
            })
            .collect();
        store.queue().record(p, &reports).await.expect("record");
        calls += 1;
    }
    rows.push(row("record", calls, deliveries, redis.cpu_seconds().await - cpu));

    println!("Redis CPU per delivery by stage ({deliveries} deliveries to {webhooks} webhook(s), one Redis, AOF on):");
    println!();
    println!("| stage | calls | deliveries per call | Redis CPU per delivery |");
    println!("|---|---|---|---|");
    let mut total = 0.0;
    for r in &rows {
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
