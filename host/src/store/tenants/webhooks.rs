//! Webhooks, in their organisation's group (`store::core::keys`): a hash per webhook, the
//! organisation's index of them (ids sort by creation time), and the subscription index —
//! per action, the set of active webhooks subscribed to it — which every change keeps in
//! step in the same script, so publishing reads one set and never every webhook.
//!
//! Hash fields: `id`, `org_id`, `name`, `url`, `active` (`0`/`1`), `subscribed_actions`,
//! `subscribed_sources` and `plugins` (JSON arrays), `signing_secret`, `previous_secret` and
//! `previous_secret_expires` (ms) during a rotation's grace period (empty otherwise; read as
//! absent once expired), `created_at`, `updated_at`, `deactivated_at` and
//! `deactivation_reason` (empty while healthy), `rate_limit`, `ordering` (`none` or
//! `subject`; the subscription index names ordered webhooks so), `headers` (a JSON object,
//! empty for none), `client_cert` (PEM chain), `client_key` (sealed by `crate::vault`) and
//! `client_cert_view` (JSON, what reads show), and the failure streak kept by the
//! delivery workers: `fail_count`, `fail_since` (ms). Being a hash lets the API and the
//! workers change different fields at once without overwriting each other.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use redis::AsyncCommands;

use crate::catalog;
use crate::store::core::base::Base;
use crate::store::core::scripts::{Call, ROTATE_SECRET, WEBHOOK_OFF, WEBHOOK_SAVE};
use crate::store::error::Result;
use crate::store::queue::endpoint::reset_fields;
use crate::store::tenants::sources::SourceRecords;
pub use crate::store::tenants::subscribers::{Subscriber, Subscribers};
pub use crate::store::tenants::webhook_record::{
    Attachment, OnError, Ordering, StoredCertificate, StoredDestination, Webhook,
};
use crate::store::tenants::webhook_record::{from_fields, headers_json, json, to_fields};
use crate::store::versions::Versions;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct WebhookRecords {
    base: Base,
}

impl WebhookRecords {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> WebhookRecords {
        WebhookRecords { base: base.clone() }
    }
}

/// Most webhooks one organisation may have on any plan (`crate::auth::plans` sets each
/// plan's own, at most this).
pub const MAX_WEBHOOKS_PER_ORG: usize = 500;

/// Fields a change may set. `None` leaves a field as it is.
#[derive(Debug, Default, Clone)]
pub struct WebhookChange {
    pub name: Option<String>,
    pub url: Option<String>,
    pub subscribed_actions: Option<Vec<String>>,
    pub subscribed_sources: Option<Vec<String>>,
    pub plugins: Option<Vec<Attachment>>,
    pub active: Option<bool>,
    /// `Some(None)` removes the limit.
    pub rate_limit: Option<Option<u32>>,
    pub ordering: Option<Ordering>,
    /// `Some(None)` removes the filter.
    pub filter: Option<Option<String>>,
    /// `Some` replaces every header (empty: none).
    pub headers: Option<BTreeMap<String, String>>,
    /// `Some(None)` removes the certificate.
    pub client_certificate: Option<Option<StoredCertificate>>,
    /// A new destination (`Some(None)`: back to HTTP), and the `url` it shows.
    pub destination: Option<Option<StoredDestination>>,
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
    /// Changed, and this change switched it back on (it was inactive).
    Reactivated(Box<Webhook>),
    NotFound,
    /// An attached plugin is gone.
    PluginMissing,
}

/// What saving a webhook did (`lua/webhook_save.lua`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Saved {
    Done,
    /// Updating: done, and the webhook was inactive before.
    Reactivated,
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
            "reactivated" => Saved::Reactivated,
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

impl WebhookRecords {
    /// A call of a script that changes a webhook's subscriptions, with the webhook's keys
    /// and the subscription sets of every action declared, then the organisation's filters.
    /// `sources`: the organisation's sources ([`WebhookRecords::source_ids`]), whose sets
    /// follow the actions'.
    pub(in crate::store) fn with_subscription_sets(&self, call: &mut Call<'_>, org_id: &str, sources: &[String]) {
        for action in catalog::actions() {
            call.key(&self.base.keys().subscribers(org_id, action));
        }
        for source in sources {
            call.key(&self.base.keys().subscribers(org_id, source));
        }
        call.key(&self.base.keys().filters(org_id));
    }

