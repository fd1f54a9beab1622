//! What each plan allows an organisation to keep: the bounds that stop one tenant from
//! taking what all share (Redis memory, compile time, fan-out).

use crate::store::tenants::orgs::Plan;

/// An organisation's limits under its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanLimits {
    /// Most webhooks.
    pub webhooks: usize,
    /// Most plugins (every version counts).
    pub plugins: usize,
    /// Most bytes of plugin code stored (identical uploads are stored once).
    pub plugin_bytes: u64,
}

const MIB: u64 = 1024 * 1024;

/// The limits of `plan`. `free` has no API, so no plugins; its webhooks are managed on the
/// settings pages.
pub fn limits(plan: Plan) -> PlanLimits {
    match plan {
        Plan::Free => PlanLimits { webhooks: 100, plugins: 0, plugin_bytes: 0 },
        Plan::Pro => PlanLimits { webhooks: 500, plugins: 100, plugin_bytes: 256 * MIB },
    }
}
