//! The recovery scenarios (contract §7 "Replay", `WEIR_EVENT_RETENTION`): Redis memory per
//! retained event that nothing subscribed to, and a replay of a window of retained events
//! to one new webhook — how fast it is queued, then delivered.

use std::time::{Duration, Instant};

use crate::load::{Http, Kind, Publisher};
use crate::procs::{RedisProc, Tenant, WeirProc, cpu_seconds};
use crate::receiver::FastReceiver;
use crate::scenario::{Row, Scenario, ms, per_round, run};

/// Redis memory per retained event with no subscriber (bytes) of `kind`: with the shipped
/// event log, and with `WEIR_EVENT_RETENTION=0s` (the event alone, as before the log).
pub async fn retained_memory(redis: &RedisProc, events: usize, kind: Kind) -> (f64, f64) {
    let mut per_event = Vec::new();
    for env in [&[("WEIR_WORKERS", "false")][..], &[("WEIR_WORKERS", "false"), ("WEIR_EVENT_RETENTION", "0s")]] {
        let weir = WeirProc::start(redis, "retained", env);
        let tenant = weir.tenant().await;
        let before = redis.used_memory().await;
        Publisher::new(&weir.base, &tenant.publisher_token).run(events, 32, kind).await;
        let after = redis.used_memory().await;
        per_event.push(after.saturating_sub(before) as f64 / events as f64);
        weir.stop();
        redis.flush().await;
    }
    (per_event[0], per_event[1])
}

/// A window of retained events ready to be replayed to a new webhook.
pub struct Prepared {
    tenant: Tenant,
    webhook: String,
    since: String,
    receiver: FastReceiver,
    events: usize,
}

/// Publishes `events` ~1 KB events that nothing subscribes to, then subscribes a webhook.
pub async fn prepare(weir: &WeirProc, events: usize) -> Prepared {
    let tenant = weir.tenant().await;
    let since = weir::time::format_millis(weir::time::now_millis() - 1000);
    Publisher::new(&weir.base, &tenant.publisher_token).run(events, 32, Kind::WorkOrder).await;
    let receiver = FastReceiver::start().await;
    let webhook =
        tenant.create_webhook_for(&weir.base, &receiver.url(), &["work_order_created"], serde_json::json!({})).await;
    Prepared { tenant, webhook, since, receiver, events }
}

/// What a replay took.
pub struct Replayed {
    pub events: usize,
    /// From the request until every delivery was queued (`state: completed`).
    pub queued: Duration,
    /// From the request until the last delivery arrived.
    pub delivered: Duration,
    pub weir_cpu_us_per_event: f64,
    pub redis_cpu_us_per_event: f64,
}

/// A replay under way.
pub struct Started {
    at: Instant,
    weir_cpu: f64,
    redis_cpu: f64,
}

/// Asks for the replay of the whole window.
pub async fn start(weir: &WeirProc, redis: &RedisProc, p: &Prepared) -> Started {
    let (weir_cpu, redis_cpu) = (cpu_seconds(weir.pid()), redis.cpu_seconds().await);
    let at = Instant::now();
    let body = serde_json::to_vec(&serde_json::json!({"since": p.since})).expect("json");
    let path = format!("/api/v2/webhooks/{}/replay", p.webhook);
    let (status, text) =
        Http::connect(&weir.base).await.send("POST", &path, &p.tenant.admin_token, "application/json", body).await;
    assert_eq!(status, 202, "replay: {text}");
    Started { at, weir_cpu, redis_cpu }
}

/// Waits until the replay is queued, then delivered.
pub async fn finish(weir: &WeirProc, redis: &RedisProc, p: Prepared, started: Started) -> Replayed {
    let path = format!("/api/v2/webhooks/{}/replay", p.webhook);
    let mut http = Http::connect(&weir.base).await;
    let queued = loop {
        let (status, text) = http.send("GET", &path, &p.tenant.admin_token, "application/json", Vec::new()).await;
        assert_eq!(status, 200, "replay status: {text}");
        let view: serde_json::Value = serde_json::from_str(&text).expect("json");
        match view["state"].as_str() {
            Some("completed") => {
                assert_eq!(view["count"].as_u64(), Some(p.events as u64), "every event queued once: {view}");
                break started.at.elapsed();
            }
            Some("running") => tokio::time::sleep(Duration::from_millis(20)).await,
            _ => panic!("the replay did not complete: {view}"),
        }
    };
    p.receiver.wait_for(p.events, Duration::from_secs(900)).await;
    let delivered = p.receiver.last_arrival().map_or_else(|| started.at.elapsed(), |t| t - started.at);
    let weir_cpu = cpu_seconds(weir.pid()) - started.weir_cpu;
    let redis_cpu = redis.cpu_seconds().await - started.redis_cpu;
    Replayed {
        events: p.events,
        queued,
        delivered,
        weir_cpu_us_per_event: weir_cpu * 1e6 / p.events as f64,
        redis_cpu_us_per_event: redis_cpu * 1e6 / p.events as f64,
    }
}