    /// The organisation's sources: each has a subscription set (the webhooks naming it).
    pub(in crate::store) async fn source_ids(&self, org_id: &str) -> Result<Vec<String>> {
        SourceRecords::of(&self.base).ids(org_id).await
    }

    /// Stores a new webhook unless the organisation has `max` already.
    pub async fn create_webhook(&self, webhook: Webhook, max: usize) -> Result<Created> {
        let key = self.base.keys().webhook(&webhook.org_id, &webhook.id);
        let fields = to_fields(&webhook);
        let saved = self.save_webhook("create", (&webhook.org_id, &webhook.id), &webhook.plugins, &fields, max).await?;
        Ok(match saved {
            Saved::Done | Saved::Reactivated => {
                self.base.acknowledged(&key).await?;
                Created::Ok(Box::new(webhook))
            }
            Saved::LimitReached | Saved::NotFound => Created::LimitReached,
            Saved::PluginMissing => Created::PluginMissing,
        })
    }

    async fn save_webhook(
        &self,
        mode: &str,
        (org_id, id): (&str, &str),
        plugins: &[Attachment],
        fields: &[(&str, String)],
        max: usize,
    ) -> Result<Saved> {
        let mut call = WEBHOOK_SAVE.call();
        call.key(&self.base.keys().webhook(org_id, id)).key(&self.base.keys().webhooks(org_id));
        for attachment in plugins {
            call.key(&self.base.keys().plugin(org_id, &attachment.plugin_id));
        }
        let sources = self.source_ids(org_id).await?;
        self.with_subscription_sets(&mut call, org_id, &sources);
        let names = catalog::actions().count() + sources.len();
        call.arg(mode).arg(org_id).arg(id).arg(max).arg(plugins.len()).arg(names);
        for action in catalog::actions() {
            call.arg(action);
        }
        for source in &sources {
            call.arg(source);
        }
        for (name, value) in fields {
            call.arg(*name).arg(value);
        }
        let reply: String = call.run(&mut self.base.conn()).await?;
        let saved = crate::store::core::reply::name_of("webhook_save.lua", &reply, Saved::parse)?;
        if matches!(saved, Saved::Done | Saved::Reactivated) {
            Versions::of(&self.base).raise(org_id).await?;
        }
        Ok(saved)
    }

    /// The webhook, if it exists and belongs to `org_id`.
    pub async fn get_webhook(&self, org_id: &str, id: &str) -> Result<Option<Webhook>> {
        let key = self.base.keys().webhook(org_id, id);
        let fields: HashMap<String, String> = self.base.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        from_fields(&key, &fields).map(|w| Some(w).filter(|w| w.org_id == org_id))
    }

    /// Whether the organisation has this webhook (without reading the rest of it).
    pub async fn webhook_exists(&self, org_id: &str, id: &str) -> Result<bool> {
        let org: Option<String> = self.base.conn().hget(self.base.keys().webhook(org_id, id), "org_id").await?;
        Ok(org.as_deref() == Some(org_id))
    }

    /// How many webhooks the organisation has.
    pub async fn count_webhooks(&self, org_id: &str) -> Result<u64> {
        Ok(self.base.conn().zcard(self.base.keys().webhooks(org_id)).await?)
    }

    /// A page of the organisation's webhooks, newest first, after `cursor`.
    pub async fn list_webhooks(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Webhook>, Option<String>)> {
        let (ids, next) = self.base.page_ids(&self.base.keys().webhooks(org_id), cursor, limit).await?;
        if ids.is_empty() {
            return Ok((Vec::new(), next));
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(self.base.keys().webhook(org_id, id));
        }
        let rows: Vec<HashMap<String, String>> = self.base.conn().query_reads(&pipe).await?;
        let mut webhooks = Vec::with_capacity(rows.len());
        for (id, fields) in ids.iter().zip(rows) {
            if !fields.is_empty() {
                webhooks.push(from_fields(&self.base.keys().webhook(org_id, id), &fields)?);
            }
        }
        Ok((webhooks, next))
    }

    /// Every webhook of the organisation (for the settings page).
    pub async fn all_webhooks(&self, org_id: &str) -> Result<Vec<Webhook>> {
        let (webhooks, _) = self.list_webhooks(org_id, None, MAX_WEBHOOKS_PER_ORG).await?;
        Ok(webhooks)
    }

