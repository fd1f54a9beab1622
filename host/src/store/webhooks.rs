//! Webhooks, in their organisation's group (`store::keys`): a hash per webhook, the
//! organisation's index of them (ids sort by creation time), and the subscription index —
//! per action, the set of active webhooks subscribed to it — which every change keeps in
//! step in the same script, so publishing reads one set and never every webhook.
//!
//! Hash fields: `id`, `org_id`, `name`, `url`, `active` (`0`/`1`), `subscribed_actions` and
//! `plugins` (JSON arrays), `signing_secret`, `previous_secret` and
//! `previous_secret_expires` (ms) during a rotation's grace period (empty otherwise; read as
//! absent once expired), `created_at`, `updated_at`, `deactivated_at` and
//! `deactivation_reason` (empty while healthy), and the failure streak kept by the
//! delivery workers: `fail_count`, `fail_since` (ms). Being a hash lets the API and the
//! workers change different fields at once without overwriting each other.

use std::collections::HashMap;

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};

use super::scripts::{Call, ROTATE_SECRET, WEBHOOK_OFF, WEBHOOK_SAVE};
use super::{Result, Store, StoreError, flag, flag_str};
use crate::catalog;

/// Most webhooks one organisation may have.
pub const MAX_WEBHOOKS_PER_ORG: usize = 500;

/// A plugin attached to a webhook (contract §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Attachment {
    pub plugin_id: String,
    /// Given to the plugin as JSON text.
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    pub on_error: OnError,
}

/// What happens to a delivery when an attached plugin fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// The delivery ends `filtered`, with the error.
    Drop,
    /// Go on with the body as it was before the failing plugin.
    Deliver,
}

/// A webhook subscription.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Webhook {
    pub id: String,
    #[serde(skip)]
    #[schema(ignore)]
    pub org_id: String,
    pub name: String,
    pub url: String,
    pub active: bool,
    pub subscribed_actions: Vec<String>,
    pub plugins: Vec<Attachment>,
    pub signing_secret: String,
    /// The secret before the latest rotation, while its grace period lasts.
    #[serde(skip)]
    #[schema(ignore)]
    pub previous_secret: Option<String>,
    /// When the previous secret stops signing (`null` when there is none).
    pub previous_secret_expires_at: Option<String>,
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

/// What saving a webhook did (`lua/webhook_save.lua`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Saved {
    Done,
    /// Creating: the organisation has the most webhooks allowed.
    LimitReached,
    /// Updating: the organisation has no such webhook.
    NotFound,
    /// An attached plugin is not the organisation's (deleted meanwhile).
    PluginMissing,
}

impl Saved {
    fn parse(name: &str) -> Option<Saved> {
        Some(match name {
            "saved" => Saved::Done,
            "limit" => Saved::LimitReached,
            "not_found" => Saved::NotFound,
            "plugin_missing" => Saved::PluginMissing,
            _ => return None,
        })
    }
}

/// Why a webhook stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Off {
    Delete,
    Deactivate(&'static str),
}

impl Store {
    /// A call of a script that changes a webhook's subscriptions, with the webhook's keys
    /// and the subscription sets of every action declared.
    pub(super) fn with_subscription_sets(&self, call: &mut Call<'_>, org_id: &str) {
        for action in catalog::actions() {
            call.key(&self.keys().subscribers(org_id, action));
        }
    }

    pub async fn create_webhook(&self, webhook: Webhook) -> Result<Created> {
        let key = self.keys().webhook(&webhook.org_id, &webhook.id);
        let saved =
            self.save_webhook("create", &webhook.org_id, &webhook.id, &webhook.plugins, &to_fields(&webhook)).await?;
        Ok(match saved {
            Saved::Done => {
                self.acknowledged(&key).await?;
                Created::Ok(Box::new(webhook))
            }
            Saved::LimitReached | Saved::NotFound => Created::LimitReached,
            Saved::PluginMissing => Created::PluginMissing,
        })
    }

