//! A filter's evaluation (issue 39), in process: the document's own case on a ~1 KB and a
//! ~100 KB `report_export_completed` envelope (the envelope made into CEL values once per
//! event, as publishing does, then the filter evaluated), the costliest filters the check
//! admits on the largest event, to show the bound in time; and publishing to 10 webhooks
//! with filters (half selecting) against the same without, interleaved.

use std::time::{Duration, Instant};

use weir::filters::{COST_BUDGET, Envelope, Filter, Selection};

use crate::load::{Kind, percentile};
use crate::procs::{RedisProc, WeirProc};
use crate::scenario::{Row, Scenario, run};

/// The service document's case.
const DOCUMENTED: &str = r#"report_export.exportable.type == "Form" && creator.id in ["cli_bench", "usr_2"]"#;

fn envelope_of(padding: usize) -> String {
    let mut e: serde_json::Value =
        serde_json::from_str(&crate::load::export_envelope("rex_1", "frm_1", "cli_bench")).expect("json");
    e["report_export"]["notes"] = serde_json::Value::String("x".repeat(padding));
    e.to_string()
}

/// p50 and p99 of making the envelope's values and evaluating once, over `n` events.
fn cost(filter: &Filter, json: &str, n: usize) -> (Duration, Duration) {
    let mut times = Vec::with_capacity(n);
    for i in 0..n + 100 {
        let started = Instant::now();
        let envelope = Envelope::parse(json).expect("envelope");
        let verdict = filter.evaluate(&envelope);
        let took = started.elapsed();
        assert_eq!(verdict, Selection::Selected);
        if i >= 100 {
            times.push(took);
        }
    }
    (percentile(&mut times.clone(), 50.0), percentile(&mut times, 99.0))
}

pub fn print(n: usize) {
    let filter = Filter::compile(DOCUMENTED).expect("the documented filter");
    println!();
    println!("| filter evaluation (envelope made once, then evaluated) | event | p50 | p99 |");
    println!("|---|---|---|---|");
    for (label, padding) in [("~1 KB", 0), ("~100 KB", 100_000)] {
        let json = envelope_of(padding);
        let (p50, p99) = cost(&filter, &json, n);
        println!("| `{DOCUMENTED}` | {label} ({} bytes) | {:.1} µs | {:.1} µs |", json.len(), us(p50), us(p99));
    }
    calibration();
}

/// The filters the cost model (`filters::check`) is calibrated against: each one's bound
/// (an estimate for this build) beside its measured time on the largest event a filter with
/// macros is evaluated on (as many elements as macros go through, ~1 MiB of JSON) — the
/// bound must stay above the time; and the costliest of them show what the check admits.
const CALIBRATION: [&str; 10] = [
    "report_export.tags.all(t, true)",
    "report_export.tags.exists(t, t == 19979)",
    "report_export.tags.all(t, string(t).size() < 10)",
    "report_export.tags.all(t, t >= 0 && t < 100000 && t != -8 && t != -9 && t != -10)",
    "report_export.tags.map(t, t + 1).filter(t, t > 3).size() > 0",
    "report_export.tags.exists(t, t == 19979) && report_export.tags.map(t, t).size() > 0",
    "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30].all(a, \
     [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30].all(b, \
     [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30].all(c, a != -b)))",
    "!creator.name.contains('zz') && creator.name.startsWith('x') && size(creator.name + creator.name) > 0",
    "creator.name.matches('^x*y$')",
    "event.report_export.tags.exists(t, t == 19979)",
];

