//! Rate budgets shared by every `weir serve` process: API clients' request budgets, an
//! organisation's budget of `webhook_delivery_failed` notices, and
//! webhooks' delivery budgets (`rate_limit`, `lua/limit.lua`: the claimer takes a webhook's
//! deliveries from it before claiming them, and gives back what it did not claim).
//!
//! A generic cell rate algorithm (GCRA, `lua/rate.lua`): the client's rate key holds the client's theoretical
//! arrival time in microseconds of Redis's clock (one clock for all processes). Each request
//! moves it one interval (`1 s / rate`) later; a request is refused while it would end more
//! than `burst` intervals ahead of now. A refused request changes nothing. The key expires
//! once the budget is full again, so idle clients cost nothing.

use std::time::Duration;

use crate::store::core::base::Base;
use crate::store::core::reply::Named;
use crate::store::core::scripts::{LIMIT, RATE};
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Rates {
    base: Base,
}

impl Rates {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Rates {
        Rates { base: base.clone() }
    }
}

/// A request budget: `per_second` on average, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

/// Deliveries taken from a webhook's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub granted: usize,
    /// When fewer were granted than asked for, up to half the burst (at least one): how long
    /// until that many could be.
    pub wait: Option<Duration>,
}

/// A webhook's budget: one delivery every `1 s / per_second`, and a burst of 50 ms worth
/// (at least one), so the rate holds over any second.
fn delivery_budget(per_second: u32) -> (u64, u64) {
    let interval_us = (1_000_000 / u64::from(per_second.max(1))).max(1);
    (interval_us, u64::from(per_second / 20).max(1))
}

impl Rates {
    /// Takes up to `n` deliveries from the webhook's budget at `per_second`.
    pub async fn take_deliveries(&self, webhook: &str, per_second: u32, n: usize) -> Result<Grant> {
        let (interval_us, burst) = delivery_budget(per_second);
        let reply: redis::Value = LIMIT
            .call()
            .key(&self.base.keys().webhook_limiter(webhook))
            .arg(interval_us)
            .arg(burst)
            .arg("take")
            .arg(n)
            .run(&mut self.base.conn())
            .await?;
        let named = Named::from_value(reply, "limit.lua")?;
        let granted = named.int("granted").and_then(|g| usize::try_from(g).ok()).unwrap_or(0).min(n);
        let wait = named.int("wait").and_then(|w| u64::try_from(w).ok()).filter(|w| *w > 0);
        Ok(Grant { granted, wait: wait.map(Duration::from_micros) })
    }

    /// Gives `n` deliveries taken but not claimed back to the webhook's budget.
    pub async fn give_back_deliveries(&self, webhook: &str, per_second: u32, n: usize) -> Result<()> {
        let (interval_us, burst) = delivery_budget(per_second);
        let _: redis::Value = LIMIT
            .call()
            .key(&self.base.keys().webhook_limiter(webhook))
            .arg(interval_us)
            .arg(burst)
            .arg("give")
            .arg(n)
            .run(&mut self.base.conn())
            .await?;
        Ok(())
    }

    /// Takes one request from the client's budget: `None` when allowed, else how long
    /// until it would be.
    pub async fn take_request(&self, client_id: &str, limit: RateLimit) -> Result<Option<Duration>> {
        let interval_us = (1_000_000 / u64::from(limit.per_second.max(1))).max(1);
        self.take_one(&self.base.keys().rate(client_id), interval_us, limit.burst.max(1)).await
    }

    /// Takes one operational notice from the organisation's budget: one every `interval`
    /// on average, `burst` at once. `None` when allowed, else how long until one would be.
    pub async fn take_notice(&self, org_id: &str, interval: Duration, burst: u32) -> Result<Option<Duration>> {
        let interval_us = (interval.as_micros() as u64).max(1);
        self.take_one(&self.base.keys().notice_rate(org_id), interval_us, burst.max(1)).await
    }

    async fn take_one(&self, key: &str, interval_us: u64, burst: u32) -> Result<Option<Duration>> {
        let wait_us: u64 = RATE.call().key(key).arg(interval_us).arg(burst).run(&mut self.base.conn()).await?;
        Ok((wait_us > 0).then(|| Duration::from_micros(wait_us)))
    }
}