    async fn save_webhook(
        &self,
        mode: &str,
        org_id: &str,
        id: &str,
        plugins: &[Attachment],
        fields: &[(&str, String)],
    ) -> Result<Saved> {
        let mut call = WEBHOOK_SAVE.call();
        call.key(&self.keys().webhook(org_id, id)).key(&self.keys().webhooks(org_id));
        for attachment in plugins {
            call.key(&self.keys().plugin(org_id, &attachment.plugin_id));
        }
        self.with_subscription_sets(&mut call, org_id);
        call.arg(mode).arg(org_id).arg(id).arg(MAX_WEBHOOKS_PER_ORG).arg(plugins.len()).arg(catalog::actions().count());
        for action in catalog::actions() {
            call.arg(action);
        }
        for (name, value) in fields {
            call.arg(*name).arg(value);
        }
        let reply: String = call.run(&mut self.conn()).await?;
        super::reply::name_of("webhook_save.lua", &reply, Saved::parse)
    }

    /// The webhook, if it exists and belongs to `org_id`.
    pub async fn get_webhook(&self, org_id: &str, id: &str) -> Result<Option<Webhook>> {
        let key = self.keys().webhook(org_id, id);
        let fields: HashMap<String, String> = self.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        from_fields(&key, &fields).map(|w| Some(w).filter(|w| w.org_id == org_id))
    }

    /// Whether the organisation has this webhook (without reading the rest of it).
    pub async fn webhook_exists(&self, org_id: &str, id: &str) -> Result<bool> {
        let org: Option<String> = self.conn().hget(self.keys().webhook(org_id, id), "org_id").await?;
        Ok(org.as_deref() == Some(org_id))
    }

    /// The active webhooks of an organisation subscribed to an action.
    pub async fn subscribers(&self, org_id: &str, action: &str) -> Result<Vec<String>> {
        self.members(&self.keys().subscribers(org_id, action)).await
    }

    /// [`Store::subscribers`] of many (organisation, action) pairs in one go (group
    /// commit of concurrent publishes): one answer per pair, in order.
    pub async fn subscribers_of(&self, pairs: &[(String, String)]) -> Result<Vec<Result<Vec<String>>>> {
        let pipes: Vec<redis::Pipeline> = pairs
            .iter()
            .map(|(org, action)| {
                let mut pipe = redis::pipe();
                pipe.smembers(self.keys().subscribers(org, action));
                pipe
            })
            .collect();
        let replies = self.conn().query_each(&pipes).await?;
        Ok(replies
            .into_iter()
            .zip(pairs)
            .map(|(reply, (org, action))| {
                let value = reply?.pop().unwrap_or(redis::Value::Nil);
                redis::from_redis_value(value).map_err(|e| StoreError::Corrupt {
                    key: self.keys().subscribers(org, action),
                    reason: e.to_string(),
                })
            })
            .collect())
    }

    /// A page of the organisation's webhooks, newest first, after `cursor`.
    pub async fn list_webhooks(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Webhook>, Option<String>)> {
        let (ids, next) = self.page_ids(&self.keys().webhooks(org_id), cursor, limit).await?;
        if ids.is_empty() {
            return Ok((Vec::new(), next));
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(self.keys().webhook(org_id, id));
        }
        let rows: Vec<HashMap<String, String>> = self.conn().query_reads(&pipe).await?;
        let mut webhooks = Vec::with_capacity(rows.len());
        for (id, fields) in ids.iter().zip(rows) {
            if !fields.is_empty() {
                webhooks.push(from_fields(&self.keys().webhook(org_id, id), &fields)?);
            }
        }
        Ok((webhooks, next))
    }

    /// Every webhook of the organisation (for the settings page).
    pub async fn all_webhooks(&self, org_id: &str) -> Result<Vec<Webhook>> {
        let (webhooks, _) = self.list_webhooks(org_id, None, MAX_WEBHOOKS_PER_ORG).await?;
        Ok(webhooks)
    }

    /// The ids of every webhook of the organisation.
    pub async fn webhook_ids(&self, org_id: &str) -> Result<Vec<String>> {
        Ok(self.conn().zrange(self.keys().webhooks(org_id), 0, -1).await?)
    }

