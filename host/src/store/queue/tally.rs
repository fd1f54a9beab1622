//! A webhook's deliveries and attempts per hour: how many deliveries ended `succeeded` and how
//! many `failed` in each hour, and how many attempts succeeded and failed, counted by
//! `lua/record.lua` as each attempt is recorded (`P:{q}:wc:{org}:{wh}:{day}`,
//! `store::core::keys`: fields `<hour of the day>s`, `…f`, `…a` (attempts succeeded) and `…e`
//! (attempts failed), kept two days). An endpoint failing now shows its failed attempts at
//! once, long before its deliveries end. Deliveries failed without an attempt (a webhook
//! deactivated or deleted, a row that could not be read) are not counted.

use std::collections::HashMap;

use crate::store::core::base::Base;
use crate::store::core::keys::HOUR_MS;
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Tallies {
    base: Base,
}

impl Tallies {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Tallies {
        Tallies { base: base.clone() }
    }
}

/// How long a day's counts are kept (two days: the last 24 hours span two).
pub const TALLY_TTL_SECS: u64 = 2 * 24 * 3600 + 3600;

/// One webhook's counts for the 24 hours ending with the current one, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hourly {
    /// The first hour (hours since the epoch).
    pub first_hour: u64,
    /// Deliveries that ended so.
    pub succeeded: [u64; 24],
    pub failed: [u64; 24],
    /// Attempts made: those that succeeded and those that failed.
    pub attempts_ok: [u64; 24],
    pub attempts_failed: [u64; 24],
}

impl Hourly {
    /// No counts yet, from `first_hour`.
    pub fn empty(first_hour: u64) -> Hourly {
        Hourly { first_hour, succeeded: [0; 24], failed: [0; 24], attempts_ok: [0; 24], attempts_failed: [0; 24] }
    }

    /// No deliveries in the 24 hours up to `now_ms` (what is shown when counts cannot be read).
    pub fn none_until(now_ms: u64) -> Hourly {
        Hourly::empty(now_ms / HOUR_MS - 23)
    }

    /// Adds one day's counts (`day`: days since the epoch) read from one partition.
    fn add(&mut self, day: u64, fields: &HashMap<String, u64>) {
        for (name, n) in fields {
            let (hour, kind) = name.split_at(name.len().saturating_sub(1));
            let Ok(hour) = hour.parse::<u64>() else { continue };
            let Some(i) = (day * 24 + hour).checked_sub(self.first_hour).filter(|i| *i < 24) else { continue };
            match kind {
                "s" => self.succeeded[i as usize] += n,
                "f" => self.failed[i as usize] += n,
                "a" => self.attempts_ok[i as usize] += n,
                "e" => self.attempts_failed[i as usize] += n,
                _ => {}
            }
        }
    }
}

impl Tallies {
    /// Each of `webhooks`' counts (of the organisation) for the 24 hours up to `now_ms`: one
    /// read of every partition's two days.
    pub async fn hourly(&self, org: &str, webhooks: &[&str], now_ms: u64) -> Result<Vec<Hourly>> {
        let last_hour = now_ms / HOUR_MS;
        let first_hour = last_hour - 23;
        // One day when the 24 hours are within one (the current hour is the day's last).
        let days: Vec<u64> = (first_hour / 24..=last_hour / 24).collect();
        let mut pipe = redis::pipe();
        let mut read = Vec::new();
        for p in self.base.keys().partitions() {
            for (w, webhook) in webhooks.iter().enumerate() {
                for &day in &days {
                    pipe.hgetall(self.base.keys().webhook_counts(p, org, webhook, day as u32));
                    read.push((w, day));
                }
            }
        }
        let replies: Vec<HashMap<String, u64>> = self.base.conn().query_reads(&pipe).await?;
        let mut out: Vec<Hourly> = webhooks.iter().map(|_| Hourly::empty(first_hour)).collect();
        for ((w, day), fields) in read.into_iter().zip(replies) {
            out[w].add(day, &fields);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_their_hour_and_old_ones_are_dropped() {
        // Hours 100..=123: day 4 holds hours 96..=119, day 5 holds 120..=143.
        let mut h = Hourly::empty(100);
        let day4: HashMap<String, u64> =
            [("3s", 9), ("4s", 2), ("4f", 1), ("23f", 5), ("x", 1), ("4q", 7), ("4a", 2), ("4e", 6)]
                .map(|(k, v)| (k.to_owned(), v))
                .into();
        h.add(4, &day4);
        let day5: HashMap<String, u64> = [("0s", 3), ("3f", 4), ("4s", 8)].map(|(k, v)| (k.to_owned(), v)).into();
        h.add(5, &day5);
        assert_eq!(h.succeeded[0], 2, "hour 100 is day 4's hour 4");
        assert_eq!(h.failed[0], 1);
        assert_eq!((h.attempts_ok[0], h.attempts_failed[0]), (2, 6), "hour 100's attempts");
        assert_eq!(h.failed[19], 5, "hour 119");
        assert_eq!(h.succeeded[20], 3, "hour 120");
        assert_eq!(h.failed[23], 4, "hour 123");
        assert_eq!(h.succeeded.iter().sum::<u64>(), 5, "hour 99 (day 4's 3) and hour 124 (day 5's 4) are outside");
    }
}
