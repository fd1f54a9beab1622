//! The test events' budget (contract §10): at most [`PER_WEBHOOK`] a minute to one webhook
//! and [`PER_ORG`] a minute from one organisation, over a sliding minute
//! (`store::core::room`; keys `test-events`).

use std::time::Duration;

use crate::store::core::base::Base;
use crate::store::core::room::{self, Bounded, Entry};
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct TestEventBudget {
    base: Base,
}

impl TestEventBudget {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> TestEventBudget {
        TestEventBudget { base: base.clone() }
    }
}

/// Test events a webhook may be sent in a minute.
pub const PER_WEBHOOK: u64 = 10;
/// Test events an organisation may send in a minute.
pub const PER_ORG: u64 = 60;
const WINDOW: Duration = Duration::from_secs(60);

/// A test event the budget has no room for: whose bound it met and how long until it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom {
    /// `webhook` or `organisation`.
    pub scope: &'static str,
    pub wait: Duration,
}

impl TestEventBudget {
    /// Counts a test event to the organisation's webhook if both have room in the last
    /// minute (nothing is counted otherwise).
    pub async fn count_test_event(&self, org_id: &str, webhook_id: &str) -> Result<std::result::Result<(), NoRoom>> {
        let now = crate::time::now_millis();
        let (webhook_key, org_key) =
            (self.base.keys().test_events_of(org_id, webhook_id), self.base.keys().test_events(org_id));
        let sets = [Bounded { key: &webhook_key, limit: PER_WEBHOOK }, Bounded { key: &org_key, limit: PER_ORG }];
        let member = crate::ids::new(crate::ids::Kind::Event);
        let entry = Entry { member: &member, until_ms: now + WINDOW.as_millis() as u64 };
        Ok(room::take(&mut self.base.conn(), &sets, entry, now)
            .await?
            .map_err(|full| NoRoom { scope: if full.set == 0 { "webhook" } else { "organisation" }, wait: full.wait }))
    }
}
