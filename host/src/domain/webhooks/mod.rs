//! Webhooks: creating, changing, stopping them (service document §4, contract §2). The one
//! path for the API and the settings pages, so both apply the same rules and messages.
//! Stopping a webhook (deletion, deactivation by hand, after failures or on 410 Gone)
//! takes it out of the subscription index and ends its queued deliveries.

mod destination;
mod error;
mod input;

use serde_json::Value;

pub(crate) use self::error::WebhookError;
use self::input::{
    attachments, default_name, filter, known_actions, ordering, rate_limit, subscribed_sources, vet_url,
};
use super::Invalid;
use super::egress;
use super::fields::{Fields, bounded_text};
use super::notices::{Notice, Notices};
use super::quota::QuotaExceeded;
use super::views::WebhookView;
use std::sync::Arc;

use crate::ids::{self, Kind};
use crate::metrics::Metrics;
use crate::netguard::UrlRule;
use crate::plans::{Plans, Quota};
use crate::shared::{PluginHashes, SecretKeys};
use crate::store::StoreError;
use crate::store::queue::endpoint::EndpointFields;
use crate::store::queue::requeue::Requeue;
use crate::store::queue::status::Status;
use crate::store::queue::streak::Streaks;
use crate::store::queue::trim::Trim;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::sources::SourceRecords;
use crate::store::tenants::webhooks::{
    Created, MAX_WEBHOOKS_PER_ORG, Off, Updated, Webhook, WebhookChange, WebhookRecords,
};

/// Longest grace period of a secret rotation.
pub(crate) const MAX_GRACE: std::time::Duration = std::time::Duration::from_secs(7 * 86_400);
/// Grace period of a rotation that names none.
pub(crate) const DEFAULT_GRACE: std::time::Duration = std::time::Duration::from_secs(86_400);
/// Longest webhook name.
const MAX_NAME: usize = 200;

/// Validates a new webhook (`name`?, `url`, `subscribed_actions`, `plugins`?, `rate_limit`?,
/// `ordering`?, `filter`?, `headers`?, `client_certificate`?) and stores it.
async fn create(
    webhooks: &Webhooks,
    org_id: &str,
    body: serde_json::Map<String, Value>,
) -> Result<Webhook, WebhookError> {
    let named = ["subscribed_actions", "subscribed_sources"].iter().any(|k| body.contains_key(*k));
    let mut fields = Fields::new(body);
    let name = fields.string("name");
    let url = fields.string("url");
    let actions = fields.string_array("subscribed_actions", false);
    let sources = subscribed_sources(&webhooks.sources, org_id, &mut fields).await?;
    if !named {
        fields.error("subscribed_actions", "is required (or subscribed_sources)");
    }
    let plugins = fields.value("plugins");
    let limit = rate_limit(&mut fields);
    let id = ids::new(Kind::Webhook);
    let ordering = ordering(&mut fields);
    let filter = filter(&mut fields);
    let headers = egress::headers(&mut fields);
    let certificate = egress::client_certificate(&webhooks.secret_keys, org_id, &id, &mut fields);
    let destination =
        destination::destination((&webhooks.url_rule, &webhooks.secret_keys), org_id, &id, &mut fields).await.flatten();
    let name = name.and_then(|n| bounded_text(&mut fields, "name", n, MAX_NAME));
    let actions = actions.map(known_actions);
    let plugins = match plugins {
        Some(value) => attachments(&webhooks.plugin_hashes, org_id, value, &mut fields).await?,
        None => Some(Vec::new()),
    };
    let url = destination::new_url(&webhooks.url_rule, url, destination.as_ref(), &mut fields).await;
    fields.finish()?;
    let (Some(url), Some(plugins)) = (url, plugins) else {
        return Err(Invalid::field("webhook", "is not valid").into());
    };
    let now = crate::time::now_rfc3339();
    let webhook = Webhook {
        id,
        org_id: org_id.to_owned(),
        name: name.unwrap_or_else(|| default_name(&url, destination.as_ref()).chars().take(MAX_NAME).collect()),
        url,
        active: true,
        subscribed_actions: actions.unwrap_or_default(),
        subscribed_sources: sources.unwrap_or_default(),
        plugins,
        signing_secret: crate::sign::new_secret(),
        previous_secret: None,
        previous_secret_expires_at: None,
        created_at: now.clone(),
        updated_at: now,
        deactivated_at: None,
        deactivation_reason: None,
        rate_limit: limit.flatten(),
        ordering: ordering.unwrap_or_default(),
        filter: filter.flatten(),
        headers: headers.unwrap_or_default(),
        client_certificate: certificate.as_ref().and_then(|c| c.as_ref().map(|c| c.view.clone())),
        client_secret: certificate.flatten(),
        destination,
        endpoint: EndpointFields::default(),
    };
    store_new(webhooks, org_id, webhook).await
}

