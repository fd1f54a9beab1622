//! Ordering: one webhook keeping each subject's order (`ordering: "subject"`) against the
//! same without, 20,000 events over 1,000 subjects, in interleaved rounds (this machine's
//! speed drifts between minutes); and one hot subject, sequential by definition.

use super::procs::{RedisProc, WeirProc};
use crate::load::Kind;
use crate::scenario::{Row, Scenario, per_round, run};

/// Rounds of unordered and ordered runs.
const ROUNDS: usize = 3;
/// Subjects the events are about.
const SUBJECTS: usize = 1_000;

/// Per round the unordered and the ordered row; then the hot subject's.
pub(super) struct Figures {
    rounds: Vec<(Row, Row)>,
    hot: Row,
}

pub(super) async fn figures(redis: &RedisProc, events: usize, hot_events: usize) -> Figures {
    let mut rounds = Vec::new();
    for round in 0..ROUNDS {
        let mut unordered = None;
        let mut ordered = None;
        for ordered_first in [round % 2 == 1, round % 2 == 0] {
            let weir = WeirProc::start(redis, "ordering", &[]);
            let kind = Kind::Subjects(SUBJECTS);
            if ordered_first {
                let s = Scenario::new("1 webhook, 1,000 subjects, ordering subject", 1, events, kind);
                ordered = Some(run(&weir, redis, Scenario { ordered: true, ..s }).await);
            } else {
                let s = Scenario::new("1 webhook, 1,000 subjects, ordering none", 1, events, kind);
                unordered = Some(run(&weir, redis, s).await);
            }
            weir.stop();
            redis.flush().await;
        }
        if let (Some(u), Some(o)) = (unordered, ordered) {
            rounds.push((u, o));
        }
    }
    let weir = WeirProc::start(redis, "ordering", &[]);
    let s = Scenario::new("1 webhook, 1 subject, ordering subject", 1, hot_events, Kind::Subjects(1));
    let hot = run(&weir, redis, Scenario { ordered: true, ..s }).await;
    weir.stop();
    redis.flush().await;
    Figures { rounds, hot }
}

pub(super) fn print(f: &Figures) {
    println!();
    println!(
        "| ordering (rounds interleaved) | events | deliveries/s | publish→receipt p50 | p99 | Weir CPU per delivery | Redis CPU per delivery |"
    );
    println!("|---|---|---|---|---|---|---|");
    for row in f.rounds.iter().flat_map(|(u, o)| [u, o]).chain(std::iter::once(&f.hot)) {
        println!("{} {:.0} µs | {:.0} µs |", row.lead_cells(), row.cpu_us_per_delivery, row.redis_cpu_us_per_delivery);
    }
    let ratio = |pick: fn(&Row) -> f64| per_round(f.rounds.iter().map(|(u, o)| pick(o) / pick(u)).collect());
    println!();
    println!("Ordered ÷ unordered, per round: deliveries/s {}", ratio(|r| r.delivery_rate));
    println!("  Weir CPU per delivery {}", ratio(|r| r.cpu_us_per_delivery));
    println!("  Redis CPU per delivery {}", ratio(|r| r.redis_cpu_us_per_delivery));
}
