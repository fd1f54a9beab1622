//! Uploaded plugins, in their organisation's group (`store::keys`): a hash (`id`,
//! `org_id`, `name`, `sha256`, `size`, `created_at`), the code beside it, and the
//! organisation's index of them.

use std::collections::HashMap;

use redis::AsyncCommands;
use serde::Serialize;

use super::scripts::{PLUGIN_CREATE, PLUGIN_DELETE};
use super::{Result, Store};

/// Most plugins one organisation may have.
pub const MAX_PLUGINS_PER_ORG: usize = 100;

/// A plugin as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Plugin {
    pub id: String,
    pub name: String,
    pub sha256: String,
    pub size: u64,
    pub created_at: String,
    #[serde(skip)]
    #[schema(ignore)]
    pub org_id: String,
}

/// The outcome of deleting a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    Deleted,
    NotFound,
    Attached,
}

fn from_fields(fields: &HashMap<String, String>) -> Plugin {
    let text = |name: &str| fields.get(name).cloned().unwrap_or_default();
    Plugin {
        id: text("id"),
        name: text("name"),
        sha256: text("sha256"),
        size: text("size").parse().unwrap_or(0),
        created_at: text("created_at"),
        org_id: text("org_id"),
    }
}

impl Store {
    /// Stores a plugin; `None` when the organisation has too many.
    pub async fn create_plugin(&self, plugin: &Plugin, wasm: &[u8]) -> Result<Option<Plugin>> {
        let key = self.keys().plugin(&plugin.org_id, &plugin.id);
        let created: i64 = PLUGIN_CREATE
            .call()
            .key(&key)
            .key(&self.keys().plugin_wasm(&plugin.org_id, &plugin.id))
            .key(&self.keys().plugins(&plugin.org_id))
            .arg(MAX_PLUGINS_PER_ORG)
            .arg(&plugin.id)
            .arg(&plugin.org_id)
            .arg(&plugin.name)
            .arg(&plugin.sha256)
            .arg(plugin.size)
            .arg(&plugin.created_at)
            .arg(wasm)
            .run(&mut self.conn())
            .await?;
        if created != 1 {
            return Ok(None);
        }
        self.acknowledged(&key).await?;
        Ok(Some(plugin.clone()))
    }

    /// The plugin if it belongs to `org_id`.
    pub async fn get_plugin(&self, org_id: &str, id: &str) -> Result<Option<Plugin>> {
        let fields: HashMap<String, String> = self.conn().hgetall(self.keys().plugin(org_id, id)).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        Ok(Some(from_fields(&fields)).filter(|p| p.org_id == org_id))
    }

    /// The plugin's code.
    pub async fn get_plugin_wasm(&self, org_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.conn().get(self.keys().plugin_wasm(org_id, id)).await?)
    }

    /// A page of the organisation's plugins, newest first.
    pub async fn list_plugins(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Plugin>, Option<String>)> {
        let (ids, next) = self.page_ids(&self.keys().plugins(org_id), cursor, limit).await?;
        if ids.is_empty() {
            return Ok((Vec::new(), next));
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(self.keys().plugin(org_id, id));
        }
        let rows: Vec<HashMap<String, String>> = pipe.query_async(&mut self.conn()).await?;
        Ok((rows.iter().filter(|r| !r.is_empty()).map(from_fields).collect(), next))
    }

    /// Deletes a plugin unless a webhook of the organisation has it attached. The script
    /// is given every webhook of the organisation; if they changed meanwhile, it runs again.
    pub async fn delete_plugin(&self, org_id: &str, id: &str) -> Result<Deleted> {
        for _ in 0..5 {
            let webhooks = self.webhook_ids(org_id).await?;
            let mut call = PLUGIN_DELETE.call();
            call.key(&self.keys().plugin(org_id, id))
                .key(&self.keys().plugin_wasm(org_id, id))
                .key(&self.keys().webhooks(org_id))
                .key(&self.keys().plugins(org_id));
            for wh in &webhooks {
                call.key(&self.keys().webhook(org_id, wh));
            }
            call.arg(org_id).arg(id);
            let done: i64 = call.run(&mut self.conn()).await?;
            match done {
                1 => {
                    self.acknowledged(&self.keys().plugins(org_id)).await?;
                    return Ok(Deleted::Deleted);
                }
                2 => return Ok(Deleted::Attached),
                3 => continue,
                _ => return Ok(Deleted::NotFound),
            }
        }
        Ok(Deleted::Attached)
    }
}
