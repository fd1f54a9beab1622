//! Uploaded plugins, in their organisation's group (`store::core::keys`): a hash (`id`,
//! `org_id`, `name`, `sha256`, `size`, `created_at`, `version`), the organisation's index of
//! them, and their code — stored once per organisation and hash, however many plugins
//! (names, versions) use it, and counted against the organisation's plan. Uploads under one name are its versions 1, 2, …: each is a
//! plugin of its own (attachments name one by id), numbered by the organisation's counter
//! per name, so a deleted version's number is never given again.

use std::collections::HashMap;

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::reply::Named;
use crate::store::core::scripts::{PLUGIN_CREATE, PLUGIN_DELETE};
use crate::store::error::Result;
use crate::store::tenants::webhooks::WebhookRecords;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct PluginRecords {
    base: Base,
}

impl PluginRecords {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> PluginRecords {
        PluginRecords { base: base.clone() }
    }
}

/// Most plugins one organisation may have on any plan.
pub const MAX_PLUGINS_PER_ORG: usize = 100;

/// What an organisation may store (its plan's).
#[derive(Debug, Clone, Copy)]
pub struct PluginQuota {
    pub plugins: usize,
    pub bytes: u64,
}

/// What an organisation stores now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginUsage {
    pub plugins: usize,
    /// Bytes of code, each distinct code counted once.
    pub bytes: u64,
}

/// Why a plugin was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The organisation has the most plugins its quota allows.
    Plugins,
    /// Its code would take it past its bytes.
    Bytes,
}

/// A plugin, as stored.
#[derive(Debug, Clone)]
pub struct Plugin {
    pub id: String,
    pub name: String,
    pub sha256: String,
    pub size: u64,
    pub created_at: String,
    /// 1 for the first upload under its name, then 2, 3, …
    pub version: u64,
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

impl PluginRecords {
    /// What the organisation stores now, and whether it stores this code already.
    pub async fn plugin_usage(&self, org_id: &str, sha256: &str) -> Result<(PluginUsage, bool)> {
        let mut pipe = redis::pipe();
        pipe.zcard(self.base.keys().plugins(org_id))
            .hget(self.base.keys().plugin_code_refs(org_id), "bytes")
            .exists(self.base.keys().plugin_code(org_id, sha256));
        let (plugins, bytes, stored): (usize, Option<u64>, bool) = pipe.query_async(&mut self.base.conn()).await?;
        Ok((PluginUsage { plugins, bytes: bytes.unwrap_or(0) }, stored))
    }

    /// Stores a plugin as the next version of its name (`plugin.version` is ignored), its
    /// code unless the organisation stores that code already; refused at the quota.
    pub async fn create_plugin(
        &self,
        plugin: &Plugin,
        wasm: &[u8],
        quota: PluginQuota,
    ) -> Result<std::result::Result<Plugin, Refused>> {
        let key = self.base.keys().plugin(&plugin.org_id, &plugin.id);
        // The code is sent only when it is not stored already (an upload of the same
        // bytes again costs no copy), and again if it went meanwhile.
        let (_, mut stored) = self.plugin_usage(&plugin.org_id, &plugin.sha256).await?;
        for _ in 0..2 {
            let reply: redis::Value = PLUGIN_CREATE
                .call()
                .key(&key)
                .key(&self.base.keys().plugin_code(&plugin.org_id, &plugin.sha256))
                .key(&self.base.keys().plugins(&plugin.org_id))
                .key(&self.base.keys().plugin_versions(&plugin.org_id))
                .key(&self.base.keys().plugin_code_refs(&plugin.org_id))
                .arg(quota.plugins.min(MAX_PLUGINS_PER_ORG))
                .arg(quota.bytes)
                .arg(&plugin.id)
                .arg(&plugin.org_id)
                .arg(&plugin.name)
                .arg(&plugin.sha256)
                .arg(plugin.size)
                .arg(&plugin.created_at)
                .arg(if stored { &[][..] } else { wasm })
                .run(&mut self.base.conn())
                .await?;
            let named = Named::from_value(reply, "plugin_create.lua")?;
            if let Some(version) = named.int("version") {
                self.base.acknowledged(&key).await?;
                return Ok(Ok(Plugin { version: version as u64, ..plugin.clone() }));
            }
            match named.text("refused").as_deref() {
                Some("plugins") => return Ok(Err(Refused::Plugins)),
                Some("bytes") => return Ok(Err(Refused::Bytes)),
                Some("code") => stored = false,
                _ => {
                    return Err(crate::store::core::reply::unexpected(
                        "plugin_create.lua",
                        "neither a version nor a refusal",
                    ));
                }
            }
        }
        Err(crate::store::core::reply::unexpected("plugin_create.lua", "the code went missing twice"))
    }