/// Stores a validated new webhook within its organisation's plan.
async fn store_new(webhooks: &Webhooks, org_id: &str, webhook: Webhook) -> Result<Webhook, WebhookError> {
    let plan = webhooks.orgs.org_plan_name(org_id).await?;
    let rules = webhooks.plans.rules(&plan).clone();
    let max = rules.limits.webhooks.map_or(MAX_WEBHOOKS_PER_ORG, |n| (n as usize).min(MAX_WEBHOOKS_PER_ORG));
    match webhooks.records.create_webhook(webhook, max).await? {
        Created::Ok(webhook) => Ok(*webhook),
        Created::PluginMissing => Err(Invalid::field("plugins", "an attached plugin was just deleted").into()),
        Created::LimitReached => {
            webhooks.metrics.quota_refused(&rules.name, Quota::Webhooks);
            let what = format!("the organisation already has {max} webhooks");
            Err(WebhookError::Quota(QuotaExceeded::count(Quota::Webhooks, &rules, what)))
        }
    }
}

/// Validates a change (any field of a new webhook, and `active`) and applies
/// it; deactivating ends the webhook's pending deliveries (they fail).
async fn update(
    webhooks: &Webhooks,
    org_id: &str,
    id: &str,
    mut body: serde_json::Map<String, Value>,
) -> Result<Webhook, WebhookError> {
    let current = find(webhooks, org_id, id).await?;
    // A destination sent back as it reads (credentials are never shown) changes nothing:
    // the stored one stays, credentials and all — a client that PATCHes what it read keeps
    // its webhook delivering.
    let shown = current.destination.as_ref().map(|d| d.spec.clone());
    if shown.is_some() && body.get("destination") == shown.as_ref() {
        body.remove("destination");
    }
    let mut fields = Fields::new(body);
    let mut change = WebhookChange {
        name: fields.string("name"),
        subscribed_actions: fields.string_array("subscribed_actions", false).map(known_actions),
        active: fields.bool("active"),
        rate_limit: rate_limit(&mut fields),
        ordering: ordering(&mut fields),
        filter: filter(&mut fields),
        headers: egress::headers(&mut fields),
        client_certificate: egress::client_certificate(&webhooks.secret_keys, org_id, id, &mut fields),
        ..WebhookChange::default()
    };
    change.subscribed_sources = subscribed_sources(&webhooks.sources, org_id, &mut fields).await?;
    change.name = change.name.and_then(|n| bounded_text(&mut fields, "name", n, MAX_NAME));
    if let Some(value) = fields.value("plugins") {
        change.plugins = attachments(&webhooks.plugin_hashes, org_id, value, &mut fields).await?;
    }
    let keys = (&webhooks.url_rule, &*webhooks.secret_keys);
    change.destination = destination::destination(keys, org_id, id, &mut fields).await;
    let url = fields.string("url");
    let brokered = current.destination.is_some();
    match (&change.destination, url) {
        (Some(Some(_)), Some(_)) => {
            fields.error("url", "is not given with a destination other than http (its address is destination.url)")
        }
        (Some(Some(d)), None) => change.url = Some(destination::address_of(d)),
        (Some(None), None) if brokered => fields.error("url", "is required to deliver over http again"),
        (None, Some(_)) if brokered => {
            fields.error("url", "this webhook delivers to its destination: change destination instead")
        }
        (_, Some(url)) => change.url = vet_url(&webhooks.url_rule, &url, &mut fields).await,
        (_, None) => {}
    }
    fields.finish()?;
    let webhook = match webhooks.records.update_webhook(org_id, id, &change).await? {
        Updated::Ok(webhook) => *webhook,
        Updated::Reactivated(webhook) => {
            webhooks.notices.emit(org_id, Notice::Reactivated(&webhook)).await;
            *webhook
        }
        Updated::NotFound => return Err(WebhookError::NotFound),
        Updated::PluginMissing => return Err(Invalid::field("plugins", "an attached plugin was just deleted").into()),
    };
    if change.active == Some(false) && webhook.active {
        stop(webhooks, org_id, id, Off::Deactivate("manual")).await?;
        return find(webhooks, org_id, id).await;
    }
    Ok(webhook)
}

