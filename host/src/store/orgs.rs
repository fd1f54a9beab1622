//! Organisations: the tenants. Created by operators (`weir admin org create`).

use std::collections::HashMap;

use redis::AsyncCommands;
use serde::Serialize;

use super::{Result, Store, StoreError};
use crate::ids::{self, Kind};

/// A plan decides whether the organisation may use the API (service document §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    Free,
    Pro,
}

impl Plan {
    pub fn parse(text: &str) -> Option<Plan> {
        match text {
            "free" => Some(Plan::Free),
            "pro" => Some(Plan::Pro),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Pro => "pro",
        }
    }

    /// `pro` includes API integrations, `free` does not (contract §1).
    pub fn api_integrations(self) -> bool {
        matches!(self, Plan::Pro)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Org {
    pub id: String,
    pub name: String,
    pub plan: Plan,
    pub api_integrations: bool,
}

impl Store {
    pub async fn create_org(&self, name: &str, plan: Plan) -> Result<Org> {
        let id = ids::new(Kind::Org);
        let key = self.key(&["org", &id]);
        let now = crate::time::now_rfc3339();
        redis::pipe()
            .atomic()
            .hset_multiple(&key, &[("id", id.as_str()), ("name", name), ("plan", plan.as_str()), ("created_at", &now)])
            .ignore()
            .zadd(self.key(&["orgs"]), &id, 0)
            .ignore()
            .query_async::<()>(&mut self.conn())
            .await?;
        Ok(Org { id, name: name.to_owned(), plan, api_integrations: plan.api_integrations() })
    }

    pub async fn get_org(&self, id: &str) -> Result<Option<Org>> {
        let key = self.key(&["org", id]);
        let fields: HashMap<String, String> = self.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        let plan = fields
            .get("plan")
            .and_then(|p| Plan::parse(p))
            .ok_or_else(|| StoreError::Corrupt { key: key.clone(), reason: "bad plan".into() })?;
        Ok(Some(Org {
            id: id.to_owned(),
            name: fields.get("name").cloned().unwrap_or_default(),
            plan,
            api_integrations: plan.api_integrations(),
        }))
    }

    /// Changes the plan; `None` when the organisation does not exist.
    pub async fn set_org_plan(&self, id: &str, plan: Plan) -> Result<Option<Org>> {
        let key = self.key(&["org", id]);
        let script = redis::Script::new(
            "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
             redis.call('HSET', KEYS[1], 'plan', ARGV[1]) return 1",
        );
        let updated: i64 = script.key(&key).arg(plan.as_str()).invoke_async(&mut self.conn()).await?;
        if updated == 0 {
            return Ok(None);
        }
        self.get_org(id).await
    }

    /// Every organisation id, for background jobs that sweep per organisation.
    pub async fn org_ids(&self) -> Result<Vec<String>> {
        Ok(self.conn().zrange(self.key(&["orgs"]), 0, -1).await?)
    }
}
