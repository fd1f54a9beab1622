//! A webhook's fields as a request gives them, each checked by its rule: the actions kept,
//! `rate_limit`, `ordering`, `filter`, the URL rule, and plugin attachments (the egress fields are
//! `super::super::egress`'s).

use serde_json::{Value, json};

use super::super::FieldError;
use super::super::fields::Fields;
use crate::catalog;
use crate::ids::{self, Kind};
use crate::netguard::UrlRule;
use crate::shared::PluginHashes;
use crate::store::StoreError;
use crate::store::tenants::sources::SourceRecords;
use crate::store::tenants::webhooks::{Attachment, OnError, Ordering, StoredDestination};

/// Most plugins attached to one webhook.
pub(crate) const MAX_ATTACHMENTS: usize = 8;
/// The largest `rate_limit` (deliveries per second).
pub(crate) const MAX_RATE_LIMIT: u32 = 10_000;

/// Keeps the catalogue's actions, in order, without repeats; unknown ones are dropped
/// silently (service document §4).
pub(super) fn known_actions(actions: Vec<String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for action in actions {
        if catalog::is_known(&action) && !kept.contains(&action) {
            kept.push(action);
        }
    }
    kept
}

/// Most sources one webhook names.
pub(crate) const MAX_SUBSCRIBED_SOURCES: usize = 20;

/// `subscribed_sources`: the organisation's sources, without repeats (another's, or one that
/// is not there, is refused naming the field).
pub(super) async fn subscribed_sources(
    records: &SourceRecords,
    org_id: &str,
    fields: &mut Fields,
) -> Result<Option<Vec<String>>, StoreError> {
    let Some(given) = fields.string_array("subscribed_sources", false) else { return Ok(None) };
    let mut kept: Vec<String> = Vec::new();
    for (i, id) in given.into_iter().enumerate() {
        let known = ids::is_valid(Kind::Source, &id) && records.get(org_id, &id).await?.is_some();
        if !known {
            fields.error(format!("subscribed_sources[{i}]"), "is not a source of this organisation");
        } else if !kept.contains(&id) {
            kept.push(id);
        }
    }
    if kept.len() > MAX_SUBSCRIBED_SOURCES {
        fields.error("subscribed_sources", format!("names more than {MAX_SUBSCRIBED_SOURCES} sources"));
    }
    Ok(Some(kept))
}

/// `rate_limit`: absent (`None`), `null` (`Some(None)`: no limit) or deliveries per second
/// from 1 to [`MAX_RATE_LIMIT`].
pub(super) fn rate_limit(fields: &mut Fields) -> Option<Option<u32>> {
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
pub(super) fn ordering(fields: &mut Fields) -> Option<Ordering> {
    match fields.value("ordering")? {
        Value::Null => Some(Ordering::None),
        Value::String(text) if text == "none" || text == "subject" => Ordering::parse(&text),
        _ => {
            fields.error("ordering", "must be \"none\" or \"subject\"");
            None
        }
    }
}

/// `filter`: absent (`None`), `null` (`Some(None)`: no filter) or a CEL expression that
/// compiles and passes the check (`crate::filters`), at most 4,096 bytes.
pub(super) fn filter(fields: &mut Fields) -> Option<Option<String>> {
    match fields.value("filter")? {
        Value::Null => Some(None),
        Value::String(text) => match crate::filters::Filter::compile(&text) {
            Ok(_) => Some(Some(text)),
            Err(e) => {
                fields.error("filter", e.to_string());
                None
            }
        },
        _ => {
            fields.error("filter", "must be a CEL expression (a string), or null");
            None
        }
    }
}

/// Applies the URL rule; on failure records the reason on `url`.
pub(super) async fn vet_url(rule: &UrlRule, url: &str, fields: &mut Fields) -> Option<String> {
    match rule.vet(url.trim()).await {
        Ok(vetted) => Some(vetted.url.to_string()),
        Err(e) => {
            fields.error("url", e.to_string());
            None
        }
    }
}

/// A webhook's name when none is given: a broker destination's kind and its first field
/// (`NATS JetStream subject orders.created`, not the broker's host), else the URL's host.
pub(super) fn default_name(url: &str, destination: Option<&StoredDestination>) -> String {
    let broker = destination.and_then(|d| {
        let kind = d.spec.get("type")?.as_str()?;
        let (_, table) = crate::destinations::tables().find(|(k, _)| *k == kind)?;
        let what = table.label.trim_start_matches("an ").trim_start_matches("a ");
        let first = table.fields.iter().filter(|f| f.name != "url").find_map(|f| d.spec.get(f.name)?.as_str());
        Some(match first {
            Some(value) => format!("{what} {value}"),
            None => what.to_owned(),
        })
    });
    broker.unwrap_or_else(|| {
        url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_else(|| url.to_owned())
    })
}

/// Validates a `plugins` attachment list: objects `{plugin_id, config?, on_error?}`, each
/// naming a plugin of the organisation. `Ok(None)` when errors were recorded in `fields`.
pub(super) async fn attachments(
    hashes: &PluginHashes,
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
            && (!ids::is_valid(Kind::Plugin, plugin_id) || !hashes.exists(org_id, plugin_id).await?)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_without_a_name_is_named_after_where_it_delivers() {
        assert_eq!(default_name("https://hooks.example.com/in?x=1", None), "hooks.example.com");
        let nats = StoredDestination {
            spec: json!({"type": "nats", "url": "nats://10.0.0.5:4222", "subject": "orders.created"}),
            sealed_credentials: String::new(),
        };
        let name = default_name("nats://10.0.0.5:4222", Some(&nats));
        assert!(name.ends_with(" orders.created") && name.contains("NATS") && !name.contains("10.0.0.5"), "{name}");
    }
}
