//! Where an attempt stands in its delivery's retry schedule, and what follows a result
//! from there; an attempt in flight, counted while it is.

use std::time::Duration;

use super::retry::{self, Next};
use crate::metrics::Metrics;
use crate::store::queue::work::{Loaded, Outcome};

/// Where an attempt stands in its delivery's retry schedule, as its row said when loaded.
#[derive(Debug, Clone, Copy)]
pub(super) struct Standing {
    pub(super) number: u32,
    /// Manual extra attempts made while a retry waited (they take no place).
    extra: u32,
    last_place: Option<u32>,
    /// The waiting retry's time, kept when an extra attempt fails.
    pub(super) kept_due: Option<u64>,
    pub(super) ordered: bool,
}

impl Standing {
    pub(super) fn of(loaded: &Loaded) -> Standing {
        Standing {
            number: loaded.attempt.max(1),
            extra: loaded.extra,
            last_place: loaded.last_place,
            kept_due: loaded.kept_due,
            ordered: loaded.ordered,
        }
    }

    /// Its place in the schedule: manual extra attempts take none.
    pub(super) fn place(&self) -> usize {
        self.number.saturating_sub(self.extra).max(1) as usize
    }

    /// What follows a result by the retry policy; after an extra attempt, the retry that
    /// was waiting keeps its time.
    pub(super) fn outcome(&self, result: &retry::AttemptResult, schedule: &[Duration]) -> Outcome {
        let last_place = self.last_place.map_or(schedule.len() + 1, |k| k as usize);
        let jitter = rand::random::<f64>() * 2.0 - 1.0;
        match retry::next(result, self.place(), last_place, schedule, jitter) {
            Next::Succeeded => Outcome::Succeeded,
            Next::Gone => Outcome::Gone,
            Next::Failed => Outcome::Failed,
            Next::RetryIn(delay) => {
                let now = crate::time::now_millis();
                Outcome::Retry { due_ms: self.kept_due.map_or(now + delay.as_millis() as u64, |kept| kept.max(now)) }
            }
        }
    }
}

/// An attempt in flight, counted in `weir_deliveries_in_flight` until it is dropped (a
/// panic's unwinding included).
pub(super) struct InFlight<'a>(&'a Metrics);

impl<'a> InFlight<'a> {
    pub(super) fn of(metrics: &'a Metrics) -> InFlight<'a> {
        metrics.in_flight.inc();
        InFlight(metrics)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}