/// What follows a webhook's deactivation, by hand or by the delivery workers: its pending
/// deliveries fail (retriable after reactivation; they emit nothing), and the organisation
/// is told with one `webhook_deactivated`. How many deliveries ended.
pub(crate) async fn after_deactivation(webhooks: &Webhooks, org_id: &str, id: &str) -> Result<usize, StoreError> {
    let ended = webhooks.requeue.end_pending(id, Status::Failed).await?;
    for _ in 0..ended {
        webhooks.metrics.delivery_finished(Status::Failed.as_str());
    }
    if let Some(webhook) = webhooks.records.get_webhook(org_id, id).await?
        && !webhook.active
    {
        webhooks.notices.emit(org_id, Notice::Deactivated(&webhook)).await;
    }
    Ok(ended)
}

/// Gives the organisation's webhook a new signing secret (`{"grace_period"?: "24h"}`,
/// `0s`..`7d`): the old one keeps signing beside it until the grace period ends (contract §2).
async fn rotate_secret(
    webhooks: &Webhooks,
    org_id: &str,
    id: &str,
    body: serde_json::Map<String, Value>,
) -> Result<Webhook, WebhookError> {
    find(webhooks, org_id, id).await?;
    let mut fields = Fields::new(body);
    let grace = match fields.string("grace_period") {
        None => Some(DEFAULT_GRACE),
        Some(text) => match crate::config::duration::parse_span(&text) {
            Ok(grace) if grace <= MAX_GRACE => Some(grace),
            _ => {
                fields.error("grace_period", "must be a duration from 0s to 7d, such as \"24h\"");
                None
            }
        },
    };
    fields.finish()?;
    let grace = grace.unwrap_or(DEFAULT_GRACE);
    let ends = (!grace.is_zero()).then(|| crate::time::now_millis() + grace.as_millis() as u64);
    let secret = crate::sign::new_secret();
    if !webhooks.records.rotate_secret(org_id, id, &secret, ends).await? {
        return Err(WebhookError::NotFound);
    }
    find(webhooks, org_id, id).await
}

/// Deletes the organisation's webhook and cancels its queued deliveries.
async fn delete(webhooks: &Webhooks, org_id: &str, id: &str) -> Result<(), WebhookError> {
    if !ids::is_valid(Kind::Webhook, id) || !stop(webhooks, org_id, id, Off::Delete).await? {
        return Err(WebhookError::NotFound);
    }
    webhooks.metrics.forget_webhook(id);
    Ok(())
}

/// Stops a webhook; `false` if it is not the organisation's (or, to deactivate, already
/// inactive). Its queued deliveries end: `cancelled` when deleted, `failed` (retriable after
/// reactivation) when deactivated.
pub(crate) async fn stop(webhooks: &Webhooks, org_id: &str, id: &str, off: Off) -> Result<bool, StoreError> {
    if !webhooks.records.webhook_off(org_id, id, off, webhooks.delivery_retention).await? {
        return Ok(false);
    }
    if let Off::Deactivate(_) = off {
        after_deactivation(webhooks, org_id, id).await?;
        return Ok(true);
    }
    let ended = webhooks.requeue.end_pending(id, Status::Cancelled).await?;
    for _ in 0..ended {
        webhooks.metrics.delivery_finished(Status::Cancelled.as_str());
    }
    webhooks.trim.drop_webhook_index(id, webhooks.delivery_retention).await?;
    Ok(true)
}

/// The organisation's webhook, or `NotFound` (also for another organisation's).
async fn find(webhooks: &Webhooks, org_id: &str, id: &str) -> Result<Webhook, WebhookError> {
    if !ids::is_valid(Kind::Webhook, id) {
        return Err(WebhookError::NotFound);
    }
    webhooks.records.get_webhook(org_id, id).await?.ok_or(WebhookError::NotFound)
}

