//! Webhooks: a hash per webhook at `P:wh:{id}` and the organisation's index
//! `P:org:{org}:webhooks` (lexicographic zset of ids, which sort by creation time).
//!
//! Hash fields: `id`, `org_id`, `name`, `url`, `active` (`0`/`1`), `subscribed_actions` and
//! `plugins` (JSON arrays), `signing_secret`, `created_at`, `updated_at`, `deactivated_at`
//! and `deactivation_reason` (empty while healthy), and the failure streak kept by the
//! delivery workers: `fail_count`, `fail_since` (ms). Being a hash lets the API and the
//! workers change different fields at once without overwriting each other.

use std::collections::HashMap;
use std::sync::LazyLock;

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};

use super::{Result, Store, StoreError, flag, flag_str};

/// Most webhooks one organisation may have.
pub const MAX_WEBHOOKS_PER_ORG: usize = 500;

/// A plugin attached to a webhook (contract §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    pub plugin_id: String,
    pub config: serde_json::Value,
    pub on_error: OnError,
}

/// What happens to a delivery when an attached plugin fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Record the delivery as `filtered`, with the error.
    Drop,
    /// Go on with the body as it was before the failing plugin.
    Deliver,
}

/// A webhook subscription.
#[derive(Debug, Clone, Serialize)]
pub struct Webhook {
    pub id: String,
    #[serde(skip)]
    pub org_id: String,
    pub name: String,
    pub url: String,
    pub active: bool,
    pub subscribed_actions: Vec<String>,
    pub plugins: Vec<Attachment>,
    pub signing_secret: String,
    pub created_at: String,
    pub updated_at: String,
    pub deactivated_at: Option<String>,
    pub deactivation_reason: Option<String>,
}

/// Fields a change may set. `None` leaves a field as it is.
#[derive(Debug, Default, Clone)]
pub struct WebhookChange {
    pub name: Option<String>,
    pub url: Option<String>,
    pub subscribed_actions: Option<Vec<String>>,
    pub plugins: Option<Vec<Attachment>>,
    pub active: Option<bool>,
}

/// Creates a webhook unless the organisation is at its limit or an attached plugin is
/// not the organisation's (it may have been deleted since the request was validated).
/// ARGV: limit, id, prefix, org, n, n plugin ids, then field/value pairs.
const CREATE: &str = r"
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[1]) then return 0 end
local n = tonumber(ARGV[5])
for i = 6, 5 + n do
  if redis.call('HGET', ARGV[3] .. ':plg:' .. ARGV[i], 'org_id') ~= ARGV[4] then return -1 end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 6 + n))
redis.call('ZADD', KEYS[2], 0, ARGV[2])
return 1
";

/// Sets fields of a webhook that exists and belongs to the organisation, if every plugin
/// to attach is the organisation's. ARGV: org, prefix, n, n plugin ids, then field/value pairs.
const UPDATE: &str = r"
if redis.call('HGET', KEYS[1], 'org_id') ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[3])
for i = 4, 3 + n do
  if redis.call('HGET', ARGV[2] .. ':plg:' .. ARGV[i], 'org_id') ~= ARGV[1] then return -1 end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4 + n))
return 1
";

static CREATE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(CREATE));
static UPDATE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(UPDATE));

/// The outcome of creating a webhook.
#[derive(Debug)]
pub enum Created {
    Ok(Box<Webhook>),
    LimitReached,
    /// An attached plugin is gone.
    PluginMissing,
}

/// The outcome of changing a webhook.
#[derive(Debug)]
pub enum Updated {
    Ok(Box<Webhook>),
    NotFound,
    /// An attached plugin is gone.
    PluginMissing,
}

impl Store {
    pub async fn create_webhook(&self, webhook: Webhook) -> Result<Created> {
        let key = self.key(&["wh", &webhook.id]);
        let index = self.key(&["org", &webhook.org_id, "webhooks"]);
        let fields = to_fields(&webhook);
        let mut invocation = CREATE_SCRIPT.prepare_invoke();
        invocation.key(&key).key(&index).arg(MAX_WEBHOOKS_PER_ORG).arg(&webhook.id).arg(&self.prefix);
        invocation.arg(&webhook.org_id).arg(webhook.plugins.len());
        for attachment in &webhook.plugins {
            invocation.arg(&attachment.plugin_id);
        }
        for (name, value) in &fields {
            invocation.arg(*name).arg(value);
        }
        let created: i64 = invocation.invoke_async(&mut self.conn()).await?;
        Ok(match created {
            1 => Created::Ok(Box::new(webhook)),
            0 => Created::LimitReached,
            _ => Created::PluginMissing,
        })
    }

    /// The webhook, if it exists and belongs to `org_id`.
    pub async fn get_webhook(&self, org_id: &str, id: &str) -> Result<Option<Webhook>> {
        let webhook = self.get_webhook_any_org(id).await?;
        Ok(webhook.filter(|w| w.org_id == org_id))
    }

    /// Whether the organisation has this webhook (without reading the rest of it).
    pub async fn webhook_exists(&self, org_id: &str, id: &str) -> Result<bool> {
        let org: Option<String> = self.conn().hget(self.key(&["wh", id]), "org_id").await?;
        Ok(org.as_deref() == Some(org_id))
    }

    /// The webhook whatever its organisation (for the delivery workers).
    pub async fn get_webhook_any_org(&self, id: &str) -> Result<Option<Webhook>> {
        let key = self.key(&["wh", id]);
        let fields: HashMap<String, String> = self.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        from_fields(&key, &fields).map(Some)
    }