    /// Whether the organisation deleted this webhook within the delivery retention (its
    /// deliveries are still kept, listed from the organisation's index).
    pub async fn webhook_was_deleted(&self, org_id: &str, id: &str) -> Result<bool> {
        let score: Option<f64> = self.base.conn().zscore(self.base.keys().deleted_webhooks(org_id), id).await?;
        Ok(score.is_some())
    }

    /// The ids of every webhook of the organisation.
    pub async fn webhook_ids(&self, org_id: &str) -> Result<Vec<String>> {
        Ok(self.base.conn().zrange(self.base.keys().webhooks(org_id), 0, -1).await?)
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
        let key = self.base.keys().webhook(org_id, id);
        let mut call = ROTATE_SECRET.call();
        call.key(&key)
            .arg(org_id)
            .arg(secret)
            .arg(grace_ends_ms.map(|ms| ms.to_string()).unwrap_or_default())
            .arg(crate::time::now_rfc3339());
        let done = crate::store::core::reply::done("rotate_secret.lua", call.run(&mut self.base.conn()).await?)?;
        if done {
            self.base.acknowledged(&key).await?;
            Versions::of(&self.base).raise(org_id).await?;
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
            // A new endpoint starts healthy.
            fields.extend(reset_fields());
        }
        if let Some(limit) = change.rate_limit {
            fields.push(("rate_limit", limit.map(|l| l.to_string()).unwrap_or_default()));
        }
        if let Some(ordering) = change.ordering {
            fields.push(("ordering", ordering.as_str().into()));
        }
        if let Some(filter) = &change.filter {
            fields.push(("filter", filter.clone().unwrap_or_default()));
        }
        if let Some(headers) = &change.headers {
            fields.push(("headers", headers_json(headers)));
        }
        if let Some(certificate) = &change.client_certificate {
            fields.extend(StoredCertificate::fields(certificate.as_ref()));
        }
        if let Some(destination) = &change.destination {
            fields.extend(StoredDestination::fields(destination.as_ref()));
        }
        if let Some(actions) = &change.subscribed_actions {
            fields.push(("subscribed_actions", json(actions)));
        }
        if let Some(sources) = &change.subscribed_sources {
            fields.push(("subscribed_sources", json(sources)));
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
            if change.url.is_none() {
                fields.extend(reset_fields());
            }
        }
        let plugins = change.plugins.as_deref().unwrap_or_default();
        match self.save_webhook("update", (org_id, id), plugins, &fields, MAX_WEBHOOKS_PER_ORG).await? {
            saved @ (Saved::Done | Saved::Reactivated) => {
                self.base.acknowledged(&self.base.keys().webhook(org_id, id)).await?;
                Ok(self.get_webhook(org_id, id).await?.map_or(Updated::NotFound, |w| match saved {
                    Saved::Reactivated => Updated::Reactivated(Box::new(w)),
                    _ => Updated::Ok(Box::new(w)),
                }))
            }
            Saved::NotFound | Saved::LimitReached => Ok(Updated::NotFound),
            Saved::PluginMissing => Ok(Updated::PluginMissing),
        }
    }

    /// Deletes or deactivates the organisation's webhook (and takes it out of the
    /// subscription index); `false` if it is not the organisation's (or, to deactivate,
    /// already inactive). Its queued deliveries are ended by [`Store::end_pending`].
    /// A deleted webhook is remembered for `retention` (see [`Store::webhook_was_deleted`]).
    pub async fn webhook_off(&self, org_id: &str, id: &str, off: Off, retention: Duration) -> Result<bool> {
        let key = self.base.keys().webhook(org_id, id);
        let mut call = WEBHOOK_OFF.call();
        call.key(&key).key(&self.base.keys().webhooks(org_id)).key(&self.base.keys().deleted_webhooks(org_id));
        let sources = self.source_ids(org_id).await?;
        self.with_subscription_sets(&mut call, org_id, &sources);
        let (mode, reason) = match off {
            Off::Delete => ("delete", ""),
            Off::Deactivate(reason) => ("deactivate", reason),
        };
        call.arg(org_id).arg(id).arg(crate::time::now_rfc3339()).arg(mode).arg(reason);
        call.arg(crate::time::now_millis()).arg(retention.as_millis() as u64);
        let done = crate::store::core::reply::done("webhook_off.lua", call.run(&mut self.base.conn()).await?)?;
        if done {
            self.base.acknowledged(&key).await?;
            Versions::of(&self.base).raise(org_id).await?;
        }
        Ok(done)
    }
}
