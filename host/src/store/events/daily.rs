//! An organisation's events of a UTC day (contract §9 "Plans"), counted two ways:
//! - every publisher's event is counted by the publish script itself, per partition and day
//!   (`P:{q}:published:{day}`, organisation → count): free, as it rides the publish's own
//!   call, and what `GET /api/v2/usage` sums for a plan without a daily limit;
//! - for a plan with one, one counter per organisation and day in the organisation's slot
//!   (`P:{o}:events-of-day:{day}`), so one script decides each publish exactly whatever the
//!   process or partition. A publish takes its place before anything of it is stored (a
//!   publish refused stores nothing) and gives it back when it turns out to store nothing
//!   (a duplicate, a Redis that refused the write). A plan that gains a limit during a day
//!   counts that day from its first publish under it.

use std::collections::HashMap;

use crate::store::core::base::Base;
use crate::store::core::keys::day_of;
use crate::store::core::reply::unexpected;
use crate::store::core::scripts::DAILY;
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct DailyCounts {
    base: Base,
}

impl DailyCounts {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> DailyCounts {
        DailyCounts { base: base.clone() }
    }
}

const DAY_MS: u64 = 86_400_000;

/// When a day's counts expire (ms since the epoch): a day after the day ends.
pub(crate) fn expiry(day: u32) -> u64 {
    (u64::from(day) + 2) * DAY_MS
}

/// Places asked for by one publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Take {
    pub org_id: String,
    /// The day the publish counts in (UTC, days since the epoch).
    pub day: u32,
    /// Its plan's limit.
    pub limit: u64,
    pub events: u64,
}

impl Take {
    /// `events` of `org_id` now.
    pub fn now(org_id: &str, limit: u64, events: u64) -> Take {
        Take { org_id: org_id.to_owned(), day: day_of(crate::time::now_millis()), limit, events }
    }
}

/// What a [`Take`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Taken: the day's count with it.
    Yes { used: u64 },
    /// The limit would be crossed: nothing taken; the day's count.
    No { used: u64 },
}

impl DailyCounts {
    /// Takes places for a batch of publishes: one script per organisation and day, each
    /// publish all or nothing in order. One answer per take, in order.
    pub async fn take_daily(&self, takes: &[Take]) -> Result<Vec<Taken>> {
        let mut groups: HashMap<(&str, u32, u64), Vec<usize>> = HashMap::new();
        for (i, take) in takes.iter().enumerate() {
            groups.entry((take.org_id.as_str(), take.day, take.limit)).or_default().push(i);
        }
        let calls = groups.into_iter().map(|((org, day, limit), places)| async move {
            let mut call = DAILY.call();
            call.key(&self.base.keys().events_of_day(org, day));
            call.arg(limit).arg(expiry(day));
            for i in &places {
                call.arg(takes[*i].events);
            }
            let replies: Vec<(u8, u64)> = call.run(&mut self.base.conn()).await?;
            if replies.len() != places.len() {
                return Err(unexpected("daily.lua", "one reply per publish expected"));
            }
            Ok(places.into_iter().zip(replies).collect::<Vec<_>>())
        });
        let mut answers = vec![Taken::No { used: 0 }; takes.len()];
        for (i, (taken, used)) in futures_util::future::try_join_all(calls).await?.into_iter().flatten() {
            answers[i] = if taken == 1 { Taken::Yes { used } } else { Taken::No { used } };
        }
        Ok(answers)
    }

    /// Gives back places a publish took but did not use.
    pub async fn give_back_daily(&self, take: &Take) -> Result<()> {
        let mut call = DAILY.call();
        call.key(&self.base.keys().events_of_day(&take.org_id, take.day)).arg("give").arg(0).arg(take.events);
        let _: Vec<i64> = call.run(&mut self.base.conn()).await?;
        Ok(())
    }

    /// The organisation's publishers' events of `day` so far as the publish script counted
    /// them (every partition's count summed).
    pub async fn published_of_day(&self, org_id: &str, day: u32) -> Result<u64> {
        let reads = self.base.keys().partitions().map(|p| async move {
            let n: Option<u64> = redis::cmd("HGET")
                .arg(self.base.keys().published_of_day(p, day))
                .arg(org_id)
                .query_async(&mut self.base.conn())
                .await?;
            Ok::<_, crate::store::error::StoreError>(n.unwrap_or(0))
        });
        Ok(futures_util::future::try_join_all(reads).await?.into_iter().sum())
    }

    /// The organisation's events of `day` taken against its plan's limit so far.
    pub async fn daily_used(&self, org_id: &str, day: u32) -> Result<u64> {
        let used: Option<i64> = redis::cmd("GET")
            .arg(self.base.keys().events_of_day(org_id, day))
            .query_async(&mut self.base.conn())
            .await?;
        Ok(used.unwrap_or(0).max(0) as u64)
    }
}
