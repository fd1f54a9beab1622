//! Two measurements of the full bench beside its scenarios: publish→receipt latency of an
//! open-loop load, and Redis' memory per delivery while queued and once delivered.

use std::time::Duration;

use crate::load::{Kind, Publisher, percentile};
use crate::procs::{RedisProc, WeirProc};
use crate::receiver::FastReceiver;

/// Publish→receipt latency of an open-loop load.
pub(crate) struct Latency {
    pub events: usize,
    pub rate: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub p999: Duration,
    pub publish_p99: Duration,
}

pub(crate) async fn open_loop(redis: &RedisProc, rate: f64, events: usize) -> Latency {
    let weir = WeirProc::start(redis, "latency", &[]);
    let tenant = weir.tenant().await;
    let receiver = FastReceiver::start().await;
    tenant.create_webhook(&weir.base, &receiver.url(), serde_json::json!([])).await;
    let published = Publisher::new(&weir.base, &tenant.publisher_token).run_paced(events, rate, Kind::WorkOrder).await;
    receiver.wait_for(events, Duration::from_secs(600)).await;
    let mut e2e = receiver.latencies(&published);
    let mut publish: Vec<Duration> = published.iter().map(|p| p.latency).collect();
    weir.stop();
    redis.flush().await;
    Latency {
        events,
        rate,
        p50: percentile(&mut e2e, 50.0),
        p99: percentile(&mut e2e, 99.0),
        p999: percentile(&mut e2e, 99.9),
        publish_p99: percentile(&mut publish, 99.0),
    }
}

/// Publishes `events` to an API-only node and measures Redis' memory growth per delivery.
pub(crate) async fn queued_memory(redis: &RedisProc, events: usize) -> (f64, f64) {
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
