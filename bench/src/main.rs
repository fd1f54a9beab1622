//! `weir-bench`: starts Redis (AOF on, as in production), the release `weir serve` and a
//! fast receiver on loopback, runs the scenarios, and prints a table.
//!
//! Scenarios (the same loads peers are measured with):
//! - `1 webhook`: 20,000 events of ~1 KB published over 32 keep-alive connections, one
//!   subscribed webhook (20,000 deliveries).
//! - `10 webhooks`: 2,000 events fanned out to 10 webhooks (20,000 deliveries).
//! - `10 webhooks, 64 in flight per webhook`: the same with a higher per-webhook cap than
//!   the shipped default (16), to show what the default costs (an extra, labelled row).
//! - `… 3-master cluster`: the first two on a Redis Cluster of three masters; Redis CPU is
//!   summed over the masters, with each master's share.
//! - Open loop (in a full run): 1 webhook, events published at a fixed rate of half the
//!   `1 webhook` delivery rate; publish→receipt p50/p99/p99.9.
//! - Redis memory per queued delivery: 10,000 events published to an API-only node (no
//!   workers), so every delivery stays queued; then once delivered. On one Redis and (when
//!   a cluster scenario ran) on the cluster.
//!
//! - `1 webhook, rate_limit 1000/s`: the first load with the webhook limited (the rate reached,
//!   and the CPU it costs).
//! - `isolation`: one healthy webhook published to at 200 events/s, alone and beside 400
//!   webhooks whose endpoint accepts and never answers (each sent 30 events first):
//!   publish→receipt p50/p99/max, and the sockets the hanging endpoints held.
//! - `1 webhook, report exports` (with and without the `report-export-filter` plugin):
//!   the export scenario of issue 5, ~1 KB `report_export_completed` events.
//! - `recovery`: Redis memory per retained event that nothing subscribed to (with the event
//!   log, and with `WEIR_EVENT_RETENTION=0s`); a replay of 100,000 retained events to a new
//!   webhook (queued in, delivered in), alone and while the `1 webhook` load runs beside it,
//!   and that load's figures alone and beside the replay.
//! - `ordering`: 20,000 events over 1,000 subjects to one webhook with `ordering: "subject"`
//!   against the same without (three interleaved rounds), and 5,000 events about one subject.
//! - `egress`: the `1 webhook` load delivered directly and through `tinyproxy`
//!   (`WEIR_EGRESS_PROXY`), three interleaved rounds, with the proxy's CPU and tunnels.
//! - `history`: the `1 webhook` and `10 webhooks` loads with Redis only, with history in
//!   PostgreSQL at the shipped hot period, and with `WEIR_HISTORY_HOT=1s` (the move beside
//!   the load), three interleaved rounds, with PostgreSQL's CPU; Redis and PostgreSQL bytes
//!   per delivery once moved; the move's own rate; listing a page of 50 of one webhook's
//!   deliveries out of a million moved ones (100,000 events fanned out to 10 webhooks).
//! - The cost of one plugin call, in process.
//! - `10 webhooks, open loop` (only when named): the `10 webhooks` load closed-loop, then
//!   published at 25%, 40%, 55% and 70% of its publish rate (open loop), two rounds: publish
//!   latency under fan-out without the closed loop's queue (`fanout.rs`).
//!
//! Run it with `scripts/bench.sh` (which builds in release mode first). Knobs:
//! `WEIR_BENCH_SCALE` (a fraction of the load), `WEIR_BENCH_SCENARIO` (one scenario by name),
//! `WEIR_BENCH_PLAN=metered` (the organisation on a plan with a daily limit it never reaches:
//! each publish takes its place in the organisation's counter, issue 57),
//! `WEIR_BENCH_ONLY=sources` (providers' requests to sources against publishing, `sources.rs`),
//! `WEIR_BENCH_ONLY=brokers` (the "1 webhook" load to NATS JetStream and RabbitMQ against HTTP, `brokers.rs`),
//! `WEIR_BENCH_ONLY=plugin` (only the plugin call), `WEIR_BENCH_ONLY=noisy` (a quiet tenant's
//! reads beside each load of round 5's probe, `noisy.rs`), `WEIR_BENCH_ONLY=filter_bounds`
//! (each calibration filter's bound beside its measured time), `WEIR_BENCH_ONLY=compression` (storing
//! an event with each of the two dictionaries, `compression.rs`), `WEIR_BENCH_ONLY=stages` (Redis CPU per
//! delivery, stage by stage, in-process), `WEIR_BENCH_AOF=no` (Redis without AOF),
//! `WEIR_BENCH_CONNECTIONS` (the closed-loop publishers' connections, 32 by default: the
//! peers' load), `WEIR_BENCH_COMMANDSTATS=1` (print Redis's per-command statistics and slow
//! log after each scenario) with `WEIR_BENCH_SLOWLOG_US` (the slow log threshold; `0` logs
//! every command).

