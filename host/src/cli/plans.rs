//! Plans as `weir admin` takes and shows them: a name the configuration has, and an
//! organisation with whether its plan includes the API.

use serde_json::json;

use crate::config::Config;
use crate::store::tenants::orgs::{Org, Plan};

/// The plan named `name`, if the configuration has it; else what to say.
pub(super) fn configured(config: &Config, name: &str) -> Result<Plan, String> {
    match (config.plans.get(name), Plan::parse(name)) {
        (Some(_), Some(plan)) => Ok(plan),
        _ => {
            let known: Vec<&str> = config.plans.names().collect();
            Err(format!("no plan `{name}` in the configuration (plans: {})", known.join(", ")))
        }
    }
}

/// An organisation as the commands print it.
pub(super) fn org_view(config: &Config, org: &Org) -> serde_json::Value {
    let api = config.plans.rules(org.plan.as_str()).api_integrations;
    json!({"id": org.id, "name": org.name, "plan": org.plan, "api_integrations": api})
}
