//! A webhook's page, in three tabs: **Overview** (its health, what went wrong and what to try,
//! where it delivers, the last 24 hours, a test event, the events it receives), **Deliveries**
//! (the list with its filters, retries and replay) and **Settings** (the signing secret, the
//! form, plugins, status and removal). The tabs are sections of one page shown by their
//! fragment (`#deliveries`, with CSS `:target`: no script, every link to a section still
//! works); with no fragment the page shows the tab its request is about — the settings after
//! a form that needs correcting, the deliveries when they are filtered or paged.

use axum::http::StatusCode;
use axum::response::Response;

use super::html::{self, badge, csrf_field, esc};
use super::pages::Pages;
use super::session::{Form, Signed};
use super::webhook_forms::{FormValues, plugin_names, plugins_form, webhook_form};
use super::when::when;
use super::{health, replay, webhook_deliveries};
use crate::domain::views::WebhookView as Webhook;
use crate::web::Query;

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
    pub(super) fn errors(errors: &'a [(String, String)]) -> Shown<'a> {
        Shown { errors, ..Shown::default() }
    }
}

/// A webhook's URL as the viewer may see it: whole for an admin, its query's values and
/// password hidden from a member (they may carry credentials).
pub(super) fn shown_url(url: &str, admin: bool) -> String {
    if admin { url.to_owned() } else { crate::web::masked_url(url) }
}

/// The tabs, in order: fragment and name.
const TABS: [(&str, &str); 3] = [("overview", "Overview"), ("deliveries", "Deliveries"), ("settings", "Settings")];

