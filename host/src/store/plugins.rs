//! Uploaded plugins, in their organisation's group (`store::keys`): a hash (`id`,
//! `org_id`, `name`, `sha256`, `size`, `created_at`, `version`), the code beside it, and the
//! organisation's index of them. Uploads under one name are its versions 1, 2, …: each is a
//! plugin of its own (attachments name one by id), numbered by the organisation's counter
//! per name, so a deleted version's number is never given again.

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
    /// 1 for the first upload under its name, then 2, 3, …
    pub version: u64,
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
        // Plugins stored before versions were counted are their name's first.
        version: text("version").parse().unwrap_or(1),
        org_id: text("org_id"),
    }
}

impl Store {
    /// Stores a plugin as the next version of its name (`plugin.version` is ignored);
    /// `None` when the organisation has too many.
    pub async fn create_plugin(&self, plugin: &Plugin, wasm: &[u8]) -> Result<Option<Plugin>> {
        let key = self.keys().plugin(&plugin.org_id, &plugin.id);
        let version: u64 = PLUGIN_CREATE
            .call()
            .key(&key)
            .key(&self.keys().plugin_wasm(&plugin.org_id, &plugin.id))
            .key(&self.keys().plugins(&plugin.org_id))
            .key(&self.keys().plugin_versions(&plugin.org_id))
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
        if version == 0 {
            return Ok(None);
        }
        self.acknowledged(&key).await?;
        Ok(Some(Plugin { version, ..plugin.clone() }))
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
        Ok((self.plugins_by_id(org_id, &ids).await?, next))
    }

    /// The organisation's plugins with these ids, in order (those gone are left out), read
    /// in one round trip on one Redis (each alone on a cluster: see `Conn::query_reads`).
    async fn plugins_by_id(&self, org_id: &str, ids: &[String]) -> Result<Vec<Plugin>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.hgetall(self.keys().plugin(org_id, id));
        }
        let rows: Vec<HashMap<String, String>> = self.conn().query_reads(&pipe).await?;
        Ok(rows.iter().filter(|r| !r.is_empty()).map(from_fields).collect())
    }

    /// A page of the versions of the plugin named `name`, newest first; `cursor` is the id
    /// of the last one of the previous page. (An organisation has at most
    /// [`MAX_PLUGINS_PER_ORG`] plugins: they are read whole.)
    pub async fn plugin_versions(
        &self,
        org_id: &str,
        name: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Plugin>, Option<String>)> {
        let ids: Vec<String> = self.conn().zrange(self.keys().plugins(org_id), 0, -1).await?;
        let mut versions: Vec<Plugin> =
            self.plugins_by_id(org_id, &ids).await?.into_iter().filter(|p| p.name == name).collect();
        versions.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| b.id.cmp(&a.id)));
        let start = match cursor {
            Some(c) => versions.iter().position(|p| p.id == c).map_or(versions.len(), |i| i + 1),
            None => 0,
        };
        let mut page: Vec<Plugin> = versions.into_iter().skip(start).take(limit + 1).collect();
        let next = if page.len() > limit {
            page.truncate(limit);
            page.last().map(|p| p.id.clone())
        } else {
            None
        };
        Ok((page, next))
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
            let reply: String = call.run(&mut self.conn()).await?;
            let deleted = super::reply::name_of("plugin_delete.lua", &reply, |name| match name {
                "deleted" => Some(Some(Deleted::Deleted)),
                "attached" => Some(Some(Deleted::Attached)),
                "not_found" => Some(Some(Deleted::NotFound)),
                "changed" => Some(None),
                _ => None,
            })?;
            match deleted {
                Some(Deleted::Deleted) => {
                    self.acknowledged(&self.keys().plugins(org_id)).await?;
                    return Ok(Deleted::Deleted);
                }
                Some(other) => return Ok(other),
                // The organisation's webhooks changed meanwhile: read them again.
                None => continue,
            }
        }
        Ok(Deleted::Attached)
    }
}
