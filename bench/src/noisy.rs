//! A noisy tenant beside a quiet one (issue 53): the loads of round 5's probe, each against a
//! fresh release `weir serve` at the shipped defaults, while another organisation reads its
//! webhooks 20 times a second; that tenant's p50, p99 and slowest read, beside the same
//! alone (the baseline, measured before each attack). `WEIR_BENCH_ONLY=noisy`; with
//! `WEIR_BENCH_WEIR` pointing at another build, the same loads against it;
//! `WEIR_BENCH_NOISY=<part of an attack's name>` runs only those, and
//! `WEIR_BENCH_NOISY_SECONDS` reads for longer than 6 s (a steadier p99).
//!
//! The attacks: four publishers of 1 MiB events meeting four webhooks whose filter is a
//! runaway pattern; the same pattern tried by two filter tests at once; ten webhooks each with
//! one of the costliest filters the check admits, under four publishers; 1,100 listings of the
//! event log up to the year 9999 at once from one token (once each, as the probe sent them); and publishing at 200 events/s while
//! the OpenTelemetry collector refuses connections, or answers `429 Retry-After: 5`.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::load::{Http, percentile};
use crate::procs::{RedisProc, Tenant, WeirProc, free_port};
use crate::receiver::FastReceiver;

/// How long the quiet tenant reads, alone and beside each attack (6 s unless
/// `WEIR_BENCH_NOISY_SECONDS` says).
fn window() -> Duration {
    let seconds = std::env::var("WEIR_BENCH_NOISY_SECONDS").ok().and_then(|s| s.parse().ok());
    Duration::from_secs(seconds.unwrap_or(6))
}

/// The quiet tenant's reads over [`window`]: p50, p99, slowest, and how many were not `200`.
async fn quiet_reads(base: &str, token: &str) -> (Duration, Duration, Duration, usize) {
    let mut http = Http::connect(base).await;
    let mut times = Vec::new();
    let mut refused = 0;
    let started = Instant::now();
    let window = window();
    while started.elapsed() < window {
        let asked = Instant::now();
        match http.try_send("GET", "/api/v2/webhooks", token, "", Vec::new()).await {
            Ok((200, _)) => {}
            Ok(_) => refused += 1,
            Err(_) => {
                refused += 1;
                http = Http::connect(base).await;
            }
        }
        times.push(asked.elapsed());
        tokio::time::sleep(Duration::from_millis(50).saturating_sub(asked.elapsed())).await;
    }
    let slowest = times.iter().copied().max().unwrap_or_default();
    (percentile(&mut times.clone(), 50.0), percentile(&mut times, 99.0), slowest, refused)
}

/// A 1 MiB title of `a`s and `b`s in no order (see `tests/tests/it/noisy_tenants.rs`).
fn runaway_event() -> Vec<u8> {
    let mut x: u64 = 88_172_645_463_325_252;
    let title: String = (0..(1 << 20) - 4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (x >> 20).is_multiple_of(2) { 'a' } else { 'b' }
        })
        .collect();
    serde_json::to_vec(&json!({"action": "work_order_created", "creator": {"id": "usr_1", "name": "A"},
        "subject": {"type": "WorkOrder", "id": "wo_big"}, "work_order": {"id": "wo_big", "title": title}}))
    .expect("json")
}

const RUNAWAY: &str = r#"work_order.title.matches("a[ab]{40}c")"#;
const COSTLIEST: &str = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30].all(a, \
     [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30].all(b, \
     [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30].all(c, a != -b)))";

/// One request a hammer sends again and again.
#[derive(Debug, Clone)]
struct Request {
    method: &'static str,
    path: String,
    body: Vec<u8>,
}

