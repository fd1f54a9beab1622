//! History in PostgreSQL (issue 38, contract §8): the `1 webhook` and `10 webhooks` loads
//! with Redis only, with history at the shipped `WEIR_HISTORY_HOT` (10 minutes: nothing
//! moves within a run, so this is what noting ended work costs), and with a 1-second hot
//! period (the move running beside the load), in interleaved rounds; what stays in Redis
//! and what PostgreSQL keeps per delivery once moved; the move's own rate; and listing a
//! page of 50 of one webhook's deliveries out of a million moved ones.
//! `WEIR_BENCH_HISTORY_ONLY=loads|move|listing` runs one part alone;
//! `WEIR_BENCH_HISTORY_KEYS=1` prints what stays in Redis once everything moved, by kind of key.

use std::time::{Duration, Instant};

use super::load::{Http, Kind, Publisher, percentile};
use super::procs::{RedisProc, WeirProc};
use super::receiver::FastReceiver;
use crate::scenario::{Row, Scenario, ms, run};

/// Rounds of each mode.
const ROUNDS: usize = 3;

use crate::pg_proc::PREFIX;
pub use crate::pg_proc::PgProc;

/// How a run keeps history.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    RedisOnly,
    /// `WEIR_HISTORY_URL` set, the shipped hot period (10 minutes).
    Shipped,
    /// `WEIR_HISTORY_HOT=1s`: ended work moves while the load runs.
    Moving,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::RedisOnly => "Redis only",
            Mode::Shipped => "history, shipped defaults (nothing moves within the run)",
            Mode::Moving => "history, WEIR_HISTORY_HOT=1s (moving beside the load)",
        }
    }
}

/// One run's figures.
pub struct HistoryRun {
    load: &'static str,
    mode: Mode,
    row: Row,
    pg_cpu_us_per_delivery: f64,
    /// Once everything moved (the `Moving` runs): Redis bytes left per delivery, and
    /// PostgreSQL bytes on disk per delivery (deliveries' partitions, events' partitions).
    after_move: Option<(f64, f64, f64)>,
}

/// The move on its own: deliveries (with their events) written to PostgreSQL and gone from
/// Redis per second, and the CPU it took per delivery.
pub struct MoveRate {
    deliveries: u64,
    rate: f64,
    cpu_us: (f64, f64, f64),
}

/// Listing one webhook's deliveries out of many moved ones.
pub struct Listing {
    moved: u64,
    pages: usize,
    p50: Duration,
    p99: Duration,
    get_p99: Duration,
}

pub struct Figures {
    runs: Vec<HistoryRun>,
    moves: Option<MoveRate>,
    listing: Option<Listing>,
}

pub(crate) async fn metric(base: &str, name: &str) -> Option<f64> {
    let (_, text) = Http::connect(base).await.send("GET", "/metrics", "", "", Vec::new()).await;
    text.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))?.rsplit(' ').next()?.parse().ok()
}

