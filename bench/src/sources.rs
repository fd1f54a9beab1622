//! `WEIR_BENCH_ONLY=sources`: providers' requests taken in by a source (`POST /in/<token>`,
//! verified, its duplicate mark set, published) against `POST /api/v2/events` with the same
//! ~1 KB body, each over 32 keep-alive connections as fast as Weir answers (closed loop), no
//! webhook subscribed (the intake alone), rounds interleaved: requests per second, and Weir's
//! and Redis's CPU per request. Signed as each provider signs (`weir::sign`: HMAC-SHA256).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::load::{Http, Kind, Publisher, percentile, work_order_event};
use crate::procs::{RedisProc, cpu_seconds};
use crate::weir_proc::WeirProc;

const CONNECTIONS: usize = 32;

/// What a load sends: the events API, or a source of a kind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Events,
    Source(&'static str),
}

const SECRET: &str = "whsec_bench_secret";

/// The headers of a request with `body` (request `i`).
fn headers(target: Target, token: &str, (i, body): (usize, &[u8])) -> Vec<(&'static str, String)> {
    let mut headers = vec![("content-type", "application/json".to_owned())];
    match target {
        Target::Events => headers.push(("authorization", format!("Bearer {token}"))),
        Target::Source("github") => {
            headers.push(("x-hub-signature-256", format!("sha256={}", weir::sign::signature(SECRET, body))));
            headers.push(("x-github-event", "issues".to_owned()));
            headers.push(("x-github-delivery", format!("d-{i}")));
        }
        Target::Source("stripe") => {
            let t = weir::time::now_millis() / 1000;
            let signed = [format!("{t}.").as_bytes(), body].concat();
            headers.push(("stripe-signature", format!("t={t},v1={}", weir::sign::signature(SECRET, &signed))));
        }
        Target::Source(_) => {}
    }
    headers
}

/// Where a load goes: the target, its path, the publisher's token (for the events API).
struct To<'a> {
    target: Target,
    path: &'a str,
    token: &'a str,
}

/// One load of `n` requests: requests/s, Weir's and Redis's CPU per request (µs).
async fn load(weir: &WeirProc, redis: &RedisProc, to: To<'_>, n: usize) -> (f64, f64, f64) {
    let To { target, path, token } = to;
    let next = Arc::new(AtomicUsize::new(0));
    let (weir_before, redis_before) = (cpu_seconds(weir.pid()), redis.cpu_by_node().await.iter().sum::<f64>());
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONNECTIONS {
        let (next, base, path, token) = (next.clone(), weir.base.clone(), path.to_owned(), token.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut http = Http::connect(&base).await;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let body = work_order_event(&format!("evt_src_{i}"), i);
                let headers = headers(target, &token, (i, &body));
                let status = http.post_with(&path, &headers, body).await;
                assert!(status == 200 || status == 202, "request {i} answered {status}");
            }
        }));
    }
    for task in tasks {
        task.await.expect("a connection's load");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let per = |before: f64, after: f64| (after - before) * 1e6 / n as f64;
    (
        n as f64 / elapsed,
        per(weir_before, cpu_seconds(weir.pid())),
        per(redis_before, redis.cpu_by_node().await.iter().sum::<f64>()),
    )
}

/// A source of `kind` for the tenant: its ingest path.
async fn source(weir: &WeirProc, admin: &str, kind: &str) -> String {
    let mut body = serde_json::json!({"type": kind});
    if kind != "none" {
        body["secret"] = serde_json::json!(SECRET);
    }
    let (status, answer) = Http::connect(&weir.base)
        .await
        .send("POST", "/api/v2/sources", admin, "application/json", body.to_string().into_bytes())
        .await;
    assert_eq!(status, 201, "a source: {answer}");
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("json");
    let url = answer["ingest_url"].as_str().expect("an ingest URL");
    url[url.find("/in/").expect("a path")..].to_owned()
}

/// Bad requests per second the flood sends, and over how many connections.
const FLOOD_RATE: u64 = 1_000;
const FLOOD_CONNECTIONS: u64 = 8;

