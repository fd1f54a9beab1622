//! Per-client request budgets for the API, shared by every `weir serve` process.
//!
//! A generic cell rate algorithm (GCRA, `lua/rate.lua`): the client's rate key holds the client's theoretical
//! arrival time in microseconds of Redis's clock (one clock for all processes). Each request
//! moves it one interval (`1 s / rate`) later; a request is refused while it would end more
//! than `burst` intervals ahead of now. A refused request changes nothing. The key expires
//! once the budget is full again, so idle clients cost nothing.

use std::time::Duration;

use super::scripts::RATE;
use super::{Result, Store};

/// A request budget: `per_second` on average, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

impl Store {
    /// Takes one request from the client's budget: `None` when allowed, else how long
    /// until it would be.
    pub async fn take_request(&self, client_id: &str, limit: RateLimit) -> Result<Option<Duration>> {
        let interval_us = (1_000_000 / u64::from(limit.per_second.max(1))).max(1);
        let wait_us: u64 = RATE
            .call()
            .key(&self.keys().rate(client_id))
            .arg(interval_us)
            .arg(limit.burst.max(1))
            .run(&mut self.conn())
            .await?;
        Ok((wait_us > 0).then(|| Duration::from_micros(wait_us)))
    }
}
