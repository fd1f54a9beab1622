//! Per-client request budgets for the API, shared by every `weir serve` process.
//!
//! A generic cell rate algorithm (GCRA): `P:rate:{cli}` holds the client's theoretical
//! arrival time in microseconds of Redis's clock (one clock for all processes). Each request
//! moves it one interval (`1 s / rate`) later; a request is refused while it would end more
//! than `burst` intervals ahead of now. A refused request changes nothing. The key expires
//! once the budget is full again, so idle clients cost nothing.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::{Result, Store};

/// KEYS: 1 the client's key. ARGV: 1 interval (µs), 2 burst (requests).
/// Returns 0 when allowed, else the wait (µs) until the next request would be.
static TAKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '') or now
if tat < now then tat = now end
local next_tat = tat + interval
local wait = next_tat - burst * interval - now
if wait > 0 then return wait end
redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', math.ceil((next_tat - now) / 1000) + 1)
return 0
",
    )
});

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
        let wait_us: u64 = TAKE
            .key(self.key(&["rate", client_id]))
            .arg(interval_us)
            .arg(limit.burst.max(1))
            .invoke_async(&mut self.conn())
            .await?;
        Ok((wait_us > 0).then(|| Duration::from_micros(wait_us)))
    }
}