/// `n` tasks sending `request` over their own connections until `until`; the statuses
/// answered (0: the exchange failed).
fn hammer(
    base: &str,
    token: &str,
    n: usize,
    until: Option<Instant>,
    request: Request,
) -> Vec<tokio::task::JoinHandle<Vec<u16>>> {
    (0..n)
        .map(|_| {
            let (base, token, Request { method, path, body }) = (base.to_owned(), token.to_owned(), request.clone());
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                let Ok(mut http) = tokio::time::timeout(Duration::from_secs(5), Http::connect(&base)).await else {
                    return vec![0];
                };
                loop {
                    match http.try_send(method, &path, &token, "application/json", body.clone()).await {
                        Ok((status, _)) => statuses.push(status),
                        Err(_) => {
                            statuses.push(0);
                            break;
                        }
                    }
                    if until.is_none_or(|until| Instant::now() >= until) {
                        break;
                    }
                }
                statuses
            })
        })
        .collect()
}

/// Whether the build under test admits `filter` (tried on `POST /api/v2/filters/test`).
async fn admits(weir: &WeirProc, noisy: &Tenant, filter: &str) -> bool {
    let body = serde_json::to_vec(&json!({"filter": filter, "event": {"id": "evt_1"}})).expect("json");
    let mut http = Http::connect(&weir.base).await;
    let (status, _) = http.send("POST", "/api/v2/filters/test", &noisy.admin_token, "application/json", body).await;
    status == 200
}

