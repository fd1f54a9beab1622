//! A plan's limit reached (contract §9 "Plans"): what the request would have put in, which
//! limit it meets, and — for the daily events — when it may try again. The surfaces answer
//! `403 quota_exceeded` naming the limit as its field, or `429` with `Retry-After` for the
//! events of the day.

use std::time::Duration;

use crate::plans::{Quota, Rules};

/// A request refused whole because the organisation's plan allows no more.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct QuotaExceeded {
    pub quota: Quota,
    pub message: String,
    /// Until the limit's day ends (`events_per_day` only).
    pub retry_after: Option<Duration>,
}

impl QuotaExceeded {
    /// A count limit (`webhooks`, `plugins`, `plugin_bytes`) met: `what` is the sentence
    /// that says how.
    pub(crate) fn count(quota: Quota, rules: &Rules, what: impl std::fmt::Display) -> QuotaExceeded {
        let message = format!("{what}, the most its plan ({}) allows", rules.name);
        QuotaExceeded { quota, message, retry_after: None }
    }

    /// The day's events used up: retry when the UTC day ends.
    pub(crate) fn events_of_the_day(rules: &Rules, limit: u64, now_ms: u64) -> QuotaExceeded {
        const DAY_MS: u64 = 86_400_000;
        let left = DAY_MS - now_ms % DAY_MS;
        let message = format!(
            "the organisation has published its {limit} events of today (UTC), the most its plan ({}) allows; publishing resumes at midnight UTC",
            rules.name
        );
        QuotaExceeded { quota: Quota::EventsPerDay, message, retry_after: Some(Duration::from_millis(left)) }
    }
}
