//! Settings > Webhooks: every webhook of the organisation, whichever way it was made, with
//! create, edit, plugins, deactivate/reactivate and delete. Changes go through the same
//! functions as the API (`crate::domain::webhooks`), so the rules and messages are the same;
//! the forms themselves are in `webhook_forms`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::html::{self, Notice, badge, csrf_field, esc, plain, store_down};
use super::pages::Pages;
use super::session::{Change, Form, Id, Signed};
use super::webhook_forms::{FormValues, plugin_names, plugins_form, problems, webhook_fields, webhook_form};
use super::when::when;
use super::{health, replay, webhook_deliveries};
use crate::domain::rules;
use crate::domain::views::WebhookView as Webhook;
use crate::domain::webhooks::WebhookError;
use crate::domain::webhooks::Webhooks;
use crate::web::Query;

/// A webhook's URL as the viewer may see it: whole for an admin, its query's values and
/// password hidden from a member (they may carry credentials).
fn shown_url(url: &str, admin: bool) -> String {
    if admin { url.to_owned() } else { crate::web::masked_url(url) }
}

/// A webhook's summary: where it delivers, what, through which plugins.
fn summary(w: &Webhook, admin: bool, plugins: &str) -> String {
    format!(
        r#"<dl><dt>URL</dt><dd>{}</dd>{}<dt>Events</dt><dd>{}</dd><dt>Plugins</dt><dd>{plugins}</dd></dl>"#,
        esc(&shown_url(&w.url, admin)),
        broker_lines(w.destination.as_ref()),
        esc(&w.subscribed_actions.join(", ")),
    )
}

/// A broker destination's kind and fields beside its server (a NATS webhook's subject, an
/// AMQP exchange and routing key, …), labelled as its kind's table labels them; the spec shown
/// on read holds no credential.
fn broker_lines(spec: Option<&serde_json::Value>) -> String {
    let Some(spec) = spec else { return String::new() };
    let kind = spec.get("type").and_then(serde_json::Value::as_str).unwrap_or_default();
    let Some((_, table)) = crate::destinations::tables().find(|(k, _)| *k == kind) else { return String::new() };
    let mut out = format!("<dt>Delivers to</dt><dd>{}</dd>", esc(table.label));
    for field in table.fields.iter().filter(|f| f.name != "url") {
        if let Some(value) = spec.get(field.name).and_then(serde_json::Value::as_str) {
            out.push_str(&format!("<dt>{}</dt><dd>{}</dd>", esc(field.label), esc(value)));
        }
    }
    out
}