    /// Gives the organisation's webhook a new signing secret; the current one keeps signing
    /// until `grace_ends_ms` (`None`: it is forgotten at once). `false` if there is no such
    /// webhook.
    pub async fn rotate_secret(
        &self,
        org_id: &str,
        id: &str,
        secret: &str,
        grace_ends_ms: Option<u64>,
    ) -> Result<bool> {
        let key = self.keys().webhook(org_id, id);
        let mut call = ROTATE_SECRET.call();
        call.key(&key)
            .arg(org_id)
            .arg(secret)
            .arg(grace_ends_ms.map(|ms| ms.to_string()).unwrap_or_default())
            .arg(crate::time::now_rfc3339());
        let done = super::reply::done("rotate_secret.lua", call.run(&mut self.conn()).await?)?;
        if done {
            self.acknowledged(&key).await?;
        }
        Ok(done)
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
        // Deactivation also ends pending deliveries: see `Store::webhook_off`.
        if change.active == Some(true) {
            fields.push(("active", "1".into()));
            fields.push(("deactivated_at", String::new()));
            fields.push(("deactivation_reason", String::new()));
            fields.push(("fail_count", "0".into()));
            fields.push(("fail_since", String::new()));
        }
        let plugins = change.plugins.as_deref().unwrap_or_default();
        match self.save_webhook("update", org_id, id, plugins, &fields).await? {
            Saved::Done => {
                self.acknowledged(&self.keys().webhook(org_id, id)).await?;
                Ok(self.get_webhook(org_id, id).await?.map_or(Updated::NotFound, |w| Updated::Ok(Box::new(w))))
            }
            Saved::NotFound | Saved::LimitReached => Ok(Updated::NotFound),
            Saved::PluginMissing => Ok(Updated::PluginMissing),
        }
    }

    /// Deletes or deactivates the organisation's webhook (and takes it out of the
    /// subscription index); `false` if it is not the organisation's (or, to deactivate,
    /// already inactive). Its queued deliveries are ended by [`Store::end_pending`].
    pub async fn webhook_off(&self, org_id: &str, id: &str, off: Off) -> Result<bool> {
        let key = self.keys().webhook(org_id, id);
        let mut call = WEBHOOK_OFF.call();
        call.key(&key).key(&self.keys().webhooks(org_id));
        self.with_subscription_sets(&mut call, org_id);
        let (mode, reason) = match off {
            Off::Delete => ("delete", ""),
            Off::Deactivate(reason) => ("deactivate", reason),
        };
        call.arg(org_id).arg(id).arg(crate::time::now_rfc3339()).arg(mode).arg(reason);
        let done = super::reply::done("webhook_off.lua", call.run(&mut self.conn()).await?)?;
        if done {
            self.acknowledged(&key).await?;
        }
        Ok(done)
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
        ("previous_secret", String::new()),
        ("previous_secret_expires", String::new()),
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
    let previous = previous_secret(
        f.get("previous_secret").cloned(),
        f.get("previous_secret_expires").map(String::as_str),
        crate::time::now_millis(),
    );
    Ok(Webhook {
        id: text("id"),
        org_id: text("org_id"),
        name: text("name"),
        url: text("url"),
        active: flag(f.get("active")),
        subscribed_actions,
        plugins,
        signing_secret: text("signing_secret"),
        previous_secret: previous.as_ref().map(|(s, _)| s.clone()),
        previous_secret_expires_at: previous.map(|(_, ms)| crate::time::format_millis(ms)),
        created_at: text("created_at"),
        updated_at: text("updated_at"),
        deactivated_at: optional("deactivated_at"),
        deactivation_reason: optional("deactivation_reason"),
    })
}

/// The previous secret and the end of its grace period, if it still signs at `now_ms`.
pub(super) fn previous_secret(secret: Option<String>, expires: Option<&str>, now_ms: u64) -> Option<(String, u64)> {
    let expires = expires.and_then(|e| e.parse::<u64>().ok()).filter(|&ms| ms > now_ms)?;
    secret.filter(|s| !s.is_empty()).map(|s| (s, expires))
}
