//! The pieces of the webhook pages: the form of a webhook (name, URL, events), its status,
//! its plugins form, and a failed change's field errors for display.

use serde_json::{Map, Value, json};

use super::destination_form::{DestinationValues, destination_json};
use super::html::{csrf_field, esc};
use super::session::{Form, Signed};
use crate::catalog;
use crate::domain::plugins::Plugins;
use crate::domain::views::{OnError, WebhookView as Webhook};
use crate::domain::webhooks::WebhookError;

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
    for category in catalog::CATEGORIES.iter().chain([&catalog::EXTENSIONS]) {
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

/// What the webhook form shows: a webhook's values, or what was sent.
#[derive(Debug, Default)]
pub(super) struct FormValues {
    pub(super) name: String,
    pub(super) url: String,
    pub(super) checked: Vec<String>,
    /// Deliveries per second, as typed (empty: no limit).
    pub(super) rate_limit: String,
    /// `none` or `subject`.
    pub(super) ordering: String,
    /// The CEL filter, as typed (empty: none).
    pub(super) filter: String,
    /// Extra headers, one `Name: value` a line.
    pub(super) headers: String,
    /// The client certificate's view, when it has one (its key is never shown).
    pub(super) certificate: Option<String>,
    /// The filter's verdicts on recent events (`try_filter`'s HTML), when it was tried.
    pub(super) tried: String,
    /// Where deliveries go: HTTP or a broker, and its fields.
    pub(super) destination: DestinationValues,
    /// The organisation's sources it may name (id, name), and those it names.
    pub(super) sources: Vec<(String, String)>,
    pub(super) checked_sources: Vec<String>,
}

impl FormValues {
    pub(super) fn of(w: &Webhook) -> FormValues {
        FormValues {
            name: w.name.clone(),
            url: w.url.clone(),
            checked: w.subscribed_actions.clone(),
            rate_limit: w.rate_limit.map(|l| l.to_string()).unwrap_or_default(),
            ordering: w.ordering.as_str().to_owned(),
            filter: w.filter.clone().unwrap_or_default(),
            headers: w.headers.iter().map(|(name, value)| format!("{name}: {value}\n")).collect(),
            certificate: w
                .client_certificate
                .as_ref()
                .map(|c| format!("{} (SHA-256 {}), expires {}", c.subject, c.fingerprint_sha256, c.not_after)),
            tried: String::new(),
            destination: DestinationValues::of(w.destination.as_ref()),
            sources: Vec::new(),
            checked_sources: w.subscribed_sources.clone(),
        }
    }

    pub(super) fn sent(form: &Form) -> FormValues {
        FormValues {
            name: form.get("name").unwrap_or("").to_owned(),
            url: form.get("url").unwrap_or("").to_owned(),
            checked: form.all("subscribed_actions").into_iter().map(str::to_owned).collect(),
            rate_limit: form.get("rate_limit").unwrap_or("").to_owned(),
            ordering: form.get("ordering").unwrap_or("none").to_owned(),
            filter: form.get("filter").unwrap_or("").to_owned(),
            headers: form.get("headers").unwrap_or("").to_owned(),
            certificate: None,
            tried: String::new(),
            destination: DestinationValues::sent(form),
            sources: Vec::new(),
            checked_sources: form.all("subscribed_sources").into_iter().map(str::to_owned).collect(),
        }
    }
}

/// The organisation's sources as checkboxes (none when it has none).
fn sources_fieldset(values: &FormValues) -> String {
    if values.sources.is_empty() {
        return String::new();
    }
    let boxes: String = values
        .sources
        .iter()
        .map(|(id, name)| {
            let on = if values.checked_sources.contains(id) { " checked" } else { "" };
            format!(r#"<label class="check"><input type="checkbox" name="subscribed_sources" value="{id}"{on}> {name}</label>"#, id = esc(id), name = esc(name))
        })
        .collect();
    format!(
        r#"<fieldset><legend>Sources</legend><input type="hidden" name="_sources" value="1"><p class="muted">Requests providers send to these sources, forwarded as they sent them.</p>{boxes}</fieldset>"#
    )
}

/// Name, URL, events, rate limit, order, filter, headers and client certificate.
pub(super) fn webhook_form(action: &str, csrf: &str, values: &FormValues, submit: &str) -> String {
    format!(
        r#"<form method="post" action="{action}" novalidate>{csrf}
<button type="submit" class="default-submit" tabindex="-1" aria-hidden="true">{submit}</button>
<label for="name">Name</label>
<input id="name" name="name" type="text" maxlength="200" value="{name}" aria-describedby="name-help">
<p id="name-help" class="muted">Optional; defaults to the URL's host.</p>
<div class="http-url"><label for="url">URL</label>
<input id="url" name="url" type="url" inputmode="url" placeholder="https://example.com/webhooks" value="{url}" aria-describedby="url-help">
<p id="url-help" class="muted">Where each delivery is sent over HTTP: http or https, and the host must resolve to a public address.</p></div>
{destination}
{actions}{sources}
<label for="rate_limit">Rate limit</label>
<input id="rate_limit" name="rate_limit" type="number" min="1" max="10000" step="1" value="{rate}" aria-describedby="rate-help">
<p id="rate-help" class="muted">Deliveries per second, all of Weir together; empty for no limit. Deliveries over it wait in the queue.</p>
<label for="ordering">Order</label>
<select id="ordering" name="ordering" aria-describedby="ordering-help"><option value="none"{unordered}>none: fastest</option><option value="subject"{by_subject}>per subject: each record's events in order</option></select>
<p id="ordering-help" class="muted">Per subject: events about one record (one work order, one form…) are delivered one at a time, in the order they were published; a delivery waiting for a retry holds only its record's later ones.</p>
<label for="filter">Filter</label>
<textarea id="filter" name="filter" maxlength="4096" spellcheck="false" aria-describedby="filter-help">{filter}</textarea>
<p id="filter-help" class="muted">Optional: a CEL expression over the event; only events for which it is true are delivered, e.g. <code>report_export.exportable.type == "Form" &amp;&amp; creator.id in ["usr_1", "usr_2"]</code>. Each top-level key of the event is a variable, <code>event</code> the whole event. Empty: every subscribed event.</p>
<button type="submit" class="secondary" formaction="{action}/try_filter" formnovalidate>Try it on a recent event</button>{tried}
<label for="headers">Headers</label>
<textarea id="headers" name="headers" aria-describedby="headers-help">{headers}</textarea>
<p id="headers-help" class="muted">Sent with every delivery, one <code>Name: value</code> a line (at most 20), e.g. an API gateway's key. Headers Weir sets itself cannot be replaced.</p>
<fieldset><legend>Client certificate (mutual TLS)</legend>
<p class="muted">{current}</p>
<label for="client_certificate">Certificate (PEM, its chain may follow)</label>
<textarea id="client_certificate" name="client_certificate" autocomplete="off"></textarea>
<label for="client_key">Private key (PEM; stored encrypted, never shown again)</label>
<textarea id="client_key" name="client_key" autocomplete="off"></textarea>
<label class="check"><input type="checkbox" name="remove_certificate" value="1"> Remove the client certificate</label>
</fieldset>
<button type="submit" class="save">{submit}</button>
</form>"#,
        action = esc(action),
        csrf = csrf_field(csrf),
        name = esc(&values.name),
        url = esc(&values.url),
        actions = actions_fieldset(&values.checked),
        sources = sources_fieldset(values),
        rate = esc(&values.rate_limit),
        unordered = if values.ordering == "subject" { "" } else { " selected" },
        by_subject = if values.ordering == "subject" { " selected" } else { "" },
        headers = esc(&values.headers),
        filter = esc(&values.filter),
        tried = values.tried,
        destination = values.destination.html(),
        current = match &values.certificate {
            Some(view) => format!("Current: {}. Paste a new certificate and key to replace it.", esc(view)),
            None => "None. Paste a certificate and its key for endpoints that require one.".to_owned(),
        },
        submit = esc(submit),
    )
}

/// The fields of a webhook form, as the API takes them.
pub(super) fn webhook_fields(form: &Form) -> Map<String, Value> {
    let mut body = Map::new();
    let name = form.get("name").unwrap_or("").trim();
    if !name.is_empty() {
        body.insert("name".into(), json!(name));
    }
    let destination = destination_json(form);
    if destination.is_null() {
        body.insert("url".into(), json!(form.get("url").unwrap_or("").trim()));
    }
    body.insert("destination".into(), destination);
    body.insert("subscribed_actions".into(), json!(form.all("subscribed_actions")));
    // Only a form that offered the organisation's sources changes which it names.
    if form.get("_sources") == Some("1") {
        body.insert("subscribed_sources".into(), json!(form.all("subscribed_sources")));
    }
    let rate = form.get("rate_limit").unwrap_or("");
    // Empty: no limit; a number written as JSON writes it (digits, no sign, no leading zero,
    // no blanks) as a number; anything else as it is, refused by the API's rule.
    let json_integer = |t: &str| t.bytes().all(|b| b.is_ascii_digit()) && (t == "0" || !t.starts_with('0'));
    let rate = match rate {
        "" => Value::Null,
        text if json_integer(text) => text.parse::<u64>().map_or_else(|_| json!(text), |n| json!(n)),
        text => json!(text),
    };
    body.insert("rate_limit".into(), rate);
    body.insert("ordering".into(), json!(form.get("ordering").unwrap_or("none")));
    let filter = form.get("filter").unwrap_or("").trim();
    body.insert("filter".into(), if filter.is_empty() { Value::Null } else { json!(filter) });
    body.insert("headers".into(), headers_field(form.get("headers").unwrap_or("")));
    let certificate = form.get("client_certificate").unwrap_or("").trim();
    let key = form.get("client_key").unwrap_or("").trim();
    if form.get("remove_certificate") == Some("1") {
        body.insert("client_certificate".into(), Value::Null);
    } else if !certificate.is_empty() || !key.is_empty() {
        body.insert("client_certificate".into(), json!({"certificate": certificate, "private_key": key}));
    }
    body
}

/// The headers text (`Name: value` lines) as the API takes it: an object, `null` when
/// empty; a line without a colon goes as it is (a string), which the rules refuse.
fn headers_field(text: &str) -> Value {
    let mut map = Map::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else { return json!(line) };
        map.insert(name.trim().to_owned(), json!(value.trim()));
    }
    if map.is_empty() { Value::Null } else { Value::Object(map) }
}

/// The organisation's plugins' names by id (a name with its version when it has several).
pub(super) async fn plugin_names(plugins: &Plugins, org_id: &str) -> std::collections::HashMap<String, String> {
    let (plugins, _) = plugins.list(org_id, None, None, 100).await.unwrap_or_default();
    plugins.into_iter().map(|p| (p.id, format!("{} v{}", p.name, p.version))).collect()
}

/// The attached plugins, each with its config and `on_error`, plus a row to add one.
pub(super) async fn plugins_form(plugins: &Plugins, signed: &Signed, w: &Webhook) -> String {
    let (available, _) = plugins.list(&signed.0.org_id, None, None, 100).await.unwrap_or_default();
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