fn calibration() {
    let items: Vec<u32> = (0..weir::filters::MAX_MACRO_ELEMENTS as u32 - 20).collect();
    let big = serde_json::json!({"id": "evt_1", "report_export": {"tags": items},
        "creator": {"id": "u", "name": "x".repeat(400_000)}})
    .to_string();
    println!();
    println!(
        "| filter (calibration, on {} numbers and a 400 KB string) | bound | measured (p50 of 5) | verdict |",
        items_len(&big)
    );
    println!("|---|---|---|---|");
    let envelope = Envelope::parse(&big).expect("envelope");
    for source in CALIBRATION {
        let f = match Filter::compile(source) {
            Ok(f) => f,
            Err(e) => {
                println!("| `{source}` | refused by the check: {e} | — | — |");
                continue;
            }
        };
        let mut times: Vec<Duration> = (0..5)
            .map(|_| {
                let started = Instant::now();
                let _ = f.evaluate_within(&envelope, Duration::from_secs(10));
                started.elapsed()
            })
            .collect();
        let verdict = f.evaluate_within(&envelope, Duration::from_secs(10));
        let measured = percentile(&mut times, 50.0);
        println!(
            "| `{source}` | {:.1} ms | {:.1} ms | {verdict:?} |",
            f.cost_bound() as f64 / 1e6,
            measured.as_secs_f64() * 1e3
        );
    }
    println!(
        "(the check admits a bound of at most {} ms; an evaluation is stopped at {} ms)",
        COST_BUDGET / 1_000_000,
        weir::filters::TIME_LIMIT.as_millis()
    );
}

fn items_len(json: &str) -> usize {
    json.matches(',').count()
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Publishing to 10 webhooks each with a filter, half of them selecting (`filtered: true`
/// in the scenario), against the same without filters and against the selecting half alone
/// (5 webhooks without filters: the work the filters leave), in interleaved rounds: publish
/// latency, CPU per event, and Redis memory per event once delivered.
pub struct PublishRun {
    row: Row,
    /// Redis `used_memory` growth per event, once everything was delivered.
    redis_bytes_per_event: f64,
}

/// The runs compared: (label, webhooks, filtered).
const MODES: [(&str, usize, bool); 3] = [
    ("10 webhooks, no filters", 10, false),
    ("10 webhooks, filters (half select)", 10, true),
    ("5 webhooks, no filters (the selecting half alone)", 5, false),
];

pub async fn publish_runs(redis: &RedisProc, events: usize) -> Vec<PublishRun> {
    let mut runs = Vec::new();
    for round in 0..3 {
        let mut modes = MODES;
        modes.rotate_left(round % MODES.len());
        for (label, webhooks, filtered) in modes {
            let before = redis.used_memory().await;
            let weir = WeirProc::start(redis, "filters", &[]);
            let mut scenario = Scenario::new(label, webhooks, events, Kind::ReportExport);
            scenario.filtered = filtered;
            let row = run(&weir, redis, scenario).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            let redis_bytes_per_event = redis.used_memory().await.saturating_sub(before) as f64 / events as f64;
            weir.stop();
            redis.flush().await;
            runs.push(PublishRun { row, redis_bytes_per_event });
        }
    }
    runs
}

pub fn print_publish(runs: &[PublishRun]) {
    println!();
    println!(
        "| publishing (rounds interleaved) | events | deliveries | publish p50 | publish p99 | Weir CPU per event | Redis CPU per event | Redis bytes per event, delivered |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in runs {
        let per_event = |per_delivery: f64| per_delivery * r.row.deliveries as f64 / r.row.events as f64;
        println!(
            "| {} | {} | {} | {:.1} ms | {:.1} ms | {:.0} µs | {:.0} µs | {:.0} |",
            r.row.name,
            r.row.events,
            r.row.deliveries,
            r.row.publish_p50.as_secs_f64() * 1e3,
            r.row.publish_p99.as_secs_f64() * 1e3,
            per_event(r.row.cpu_us_per_delivery),
            per_event(r.row.redis_cpu_us_per_delivery),
            r.redis_bytes_per_event
        );
    }
    // Weir's CPU per event with filters against the selecting half alone, round by round.
    let cpu = |label: &str| -> Vec<f64> {
        runs.iter()
            .filter(|r| r.row.name == label)
            .map(|r| r.row.cpu_us_per_delivery * r.row.deliveries as f64 / r.row.events as f64)
            .collect()
    };
    let ratios: Vec<String> = cpu(MODES[1].0)
        .iter()
        .zip(cpu(MODES[2].0))
        .map(|(filtered, alone)| format!("{:.2}×", filtered / alone))
        .collect();
    println!();
    println!("Weir CPU per event, filters (half select) / the selecting half alone, by round: {}", ratios.join(", "));
}