/// The recovery scenarios' figures: memory per retained event, a replay alone, and rounds
/// of the `1 webhook` load alone and beside a replay.
pub struct Figures {
    retained: (f64, f64),
    retained_updates: (f64, f64),
    alone: Replayed,
    /// Per round: the `1 webhook` load alone, then beside a replay; and that replay.
    rounds: Vec<(Row, Row, Replayed)>,
}

/// Rounds of the `1 webhook` load alone and beside a replay, interleaved (this machine's
/// speed drifts between minutes).
const RECOVERY_ROUNDS: usize = 3;

pub async fn figures(redis: &RedisProc, retained: usize, replayed: usize, load: usize) -> Figures {
    let retained_updates = retained_memory(redis, retained, Kind::WorkOrderUpdate).await;
    let retained = retained_memory(redis, retained, Kind::WorkOrder).await;
    let weir = WeirProc::start(redis, "recovery", &[]);
    let p = prepare(&weir, replayed).await;
    let started = start(&weir, redis, &p).await;
    let alone = finish(&weir, redis, p, started).await;
    let mut rounds = Vec::new();
    for _ in 0..RECOVERY_ROUNDS {
        let load_alone = run(&weir, redis, Scenario::new("1 webhook, alone", 1, load, Kind::WorkOrder)).await;
        let p = prepare(&weir, replayed).await;
        let started = start(&weir, redis, &p).await;
        let load_beside =
            run(&weir, redis, Scenario::new("1 webhook, beside the replay", 1, load, Kind::WorkOrder)).await;
        let beside = finish(&weir, redis, p, started).await;
        rounds.push((load_alone, load_beside, beside));
    }
    weir.stop();
    redis.flush().await;
    Figures { retained, retained_updates, alone, rounds }
}

/// Prints [`Figures`] as the README's tables.
pub fn print(r: &Figures) {
    println!();
    for ((with_log, without), what) in
        [(r.retained, "each about a new record"), (r.retained_updates, "updates of 100 records")]
    {
        println!(
            "Redis memory per retained event nothing subscribed to (~1 KB, {what}): {with_log:.0} bytes with the event log (shipped), {without:.0} bytes with WEIR_EVENT_RETENTION=0s: the log costs {:.0} bytes per event",
            with_log - without
        );
    }
    println!();
    println!(
        "| replay to a new webhook | events | queued in | queued/s | delivered in | delivered/s | Weir CPU per event | Redis CPU per event |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let beside = r.rounds.iter().map(|(_, _, replayed)| ("beside the 1 webhook load", replayed));
    for (name, x) in std::iter::once(("alone", &r.alone)).chain(beside) {
        println!(
            "| {name} | {} | {:.2} s | {:.0} | {:.2} s | {:.0} | {:.0} µs | {:.0} µs |",
            x.events,
            x.queued.as_secs_f64(),
            x.events as f64 / x.queued.as_secs_f64(),
            x.delivered.as_secs_f64(),
            x.events as f64 / x.delivered.as_secs_f64(),
            x.weir_cpu_us_per_event,
            x.redis_cpu_us_per_event
        );
    }
    println!();
    println!(
        "| the 1 webhook load (rounds interleaved) | events | deliveries/s | publish→receipt p50 | p99 | publish p99 |"
    );
    println!("|---|---|---|---|---|---|");
    for (alone, beside, _) in &r.rounds {
        for row in [alone, beside] {
            println!("{} {} |", row.lead_cells(), ms(row.publish_p99));
        }
    }
    println!();
    println!(
        "Deliveries/s of the 1 webhook load beside a replay ÷ alone, per round: {}",
        per_round(r.rounds.iter().map(|(a, b, _)| b.delivery_rate / a.delivery_rate).collect())
    );
}
