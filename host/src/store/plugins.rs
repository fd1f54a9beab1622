//! Uploaded plugins: `P:plg:{id}` (hash: `id`, `org_id`, `name`, `sha256`, `size`,
//! `created_at`), its code at `P:plg:{id}:wasm`, and the organisation's index
//! `P:org:{org}:plugins` (lexicographic zset of ids).

use std::collections::HashMap;
use std::sync::LazyLock;

use redis::AsyncCommands;
use serde::Serialize;

use super::{Result, Store};

/// Most plugins one organisation may have.
pub const MAX_PLUGINS_PER_ORG: usize = 100;

/// A plugin as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Plugin {
    pub id: String,
    pub name: String,
    pub sha256: String,
    pub size: u64,
    pub created_at: String,
    #[serde(skip)]
    pub org_id: String,
}

/// Stores a plugin unless the organisation is at its limit.
static CREATE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'org_id', ARGV[3], 'name', ARGV[4], 'sha256', ARGV[5], 'size', ARGV[6], 'created_at', ARGV[7])
redis.call('SET', KEYS[2], ARGV[8])
redis.call('ZADD', KEYS[3], 0, ARGV[2])
return 1
",
    )
});

/// Deletes a plugin of the organisation unless one of its webhooks uses it.
/// Returns 0 (not found), 1 (deleted) or 2 (attached).
static DELETE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r#"
if redis.call('HGET', KEYS[1], 'org_id') ~= ARGV[2] then return 0 end
local needle = '"plugin_id":"' .. ARGV[3] .. '"'
for _, wh in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  local plugins = redis.call('HGET', ARGV[1] .. ':wh:' .. wh, 'plugins')
  if plugins and string.find(plugins, needle, 1, true) then return 2 end
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[3])
return 1
"#,
    )
});

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
        let created: i64 = CREATE
            .key(self.key(&["plg", &plugin.id]))
            .key(self.key(&["plg", &plugin.id, "wasm"]))
            .key(self.key(&["org", &plugin.org_id, "plugins"]))
            .arg(MAX_PLUGINS_PER_ORG)
            .arg(&plugin.id)
            .arg(&plugin.org_id)
            .arg(&plugin.name)
            .arg(&plugin.sha256)
            .arg(plugin.size)
            .arg(&plugin.created_at)
            .arg(wasm)
            .invoke_async(&mut self.conn())
            .await?;
        Ok((created == 1).then(|| plugin.clone()))
    }

    /// The plugin if it belongs to `org_id`.
    pub async fn get_plugin(&self, org_id: &str, id: &str) -> Result<Option<Plugin>> {
        let fields: HashMap<String, String> = self.conn().hgetall(self.key(&["plg", id])).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        Ok(Some(from_fields(&fields)).filter(|p| p.org_id == org_id))
    }

    /// The plugin's code.
    pub async fn get_plugin_wasm(&self, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.conn().get(self.key(&["plg", id, "wasm"])).await?)
    }

    /// A page of the organisation's plugins, newest first.
    pub async fn list_plugins(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Plugin>, Option<String>)> {
        let (ids, next) = self.page_ids(&self.key(&["org", org_id, "plugins"]), cursor, limit).await?;
        if ids.is_empty() {
            return Ok((Vec::new(), next));
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(self.key(&["plg", id]));
        }
        let rows: Vec<HashMap<String, String>> = pipe.query_async(&mut self.conn()).await?;
        Ok((rows.iter().filter(|r| !r.is_empty()).map(from_fields).collect(), next))
    }

    /// Deletes a plugin unless a webhook of the organisation uses it.
    pub async fn delete_plugin(&self, org_id: &str, id: &str) -> Result<Deleted> {
        let done: i64 = DELETE
            .key(self.key(&["plg", id]))
            .key(self.key(&["plg", id, "wasm"]))
            .key(self.key(&["org", org_id, "webhooks"]))
            .key(self.key(&["org", org_id, "plugins"]))
            .arg(&self.prefix)
            .arg(org_id)
            .arg(id)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(match done {
            1 => Deleted::Deleted,
            2 => Deleted::Attached,
            _ => Deleted::NotFound,
        })
    }
}
