//! Webhooks: creating, changing, stopping them (service document §4, contract §2). The one
//! path for the API and the settings pages, so both apply the same rules and messages.
//! Stopping a webhook (deletion, deactivation by hand, after failures or on 410 Gone)
//! takes it out of the subscription index and ends its queued deliveries.

use serde_json::{Value, json};

use super::egress;
use super::fields::{Fields, bounded_text};
use super::notices::{self, Notice};
use super::{FieldError, Invalid};
use crate::app::App;
use crate::catalog;
use crate::ids::{self, Kind};
use crate::store::StoreError;
use crate::store::endpoint::EndpointFields;
use crate::store::status::Status;
use crate::store::webhooks::{
    Attachment, Created, MAX_WEBHOOKS_PER_ORG, Off, OnError, Ordering, Updated, Webhook, WebhookChange,
};

/// Longest grace period of a secret rotation.
pub const MAX_GRACE: std::time::Duration = std::time::Duration::from_secs(7 * 86_400);
/// Grace period of a rotation that names none.
pub const DEFAULT_GRACE: std::time::Duration = std::time::Duration::from_secs(86_400);
/// Longest webhook name.
const MAX_NAME: usize = 200;
/// Most plugins attached to one webhook.
pub const MAX_ATTACHMENTS: usize = 8;
/// The largest `rate_limit` (deliveries per second).
pub const MAX_RATE_LIMIT: u32 = 10_000;

/// Why a webhook change did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error("webhook not found")]
    NotFound,
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for WebhookError {
    fn from(invalid: Invalid) -> WebhookError {
        WebhookError::Invalid(invalid)
    }
}

/// Validates a new webhook (`name`?, `url`, `subscribed_actions`, `plugins`?, `rate_limit`?,
/// `headers`?, `client_certificate`?) and stores it.
pub async fn create(app: &App, org_id: &str, body: serde_json::Map<String, Value>) -> Result<Webhook, WebhookError> {
    let mut fields = Fields::new(body);
    let name = fields.string("name");
    let url = fields.required_string("url");
    let actions = fields.string_array("subscribed_actions", true);
    let plugins = fields.value("plugins");
    let limit = rate_limit(&mut fields);
    let id = ids::new(Kind::Webhook);
    let ordering = ordering(&mut fields);
    let headers = egress::headers(&mut fields);
    let certificate = egress::client_certificate(app, org_id, &id, &mut fields);
    let name = name.and_then(|n| bounded_text(&mut fields, "name", n, MAX_NAME));
    let actions = actions.map(known_actions);
    let plugins = match plugins {
        Some(value) => attachments(app, org_id, value, &mut fields).await?,
        None => Some(Vec::new()),
    };
    let url = match url {
        Some(url) => vet_url(app, &url, &mut fields).await,
        None => None,
    };
    fields.finish()?;
    let (Some(url), Some(actions), Some(plugins)) = (url, actions, plugins) else {
        return Err(Invalid::field("webhook", "is not valid").into());
    };
    let now = crate::time::now_rfc3339();
    let webhook = Webhook {
        id,
        org_id: org_id.to_owned(),
        name: name.unwrap_or_else(|| default_name(&url)),
        url,
        active: true,
        subscribed_actions: actions,
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
        headers: headers.unwrap_or_default(),
        client_certificate: certificate.as_ref().and_then(|c| c.as_ref().map(|c| c.view.clone())),
        client_secret: certificate.flatten(),
        endpoint: EndpointFields::default().view(0),
    };
    let plan = app.store.org_plan(org_id).await?.unwrap_or(crate::store::orgs::Plan::Free);
    let max = crate::auth::plans::limits(plan).webhooks.min(MAX_WEBHOOKS_PER_ORG);
    match app.store.create_webhook(webhook, max).await? {
        Created::Ok(webhook) => Ok(*webhook),
        Created::PluginMissing => Err(Invalid::field("plugins", "an attached plugin was just deleted").into()),
        Created::LimitReached => Err(WebhookError::Conflict(format!(
            "the organisation already has {max} webhooks, the most its plan ({}) allows",
            plan.as_str()
        ))),
    }
}

