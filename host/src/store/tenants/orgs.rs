//! Organisations: the tenants. Created by operators (`weir admin org create`).

use std::collections::HashMap;

use redis::AsyncCommands;
use serde::Serialize;

use crate::ids::{self, Kind};
use crate::store::core::base::Base;
use crate::store::error::Result;
use crate::store::error::StoreError;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Orgs {
    base: Base,
}

impl Orgs {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Orgs {
        Orgs { base: base.clone() }
    }
}

/// The name of an organisation's plan; what it allows is `crate::plans`'s to say.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Plan(String);

impl Plan {
    /// A plan name, if `text` may be one (`crate::plans::is_valid_name`).
    pub fn parse(text: &str) -> Option<Plan> {
        crate::plans::is_valid_name(text).then(|| Plan(text.to_owned()))
    }

    /// The shipped plan without API integrations.
    pub fn free() -> Plan {
        Plan("free".to_owned())
    }

    /// The shipped plan with API integrations.
    pub fn pro() -> Plan {
        Plan("pro".to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Org {
    pub id: String,
    pub name: String,
    pub plan: Plan,
}

impl Orgs {
    /// Creates an organisation. Its hash is written first, then the index of all
    /// organisations (a different slot): an interrupted create leaves an unlisted hash,
    /// never a listed id without one.
    pub async fn create_org(&self, name: &str, plan: Plan) -> Result<Org> {
        let id = ids::new(Kind::Org);
        let key = self.base.keys().org(&id);
        let now = crate::time::now_rfc3339();
        let _: () = self
            .base
            .conn()
            .hset_multiple(&key, &[("id", id.as_str()), ("name", name), ("plan", plan.as_str()), ("created_at", &now)])
            .await?;
        let _: () = self.base.conn().zadd(self.base.keys().orgs(), &id, 0).await?;
        self.base.acknowledged(&key).await?;
        Ok(Org { id, name: name.to_owned(), plan })
    }

    pub async fn get_org(&self, id: &str) -> Result<Option<Org>> {
        let key = self.base.keys().org(id);
        let fields: HashMap<String, String> = self.base.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        let plan = fields
            .get("plan")
            .and_then(|p| Plan::parse(p))
            .ok_or_else(|| StoreError::Corrupt { key: key.clone(), reason: "bad plan".into() })?;
        Ok(Some(Org { id: id.to_owned(), name: fields.get("name").cloned().unwrap_or_default(), plan }))
    }

    /// The plan of an organisation, `None` if there is none.
    pub async fn org_plan(&self, id: &str) -> Result<Option<Plan>> {
        let plan: Option<String> = self.base.conn().hget(self.base.keys().org(id), "plan").await?;
        Ok(plan.as_deref().and_then(Plan::parse))
    }

    /// The name of the organisation's plan, `""` when it has none (no plan is called that, so
    /// `crate::plans::Plans` answers it as an unconfigured plan).
    pub async fn org_plan_name(&self, id: &str) -> Result<String> {
        Ok(self.org_plan(id).await?.map(|p| p.0).unwrap_or_default())
    }

    /// Writes the organisation's plan; `false` if there is no such organisation. (What
    /// follows a plan change is `plan_change`'s.)
    pub(in crate::store) async fn write_plan(&self, id: &str, plan: &Plan) -> Result<bool> {
        let key = self.base.keys().org(id);
        let updated: i64 = crate::store::core::scripts::SET_IF_EXISTS
            .call()
            .key(&key)
            .arg("plan")
            .arg(plan.as_str())
            .run(&mut self.base.conn())
            .await?;
        if !crate::store::core::reply::done("set_if_exists.lua", updated)? {
            return Ok(false);
        }
        self.base.acknowledged(&key).await?;
        Ok(true)
    }

    pub async fn org_ids(&self) -> Result<Vec<String>> {
        Ok(self.base.conn().zrange(self.base.keys().orgs(), 0, -1).await?)
    }

    /// Every organisation, oldest first.
    pub async fn list_orgs(&self) -> Result<Vec<Org>> {
        let mut orgs = Vec::new();
        for id in self.org_ids().await? {
            if let Some(org) = self.get_org(&id).await? {
                orgs.push(org);
            }
        }
        Ok(orgs)
    }
}