/// Waits until history holds `deliveries` rows and `events` events, and nothing waits to move.
async fn until_moved(pg: &PgProc, weir: &WeirProc, deliveries: u64, events: u64) {
    let started = Instant::now();
    loop {
        let backlog = metric(&weir.base, "weir_history_backlog_deliveries").await.unwrap_or(1.0)
            + metric(&weir.base, "weir_history_backlog_events").await.unwrap_or(1.0);
        let (rows, logged) = pg.moved();
        if rows >= deliveries && logged >= events && backlog == 0.0 {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(1800), "the move did not finish");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What Redis keeps per delivery, once everything moved: `used_memory` over the baseline.
async fn one_run(
    redis: &RedisProc,
    pg: &PgProc,
    load: &'static str,
    mode: Mode,
    webhooks: usize,
    events: usize,
) -> HistoryRun {
    let url = pg.url();
    let mut env: Vec<(&str, &str)> = Vec::new();
    if mode != Mode::RedisOnly {
        env.push(("WEIR_HISTORY_URL", url.as_str()));
    }
    if mode == Mode::Moving {
        env.push(("WEIR_HISTORY_HOT", "1s"));
    }
    let baseline = redis.used_memory().await;
    let weir = WeirProc::start(redis, PREFIX, &env);
    let pg_before = pg.cpu_seconds();
    let row = run(&weir, redis, Scenario::new(load, webhooks, events, Kind::WorkOrder)).await;
    let pg_cpu = pg.cpu_seconds() - pg_before;
    let after_move = if mode == Mode::Moving {
        until_moved(pg, &weir, row.deliveries as u64, events as u64).await;
        // Ended deliveries' rows, events, the event log, the day indexes and the records'
        // snapshot pointers moved; bases of moved lists stay.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let left = redis.used_memory().await.saturating_sub(baseline) as f64 / row.deliveries as f64;
        if std::env::var_os("WEIR_BENCH_HISTORY_KEYS").is_some() {
            // What stays, by kind of key.
            for (kind, keys, bytes) in redis.memory_by_kind().await.iter().take(12) {
                eprintln!("{load}: {kind}: {keys} keys, {:.1} B per delivery", *bytes as f64 / row.deliveries as f64);
            }
        }
        let (d, e) = pg.bytes();
        Some((left, d as f64 / row.deliveries as f64, e as f64 / row.deliveries as f64))
    } else {
        None
    };
    weir.stop();
    redis.flush().await;
    pg.reset();
    HistoryRun { load, mode, pg_cpu_us_per_delivery: pg_cpu * 1e6 / row.deliveries as f64, row, after_move }
}

/// The move alone: the `1 webhook` load delivered with a long hot period, then a process
/// with a 1-second one moves all of it.
async fn move_rate(redis: &RedisProc, pg: &PgProc, events: usize) -> MoveRate {
    let url = pg.url();
    let weir = WeirProc::start(redis, PREFIX, &[("WEIR_HISTORY_URL", &url), ("WEIR_HISTORY_HOT", "1h")]);
    let row = run(&weir, redis, Scenario::new("1 webhook", 1, events, Kind::WorkOrder)).await;
    weir.stop();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let (redis_cpu, pg_cpu) = (redis.cpu_seconds().await, pg.cpu_seconds());
    let started = Instant::now();
    let weir = WeirProc::start(redis, PREFIX, &[("WEIR_HISTORY_URL", &url), ("WEIR_HISTORY_HOT", "1s")]);
    let weir_cpu = super::procs::cpu_seconds(weir.pid());
    until_moved(pg, &weir, row.deliveries as u64, events as u64).await;
    let elapsed = started.elapsed().as_secs_f64();
    let n = row.deliveries as f64;
    let cpu = (
        (super::procs::cpu_seconds(weir.pid()) - weir_cpu) * 1e6 / n,
        (redis.cpu_seconds().await - redis_cpu) * 1e6 / n,
        (pg.cpu_seconds() - pg_cpu) * 1e6 / n,
    );
    weir.stop();
    redis.flush().await;
    pg.reset();
    MoveRate { deliveries: row.deliveries as u64, rate: n / elapsed, cpu_us: cpu }
}

/// `events` fanned out to 10 webhooks and moved as they end, then pages of 50 of one
/// webhook's deliveries, newest first, followed down by their cursors.
async fn listing(redis: &RedisProc, pg: &PgProc, events: usize) -> Listing {
    let url = pg.url();
    let weir = WeirProc::start(redis, PREFIX, &[("WEIR_HISTORY_URL", &url), ("WEIR_HISTORY_HOT", "1s")]);
    let tenant = weir.tenant().await;
    let receiver = FastReceiver::start().await;
    let mut hooks = Vec::new();
    for _ in 0..10 {
        hooks.push(
            tenant
                .create_webhook_for(&weir.base, &receiver.url(), &["work_order_created"], serde_json::json!({}))
                .await,
        );
    }
    Publisher::new(&weir.base, &tenant.publisher_token).run(events, 32, Kind::WorkOrder).await;
    receiver.wait_for(events * 10, Duration::from_secs(3600)).await;
    until_moved(pg, &weir, (events * 10) as u64, events as u64).await;
    let mut http = Http::connect(&weir.base).await;
    let mut latencies = Vec::new();
    let mut cursor: Option<String> = None;
    let mut last_ids = Vec::new();
    for _ in 0..200 {
        let path = match &cursor {
            Some(c) => format!("/api/v2/webhook_deliveries?webhook_id={}&limit=50&cursor={c}", hooks[3]),
            None => format!("/api/v2/webhook_deliveries?webhook_id={}&limit=50", hooks[3]),
        };
        let started = Instant::now();
        let (status, body) = http.send("GET", &path, &tenant.admin_token, "", Vec::new()).await;
        latencies.push(started.elapsed());
        assert_eq!(status, 200, "{body}");
        let page: serde_json::Value = serde_json::from_str(&body).expect("json");
        last_ids = page["data"]
            .as_array()
            .map(|d| d.iter().filter_map(|x| x["id"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    let mut gets = Vec::new();
    for id in last_ids.iter().take(50) {
        let started = Instant::now();
        let (status, _) =
            http.send("GET", &format!("/api/v2/webhook_deliveries/{id}"), &tenant.admin_token, "", Vec::new()).await;
        gets.push(started.elapsed());
        assert_eq!(status, 200);
    }
    let moved = pg.moved().0;
    weir.stop();
    redis.flush().await;
    pg.reset();
    let pages = latencies.len();
    Listing {
        moved,
        pages,
        p50: percentile(&mut latencies, 50.0),
        p99: percentile(&mut latencies.clone(), 99.0),
        get_p99: percentile(&mut gets, 99.0),
    }
}

/// Every figure (`listing_events` fanned out 10 ways: 100,000 for a million deliveries).
pub async fn figures(redis: &RedisProc, events: usize, listing_events: usize) -> Figures {
    // WEIR_BENCH_HISTORY_ONLY=loads|move|listing runs one part alone.
    let only = std::env::var("WEIR_BENCH_HISTORY_ONLY").ok();
    let part = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let pg = PgProc::start();
    let mut runs = Vec::new();
    for round in 0..if part("loads") { ROUNDS } else { 0 } {
        let mut modes = [Mode::RedisOnly, Mode::Shipped, Mode::Moving];
        modes.rotate_left(round % 3);
        for mode in modes {
            runs.push(one_run(redis, &pg, "1 webhook", mode, 1, events).await);
            runs.push(one_run(redis, &pg, "10 webhooks", mode, 10, events / 10).await);
        }
    }
    let moves = if part("move") { Some(move_rate(redis, &pg, events).await) } else { None };
    let listing =
        if part("listing") && listing_events > 0 { Some(listing(redis, &pg, listing_events).await) } else { None };
    Figures { runs, moves, listing }
}

pub fn print(f: &Figures) {
    println!();
    println!(
        "| history (rounds interleaved) | mode | deliveries/s | vs Redis only (same round) | Weir CPU per delivery | Redis | PostgreSQL | once moved: Redis bytes per delivery | PostgreSQL bytes per delivery (rows and day indexes + events and snapshot pointers) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (i, r) in f.runs.iter().enumerate() {
        let round = i / 6;
        let base = f.runs[round * 6..round * 6 + 6]
            .iter()
            .find(|b| b.load == r.load && b.mode == Mode::RedisOnly)
            .map_or(f64::NAN, |b| b.row.delivery_rate);
        let moved = r.after_move.map_or_else(
            || ("—".to_owned(), "—".to_owned()),
            |(redis, d, e)| (format!("{redis:.0}"), format!("{:.0} ({d:.0} + {e:.0})", d + e)),
        );
        println!(
            "| {} | {} | {:.0} | {:.2}× | {:.0} µs | {:.0} µs | {:.0} µs | {} | {} |",
            r.load,
            r.mode.label(),
            r.row.delivery_rate,
            r.row.delivery_rate / base,
            r.row.cpu_us_per_delivery,
            r.row.redis_cpu_us_per_delivery,
            r.pg_cpu_us_per_delivery,
            moved.0,
            moved.1
        );
    }
    if let Some(m) = &f.moves {
        println!();
        println!(
            "The move alone: {} ended deliveries (1 webhook, with their events) moved at {:.0}/s; CPU per delivery moved: Weir {:.0} µs, Redis {:.0} µs, PostgreSQL {:.0} µs",
            m.deliveries, m.rate, m.cpu_us.0, m.cpu_us.1, m.cpu_us.2
        );
    }
    if let Some(l) = &f.listing {
        println!(
            "Listing out of {} moved deliveries (10 webhooks): {} pages of 50 of one webhook's, followed by their cursors: p50 {}, p99 {}; GET of one moved delivery p99 {}",
            l.moved,
            l.pages,
            ms(l.p50),
            ms(l.p99),
            ms(l.get_p99)
        );
    }
}
