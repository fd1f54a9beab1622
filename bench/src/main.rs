//! `weir-bench`: starts Redis (AOF on, as in production), the release `weir serve` and a
//! fast receiver on loopback, runs the scenarios, and prints a table.
//!
//! Scenarios (the same loads peers are measured with):
//! - `1 webhook`: 20,000 events of ~1 KB published over 32 keep-alive connections, one
//!   subscribed webhook (20,000 deliveries).
//! - `10 webhooks`: 2,000 events fanned out to 10 webhooks (20,000 deliveries).
//! - Redis memory per queued delivery: 10,000 events published to an API-only node (no
//!   workers), so every delivery stays queued.
//!
//! - `1 webhook, report exports` (with and without the `report-export-filter` plugin):
//!   the export scenario of issue 5, ~1 KB `report_export_completed` events.
//! - The cost of one plugin call, in process.
//!
//! Run it with `scripts/bench.sh` (which builds in release mode first). Knobs:
//! `WEIR_BENCH_SCALE` (a fraction of the load), `WEIR_BENCH_SCENARIO` (one scenario by name),
//! `WEIR_BENCH_ONLY=plugin` (only the plugin call), `WEIR_BENCH_ONLY=stages` (Redis CPU per
//! delivery, stage by stage, in-process), `WEIR_BENCH_AOF=no` (Redis without AOF),
//! `WEIR_BENCH_COMMANDSTATS=1` (print Redis's per-command statistics and slow log after each
//! scenario) with `WEIR_BENCH_SLOWLOG_US` (the slow log threshold; `0` logs every command).

#![allow(unreachable_pub, missing_debug_implementations)]

mod load;
mod plugin;
mod procs;
mod receiver;
mod stages;

use std::time::{Duration, Instant};

use load::{Kind, Publisher, percentile};
use procs::{RedisProc, WeirProc, cpu_seconds, peak_rss_kib};
use receiver::FastReceiver;

/// One scenario's figures.
struct Row {
    name: String,
    events: usize,
    deliveries: usize,
    publish_rate: f64,
    publish_p50: Duration,
    publish_p99: Duration,
    delivery_rate: f64,
    e2e_p50: Duration,
    e2e_p99: Duration,
    cpu_us_per_delivery: f64,
    redis_cpu_us_per_delivery: f64,
    bench_cpu_us_per_delivery: f64,
    peak_rss_mib: f64,
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// The same allocator as the `weir` binary, for the in-process plugin measurement.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    weir::install_crypto_provider();
    let scale: f64 = std::env::var("WEIR_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let n = |x: usize| ((x as f64 * scale) as usize).max(10);
    if std::env::var("WEIR_BENCH_ONLY").as_deref() == Ok("plugin") {
        let calls = n(20_000);
        let (p50, p99, fuel) = plugin::call_cost(calls);
        println!(
            "plugin call p50 {:.1} µs p99 {:.1} µs ({fuel} fuel)",
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6
        );
        print_fairness(n(2_000)).await;
        return;
    }
    if std::env::var("WEIR_BENCH_ONLY").as_deref() == Ok("stages") {
        stages::run(n(20_000), 1).await;
        println!();
        stages::run(n(20_000), 10).await;
        return;
    }
    let redis = RedisProc::start();
    let mut rows = Vec::new();

    let scenarios = [
        ("1 webhook", 1, n(20_000), Kind::WorkOrder, false),
        ("10 webhooks", 10, n(2_000), Kind::WorkOrder, false),
        ("1 webhook, report exports", 1, n(20_000), Kind::ReportExport, false),
        ("1 webhook, report exports + report-export-filter", 1, n(20_000), Kind::ReportExport, true),
    ];
    let only = std::env::var("WEIR_BENCH_SCENARIO").ok();
    for (name, webhooks, events, kind, plugin) in scenarios {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let weir = WeirProc::start(&redis, "bench", &[]);
        rows.push(run(&weir, &redis, Scenario { name, webhooks, events, kind, plugin }).await);
        if std::env::var("WEIR_BENCH_COMMANDSTATS").is_ok() {
            eprintln!("--- {name}\n{}", redis.commandstats().await);
        }
        weir.stop();
        redis.flush().await;
    }
    let (queued, delivered) = queued_memory(&redis, n(10_000)).await;
    let calls = n(20_000);
    let (call_p50, call_p99, fuel) = plugin::call_cost(calls);

    println!();
    println!(
        "| scenario | events | deliveries | publish/s | publish p50 | publish p99 | deliveries/s | publish→receipt p50 | p99 | Weir CPU per delivery | Weir peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {:.0} | {} | {} | {:.0} | {} | {} | {:.0} µs | {:.0} MiB |",
            r.name,
            r.events,
            r.deliveries,
            r.publish_rate,
            ms(r.publish_p50),
            ms(r.publish_p99),
            r.delivery_rate,
            ms(r.e2e_p50),
            ms(r.e2e_p99),
            r.cpu_us_per_delivery,
            r.peak_rss_mib
        );
    }
    println!();
    println!("CPU per delivery, by process (the machine's cores are shared by all three):");
    println!();
    println!("| scenario | Weir | Redis | load generator + receiver |");
    println!("|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {:.0} µs | {:.0} µs | {:.0} µs |",
            r.name, r.cpu_us_per_delivery, r.redis_cpu_us_per_delivery, r.bench_cpu_us_per_delivery
        );
    }
    println!();
    println!(
        "Redis memory per delivery (event, delivery record, indexes, queue entry): {queued:.0} bytes queued, {delivered:.0} bytes once delivered (kept for the retention period)"
    );
    println!(
        "Plugin call (report-export-filter, ~1 KB report_export_completed, fresh instance each): p50 {:.1} µs, p99 {:.1} µs over {calls} calls ({fuel} fuel per call)",
        call_p50.as_secs_f64() * 1e6,
        call_p99.as_secs_f64() * 1e6
    );
    print_fairness(n(2_000)).await;
}