/// The tab a request is about when its URL names none.
fn first_tab(shown: &Shown<'_>, query: &Query) -> &'static str {
    if shown.edited.is_some() || !shown.errors.is_empty() {
        "settings"
    } else if ["status", "action", "cursor"].iter().any(|p| query.get(p).is_some()) {
        "deliveries"
    } else {
        "overview"
    }
}

pub(super) async fn render_show(
    doors: &Pages,
    signed: &Signed,
    w: &Webhook,
    shown: Shown<'_>,
    query: &Query,
) -> Response {
    let first = first_tab(&shown, query);
    let tab = |id: &str, content: String| {
        let class = if id == first { "tab first" } else { "tab" };
        format!(r#"<section id="{id}" class="{class}" aria-label="{id}">{content}</section>"#)
    };
    let nav: String = TABS
        .iter()
        .map(|(id, name)| {
            let class = if *id == first { r#" class="first""# } else { "" };
            format!(r##"<a href="#{id}"{class}>{name}</a>"##)
        })
        .collect();
    let overview = overview(doors, signed, w).await;
    let deliveries = webhook_deliveries::section(doors, signed, w, query).await;
    let replay = replay::section(doors, signed, w).await;
    let settings = settings(doors, signed, w, &shown).await;
    let body = format!(
        r#"<p class="crumbs"><a href="/settings/webhooks">Webhooks</a></p><h1>{} {}</h1>{}{}<nav class="tabs" aria-label="Webhook">{nav}</nav><div class="tabbed">{}{}{}</div>"#,
        esc(&w.name),
        badge(if w.active { "active" } else { "inactive" }),
        shown.notice,
        html::errors(shown.errors),
        tab("overview", overview),
        tab("deliveries", deliveries + &replay),
        tab("settings", settings),
    );
    let status = if shown.errors.is_empty() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    html::page(status, &w.name, Some(&signed.viewer()), &body)
}

/// The overview: health and what to try, the summary, the day, a test event, the events.
async fn overview(doors: &Pages, signed: &Signed, w: &Webhook) -> String {
    let (health, hourly) = futures_util::join!(
        health::of(doors, &signed.0.org_id, &w.id),
        health::hourly(doors, &signed.0.org_id, std::slice::from_ref(w))
    );
    let health = health.unwrap_or_default();
    let mut out = String::new();
    if !w.active && signed.0.admin {
        out.push_str(&format!(
            r#"<form method="post" action="/settings/webhooks/{}/active">{}<input type="hidden" name="active" value="true"><button type="submit">Reactivate</button></form>"#,
            esc(&w.id),
            csrf_field(&signed.0.csrf)
        ));
    }
    out.push_str(&health::line(w, &health));
    if health.streak > 0
        && let Some(why) = health.last.as_ref().and_then(|l| l.explained.as_ref())
    {
        out.push_str(&super::failures::explained_html(why));
    }
    out.push_str(&summary(w, signed.0.admin, &plugins_line(doors, signed, w).await));
    out.push_str(&format!(
        "<h2>Last 24 hours</h2>{}",
        hourly.first().map(|h| health::day_html(h, false)).unwrap_or_default()
    ));
    out.push_str(&super::test_event::form(signed, w));
    out.push_str(&super::events::subscribed(w));
    out
}

/// The settings: the signing secret, the form, plugins, status and removal.
async fn settings(doors: &Pages, signed: &Signed, w: &Webhook, shown: &Shown<'_>) -> String {
    let id = esc(&w.id);
    let csrf = &signed.0.csrf;
    let mut out = String::new();
    if signed.0.admin {
        out.push_str(&secret(w, csrf));
        let values = FormValues {
            tried: shown.tried.to_owned(),
            sources: super::sources::choices(&doors.sources, &signed.0.org_id).await,
            ..shown.edited.map_or_else(|| FormValues::of(w), FormValues::sent)
        };
        out.push_str("<h2>Edit</h2>");
        out.push_str(&webhook_form(&format!("/settings/webhooks/{}", w.id), csrf, &values, "Save changes"));
        out.push_str(&plugins_form(&doors.plugins, signed, w).await);
        out.push_str("<h2>Status and removal</h2>");
        if w.active {
            out.push_str(&format!(
                r#"<form method="post" action="/settings/webhooks/{id}/active" class="inline">{}<input type="hidden" name="active" value="false"><button type="submit" class="secondary">Deactivate</button></form> "#,
                csrf_field(csrf)
            ));
        }
        out.push_str(&format!(r#"<a class="button danger" href="/settings/webhooks/{id}/delete">Delete…</a>"#));
    } else {
        out.push_str(r#"<p class="muted">Only an admin of the organisation can change this webhook.</p>"#);
    }
    out.push_str(&format!(r#"<p class="muted">Created {}, updated {}.</p>"#, when(&w.created_at), when(&w.updated_at)));
    out
}

/// The signing secret, folded, with its rotation.
fn secret(w: &Webhook, csrf: &str) -> String {
    let previous = match &w.previous_secret_expires_at {
        Some(until) => format!(r#"<p id="previous-secret">The previous secret also signs until {}.</p>"#, when(until)),
        None => String::new(),
    };
    format!(
        r#"<h2>Signing secret</h2><details><summary>Reveal signing secret</summary><p><code id="secret">{secret}</code>
<button type="button" class="secondary" data-copy="secret">Copy</button></p>{previous}
<p class="muted">Receivers verify the Standard Webhooks headers (<code>webhook-signature</code>) or <code>X-Webhook-Signature</code> (HMAC-SHA256 of the raw body) with it.</p>
<form method="post" action="/settings/webhooks/{id}/rotate_secret" class="inline">{csrf}
<label for="grace_period">Keep signing with the current secret for</label>
<select id="grace_period" name="grace_period"><option value="0s">no time (stop at once)</option><option value="1h">1 hour</option><option value="24h" selected>24 hours</option><option value="7d">7 days</option></select>
<button type="submit" class="secondary">Rotate secret</button></form></details>"#,
        id = esc(&w.id),
        secret = esc(&w.signing_secret),
        csrf = csrf_field(csrf),
    )
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
        if let Some(value) = spec.get(field.name).and_then(|v| super::destination_form::shown_text(field, v)) {
            out.push_str(&format!("<dt>{}</dt><dd>{}</dd>", esc(field.label), esc(&value)));
        }
    }
    out
}
