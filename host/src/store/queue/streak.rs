//! A webhook's failure streak, kept by the delivery workers in the webhook's hash
//! (`fail_count`, `fail_since`): failed attempts in a row since its last success. When the
//! streak lasts long enough (or an attempt gets 410 Gone) `lua/streak.lua` switches the
//! webhook off, in the same step taking it out of the subscription index.

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::scripts::STREAK;
use crate::store::error::Result;
use crate::store::tenants::webhooks::WebhookRecords;
use crate::store::versions::Versions;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Streaks {
    base: Base,
}

impl Streaks {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Streaks {
        Streaks { base: base.clone() }
    }
}

/// The failure streak to add to a webhook after recorded attempts, in order: a success
/// (if any) ends the streak, then `failures` failed attempts follow it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Streak {
    pub success_first: bool,
    pub failures: u32,
    pub gone: bool,
}

/// When a failure streak deactivates a webhook.
#[derive(Debug, Clone, Copy)]
pub struct StreakRules {
    pub failures: u32,
    pub span: std::time::Duration,
}

/// Why a failure streak switched a webhook off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deactivated {
    /// Enough failed attempts in a row, over long enough (`WEIR_DEACTIVATE_AFTER_*`).
    Failing,
    /// An attempt got `410 Gone`.
    Gone,
}

impl Deactivated {
    /// The webhook's `deactivation_reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            Deactivated::Failing => "failing",
            Deactivated::Gone => "gone",
        }
    }
}

impl Streaks {
    /// The webhook's failure streak: failed attempts in a row since its last success.
    pub async fn failure_streak(&self, org_id: &str, id: &str) -> Result<u32> {
        let count: Option<String> = self.base.conn().hget(self.base.keys().webhook(org_id, id), "fail_count").await?;
        Ok(count.and_then(|c| c.parse().ok()).unwrap_or(0))
    }

    /// Adds recorded attempts to a webhook's failure streak; the reason if this switched it
    /// off (`failing`, or `gone` after a 410).
    pub async fn add_to_streak(
        &self,
        org_id: &str,
        id: &str,
        streak: Streak,
        rules: StreakRules,
    ) -> Result<Option<Deactivated>> {
        let now = crate::time::now_millis();
        let mut call = STREAK.call();
        call.key(&self.base.keys().webhook(org_id, id));
        let records = WebhookRecords::of(&self.base);
        let sources = records.source_ids(org_id).await?;
        records.with_subscription_sets(&mut call, org_id, &sources);
        call.arg(now)
            .arg(crate::time::format_millis(now))
            .arg(rules.failures)
            .arg(rules.span.as_millis() as u64)
            .arg(if streak.success_first { "1" } else { "0" })
            .arg(streak.failures)
            .arg(if streak.gone { "1" } else { "0" })
            .arg(id);
        let reason: String = call.run(&mut self.base.conn()).await?;
        let deactivated = crate::store::core::reply::name_of("streak.lua", &reason, |name| match name {
            "" => Some(None),
            "failing" => Some(Some(Deactivated::Failing)),
            "gone" => Some(Some(Deactivated::Gone)),
            _ => None,
        })?;
        if deactivated.is_some() {
            Versions::of(&self.base).raise(org_id).await?;
        }
        Ok(deactivated)
    }
}