/// Sends badly signed requests to `path` at [`FLOOD_RATE`] until `stop`: how many were
/// answered `401` and how many `429`.
async fn flood(base: &str, path: &str, stop: Arc<std::sync::atomic::AtomicBool>) -> (usize, usize) {
    let mut tasks = Vec::new();
    for c in 0..FLOOD_CONNECTIONS {
        let (base, path, stop) = (base.to_owned(), path.to_owned(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut http = Http::connect(&base).await;
            let every = std::time::Duration::from_micros(1_000_000 * FLOOD_CONNECTIONS / FLOOD_RATE);
            let (mut refused, mut throttled) = (0, 0);
            let mut i = c as usize;
            while !stop.load(Ordering::Relaxed) {
                let headers =
                    [("stripe-signature", format!("t={},v1={}", weir::time::now_millis() / 1000, "00".repeat(32)))];
                match http.post_with(&path, &headers, work_order_event("evt_flood", i)).await {
                    401 => refused += 1,
                    429 => throttled += 1,
                    other => panic!("a forged request answered {other}"),
                }
                i += FLOOD_CONNECTIONS as usize;
                tokio::time::sleep(every).await;
            }
            (refused, throttled)
        }));
    }
    let mut out = (0, 0);
    for task in tasks {
        let (r, t) = task.await.expect("a flood connection");
        out = (out.0 + r, out.1 + t);
    }
    out
}

/// Another organisation's publishes (200/s for 10 s) alone, then beside a flood of forged
/// requests to one source: p50 and p99 of its publish latency each time, and the flood's answers.
pub async fn print_flood() {
    let redis = RedisProc::start();
    let weir = WeirProc::start(&redis, "flood", &[]);
    let (quiet, loud) = (weir.tenant().await, weir.tenant().await);
    let path = source(&weir, &loud.admin_token, "stripe").await;
    let publisher = Publisher::new(&weir.base, &quiet.publisher_token);
    let mut lines = Vec::new();
    for beside in [false, true] {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flooding = beside.then(|| {
            let (base, path, stop) = (weir.base.clone(), path.clone(), stop.clone());
            tokio::spawn(async move { flood(&base, &path, stop).await })
        });
        let published = publisher.run_paced(2_000, 200.0, Kind::WorkOrder).await;
        stop.store(true, Ordering::Relaxed);
        let answers = match flooding {
            Some(task) => task.await.expect("the flood"),
            None => (0, 0),
        };
        let mut latencies: Vec<std::time::Duration> = published.iter().map(|p| p.latency).collect();
        let (p50, p99) = (percentile(&mut latencies, 50.0), percentile(&mut latencies, 99.0));
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let case = if beside { "beside 1,000 forged requests/s to another organisation's source" } else { "alone" };
        lines.push(format!(
            "| {case} | {:.1} ms | {:.1} ms | {} answered 401, {} answered 429 |",
            ms(p50),
            ms(p99),
            answers.0,
            answers.1
        ));
    }
    weir.stop();
    println!();
    println!("An organisation publishing 200 events/s for 10 s (open loop), shipped defaults:");
    println!();
    println!("| its publishes | p50 | p99 | the flood |");
    println!("|---|---|---|---|");
    for line in lines {
        println!("{line}");
    }
}

pub async fn print(n: usize) {
    let rounds = std::env::var("WEIR_BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let redis = RedisProc::start();
    let mut lines = Vec::new();
    for round in 0..rounds {
        let weir = WeirProc::start(&redis, &format!("sources{round}"), &[]);
        let tenant = weir.tenant().await;
        for target in [Target::Events, Target::Source("none"), Target::Source("github"), Target::Source("stripe")] {
            let (path, name) = match target {
                Target::Events => ("/api/v2/events".to_owned(), "POST /api/v2/events (publisher token)".to_owned()),
                Target::Source(kind) => {
                    (source(&weir, &tenant.admin_token, kind).await, format!("POST /in/… source `{kind}`"))
                }
            };
            let (rate, weir_us, redis_us) =
                load(&weir, &redis, To { target, path: &path, token: &tenant.publisher_token }, n).await;
            lines.push(format!("| {name}, round {} | {rate:.0} | {weir_us:.0} µs | {redis_us:.0} µs |", round + 1));
        }
        weir.stop();
        redis.flush().await;
    }
    println!();
    println!("{n} requests of ~1 KB per row, {CONNECTIONS} connections, no webhook subscribed, shipped defaults:");
    println!();
    println!("| request | accepted/s | Weir CPU per request | Redis CPU per request |");
    println!("|---|---|---|---|");
    for line in lines {
        println!("{line}");
    }
}
