//! A collector in trouble costs spans, never a request's time (issue 53): with the
//! OpenTelemetry exporter pointed at a collector that refuses connections, throttles
//! (`429 Retry-After: 5`), hangs or answers slowly, publishes are accepted and another
//! tenant's requests stay fast — the exporter's back-off sleeps on the runtime's timer, not
//! on a thread requests need (before: 0.8–5 s for every request, and a publish answered
//! `503` that was stored). Weir runs in the test's own single-threaded runtime here, so a
//! sleeping exporter would hold every request.

use std::time::{Duration, Instant};

use weir::store::tenants::orgs::Plan;

use crate::support::otlp::{Collector, Hanging};
use crate::support::receiver::Receiver;
use crate::support::weir::{WeirBuilder, work_order_event};

/// Publishes for three seconds while another tenant reads; the other tenant's slowest
/// read, and every publish's status.
async fn beside_a_collector(endpoint: &str) -> (Duration, Vec<u16>) {
    let weir = WeirBuilder::shared()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "16")
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "8000")
        .start()
        .await;
    let publisher = weir.tenant(Plan::pro()).await;
    let other = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    publisher.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let started = Instant::now();
    let load = {
        let publisher = publisher.publisher.clone();
        tokio::spawn(async move {
            let mut statuses = Vec::new();
            let mut i = 0;
            while started.elapsed() < Duration::from_secs(3) {
                statuses.push(publisher.post("/api/v2/events", &work_order_event(&format!("wo_{i}"))).await.status);
                i += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            statuses
        })
    };
    let mut slowest = Duration::ZERO;
    while started.elapsed() < Duration::from_secs(3) {
        let asked = Instant::now();
        other.admin.get("/api/v2/webhooks").await.expect(200);
        slowest = slowest.max(asked.elapsed());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let statuses = load.await.unwrap();
    weir.stop().await;
    (slowest, statuses)
}

fn check(kind: &str, (slowest, statuses): (Duration, Vec<u16>)) {
    eprintln!("{kind}: {} publishes, another tenant's slowest read {slowest:?}", statuses.len());
    assert!(statuses.len() > 20, "{kind}: only {} publishes in 3 s", statuses.len());
    assert!(statuses.iter().all(|s| *s == 202), "{kind}: every publish accepted: {statuses:?}");
    assert!(slowest < Duration::from_millis(500), "{kind}: another tenant's slowest read took {slowest:?}");
}

#[tokio::test]
async fn a_collector_refusing_connections_delays_no_request() {
    // A port nothing listens on: every export is refused at once, and retried.
    let port = crate::support::free_port();
    check("refusing", beside_a_collector(&format!("http://127.0.0.1:{port}")).await);
}

#[tokio::test]
async fn a_collector_throttling_with_retry_after_delays_no_request() {
    let collector = Collector::start_with(&["--status", "429", "--retry-after", "5"]);
    check("throttling", beside_a_collector(&collector.endpoint()).await);
    assert!(collector.refused() > 0, "the exports reached the throttling collector");
}

#[tokio::test]
async fn a_hanging_or_slow_collector_delays_no_request() {
    let hanging = Hanging::start().await;
    check("hanging", beside_a_collector(&format!("http://127.0.0.1:{}", hanging.port)).await);
    let slow = Collector::start_with(&["--delay", "2"]);
    check("slow", beside_a_collector(&slow.endpoint()).await);
    assert!(!slow.spans().is_empty(), "a slow collector still gets the spans");
}
