//! Where an organisation stands against its plan (contract §9 "Plans"): `GET /api/v2/usage`
//! and the same figures on the settings pages and the portal.

use std::sync::Arc;

use crate::plans::{Plans, Quota};
use crate::store::StoreError;
use crate::store::events::daily::DailyCounts;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::plugins::PluginRecords;
use crate::store::tenants::webhooks::WebhookRecords;

/// One count and its limit (`None`: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct Figure {
    pub used: u64,
    pub limit: Option<u64>,
}

impl Figure {
    /// How much of its limit is used, 0–100 (`None` without a limit; 100 for a limit of 0).
    pub(crate) fn percent(&self) -> Option<u64> {
        let limit = self.limit?;
        Some(self.used.saturating_mul(100).checked_div(limit).map_or(100, |pct| pct.min(100)))
    }
}

/// An organisation's usage of its plan now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[schema(as = Usage)]
pub(crate) struct UsageView {
    pub plan: String,
    /// The UTC day `events` counts, `YYYY-MM-DD`.
    pub day: String,
    pub events: Figure,
    pub webhooks: Figure,
    pub plugins: Figure,
    pub plugin_bytes: Figure,
}

impl UsageView {
    /// Each figure with the limit it is counted against, in the contract's order.
    pub(crate) fn figures(&self) -> [(Quota, Figure); 4] {
        [
            (Quota::EventsPerDay, self.events),
            (Quota::Webhooks, self.webhooks),
            (Quota::Plugins, self.plugins),
            (Quota::PluginBytes, self.plugin_bytes),
        ]
    }
}

/// Usage, for the surfaces.
#[derive(Debug, Clone)]
pub(crate) struct Usage {
    orgs: Orgs,
    counts: DailyCounts,
    webhooks: WebhookRecords,
    plugins: PluginRecords,
    plans: Arc<Plans>,
}

impl Usage {
    pub(crate) fn new(
        orgs: Orgs,
        counts: DailyCounts,
        webhooks: WebhookRecords,
        plugins: PluginRecords,
        plans: &Arc<Plans>,
    ) -> Usage {
        Usage { orgs, counts, webhooks, plugins, plans: plans.clone() }
    }

    /// The organisation's usage now (its plan read now: a change shows at once).
    pub(crate) async fn of(&self, org_id: &str) -> Result<UsageView, StoreError> {
        let plan = self.orgs.org_plan_name(org_id).await?;
        let limits = &self.plans.rules(&plan).limits;
        let now = crate::time::now_millis();
        let day = crate::store::core::keys::day_of(now);
        let events = async {
            match limits.events_per_day {
                Some(_) => self.counts.daily_used(org_id, day).await,
                None => self.counts.published_of_day(org_id, day).await,
            }
        };
        let (events, webhooks, plugins) =
            tokio::try_join!(events, self.webhooks.count_webhooks(org_id), self.plugins.plugin_usage(org_id, ""))?;
        let figure = |used: u64, quota: Quota| Figure { used, limit: limits.of(quota) };
        Ok(UsageView {
            plan,
            day: crate::time::format_day(now),
            events: figure(events, Quota::EventsPerDay),
            webhooks: figure(webhooks, Quota::Webhooks),
            plugins: figure(plugins.0.plugins as u64, Quota::Plugins),
            plugin_bytes: figure(plugins.0.bytes, Quota::PluginBytes),
        })
    }
}