/// Webhooks, for the surfaces (and for the workers, which stop them): each answer is the
/// webhook as shown.
#[derive(Debug, Clone)]
pub(crate) struct Webhooks {
    records: WebhookRecords,
    /// The sources a webhook may name.
    sources: SourceRecords,
    /// Each organisation's plan: how many webhooks it may have.
    orgs: Orgs,
    plans: Arc<Plans>,
    /// A stopped webhook's deliveries ended, its index dropped, its failure streak read.
    requeue: Requeue,
    trim: Trim,
    streaks: Streaks,
    metrics: Arc<Metrics>,
    url_rule: UrlRule,
    plugin_hashes: Arc<PluginHashes>,
    secret_keys: Arc<SecretKeys>,
    /// Operational events about webhooks go out here.
    notices: Notices,
    delivery_retention: std::time::Duration,
}

/// What [`Webhooks`] is made of.
#[derive(Debug)]
pub(crate) struct WebhookParts<'a> {
    pub records: WebhookRecords,
    pub sources: SourceRecords,
    pub orgs: Orgs,
    pub plans: &'a Arc<Plans>,
    pub requeue: Requeue,
    pub trim: Trim,
    pub streaks: Streaks,
    pub metrics: &'a Arc<Metrics>,
    pub url_rule: &'a UrlRule,
    pub plugin_hashes: &'a Arc<PluginHashes>,
    pub secret_keys: &'a Arc<SecretKeys>,
    pub notices: &'a Notices,
    pub delivery_retention: std::time::Duration,
}

impl Webhooks {
    pub(crate) fn new(parts: WebhookParts<'_>) -> Webhooks {
        Webhooks {
            records: parts.records,
            sources: parts.sources,
            orgs: parts.orgs,
            plans: parts.plans.clone(),
            requeue: parts.requeue,
            trim: parts.trim,
            streaks: parts.streaks,
            metrics: parts.metrics.clone(),
            url_rule: parts.url_rule.clone(),
            plugin_hashes: parts.plugin_hashes.clone(),
            secret_keys: parts.secret_keys.clone(),
            notices: parts.notices.clone(),
            delivery_retention: parts.delivery_retention,
        }
    }
}

impl Webhooks {
    /// Validates a new webhook and stores it.
    pub(crate) async fn create(
        &self,
        org_id: &str,
        body: serde_json::Map<String, Value>,
    ) -> Result<WebhookView, WebhookError> {
        Ok(WebhookView::of(&create(self, org_id, body).await?))
    }

    /// Validates a change and applies it.
    pub(crate) async fn update(
        &self,
        org_id: &str,
        id: &str,
        body: serde_json::Map<String, Value>,
    ) -> Result<WebhookView, WebhookError> {
        Ok(WebhookView::of(&update(self, org_id, id, body).await?))
    }

    /// Gives the webhook a new signing secret.
    pub(crate) async fn rotate_secret(
        &self,
        org_id: &str,
        id: &str,
        body: serde_json::Map<String, Value>,
    ) -> Result<WebhookView, WebhookError> {
        Ok(WebhookView::of(&rotate_secret(self, org_id, id, body).await?))
    }

    /// Deletes the webhook and cancels its queued deliveries.
    pub(crate) async fn delete(&self, org_id: &str, id: &str) -> Result<(), WebhookError> {
        delete(self, org_id, id).await
    }

    /// The organisation's webhook, or `NotFound` (also for another organisation's).
    pub(crate) async fn find(&self, org_id: &str, id: &str) -> Result<WebhookView, WebhookError> {
        Ok(WebhookView::of(&find(self, org_id, id).await?))
    }

    /// A page of the organisation's webhooks, newest first.
    pub(crate) async fn list(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<WebhookView>, Option<String>), StoreError> {
        let (webhooks, next) = self.records.list_webhooks(org_id, cursor, limit).await?;
        Ok((webhooks.iter().map(WebhookView::of).collect(), next))
    }

    /// Every webhook of the organisation (the settings page).
    pub(crate) async fn all(&self, org_id: &str) -> Result<Vec<WebhookView>, StoreError> {
        Ok(self.records.all_webhooks(org_id).await?.iter().map(WebhookView::of).collect())
    }

    /// How many failed attempts in a row the webhook has had.
    pub(crate) async fn failure_streak(&self, org_id: &str, id: &str) -> Result<u32, StoreError> {
        self.streaks.failure_streak(org_id, id).await
    }
}
