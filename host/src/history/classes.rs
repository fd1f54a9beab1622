//! Retention classes in PostgreSQL (contract §9 "Plans": retention holds per organisation's
//! plan). A delivery or event of an organisation whose plan keeps deliveries for fewer days
//! than the installation is written in the day partitions of its class: class `k` (its
//! plan's retention in whole days, rounded up) keeps day `d` as `k × SPAN + d`, a partition
//! of its own (`deliveries_<k × SPAN + d>`, `events_<…>`), dropped whole once `d` is `k` days
//! old (an event is kept as long as the deliveries that carry it). Class 0 is the installation's retention, the days as they always were — nothing of
//! the layout before plans changes. A partition's name says its class, so dropping needs no
//! configuration: a class a plan no longer has still goes when its days are past.
//!
//! Reads by id look in every class there is (one more index probe per class). The index
//! runs of listings stay in the installation's days.

use std::time::Duration;

/// The span of days each class has to itself (far beyond any real day: 2026 is ~20,400).
pub(crate) const SPAN: u32 = 1_000_000;
const DAY: u64 = 86_400;

/// The class of a plan's delivery retention under the installation's (`ceiling`).
pub(crate) fn class_of(retention: Duration, ceiling: Duration) -> u32 {
    if retention >= ceiling {
        return 0;
    }
    (retention.as_secs().div_ceil(DAY) as u32).clamp(1, 2_000)
}

/// The stored day of `day` in class `class`.
pub(crate) fn stored_day(class: u32, day: u32) -> u32 {
    class * SPAN + day
}

/// A stored day's class and day.
pub(crate) fn split(stored: u32) -> (u32, u32) {
    (stored / SPAN, stored % SPAN)
}

/// The SQL condition that `day` is within `[oldest, newest]` (the parameters' places, e.g.
/// `$2`, `$3`) in any of `classes`.
pub(crate) fn day_within(classes: &[u32], oldest: &str, newest: &str) -> String {
    let ranges: Vec<String> = classes
        .iter()
        .map(|k| match u64::from(*k) * u64::from(SPAN) {
            0 => format!("day BETWEEN {oldest} AND {newest}"),
            shift => format!("day BETWEEN {oldest} + {shift} AND {newest} + {shift}"),
        })
        .collect();
    format!("({})", ranges.join(" OR "))
}

/// Whether a stored day's partition is past its class's retention (class 0 is not this
/// function's to say: the installation's retention drops it).
pub(crate) fn expired(stored: u32, today: u32) -> bool {
    let (class, day) = split(stored);
    class > 0 && day + class < today
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_is_its_retention_in_days_below_the_installations() {
        let day = Duration::from_secs(DAY);
        assert_eq!(class_of(7 * day, 7 * day), 0);
        assert_eq!(class_of(30 * day, 7 * day), 0);
        assert_eq!(class_of(4 * day, 7 * day), 4);
        assert_eq!(class_of(Duration::from_secs(3600), 7 * day), 1);
        assert_eq!(split(stored_day(4, 20_420)), (4, 20_420));
        assert!(expired(stored_day(4, 20_415), 20_420) && !expired(stored_day(4, 20_416), 20_420));
        assert!(!expired(20_000, 20_420), "class 0 goes with the installation's retention");
        assert_eq!(
            day_within(&[0, 4], "$2", "$3"),
            "(day BETWEEN $2 AND $3 OR day BETWEEN $2 + 4000000 AND $3 + 4000000)"
        );
    }
}