/// Validates a change (any field of a new webhook, and `active`) and applies
/// it; deactivating ends the webhook's pending deliveries (they fail).
pub async fn update(
    app: &App,
    org_id: &str,
    id: &str,
    body: serde_json::Map<String, Value>,
) -> Result<Webhook, WebhookError> {
    find(app, org_id, id).await?;
    let mut fields = Fields::new(body);
    let mut change = WebhookChange {
        name: fields.string("name"),
        subscribed_actions: fields.string_array("subscribed_actions", false).map(known_actions),
        active: fields.bool("active"),
        rate_limit: rate_limit(&mut fields),
        ordering: ordering(&mut fields),
        headers: egress::headers(&mut fields),
        client_certificate: egress::client_certificate(app, org_id, id, &mut fields),
        ..WebhookChange::default()
    };
    change.name = change.name.and_then(|n| bounded_text(&mut fields, "name", n, MAX_NAME));
    if let Some(value) = fields.value("plugins") {
        change.plugins = attachments(app, org_id, value, &mut fields).await?;
    }
    if let Some(url) = fields.string("url") {
        change.url = vet_url(app, &url, &mut fields).await;
    }
    fields.finish()?;
    let webhook = match app.store.update_webhook(org_id, id, &change).await? {
        Updated::Ok(webhook) => *webhook,
        Updated::Reactivated(webhook) => {
            notices::emit(app, org_id, Notice::Reactivated(&webhook)).await;
            *webhook
        }
        Updated::NotFound => return Err(WebhookError::NotFound),
        Updated::PluginMissing => return Err(Invalid::field("plugins", "an attached plugin was just deleted").into()),
    };
    if change.active == Some(false) && webhook.active {
        stop(app, org_id, id, Off::Deactivate("manual")).await?;
        return find(app, org_id, id).await;
    }
    Ok(webhook)
}

/// What follows a webhook's deactivation, by hand or by the delivery workers: its pending
/// deliveries fail (retriable after reactivation; they emit nothing), and the organisation
/// is told with one `webhook_deactivated`. How many deliveries ended.
pub async fn after_deactivation(app: &App, org_id: &str, id: &str) -> Result<usize, StoreError> {
    let ended = app.store.end_pending(id, Status::Failed).await?;
    for _ in 0..ended {
        app.metrics.delivery_finished(Status::Failed.as_str());
    }
    if let Some(webhook) = app.store.get_webhook(org_id, id).await?
        && !webhook.active
    {
        notices::emit(app, org_id, Notice::Deactivated(&webhook)).await;
    }
    Ok(ended)
}

/// Gives the organisation's webhook a new signing secret (`{"grace_period"?: "24h"}`,
/// `0s`..`7d`): the old one keeps signing beside it until the grace period ends (contract §2).
pub async fn rotate_secret(
    app: &App,
    org_id: &str,
    id: &str,
    body: serde_json::Map<String, Value>,
) -> Result<Webhook, WebhookError> {
    find(app, org_id, id).await?;
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
    if !app.store.rotate_secret(org_id, id, &secret, ends).await? {
        return Err(WebhookError::NotFound);
    }
    find(app, org_id, id).await
}

/// Deletes the organisation's webhook and cancels its queued deliveries.
pub async fn delete(app: &App, org_id: &str, id: &str) -> Result<(), WebhookError> {
    if !ids::is_valid(Kind::Webhook, id) || !stop(app, org_id, id, Off::Delete).await? {
        return Err(WebhookError::NotFound);
    }
    Ok(())
}

/// Stops a webhook; `false` if it is not the organisation's (or, to deactivate, already
/// inactive). Its queued deliveries end: `cancelled` when deleted, `failed` (retriable after
/// reactivation) when deactivated.
pub async fn stop(app: &App, org_id: &str, id: &str, off: Off) -> Result<bool, StoreError> {
    if !app.store.webhook_off(org_id, id, off, app.config.delivery_retention).await? {
        return Ok(false);
    }
    if let Off::Deactivate(_) = off {
        after_deactivation(app, org_id, id).await?;
        return Ok(true);
    }
    let ended = app.store.end_pending(id, Status::Cancelled).await?;
    for _ in 0..ended {
        app.metrics.delivery_finished(Status::Cancelled.as_str());
    }
    app.store.drop_webhook_index(id, app.config.delivery_retention).await?;
    Ok(true)
}

/// The organisation's webhook, or `NotFound` (also for another organisation's).
pub async fn find(app: &App, org_id: &str, id: &str) -> Result<Webhook, WebhookError> {
    if !ids::is_valid(Kind::Webhook, id) {
        return Err(WebhookError::NotFound);
    }
    app.store.get_webhook(org_id, id).await?.ok_or(WebhookError::NotFound)
}