/// A collector that answers every export `429 Retry-After: 5`.
async fn throttling_collector() -> u16 {
    let port = free_port();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 1 << 16];
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let answer = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n";
                    if socket.write_all(answer.as_bytes()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

/// One attack's row: the quiet tenant beside it, and what the attack was answered.
struct Row {
    attack: &'static str,
    alone: (Duration, Duration, Duration, usize),
    beside: (Duration, Duration, Duration, usize),
    answered: std::collections::BTreeMap<u16, usize>,
}

async fn attack(redis: &RedisProc, name: &'static str, env: &[(&str, &str)]) -> Row {
    let weir = WeirProc::start(redis, &format!("noisy{}", free_port()), env);
    let (noisy, quiet) = (weir.tenant().await, weir.tenant().await);
    let receiver = FastReceiver::start().await;
    quiet.create_webhook_for(&weir.base, &receiver.url(), &["work_order_created"], json!({})).await;
    let alone = quiet_reads(&weir.base, &quiet.admin_token).await;
    let until = Instant::now() + window();
    let tasks = start_attack(name, &weir, &noisy, &receiver, until).await;
    let beside = quiet_reads(&weir.base, &quiet.admin_token).await;
    let mut answered = std::collections::BTreeMap::new();
    for task in tasks {
        for status in task.await.unwrap_or_default() {
            *answered.entry(status).or_default() += 1;
        }
    }
    weir.stop();
    redis.flush().await;
    Row { attack: name, alone, beside, answered }
}

async fn start_attack(
    name: &str,
    weir: &WeirProc,
    noisy: &Tenant,
    receiver: &FastReceiver,
    until: Instant,
) -> Vec<tokio::task::JoinHandle<Vec<u16>>> {
    let publish = |body: Vec<u8>| Request { method: "POST", path: "/api/v2/events".to_owned(), body };
    let small = || {
        serde_json::to_vec(&json!({"action": "work_order_created", "creator": {"id": "u", "name": "A"},
        "subject": {"type": "WorkOrder", "id": "wo_1"}, "work_order": {"id": "wo_1", "title": "t"}}))
        .expect("json")
    };
    match name {
        "runaway pattern, 4 publishers of 1 MiB events" => {
            for _ in 0..4 {
                let filter = json!({"filter": RUNAWAY});
                noisy.create_webhook_for(&weir.base, &receiver.url(), &["work_order_created"], filter).await;
            }
            hammer(&weir.base, &noisy.publisher_token, 4, Some(until), publish(runaway_event()))
        }
        "runaway pattern, 2 filter tests at once" => {
            let body = serde_json::to_vec(&json!({"filter": RUNAWAY,
                "event": serde_json::from_slice::<serde_json::Value>(&runaway_event()).expect("json")}))
            .expect("json");
            hammer(
                &weir.base,
                &noisy.admin_token,
                2,
                Some(until),
                Request { method: "POST", path: "/api/v2/filters/test".to_owned(), body },
            )
        }
        "costliest filter the build admits on 10 webhooks, 4 publishers" => {
            // The probe's 620 bytes of nested loops where the build admits them (before: 1.6 s an
            // evaluation), else one of the costliest this check admits.
            let list = format!("[{}]", vec!["\"\""; 48].join(","));
            let probes = format!("{list}.all(a, {list}.all(b, {list}.all(c, {list}.all(d, true))))");
            let filter = if admits(weir, noisy, &probes).await { probes } else { COSTLIEST.to_owned() };
            for _ in 0..10 {
                let filter = json!({"filter": filter});
                noisy.create_webhook_for(&weir.base, &receiver.url(), &["work_order_created"], filter).await;
            }
            hammer(&weir.base, &noisy.publisher_token, 4, Some(until), publish(small()))
        }
        "1,100 event-log listings to 9999 at once" => {
            // As the probe sent them: 1,100 at once, once each (before, each walked empty
            // hours for 60 s, holding its slot).
            let path = "/api/v2/events?until=9999-12-31T23:59:59Z".to_owned();
            hammer(&weir.base, &noisy.admin_token, 1_100, None, Request { method: "GET", path, body: Vec::new() })
        }
        _ => {
            // Publishing at 200 events/s (4 publishers, 20 ms apart) beside a collector in
            // trouble, the process started with it.
            noisy.create_webhook_for(&weir.base, &receiver.url(), &["work_order_created"], json!({})).await;
            (0..4)
                .map(|_| {
                    let (base, token, body) = (weir.base.clone(), noisy.publisher_token.clone(), small());
                    tokio::spawn(async move {
                        let mut http = Http::connect(&base).await;
                        let mut statuses = Vec::new();
                        while Instant::now() < until {
                            let sent = Instant::now();
                            let answer =
                                http.try_send("POST", "/api/v2/events", &token, "application/json", body.clone()).await;
                            statuses.push(answer.map_or(0, |a| a.0));
                            tokio::time::sleep(Duration::from_millis(20).saturating_sub(sent.elapsed())).await;
                        }
                        statuses
                    })
                })
                .collect()
        }
    }
}

pub async fn print() {
    let redis = RedisProc::start();
    let refusing = format!("http://127.0.0.1:{}", free_port());
    let throttling = format!("http://127.0.0.1:{}", throttling_collector().await);
    let otel = |endpoint: &str| {
        vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), endpoint.to_owned()),
            ("OTEL_BSP_SCHEDULE_DELAY".to_owned(), "100".to_owned()),
        ]
    };
    let attacks: Vec<(&'static str, Vec<(String, String)>)> = vec![
        ("runaway pattern, 4 publishers of 1 MiB events", vec![]),
        ("runaway pattern, 2 filter tests at once", vec![]),
        ("costliest filter the build admits on 10 webhooks, 4 publishers", vec![]),
        ("1,100 event-log listings to 9999 at once", vec![]),
        ("200 events/s, collector refusing connections", otel(&refusing)),
        ("200 events/s, collector answering 429 Retry-After: 5", otel(&throttling)),
    ];
    let mut rows = Vec::new();
    let only = std::env::var("WEIR_BENCH_NOISY").unwrap_or_default();
    for (name, env) in attacks.iter().filter(|(name, _)| name.contains(only.as_str())) {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        rows.push(attack(&redis, name, &env).await);
    }
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
    println!();
    println!(
        "| attack (another organisation's `GET /api/v2/webhooks`, 20/s) | alone p50 / p99 / max ms | beside p50 / p99 / max ms | p99 ÷ alone | its reads refused | attack answered |"
    );
    println!("|---|---|---|---|---|---|");
    for row in rows {
        let ratio = row.beside.1.as_secs_f64() / row.alone.1.as_secs_f64().max(1e-6);
        println!(
            "| {} | {} / {} / {} | {} / {} / {} | {ratio:.1}× | {} | {:?} |",
            row.attack,
            ms(row.alone.0),
            ms(row.alone.1),
            ms(row.alone.2),
            ms(row.beside.0),
            ms(row.beside.1),
            ms(row.beside.2),
            row.beside.3,
            row.answered
        );
    }
}
