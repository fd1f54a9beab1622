//! `WEIR_BENCH_SCENARIO="10 webhooks, open loop"`: publishing under fan-out as a publisher
//! meets it (issue 42, item 3). In the closed-loop `10 webhooks` load each of 32 publishers
//! sends its next event as soon as the last is answered, so its mean publish latency is 32 ÷
//! the publish rate whatever Weir does (Little's law). Here that load runs first (its publish
//! rate is the saturation rate), then the same events are published at fixed shares of that
//! rate (open loop: each event due at its time, its latency counted from then, so a slow
//! answer does not hide the wait of those behind it), in interleaved rounds.

use super::load::Kind;
use super::procs::{RedisProc, WeirProc};
use crate::scenario::{Row, Scenario, ms, run};

/// Rounds of the closed loop and each share.
const ROUNDS: usize = 2;
/// The shares of the closed loop's publish rate, and their rows' names. (Delivery keeps
/// pace up to about half of it: publishing under fan-out outruns delivering.)
const SHARES: [(f64, &str); 4] = [
    (0.25, "10 webhooks, open loop at 25% of the closed loop's rate"),
    (0.4, "10 webhooks, open loop at 40%"),
    (0.55, "10 webhooks, open loop at 55%"),
    (0.7, "10 webhooks, open loop at 70%"),
];

/// This scenario's name.
pub(super) const SCENARIO: &str = "10 webhooks, open loop";

/// Per round: the closed loop's row, then one per share.
pub(super) async fn figures(redis: &RedisProc, events: usize) -> Vec<Vec<Row>> {
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let closed =
            one(redis, Scenario::new("10 webhooks (closed loop, 32 publishers)", 10, events, Kind::WorkOrder)).await;
        let saturation = closed.publish_rate;
        let mut rows = vec![closed];
        for (share, name) in SHARES {
            let s = Scenario::new(name, 10, events, Kind::WorkOrder);
            rows.push(one(redis, Scenario { paced: Some((saturation * share).round()), ..s }).await);
        }
        rounds.push(rows);
    }
    rounds
}

async fn one(redis: &RedisProc, s: Scenario) -> Row {
    let weir = WeirProc::start(redis, "fanout", &[]);
    let row = run(&weir, redis, s).await;
    weir.stop();
    redis.flush().await;
    row
}

pub(super) fn print(rounds: &[Vec<Row>]) {
    println!();
    println!(
        "| publishing under fan-out (rounds in order) | events | publish/s | publish p50 | publish p99 | deliveries/s | publish→receipt p50 | p99 | Weir / Redis CPU per delivery |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in rounds.iter().flatten() {
        println!(
            "| {} | {} | {:.0} | {} | {} | {:.0} | {} | {} | {:.0} / {:.0} µs |",
            row.name,
            row.events,
            row.publish_rate,
            ms(row.publish_p50),
            ms(row.publish_p99),
            row.delivery_rate,
            ms(row.e2e_p50),
            ms(row.e2e_p99),
            row.cpu_us_per_delivery,
            row.redis_cpu_us_per_delivery
        );
    }
}