/// Keeps the catalogue's actions, in order, without repeats; unknown ones are dropped
/// silently (service document §4).
pub fn known_actions(actions: Vec<String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for action in actions {
        if catalog::is_known(&action) && !kept.contains(&action) {
            kept.push(action);
        }
    }
    kept
}

/// `rate_limit`: absent (`None`), `null` (`Some(None)`: no limit) or deliveries per second
/// from 1 to [`MAX_RATE_LIMIT`].
pub fn rate_limit(fields: &mut Fields) -> Option<Option<u32>> {
    match fields.value("rate_limit")? {
        Value::Null => Some(None),
        Value::Number(n) if n.as_u64().is_some_and(|n| (1..=u64::from(MAX_RATE_LIMIT)).contains(&n)) => {
            Some(n.as_u64().and_then(|n| u32::try_from(n).ok()))
        }
        _ => {
            fields.error(
                "rate_limit",
                format!("must be a whole number of deliveries per second from 1 to {MAX_RATE_LIMIT}, or null"),
            );
            None
        }
    }
}

/// `ordering`: `"none"` or `"subject"`; `null` is the default (`"none"`).
pub fn ordering(fields: &mut Fields) -> Option<Ordering> {
    match fields.value("ordering")? {
        Value::Null => Some(Ordering::None),
        Value::String(text) if text == "none" || text == "subject" => Ordering::parse(&text),
        _ => {
            fields.error("ordering", "must be \"none\" or \"subject\"");
            None
        }
    }
}

/// Applies the URL rule; on failure records the reason on `url`.
pub async fn vet_url(app: &App, url: &str, fields: &mut Fields) -> Option<String> {
    match app.url_rule.vet(url.trim()).await {
        Ok(vetted) => Some(vetted.url.to_string()),
        Err(e) => {
            fields.error("url", e.to_string());
            None
        }
    }
}

fn default_name(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_else(|| url.to_owned())
}

/// Validates a `plugins` attachment list: objects `{plugin_id, config?, on_error?}`, each
/// naming a plugin of the organisation. `Ok(None)` when errors were recorded in `fields`.
pub async fn attachments(
    app: &App,
    org_id: &str,
    value: Value,
    fields: &mut Fields,
) -> Result<Option<Vec<Attachment>>, StoreError> {
    let Value::Array(items) = value else {
        fields.error("plugins", "must be an array of attachments");
        return Ok(None);
    };
    if items.len() > MAX_ATTACHMENTS {
        fields.error("plugins", format!("must have at most {MAX_ATTACHMENTS} attachments"));
        return Ok(None);
    }
    let mut out = Vec::with_capacity(items.len());
    let mut errors: Vec<FieldError> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let at = |name: &str| format!("plugins[{i}].{name}");
        let Value::Object(map) = item else {
            errors.push(FieldError::new(format!("plugins[{i}]"), "must be an object"));
            continue;
        };
        let mut inner = Fields::new(map);
        let plugin_id = inner.required_string("plugin_id");
        let config = inner.value("config").unwrap_or_else(|| json!({}));
        let on_error = match inner.string("on_error").as_deref() {
            None | Some("drop") => Some(OnError::Drop),
            Some("deliver") => Some(OnError::Deliver),
            Some(_) => {
                inner.error("on_error", "must be \"drop\" or \"deliver\"");
                None
            }
        };
        if !config.is_object() {
            inner.error("config", "must be an object");
        }
        if serde_json::to_vec(&config).map(|v| v.len()).unwrap_or(0) > 64 * 1024 {
            inner.error("config", "must be at most 64 KiB of JSON");
        }
        let leftover = inner.remaining();
        for name in leftover {
            inner.error(name, "unknown field");
        }
        // The id becomes a Redis key: only the shape of a plugin id is looked up.
        if let Some(plugin_id) = &plugin_id
            && (!ids::is_valid(Kind::Plugin, plugin_id) || !app.plugin_exists(org_id, plugin_id).await?)
        {
            inner.error("plugin_id", "no such plugin in this organisation");
        }
        let inner_errors = inner.into_errors();
        if inner_errors.is_empty()
            && let (Some(plugin_id), Some(on_error)) = (plugin_id, on_error)
        {
            out.push(Attachment { plugin_id, config, on_error });
        }
        errors.extend(inner_errors.into_iter().map(|e| FieldError::new(at(&e.field), e.message)));
    }
    if errors.is_empty() {
        return Ok(Some(out));
    }
    for e in errors {
        fields.error(e.field, e.message);
    }
    Ok(None)
}