/// `GET /settings/webhooks`: every webhook with its health at a glance.
pub(super) async fn list(State(doors): State<Pages>, signed: Signed, query: Query) -> Response {
    let org_id = &signed.0.org_id;
    let Ok(webhooks) = doors.webhooks.all(org_id).await else { return store_down() };
    let (healths, hourly, usage) = futures_util::join!(
        futures_util::future::join_all(webhooks.iter().map(|w| health::of(&doors, org_id, &w.id))),
        health::hourly(&doors, org_id, &webhooks),
        doors.usage.of(org_id)
    );
    let mut rows = String::new();
    for ((w, health), hours) in webhooks.iter().zip(healths).zip(&hourly) {
        let health = health.unwrap_or_default();
        rows.push_str(&format!(
            r#"<tr><td><a href="/settings/webhooks/{id}">{name}</a><br><span class="url muted">{url}</span></td><td>{line}</td><td>{day}</td></tr>"#,
            id = esc(&w.id),
            name = esc(&w.name),
            url = esc(&shown_url(&w.url, signed.0.admin)),
            line = health::line(w, &health),
            day = health::day_html(hours, true),
        ));
    }
    let table = if webhooks.is_empty() {
        "<p>No webhooks yet.</p>".to_owned()
    } else {
        format!(
            r#"<div class="table-wrap"><table class="cards"><caption class="muted">Webhooks made here or through the API</caption>
<thead><tr><th scope="col">Webhook</th><th scope="col">Health</th><th scope="col">Last 24 hours</th></tr></thead>
<tbody>{rows}</tbody></table></div>"#
        )
    };
    let new =
        if signed.0.admin { r#"<p><a class="button" href="/settings/webhooks/new">New webhook</a></p>"# } else { "" };
    // The plan and its quotas are the operator's business, not their customer's.
    let usage = match signed.0.portal {
        Some(_) => String::new(),
        None => usage.map(|u| super::usage::section(&u)).unwrap_or_default(),
    };
    let body = format!("<h1>Webhooks</h1>{}{}{new}{table}{usage}", Notice::from_query(&query), super::search::form(""));
    html::page(StatusCode::OK, "Webhooks", Some(&signed.viewer()), &body)
}

/// `GET /settings/webhooks/new`
pub(super) async fn new_form(signed: Signed) -> Response {
    if !signed.0.admin {
        return plain(StatusCode::FORBIDDEN, "Only organisation admins can change webhooks.");
    }
    let body = format!(
        "<h1>New webhook</h1>{}",
        webhook_form("/settings/webhooks", &signed.0.csrf, &FormValues::default(), "Create webhook")
    );
    html::page(StatusCode::OK, "New webhook", Some(&signed.viewer()), &body)
}

/// `POST /settings/webhooks`
pub(super) async fn create(State(webhooks): State<Arc<Webhooks>>, Change(signed, form): Change) -> Response {
    match webhooks.create(&signed.0.org_id, webhook_fields(&form)).await {
        Ok(webhook) => html::see_other(&format!("/settings/webhooks/{}?notice={}", webhook.id, Notice::Created.code())),
        Err(WebhookError::Store(_)) => store_down(),
        Err(e) => {
            let body = format!(
                "<h1>New webhook</h1>{}{}",
                html::errors(&problems(&e)),
                webhook_form("/settings/webhooks", &signed.0.csrf, &FormValues::sent(&form), "Create webhook")
            );
            html::page(StatusCode::UNPROCESSABLE_ENTITY, "New webhook", Some(&signed.viewer()), &body)
        }
    }
}

/// The organisation's webhook, or a 404 page.
pub(super) async fn webhook(webhooks: &Webhooks, signed: &Signed, id: &str) -> Result<Webhook, Response> {
    match webhooks.find(&signed.0.org_id, id).await {
        Ok(w) => Ok(w),
        Err(WebhookError::NotFound) => Err(plain(StatusCode::NOT_FOUND, "No such webhook.")),
        Err(_) => Err(store_down()),
    }
}

/// `GET /settings/webhooks/{id}`
pub(super) async fn show(State(doors): State<Pages>, signed: Signed, Id(id): Id, query: Query) -> Response {
    let mut notice = Notice::from_query(&query);
    if let (Some("retried_failed"), Some(n)) = (query.get("notice"), webhook_deliveries::queued(&query)) {
        notice = html::notice("ok", &format!("{n} failed deliveries queued for a new attempt."));
    }
    match webhook(&doors.webhooks, &signed, &id).await {
        Ok(w) => render_show(&doors, &signed, &w, Shown { notice: &notice, ..Shown::default() }, &query).await,
        Err(r) => r,
    }
}

/// What a webhook's page shows beside the webhook: a notice, the errors of a form just
/// sent, and that form (to show what was typed).
#[derive(Default)]
pub(super) struct Shown<'a> {
    pub(super) notice: &'a str,
    pub(super) errors: &'a [(String, String)],
    pub(super) edited: Option<&'a Form>,
    /// A filter tried on recent events (`try_filter`), shown under the filter.
    pub(super) tried: &'a str,
}

