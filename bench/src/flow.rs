//! The flow-control scenarios (contract §7 "Isolation"): one healthy webhook published to
//! at a fixed rate, alone and beside hundreds of webhooks whose endpoint accepts and never
//! answers; its publish→receipt latency, and the sockets the hanging endpoints held.

use std::time::Duration;

use crate::load::{Kind, Publisher, percentile};
use crate::procs::{RedisProc, WeirProc};
use crate::receiver::{FastReceiver, HangingReceiver};

/// Events each hanging webhook is sent (all queued before the healthy load starts).
const HANGING_EVENTS: usize = 30;

/// One run of the isolation scenario.
pub struct Isolation {
    pub name: String,
    pub events: usize,
    pub rate: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    /// Connections the hanging endpoints were opened, and the most open at once.
    pub sockets: Option<(usize, usize)>,
}

/// The healthy webhook gets `events` events at `rate` per second while `hanging` webhooks
/// point at an endpoint that never answers: each is sent [`HANGING_EVENTS`] events first,
/// and the load starts once the endpoint holds an attempt of each (the outage under way;
/// the load then runs through their timeouts).
pub async fn isolation(redis: &RedisProc, hanging: usize, events: usize, rate: f64) -> Isolation {
    let weir = WeirProc::start(redis, "isolation", &[]);
    let tenant = weir.tenant().await;
    let healthy = FastReceiver::start().await;
    let sink = HangingReceiver::start().await;
    for i in 0..hanging {
        tenant.create_webhook_for(&weir.base, &sink.url(i), &["work_order_created"], serde_json::json!({})).await;
    }
    tenant.create_webhook_for(&weir.base, &healthy.url(), &["report_export_completed"], serde_json::json!({})).await;
    let publisher = Publisher::new(&weir.base, &tenant.publisher_token);
    if hanging > 0 {
        // The outage under way: every hanging webhook's events queued, and its endpoint
        // holding what Weir sent it (the healthy load then runs through its timeouts).
        publisher.run(HANGING_EVENTS, 32, Kind::WorkOrder).await;
        let started = std::time::Instant::now();
        while sink.connections().1 < hanging && started.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let published = publisher.run_paced(events, rate, Kind::ReportExport).await;
    healthy.wait_for(events, Duration::from_secs(600)).await;
    let mut latencies = healthy.latencies(&published);
    let sockets = (hanging > 0).then(|| sink.connections());
    weir.stop();
    redis.flush().await;
    let max = latencies.iter().copied().max().unwrap_or_default();
    Isolation {
        name: if hanging == 0 {
            "1 webhook alone".to_owned()
        } else {
            format!("1 webhook beside {hanging} whose endpoints never answer")
        },
        events,
        rate,
        p50: percentile(&mut latencies, 50.0),
        p99: percentile(&mut latencies, 99.0),
        max,
        sockets,
    }
}

/// The isolation runs' table.
pub fn print_isolation(runs: &[Isolation]) {
    println!();
    println!(
        "| isolation (shipped defaults) | events | publish rate | publish→receipt p50 | p99 | max | sockets to the hanging endpoints: opened / most at once |"
    );
    println!("|---|---|---|---|---|---|---|");
    for i in runs {
        let sockets = i.sockets.map_or_else(|| "—".to_owned(), |(opened, most)| format!("{opened} / {most}"));
        println!(
            "| {} | {} | {:.0}/s | {} | {} | {} | {} |",
            i.name,
            i.events,
            i.rate,
            crate::scenario::ms(i.p50),
            crate::scenario::ms(i.p99),
            crate::scenario::ms(i.max),
            sockets
        );
    }
}
