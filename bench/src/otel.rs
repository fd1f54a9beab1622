//! OpenTelemetry's cost (issue 40): the "1 webhook" load with spans exported to a
//! collector — the sampler always on, and at a ratio of 0.01 — against export off, in
//! interleaved rounds, the shipped batching defaults. The collector is a sink on loopback
//! that takes every OTLP/HTTP request and answers 200 at once.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};

use super::history::metric;
use super::load::Kind;
use super::procs::{RedisProc, WeirProc};
use crate::scenario::{Row, Scenario, run};

/// An OTLP/HTTP sink: counts requests and bytes.
struct Sink {
    port: u16,
    requests: Arc<AtomicU64>,
}

impl Sink {
    async fn start() -> Sink {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(AtomicU64::new(0));
        let counted = requests.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let counted = counted.clone();
                        async move {
                            let _ = req.into_body().collect().await;
                            counted.fetch_add(1, Ordering::Relaxed);
                            Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
                        }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Sink { port, requests }
    }
}

/// One run: which export, its row, spans exported and dropped.
pub struct OtelRun {
    label: &'static str,
    row: Row,
    exported: f64,
    dropped: f64,
}

pub async fn figures(redis: &RedisProc, events: usize) -> Vec<OtelRun> {
    let sink = Sink::start().await;
    let endpoint = format!("http://127.0.0.1:{}", sink.port);
    let modes: [(&'static str, Vec<(&str, &str)>); 3] = [
        ("export off", Vec::new()),
        (
            "export on, always_on",
            vec![("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_TRACES_SAMPLER", "always_on")],
        ),
        (
            "export on, traceidratio 0.01",
            vec![
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "0.01"),
            ],
        ),
    ];
    let mut runs = Vec::new();
    for round in 0..3 {
        for i in 0..modes.len() {
            let (label, env) = &modes[(i + round) % modes.len()];
            let weir = WeirProc::start(redis, "otel", env);
            let row = run(&weir, redis, Scenario::new(label, 1, events, Kind::WorkOrder)).await;
            // The last batch goes out within the schedule delay (5 s).
            tokio::time::sleep(std::time::Duration::from_millis(5_500)).await;
            let exported = metric(&weir.base, "weir_otel_spans_exported_total").await.unwrap_or(0.0);
            let dropped = metric(&weir.base, "weir_otel_spans_dropped_total").await.unwrap_or(0.0);
            weir.stop();
            redis.flush().await;
            runs.push(OtelRun { label, row, exported, dropped });
        }
    }
    eprintln!("the collector took {} requests", sink.requests.load(Ordering::Relaxed));
    runs
}

pub fn print(runs: &[OtelRun]) {
    println!();
    println!(
        "| OpenTelemetry (rounds interleaved) | deliveries | deliveries/s | Weir CPU per delivery | vs off, same round | spans exported | spans dropped |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (i, r) in runs.iter().enumerate() {
        let round = &runs[i / 3 * 3..i / 3 * 3 + 3];
        let off = round.iter().find(|o| o.label == "export off").map_or(f64::NAN, |o| o.row.cpu_us_per_delivery);
        println!(
            "| {} | {} | {:.0} | {:.0} µs | {:.2}× | {:.0} | {:.0} |",
            r.label,
            r.row.deliveries,
            r.row.delivery_rate,
            r.row.cpu_us_per_delivery,
            r.row.cpu_us_per_delivery / off,
            r.exported,
            r.dropped
        );
    }
}