impl<'a> Shown<'a> {
    fn errors(errors: &'a [(String, String)]) -> Shown<'a> {
        Shown { errors, ..Shown::default() }
    }
}

/// The webhook's plugins by name, in the order they run.
async fn plugins_line(doors: &Pages, signed: &Signed, w: &Webhook) -> String {
    if w.plugins.is_empty() {
        return r#"<span class="muted">none</span>"#.to_owned();
    }
    let names = plugin_names(&doors.plugins, &signed.0.org_id).await;
    let shown: Vec<String> =
        w.plugins.iter().map(|a| names.get(&a.plugin_id).cloned().unwrap_or_else(|| a.plugin_id.clone())).collect();
    esc(&shown.join(" → "))
}

pub(super) async fn render_show(
    doors: &Pages,
    signed: &Signed,
    w: &Webhook,
    shown: Shown<'_>,
    query: &Query,
) -> Response {
    let Shown { notice, errors, edited, tried } = shown;
    let admin = signed.0.admin;
    let csrf = &signed.0.csrf;
    let id = esc(&w.id);
    let mut body = format!(
        "<h1>{} {}</h1>{notice}{}",
        esc(&w.name),
        badge(if w.active { "active" } else { "inactive" }),
        html::errors(errors)
    );
    if !w.active && admin {
        body.push_str(&format!(
            r#"<form method="post" action="/settings/webhooks/{id}/active">{}<input type="hidden" name="active" value="true"><button type="submit">Reactivate</button></form>"#,
            csrf_field(csrf)
        ));
    }
    let (health, hourly) = futures_util::join!(
        health::of(doors, &signed.0.org_id, &w.id),
        health::hourly(doors, &signed.0.org_id, std::slice::from_ref(w))
    );
    let health = health.unwrap_or_default();
    body.push_str(&health::line(w, &health));
    let plugins = plugins_line(doors, signed, w).await;
    body.push_str(&summary(w, signed.0.admin, &plugins));
    body.push_str(&format!(
        "<h2>Last 24 hours</h2>{}",
        hourly.first().map(|h| health::day_html(h, false)).unwrap_or_default()
    ));
    body.push_str(&super::test_event::form(signed, w));
    // The deliveries come first: the settings forms below are long.
    body.push_str(&webhook_deliveries::section(doors, signed, w, query).await);
    body.push_str(&replay::section(doors, signed, w).await);
    if admin {
        let previous = match &w.previous_secret_expires_at {
            Some(until) => {
                format!(r#"<p id="previous-secret">The previous secret also signs until {}.</p>"#, when(until))
            }
            None => String::new(),
        };
        body.push_str(&format!(
            r#"<details><summary>Reveal signing secret</summary><p><code id="secret">{secret}</code>
<button type="button" class="secondary" data-copy="secret">Copy</button></p>{previous}
<p class="muted">Receivers verify the Standard Webhooks headers (<code>webhook-signature</code>) or <code>X-Webhook-Signature</code> (HMAC-SHA256 of the raw body) with it.</p>
<form method="post" action="/settings/webhooks/{id}/rotate_secret" class="inline">{csrf}
<label for="grace_period">Keep signing with the current secret for</label>
<select id="grace_period" name="grace_period"><option value="0s">no time (stop at once)</option><option value="1h">1 hour</option><option value="24h" selected>24 hours</option><option value="7d">7 days</option></select>
<button type="submit" class="secondary">Rotate secret</button></form></details>"#,
            secret = esc(&w.signing_secret),
            csrf = csrf_field(csrf),
        ));
        let values =
            FormValues { tried: tried.to_owned(), ..edited.map_or_else(|| FormValues::of(w), FormValues::sent) };
        body.push_str("<h2>Edit</h2>");
        body.push_str(&webhook_form(&format!("/settings/webhooks/{}", w.id), csrf, &values, "Save changes"));
        body.push_str(&plugins_form(&doors.plugins, signed, w).await);
        body.push_str("<h2>Status and removal</h2>");
        if w.active {
            body.push_str(&format!(
                r#"<form method="post" action="/settings/webhooks/{id}/active" class="inline">{}<input type="hidden" name="active" value="false"><button type="submit" class="secondary">Deactivate</button></form> "#,
                csrf_field(csrf)
            ));
        }
        body.push_str(&format!(r#"<a class="button danger" href="/settings/webhooks/{id}/delete">Delete…</a>"#));
    }
    body.push_str(&format!(
        r#"<p class="muted">Created {}, updated {}.</p>"#,
        when(&w.created_at),
        when(&w.updated_at)
    ));
    let status = if errors.is_empty() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    html::page(status, &w.name, Some(&signed.viewer()), &body)
}

/// `POST /settings/webhooks/{id}`: name, URL, events.
pub(super) async fn update(State(doors): State<Pages>, Id(id): Id, Change(signed, form): Change) -> Response {
    let w = match webhook(&doors.webhooks, &signed, &id).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let mut body = webhook_fields(&form);
    if !body.contains_key("name") {
        body.insert("name".into(), json!(w.name));
    }
    // (The destination as shown sent back unchanged keeps its credentials: the domain's rule.)
    match doors.webhooks.update(&signed.0.org_id, &id, body).await {
        Ok(_) => html::see_other(&format!("/settings/webhooks/{id}?notice={}", Notice::Saved.code())),
        Err(WebhookError::Store(_)) => store_down(),
        Err(e) => {
            render_show(
                &doors,
                &signed,
                &w,
                Shown { edited: Some(&form), ..Shown::errors(&problems(&e)) },
                &Query::default(),
            )
            .await
        }
    }
}

/// `POST /settings/webhooks/{id}/plugins`
pub(super) async fn update_plugins(State(doors): State<Pages>, Id(id): Id, Change(signed, form): Change) -> Response {
    let w = match webhook(&doors.webhooks, &signed, &id).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let (ids, configs, on_errors) = (form.all("plugin_id"), form.all("config"), form.all("on_error"));
    let mut plugins = Vec::new();
    let mut errors = Vec::new();
    for (i, plugin_id) in ids.iter().enumerate() {
        if plugin_id.is_empty() {
            continue;
        }
        let text = configs.get(i).copied().unwrap_or("{}").trim();
        let config = match serde_json::from_str::<Value>(if text.is_empty() { "{}" } else { text }) {
            Ok(v) => v,
            Err(e) => {
                errors.push((format!("plugins[{}].config", plugins.len()), format!("is not JSON: {e}")));
                continue;
            }
        };
        plugins.push(
            json!({"plugin_id": plugin_id, "config": config, "on_error": on_errors.get(i).copied().unwrap_or("drop")}),
        );
    }
    if !errors.is_empty() {
        return render_show(&doors, &signed, &w, Shown::errors(&errors), &Query::default()).await;
    }
    let mut body = Map::new();
    body.insert("plugins".into(), Value::Array(plugins));
    match doors.webhooks.update(&signed.0.org_id, &id, body).await {
        Ok(_) => html::see_other(&format!("/settings/webhooks/{id}?notice={}", Notice::Saved.code())),
        Err(WebhookError::Store(_)) => store_down(),
        Err(e) => render_show(&doors, &signed, &w, Shown::errors(&problems(&e)), &Query::default()).await,
    }
}

/// `POST /settings/webhooks/{id}/active` with `active=true|false`.
pub(super) async fn set_active(State(doors): State<Pages>, Id(id): Id, Change(signed, form): Change) -> Response {
    let Some(active) = form.get("active").and_then(rules::flag) else {
        let w = match webhook(&doors.webhooks, &signed, &id).await {
            Ok(w) => w,
            Err(r) => return r,
        };
        let errors = [("active".to_owned(), "must be true or false".to_owned())];
        return render_show(&doors, &signed, &w, Shown::errors(&errors), &Query::default()).await;
    };
    let mut body = Map::new();
    body.insert("active".into(), json!(active));
    match doors.webhooks.update(&signed.0.org_id, &id, body).await {
        Ok(_) => html::see_other(&format!(
            "/settings/webhooks/{id}?notice={}",
            if active { Notice::Reactivated } else { Notice::Deactivated }.code()
        )),
        Err(WebhookError::NotFound) => plain(StatusCode::NOT_FOUND, "No such webhook."),
        Err(_) => store_down(),
    }
}

/// `POST /settings/webhooks/{id}/rotate_secret` with `grace_period`: a new signing secret
/// (the same rotation as the API's).
pub(super) async fn rotate_secret(State(doors): State<Pages>, Id(id): Id, Change(signed, form): Change) -> Response {
    let mut body = Map::new();
    if let Some(grace) = form.get("grace_period") {
        body.insert("grace_period".into(), json!(grace));
    }
    match doors.webhooks.rotate_secret(&signed.0.org_id, &id, body).await {
        Ok(_) => html::see_other(&format!("/settings/webhooks/{id}?notice={}", Notice::Rotated.code())),
        Err(WebhookError::NotFound) => plain(StatusCode::NOT_FOUND, "No such webhook."),
        Err(WebhookError::Store(_)) => store_down(),
        Err(e) => match webhook(&doors.webhooks, &signed, &id).await {
            Ok(w) => render_show(&doors, &signed, &w, Shown::errors(&problems(&e)), &Query::default()).await,
            Err(r) => r,
        },
    }
}

/// `GET /settings/webhooks/{id}/delete`: asks first.
pub(super) async fn delete_confirm(State(webhooks): State<Arc<Webhooks>>, signed: Signed, Id(id): Id) -> Response {
    if !signed.0.admin {
        return plain(StatusCode::FORBIDDEN, "Only organisation admins can change webhooks.");
    }
    let w = match webhook(&webhooks, &signed, &id).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let body = format!(
        r#"<h1>Delete {name}?</h1><p>Deleting <strong>{name}</strong> ({url}) stops its deliveries at once and cancels the queued ones. This cannot be undone.</p>
<form method="post" action="/settings/webhooks/{id}/delete">{csrf}<button type="submit" class="danger">Delete webhook</button></form>
<p><a href="/settings/webhooks/{id}">Keep it</a></p>"#,
        name = esc(&w.name),
        url = esc(&w.url),
        id = esc(&w.id),
        csrf = csrf_field(&signed.0.csrf),
    );
    html::page(StatusCode::OK, "Delete webhook", Some(&signed.viewer()), &body)
}

/// `POST /settings/webhooks/{id}/delete`
pub(super) async fn delete(
    State(webhooks): State<Arc<Webhooks>>,
    Id(id): Id,
    Change(signed, _form): Change,
) -> Response {
    if let Err(r) = webhook(&webhooks, &signed, &id).await {
        return r;
    }
    match webhooks.delete(&signed.0.org_id, &id).await {
        Ok(()) => html::see_other(&format!("/settings/webhooks?notice={}", Notice::Deleted.code())),
        Err(WebhookError::NotFound) => plain(StatusCode::NOT_FOUND, "No such webhook."),
        Err(_) => store_down(),
    }
}