    /// The plugin if it belongs to `org_id`.
    pub async fn get_plugin(&self, org_id: &str, id: &str) -> Result<Option<Plugin>> {
        Ok(self.plugin_fields(org_id, id).await?.map(|fields| from_fields(&fields)))
    }

    async fn plugin_fields(&self, org_id: &str, id: &str) -> Result<Option<HashMap<String, String>>> {
        let fields: HashMap<String, String> = self.base.conn().hgetall(self.base.keys().plugin(org_id, id)).await?;
        Ok(Some(fields).filter(|f| f.get("org_id").is_some_and(|o| o == org_id)))
    }

    /// The plugin's code.
    pub async fn get_plugin_wasm(&self, org_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        let Some(fields) = self.plugin_fields(org_id, id).await? else { return Ok(None) };
        let key = match (fields.get("shared"), fields.get("sha256")) {
            (Some(_), Some(sha256)) => self.base.keys().plugin_code(org_id, sha256),
            _ => self.base.keys().plugin_wasm(org_id, id),
        };
        Ok(self.base.conn().get(key).await?)
    }

    /// A page of the organisation's plugins, newest first.
    pub async fn list_plugins(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Plugin>, Option<String>)> {
        let (ids, next) = self.base.page_ids(&self.base.keys().plugins(org_id), cursor, limit).await?;
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
            pipe.hgetall(self.base.keys().plugin(org_id, id));
        }
        let rows: Vec<HashMap<String, String>> = self.base.conn().query_reads(&pipe).await?;
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
        let ids: Vec<String> = self.base.conn().zrange(self.base.keys().plugins(org_id), 0, -1).await?;
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
            let Some(plugin) = self.get_plugin(org_id, id).await? else { return Ok(Deleted::NotFound) };
            let webhooks = WebhookRecords::of(&self.base).webhook_ids(org_id).await?;
            let mut call = PLUGIN_DELETE.call();
            call.key(&self.base.keys().plugin(org_id, id))
                .key(&self.base.keys().plugin_wasm(org_id, id))
                .key(&self.base.keys().webhooks(org_id))
                .key(&self.base.keys().plugins(org_id))
                .key(&self.base.keys().plugin_code(org_id, &plugin.sha256))
                .key(&self.base.keys().plugin_code_refs(org_id));
            for wh in &webhooks {
                call.key(&self.base.keys().webhook(org_id, wh));
            }
            call.arg(org_id).arg(id).arg(&plugin.sha256);
            let reply: String = call.run(&mut self.base.conn()).await?;
            let deleted = crate::store::core::reply::name_of("plugin_delete.lua", &reply, |name| match name {
                "deleted" => Some(Some(Deleted::Deleted)),
                "attached" => Some(Some(Deleted::Attached)),
                "not_found" => Some(Some(Deleted::NotFound)),
                "changed" => Some(None),
                _ => None,
            })?;
            match deleted {
                Some(Deleted::Deleted) => {
                    self.base.acknowledged(&self.base.keys().plugins(org_id)).await?;
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
