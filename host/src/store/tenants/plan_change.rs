//! A plan change, joining three concerns: the organisation's plan is written, copied onto
//! each of its API clients (their tokens' lookups read it), and the organisation's version
//! raised (a publish's kept view of it is then stale).

use crate::store::core::base::Base;
use crate::store::error::Result;
use crate::store::tenants::clients::Clients;
use crate::store::tenants::orgs::{Org, Orgs, Plan};
use crate::store::versions::Versions;

/// The plan changes of organisations.
#[derive(Debug, Clone)]
pub struct PlanChanges {
    base: Base,
}

impl PlanChanges {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> PlanChanges {
        PlanChanges { base: base.clone() }
    }

    /// Puts the organisation on `plan` (`None`: there is no such organisation). A plan
    /// change applies at once: nothing already stored is lost by lowering a limit.
    pub async fn set_org_plan(&self, id: &str, plan: Plan) -> Result<Option<Org>> {
        let orgs = Orgs::of(&self.base);
        if !orgs.write_plan(id, &plan).await? {
            return Ok(None);
        }
        Clients::of(&self.base).copy_plan_to_clients(id, plan).await?;
        Versions::of(&self.base).raise(id).await?;
        orgs.get_org(id).await
    }
}