/// One organisation's plugin calls while another saturates its own (per-organisation share).
async fn print_fairness(calls: usize) {
    let (idle, busy) = plugin::fairness(calls).await;
    println!(
        "Plugin fairness (org B's report-export-filter calls, shipped defaults): p50 {:.1} µs alone, {:.1} µs while org A keeps 64 calls spinning to their 50 ms limit ({:.2}× idle)",
        idle.as_secs_f64() * 1e6,
        busy.as_secs_f64() * 1e6,
        busy.as_secs_f64() / idle.as_secs_f64()
    );
}

struct Scenario {
    name: &'static str,
    webhooks: usize,
    events: usize,
    kind: Kind,
    plugin: bool,
}

async fn run(weir: &WeirProc, redis: &RedisProc, s: Scenario) -> Row {
    let Scenario { name, webhooks, events, kind, plugin } = s;
    let tenant = weir.tenant().await;
    let receiver = FastReceiver::start().await;
    let plugins = if plugin {
        let id = tenant.upload_filter(&weir.base).await;
        serde_json::json!([{"plugin_id": id, "config": {"exportable_types": ["Form"], "exportable_ids": ["frm_1"], "creator_ids": ["cli_bench"]}}])
    } else {
        serde_json::json!([])
    };
    for _ in 0..webhooks {
        tenant.create_webhook(&weir.base, &receiver.url(), plugins.clone()).await;
    }
    let deliveries = events * webhooks;
    let publisher = Publisher::new(&weir.base, &tenant.publisher_token);
    let cpu_before = cpu_seconds(weir.pid());
    let redis_before = redis.cpu_seconds().await;
    let bench_before = cpu_seconds(std::process::id());
    let started = Instant::now();
    let published = publisher.run(events, 32, kind).await;
    let publish_elapsed = started.elapsed();
    receiver.wait_for(deliveries, Duration::from_secs(600)).await;
    let delivered_at = receiver.last_arrival().unwrap_or_else(Instant::now);
    let cpu = cpu_seconds(weir.pid()) - cpu_before;
    let redis_cpu = redis.cpu_seconds().await - redis_before;
    let bench_cpu = cpu_seconds(std::process::id()) - bench_before;
    let mut publish_latencies: Vec<Duration> = published.iter().map(|p| p.latency).collect();
    let mut e2e = receiver.latencies(&published);
    Row {
        name: name.to_owned(),
        events,
        deliveries,
        publish_rate: events as f64 / publish_elapsed.as_secs_f64(),
        publish_p50: percentile(&mut publish_latencies, 50.0),
        publish_p99: percentile(&mut publish_latencies, 99.0),
        delivery_rate: deliveries as f64 / (delivered_at - started).as_secs_f64(),
        e2e_p50: percentile(&mut e2e, 50.0),
        e2e_p99: percentile(&mut e2e, 99.0),
        cpu_us_per_delivery: cpu * 1e6 / deliveries as f64,
        redis_cpu_us_per_delivery: redis_cpu * 1e6 / deliveries as f64,
        bench_cpu_us_per_delivery: bench_cpu * 1e6 / deliveries as f64,
        peak_rss_mib: peak_rss_kib(weir.pid()) as f64 / 1024.0,
    }
}

/// Publishes `events` to an API-only node and measures Redis' memory growth per delivery.
async fn queued_memory(redis: &RedisProc, events: usize) -> (f64, f64) {
    let weir = WeirProc::start(redis, "mem", &[("WEIR_WORKERS", "false")]);
    let tenant = weir.tenant().await;
    let receiver = FastReceiver::start().await;
    tenant.create_webhook(&weir.base, &receiver.url(), serde_json::json!([])).await;
    let before = redis.used_memory().await;
    Publisher::new(&weir.base, &tenant.publisher_token).run(events, 32, Kind::WorkOrder).await;
    let queued = redis.used_memory().await;
    weir.stop();
    // Then delivered: what stays for the retention period.
    let weir = WeirProc::start(redis, "mem", &[]);
    receiver.wait_for(events, Duration::from_secs(300)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let delivered = redis.used_memory().await;
    weir.stop();
    let per = |after: u64| after.saturating_sub(before) as f64 / events as f64;
    (per(queued), per(delivered))
}
