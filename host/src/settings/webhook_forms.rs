//! The pieces of the webhook pages: the form of a webhook (name, URL, events), its status,
//! its plugins form, and a failed change's field errors for display.

use serde_json::{Map, Value, json};

use super::html::{badge, csrf_field, esc};
use super::session::{Form, Signed};
use crate::app::App;
use crate::catalog;
use crate::domain::webhooks::WebhookError;
use crate::store::webhooks::{OnError, Webhook};

/// Field errors of a failed change, for display.
pub(super) fn problems(e: &WebhookError) -> Vec<(String, String)> {
    match e {
        WebhookError::Invalid(invalid) => invalid.0.iter().map(|d| (d.field.clone(), d.message.clone())).collect(),
        other => vec![("webhook".into(), other.to_string())],
    }
}

/// The catalogue as checkboxes grouped by category.
pub(super) fn actions_fieldset(checked: &[String]) -> String {
    let mut out = String::from(r#"<fieldset><legend>Events</legend><div class="categories">"#);
    for category in catalog::CATEGORIES {
        out.push_str(&format!(r#"<fieldset><legend>{}</legend>"#, esc(category.name)));
        for action in category.events {
            let on = if checked.iter().any(|a| a == action) { " checked" } else { "" };
            out.push_str(&format!(
                r#"<label class="check"><input type="checkbox" name="subscribed_actions" value="{a}"{on}> {a}</label>"#,
                a = esc(action)
            ));
        }
        out.push_str("</fieldset>");
    }
    out.push_str("</div></fieldset>");
    out
}

/// Name, URL and events.
pub(super) fn webhook_form(
    action: &str,
    csrf: &str,
    name: &str,
    url: &str,
    checked: &[String],
    submit: &str,
) -> String {
    format!(
        r#"<form method="post" action="{action}">{csrf}
<label for="name">Name</label>
<input id="name" name="name" type="text" maxlength="200" value="{name}" aria-describedby="name-help">
<p id="name-help" class="muted">Optional; defaults to the URL's host.</p>
<label for="url">URL</label>
<input id="url" name="url" type="url" required value="{url}" aria-describedby="url-help">
<p id="url-help" class="muted">http or https, and the host must resolve to a public address.</p>
{actions}
<button type="submit">{submit}</button>
</form>"#,
        action = esc(action),
        csrf = csrf_field(csrf),
        name = esc(name),
        url = esc(url),
        actions = actions_fieldset(checked),
        submit = esc(submit),
    )
}

/// The name, URL and events of a form, as the API takes them.
pub(super) fn webhook_fields(form: &Form) -> Map<String, Value> {
    let mut body = Map::new();
    let name = form.get("name").unwrap_or("").trim();
    if !name.is_empty() {
        body.insert("name".into(), json!(name));
    }
    body.insert("url".into(), json!(form.get("url").unwrap_or("").trim()));
    body.insert("subscribed_actions".into(), json!(form.all("subscribed_actions")));
    body
}

/// Active, or why and since when it is not.
pub(super) fn status_html(w: &Webhook) -> String {
    if w.active {
        return badge("active");
    }
    let why = match w.deactivation_reason.as_deref() {
        Some("failing") => "switched off: kept failing",
        Some("gone") => "switched off: the endpoint answered 410 Gone",
        Some(_) | None => "deactivated by hand",
    };
    format!(
        r#"{} <span class="muted">{why} since <time>{}</time></span>"#,
        badge("inactive"),
        esc(w.deactivated_at.as_deref().unwrap_or(""))
    )
}

/// The organisation's plugins' names by id (a name with its version when it has several).
pub(super) async fn plugin_names(app: &App, org_id: &str) -> std::collections::HashMap<String, String> {
    let (plugins, _) = app.store.list_plugins(org_id, None, 100).await.unwrap_or_default();
    plugins.into_iter().map(|p| (p.id, format!("{} v{}", p.name, p.version))).collect()
}

/// The attached plugins, each with its config and `on_error`, plus a row to add one.
pub(super) async fn plugins_form(app: &App, signed: &Signed, w: &Webhook) -> String {
    let (available, _) = app.store.list_plugins(&signed.0.org_id, None, 100).await.unwrap_or_default();
    let select = |chosen: &str, index: usize| {
        let mut out = format!(
            r#"<label for="plugin-{index}">Plugin</label><select id="plugin-{index}" name="plugin_id"><option value="">(none)</option>"#
        );
        for p in &available {
            let on = if p.id == chosen { " selected" } else { "" };
            out.push_str(&format!(
                r#"<option value="{id}"{on}>{name} ({id})</option>"#,
                id = esc(&p.id),
                name = esc(&p.name)
            ));
        }
        out.push_str("</select>");
        out
    };
    let row = |index: usize, plugin: &str, config: &str, on_error: OnError| {
        let (drop, deliver) = if on_error == OnError::Drop { (" selected", "") } else { ("", " selected") };
        format!(
            r#"<fieldset><legend>{title}</legend>{select}
<label for="config-{index}">Config (JSON object)</label><textarea id="config-{index}" name="config">{config}</textarea>
<label for="on-error-{index}">If the plugin fails</label><select id="on-error-{index}" name="on_error"><option value="drop"{drop}>drop the delivery</option><option value="deliver"{deliver}>deliver the body as it was</option></select></fieldset>"#,
            title = if plugin.is_empty() { "Add a plugin".to_owned() } else { format!("Plugin {}", index + 1) },
            select = select(plugin, index),
            config = esc(config),
        )
    };
    let mut rows = String::new();
    for (i, a) in w.plugins.iter().enumerate() {
        rows.push_str(&row(i, &a.plugin_id, &a.config.to_string(), a.on_error));
    }
    rows.push_str(&row(w.plugins.len(), "", "{}", OnError::Drop));
    format!(
        r#"<h2>Plugins</h2><p class="muted">Run in order before the body is signed. Choose "(none)" to remove one.</p>
<form method="post" action="/settings/webhooks/{id}/plugins">{csrf}{rows}<button type="submit">Save plugins</button></form>"#,
        id = esc(&w.id),
        csrf = csrf_field(&signed.0.csrf),
    )
}
