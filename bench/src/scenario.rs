//! A scenario of the bench — the load it runs and the settings it runs under — and the row of
//! figures it gives: run by `main.rs` and by the scenario modules that compare rounds.

use std::time::{Duration, Instant};

use crate::load::{Kind, Publisher, percentile};
use crate::procs::{RedisProc, WeirProc, cpu_seconds, peak_rss_kib};
use crate::receiver::FastReceiver;

/// One scenario's figures.
pub struct Row {
    pub name: String,
    pub events: usize,
    pub deliveries: usize,
    pub publish_rate: f64,
    pub publish_p50: Duration,
    pub publish_p99: Duration,
    pub delivery_rate: f64,
    pub e2e_p50: Duration,
    pub e2e_p99: Duration,
    pub cpu_us_per_delivery: f64,
    pub redis_cpu_us_per_delivery: f64,
    /// Each Redis node's share of the Redis CPU (one entry on one Redis).
    pub redis_shares: Vec<f64>,
    pub bench_cpu_us_per_delivery: f64,
    pub peak_rss_mib: f64,
}

impl Row {
    /// The first cells of the interleaved-rounds tables (egress, ordering, recovery): name,
    /// events, deliveries/s, publish→receipt p50 and p99.
    pub fn lead_cells(&self) -> String {
        format!(
            "| {} | {} | {:.0} | {} | {} |",
            self.name,
            self.events,
            self.delivery_rate,
            ms(self.e2e_p50),
            ms(self.e2e_p99)
        )
    }
}

/// The closed-loop scenarios' publishing connections: the peers' load.
pub const CONNECTIONS: usize = 32;

/// The closed-loop scenarios' publishing connections (`WEIR_BENCH_CONNECTIONS`, else
/// [`CONNECTIONS`]).
pub fn connections() -> usize {
    std::env::var("WEIR_BENCH_CONNECTIONS").ok().and_then(|s| s.parse().ok()).filter(|&n| n > 0).unwrap_or(CONNECTIONS)
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub struct Scenario {
    pub name: &'static str,
    pub webhooks: usize,
    pub events: usize,
    pub kind: Kind,
    /// With `report-export-filter` attached to every webhook.
    pub plugin: bool,
    /// Settings beside the shipped defaults (the row's name says so).
    pub env: &'static [(&'static str, &'static str)],
    /// On a 3-master Redis Cluster instead of one Redis.
    pub cluster: bool,
    /// The webhooks' `rate_limit`.
    pub rate_limit: Option<u32>,
    /// Events published at this rate (open loop) instead of as fast as Weir takes them.
    pub paced: Option<f64>,
    /// The webhooks keep each subject's order (`ordering: "subject"`).
    pub ordered: bool,
    /// Every webhook has a filter, every other one selecting the events (issue 39).
    pub filtered: bool,
}

impl Scenario {
    pub fn new(name: &'static str, webhooks: usize, events: usize, kind: Kind) -> Scenario {
        Scenario {
            name,
            webhooks,
            events,
            kind,
            plugin: false,
            env: &[],
            cluster: false,
            rate_limit: None,
            paced: None,
            ordered: false,
            filtered: false,
        }
    }
}

pub async fn run(weir: &WeirProc, redis: &RedisProc, s: Scenario) -> Row {
    let Scenario { name, webhooks, events, kind, plugin, rate_limit, paced, ordered, filtered, .. } = s;
    let tenant = weir.tenant().await;
    let receiver = FastReceiver::start().await;
    let plugins = if plugin {
        let id = tenant.upload_filter(&weir.base).await;
        serde_json::json!([{"plugin_id": id, "config": {"exportable_types": ["Form"], "exportable_ids": ["frm_1"], "creator_ids": ["cli_bench"]}}])
    } else {
        serde_json::json!([])
    };
    for i in 0..webhooks {
        // (`rate_limit` only when set: earlier builds, run for comparison, do not know it.)
        let mut extra = serde_json::json!({"plugins": plugins.clone()});
        if filtered {
            // The bench's exports are of Forms by `cli_bench`: every other filter selects them.
            let kind = if i % 2 == 0 { "Form" } else { "Asset" };
            extra["filter"] =
                format!(r#"report_export.exportable.type == "{kind}" && creator.id in ["cli_bench", "usr_2"]"#).into();
        }
        if let Some(limit) = rate_limit {
            extra["rate_limit"] = limit.into();
        }
        if ordered {
            extra["ordering"] = "subject".into();
        }
        let actions = ["work_order_created", "report_export_completed"];
        tenant.create_webhook_for(&weir.base, &receiver.url(), &actions, extra).await;
    }
    let deliveries = if filtered { events * webhooks.div_ceil(2) } else { events * webhooks };
    let publisher = Publisher::new(&weir.base, &tenant.publisher_token);
    let cpu_before = cpu_seconds(weir.pid());
    let redis_before = redis.cpu_by_node().await;
    let bench_before = cpu_seconds(std::process::id());
    let started = Instant::now();
    let published = match paced {
        Some(rate) => publisher.run_paced(events, rate, kind).await,
        None => publisher.run(events, connections(), kind).await,
    };
    let publish_elapsed = started.elapsed();
    receiver.wait_for(deliveries, Duration::from_secs(600)).await;
    let delivered_at = receiver.last_arrival().unwrap_or_else(Instant::now);
    let cpu = cpu_seconds(weir.pid()) - cpu_before;
    let redis_by_node: Vec<f64> =
        redis.cpu_by_node().await.iter().zip(&redis_before).map(|(after, before)| after - before).collect();
    let redis_cpu: f64 = redis_by_node.iter().sum();
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
        redis_shares: redis_by_node.iter().map(|c| c / redis_cpu.max(1e-9)).collect(),
        bench_cpu_us_per_delivery: bench_cpu * 1e6 / deliveries as f64,
        peak_rss_mib: peak_rss_kib(weir.pid()) as f64 / 1024.0,
    }
}

/// Ratios of interleaved rounds, smallest first, and their median: `0.92, 0.98, 0.99 (median 0.98)`.
pub fn per_round(mut ratios: Vec<f64>) -> String {
    ratios.sort_by(f64::total_cmp);
    let listed = ratios.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(", ");
    format!("{listed} (median {:.2})", ratios[ratios.len() / 2])
}