#![allow(unreachable_pub, missing_debug_implementations)]

mod brokers;
mod compression;
mod egress;
mod fanout;
mod filters;
mod flow;
mod history;
mod load;
mod measures;
mod noisy;
mod ordering;
mod otel;
mod pg_proc;
mod plugin;
mod procs;
mod race_load;
mod receiver;
mod recovery;
mod scenario;
mod sources;
mod stages;
mod weir_proc;

use load::Kind;
use measures::{open_loop, queued_memory};
use procs::{RedisProc, WeirProc};
use scenario::{CONNECTIONS, Row, Scenario, connections, ms, run};

/// The same allocator as the `weir` binary, for the in-process plugin measurement.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("race-load") {
        return race_load::main(&args[1..]);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    runtime.block_on(bench());
    std::process::ExitCode::SUCCESS
}

async fn bench() {
    weir::install_crypto_provider();
    let scale: f64 = std::env::var("WEIR_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let n = |x: usize| ((x as f64 * scale) as usize).max(10);
    if let Ok(part) = std::env::var("WEIR_BENCH_ONLY")
        && one_part(&part, &n).await
    {
        return;
    }
    if std::env::var("WEIR_BENCH_SCENARIO").as_deref() == Ok(fanout::SCENARIO) {
        fanout::print(&fanout::figures(&RedisProc::start(), n(10_000)).await);
        return;
    }
    if connections() != CONNECTIONS {
        println!("Closed-loop publishers on {} connections (not the default {CONNECTIONS}).\n", connections());
    }
    let redis = RedisProc::start();
    let mut cluster: Option<RedisProc> = None;
    let mut rows = Vec::new();
    let only = std::env::var("WEIR_BENCH_SCENARIO").ok();
    for s in scenarios(&n) {
        if only.as_deref().is_some_and(|o| o != s.name) {
            continue;
        }
        let store = if s.cluster { &*cluster.get_or_insert_with(|| RedisProc::start_cluster(3)) } else { &redis };
        let weir = WeirProc::start(store, "bench", s.env);
        let name = s.name;
        rows.push(run(&weir, store, s).await);
        if std::env::var("WEIR_BENCH_COMMANDSTATS").is_ok() {
            eprintln!("--- {name}\n{}", store.commandstats().await);
        }
        weir.stop();
        store.flush().await;
    }
    let parts = Parts::measure(&redis, only.as_deref(), &n).await;
    // Open loop at half the saturation rate measured above: latency as users see it.
    let latency = match rows.iter().find(|r| r.name == "1 webhook") {
        Some(r) if only.is_none() => Some(open_loop(&redis, (r.delivery_rate / 2.0).round(), n(20_000)).await),
        _ => None,
    };
    let memory = queued_memory(&redis, n(10_000)).await;
    let on_cluster = match &cluster {
        Some(c) => Some(queued_memory(c, n(10_000)).await),
        None => None,
    };
    let calls = n(20_000);
    let call = plugin::call_cost(calls);
    print_rows(&rows);
    parts.print();
    if let Some(l) = latency {
        println!();
        println!(
            "Open loop, 1 webhook, {} events at {:.0}/s (half the saturation rate above): publish→receipt p50 {}, p99 {}, p99.9 {}; publish p99 {}",
            l.events,
            l.rate,
            ms(l.p50),
            ms(l.p99),
            ms(l.p999),
            ms(l.publish_p99)
        );
    }
    print_memory(memory, on_cluster);
    let (call_p50, call_p99, fuel) = call;
    println!(
        "Plugin call (report-export-filter, ~1 KB report_export_completed, fresh instance each): p50 {:.1} µs, p99 {:.1} µs over {calls} calls ({fuel} fuel per call)",
        call_p50.as_secs_f64() * 1e6,
        call_p99.as_secs_f64() * 1e6
    );
    print_fairness(n(2_000)).await;
}

/// `WEIR_BENCH_ONLY=<part>`: measures and prints that part alone; whether `part` is one.
async fn one_part(part: &str, n: &impl Fn(usize) -> usize) -> bool {
    match part {
        "plugin" => {
            let calls = n(20_000);
            let (p50, p99, fuel) = plugin::call_cost(calls);
            println!(
                "plugin call p50 {:.1} µs p99 {:.1} µs ({fuel} fuel)",
                p50.as_secs_f64() * 1e6,
                p99.as_secs_f64() * 1e6
            );
            print_fairness(n(2_000)).await;
        }
        "compression" => compression::print(n(20_000)),
        "brokers" => brokers::print().await,
        "sources" => {
            sources::print(n(20_000)).await;
            sources::print_flood().await;
        }
        "noisy" => noisy::print().await,
        "filter_bounds" => filters::print(n(2_000)),
        "filters" => {
            filters::print(n(20_000));
            let redis = RedisProc::start();
            filters::print_publish(&filters::publish_runs(&redis, n(2_000)).await);
        }
        "otel" => {
            let redis = RedisProc::start();
            otel::print(&otel::figures(&redis, n(20_000)).await);
        }
        "languages" => {
            plugin::print_costs(&plugin::language_costs(n(2_000)));
            for (language, file) in [("JavaScript", "hostile-js.wasm"), ("Python", "hostile-py.wasm")] {
                let (idle, busy) = plugin::fairness_beside_interpreter(n(2_000), file).await;
                println!(
                    "Plugin fairness beside {language}: org B's report-export-filter p50 {:.1} µs alone, {:.1} µs while org A keeps 64 {language} calls looping to their fuel ({:.2}× idle)",
                    idle.as_secs_f64() * 1e6,
                    busy.as_secs_f64() * 1e6,
                    busy.as_secs_f64() / idle.as_secs_f64()
                );
            }
        }
        "stages" => {
            stages::run(n(20_000), 1).await;
            println!();
            stages::run(n(20_000), 10).await;
        }
        _ => return false,
    }
    true
}

/// The closed-loop scenarios, in the order they run.
fn scenarios(n: &impl Fn(usize) -> usize) -> Vec<Scenario> {
    let wo = Kind::WorkOrder;
    let uncapped: &'static [(&'static str, &'static str)] = &[("WEIR_MAX_IN_FLIGHT_PER_WEBHOOK", "64")];
    vec![
        Scenario::new("1 webhook", 1, n(20_000), wo),
        Scenario::new("10 webhooks", 10, n(2_000), wo),
        Scenario {
            env: uncapped,
            ..Scenario::new("10 webhooks, 64 in flight per webhook (not the default)", 10, n(2_000), wo)
        },
        Scenario::new("1 webhook, report exports", 1, n(20_000), Kind::ReportExport),
        Scenario {
            plugin: true,
            ..Scenario::new("1 webhook, report exports + report-export-filter", 1, n(20_000), Kind::ReportExport)
        },
        Scenario { rate_limit: Some(1_000), ..Scenario::new("1 webhook, rate_limit 1000/s", 1, n(20_000), wo) },
        Scenario {
            rate_limit: Some(1_000),
            paced: Some(1_000.0),
            ..Scenario::new("1 webhook, rate_limit 1000/s, published at 1000/s", 1, n(20_000), wo)
        },
        Scenario { paced: Some(1_000.0), ..Scenario::new("1 webhook, published at 1000/s", 1, n(20_000), wo) },
        Scenario { cluster: true, ..Scenario::new("1 webhook, 3-master cluster", 1, n(20_000), wo) },
        Scenario { cluster: true, ..Scenario::new("10 webhooks, 3-master cluster", 10, n(2_000), wo) },
    ]
}

/// The parts measured after the scenarios (each alone with `WEIR_BENCH_SCENARIO=<its name>`).
struct Parts {
    isolation: Vec<flow::Isolation>,
    recovery: Option<recovery::Figures>,
    egress: Vec<(Row, egress::Proxied)>,
    ordered: Option<ordering::Figures>,
    history: Option<history::Figures>,
}

impl Parts {
    async fn measure(redis: &RedisProc, only: Option<&str>, n: &impl Fn(usize) -> usize) -> Parts {
        let wanted = |part: &str| only.is_none() || only == Some(part);
        // A healthy webhook beside hundreds whose endpoints never answer (and alone).
        let isolation = if wanted("isolation") {
            let (events, rate) = (n(2_000), 200.0);
            vec![flow::isolation(redis, 0, events, rate).await, flow::isolation(redis, 400, events, rate).await]
        } else {
            Vec::new()
        };
        Parts {
            isolation,
            // Recovery: what retention costs, and a replay alone and beside the ordinary load.
            recovery: match wanted("recovery") {
                true => Some(recovery::figures(redis, n(10_000), n(100_000), n(20_000)).await),
                false => None,
            },
            // Egress: the same load direct and through an HTTP proxy.
            egress: match wanted("egress") {
                true => egress::figures(redis, n(20_000)).await,
                false => Vec::new(),
            },
            // Ordering: one webhook with each subject's order kept, against without.
            ordered: match wanted("ordering") {
                true => Some(ordering::figures(redis, n(20_000), n(5_000)).await),
                false => None,
            },
            // History in PostgreSQL: Redis only against history, interleaved; bytes; the
            // move; listing.
            history: match wanted("history") {
                true => Some(history::figures(redis, n(20_000), n(100_000)).await),
                false => None,
            },
        }
    }

    fn print(&self) {
        if !self.isolation.is_empty() {
            flow::print_isolation(&self.isolation);
        }
        if let Some(r) = &self.recovery {
            recovery::print(r);
        }
        if !self.egress.is_empty() {
            egress::print(&self.egress);
        }
        if let Some(o) = &self.ordered {
            ordering::print(o);
        }
        if let Some(h) = &self.history {
            history::print(h);
        }
    }
}

/// The closed-loop scenarios' table, and their CPU per delivery by process.
fn print_rows(rows: &[Row]) {
    println!();
    println!(
        "| scenario | events | deliveries | publish/s | publish p50 | publish p99 | deliveries/s | publish→receipt p50 | p99 | Weir CPU per delivery | Weir peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
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
    println!("CPU per delivery, by process (the machine's cores are shared by all of them):");
    println!();
    println!(
        "| scenario | Weir | Redis (summed over masters) | each master's share of Redis CPU | load generator + receiver |"
    );
    println!("|---|---|---|---|---|");
    for r in rows {
        let shares = if r.redis_shares.len() > 1 {
            r.redis_shares.iter().map(|s| format!("{:.0}%", s * 100.0)).collect::<Vec<_>>().join(" / ")
        } else {
            "(one Redis)".to_owned()
        };
        println!(
            "| {} | {:.1} µs | {:.1} µs | {} | {:.1} µs |",
            r.name, r.cpu_us_per_delivery, r.redis_cpu_us_per_delivery, shares, r.bench_cpu_us_per_delivery
        );
    }
}

/// Redis memory per delivery, queued and once delivered (one Redis, and the cluster's).
fn print_memory((queued, delivered): (f64, f64), on_cluster: Option<(f64, f64)>) {
    println!();
    println!(
        "Redis memory per delivery (event, delivery record, indexes, queue entry): {queued:.0} bytes queued, {delivered:.0} bytes once delivered (kept for the retention period)"
    );
    if let Some((queued, delivered)) = on_cluster {
        println!(
            "Redis memory per delivery on the 3-master cluster (summed over masters): {queued:.0} bytes queued, {delivered:.0} bytes once delivered"
        );
    }
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