    /// A page of the organisation's webhooks, newest first, after `cursor`.
    pub async fn list_webhooks(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Webhook>, Option<String>)> {
        let index = self.key(&["org", org_id, "webhooks"]);
        let (ids, next) = self.page_ids(&index, cursor, limit).await?;
        if ids.is_empty() {
            return Ok((Vec::new(), next));
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(self.key(&["wh", id]));
        }
        let rows: Vec<HashMap<String, String>> = pipe.query_async(&mut self.conn()).await?;
        let mut webhooks = Vec::with_capacity(rows.len());
        for (id, fields) in ids.iter().zip(rows) {
            if !fields.is_empty() {
                webhooks.push(from_fields(&self.key(&["wh", id]), &fields)?);
            }
        }
        Ok((webhooks, next))
    }

    /// Every webhook of the organisation (for fan-out and the settings page).
    pub async fn all_webhooks(&self, org_id: &str) -> Result<Vec<Webhook>> {
        let (webhooks, _) = self.list_webhooks(org_id, None, MAX_WEBHOOKS_PER_ORG).await?;
        Ok(webhooks)
    }

    /// Applies a change to the organisation's webhook.
    pub async fn update_webhook(&self, org_id: &str, id: &str, change: &WebhookChange) -> Result<Updated> {
        let now = crate::time::now_rfc3339();
        let mut fields: Vec<(&str, String)> = vec![("updated_at", now)];
        if let Some(name) = &change.name {
            fields.push(("name", name.clone()));
        }
        if let Some(url) = &change.url {
            fields.push(("url", url.clone()));
        }
        if let Some(actions) = &change.subscribed_actions {
            fields.push(("subscribed_actions", json(actions)));
        }
        if let Some(plugins) = &change.plugins {
            fields.push(("plugins", json(plugins)));
        }
        // Deactivation also fails pending deliveries: see `Queue::deactivate_webhook`.
        if change.active == Some(true) {
            fields.push(("active", "1".into()));
            fields.push(("deactivated_at", String::new()));
            fields.push(("deactivation_reason", String::new()));
            fields.push(("fail_count", "0".into()));
            fields.push(("fail_since", String::new()));
        }
        let plugin_ids: Vec<&str> = change.plugins.iter().flatten().map(|a| a.plugin_id.as_str()).collect();
        let mut invocation = UPDATE_SCRIPT.prepare_invoke();
        invocation.key(self.key(&["wh", id])).arg(org_id).arg(&self.prefix).arg(plugin_ids.len());
        for plugin in plugin_ids {
            invocation.arg(plugin);
        }
        for (name, value) in &fields {
            invocation.arg(*name).arg(value);
        }
        let updated: i64 = invocation.invoke_async(&mut self.conn()).await?;
        match updated {
            1 => Ok(self.get_webhook(org_id, id).await?.map_or(Updated::NotFound, |w| Updated::Ok(Box::new(w)))),
            0 => Ok(Updated::NotFound),
            _ => Ok(Updated::PluginMissing),
        }
    }

    /// One page of ids from a lexicographic index, newest (greatest) first.
    pub(crate) async fn page_ids(
        &self,
        index: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<String>, Option<String>)> {
        let max = match cursor {
            Some(c) => format!("({c}"),
            None => "+".to_owned(),
        };
        let mut ids: Vec<String> = redis::cmd("ZREVRANGEBYLEX")
            .arg(index)
            .arg(max)
            .arg("-")
            .arg("LIMIT")
            .arg(0)
            .arg(limit + 1)
            .query_async(&mut self.conn())
            .await?;
        let next = if ids.len() > limit {
            ids.truncate(limit);
            ids.last().cloned()
        } else {
            None
        };
        Ok((ids, next))
    }
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".into())
}

fn to_fields(w: &Webhook) -> Vec<(&'static str, String)> {
    vec![
        ("id", w.id.clone()),
        ("org_id", w.org_id.clone()),
        ("name", w.name.clone()),
        ("url", w.url.clone()),
        ("active", flag_str(w.active).into()),
        ("subscribed_actions", json(&w.subscribed_actions)),
        ("plugins", json(&w.plugins)),
        ("signing_secret", w.signing_secret.clone()),
        ("created_at", w.created_at.clone()),
        ("updated_at", w.updated_at.clone()),
        ("deactivated_at", w.deactivated_at.clone().unwrap_or_default()),
        ("deactivation_reason", w.deactivation_reason.clone().unwrap_or_default()),
        ("fail_count", "0".into()),
        ("fail_since", String::new()),
    ]
}

fn from_fields(key: &str, f: &HashMap<String, String>) -> Result<Webhook> {
    let text = |name: &str| f.get(name).cloned().unwrap_or_default();
    let optional = |name: &str| f.get(name).filter(|v| !v.is_empty()).cloned();
    let corrupt = |reason: String| StoreError::Corrupt { key: key.to_owned(), reason };
    let subscribed_actions = serde_json::from_str(f.get("subscribed_actions").map_or("[]", |s| s))
        .map_err(|e| corrupt(format!("subscribed_actions: {e}")))?;
    let plugins =
        serde_json::from_str(f.get("plugins").map_or("[]", |s| s)).map_err(|e| corrupt(format!("plugins: {e}")))?;
    Ok(Webhook {
        id: text("id"),
        org_id: text("org_id"),
        name: text("name"),
        url: text("url"),
        active: flag(f.get("active")),
        subscribed_actions,
        plugins,
        signing_secret: text("signing_secret"),
        created_at: text("created_at"),
        updated_at: text("updated_at"),
        deactivated_at: optional("deactivated_at"),
        deactivation_reason: optional("deactivation_reason"),
    })
}
