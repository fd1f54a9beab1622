//! Settings > Webhooks: every webhook of the organisation, whichever way it was made, with
//! create, edit, plugins, deactivate/reactivate and delete. Changes go through the same
//! functions as the API (`crate::domain::webhooks`), so the rules and messages are the same;
//! the forms themselves are in `webhook_forms`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::html::{self, Notice, csrf_field, esc, plain, store_down};
use super::pages::Pages;
use super::session::{Change, Id, Signed};
use super::webhook_forms::{FormValues, problems, webhook_fields, webhook_form};
pub(super) use super::webhook_page::{Shown, render_show, shown_url};
use super::{health, webhook_deliveries};
use crate::domain::rules;
use crate::domain::views::WebhookView as Webhook;
use crate::domain::webhooks::WebhookError;
use crate::domain::webhooks::Webhooks;
use crate::web::Query;

/// The list's health filter: parameter and words.
const HEALTH: [(&str, &str); 3] =
    [("failing", "needs attention"), ("healthy", "healthy"), ("waiting", "waiting for a first delivery")];

/// `GET /settings/webhooks`: every webhook with its health at a glance, narrowed by a search
/// of names and URLs (`q`; a delivery's id goes to its page) and by health.
pub(super) async fn list(State(doors): State<Pages>, signed: Signed, query: Query) -> Response {
    let org_id = &signed.0.org_id;
    let q = query.get("q").unwrap_or("").trim();
    let wanted = query.get("health").and_then(|h| HEALTH.iter().find(|(v, _)| *v == h)).map(|(v, _)| *v);
    let Ok(all) = doors.webhooks.all(org_id).await else { return store_down() };
    let webhooks: Vec<_> = all.iter().filter(|w| super::search::names(w, q)).cloned().collect();
    // A delivery's id, or text no name or URL holds (an event's id, maybe): the search says.
    if q.starts_with("dlv_") || (!q.is_empty() && webhooks.is_empty()) {
        return super::search::redirect(q);
    }
    let (healths, hourly, usage) = futures_util::join!(
        futures_util::future::join_all(webhooks.iter().map(|w| health::of(&doors, org_id, &w.id))),
        health::hourly(&doors, org_id, &webhooks),
        doors.usage.of(org_id)
    );
    let mut rows = String::new();
    for ((w, health), hours) in webhooks.iter().zip(healths).zip(&hourly) {
        let health = health.unwrap_or_default();
        if wanted.is_some_and(|k| k != health::kind(w, &health)) {
            continue;
        }
        rows.push_str(&format!(
            r#"<tr><td><a href="/settings/webhooks/{id}">{name}</a><br><span class="url muted">{url}</span></td><td>{line}</td><td>{day}</td></tr>"#,
            id = esc(&w.id),
            name = esc(&w.name),
            url = esc(&shown_url(&w.url, signed.0.admin)),
            line = health::line(w, &health),
            day = health::day_html(hours, true),
        ));
    }
    let table = match (all.is_empty(), rows.is_empty()) {
        (true, _) => empty_state(signed.0.admin),
        (false, true) => {
            r#"<p class="empty">No webhook matches. <a href="/settings/webhooks">Show them all</a>.</p>"#.to_owned()
        }
        (false, false) => format!(
            r#"<div class="table-wrap"><table class="cards"><caption class="muted">Webhooks made here or through the API</caption>
<thead><tr><th scope="col">Webhook</th><th scope="col">Health</th><th scope="col">Last 24 hours</th></tr></thead>
<tbody>{rows}</tbody></table></div>"#
        ),
    };
    let new = if signed.0.admin { r#"<a class="button" href="/settings/webhooks/new">New webhook</a>"# } else { "" };
    // The plan and its quotas are the operator's business, not their customer's.
    let usage = match signed.0.portal {
        Some(_) => String::new(),
        None => usage.map(|u| super::usage::section(&u)).unwrap_or_default(),
    };
    let filters = if all.is_empty() { String::new() } else { list_filters(query.get("q").unwrap_or(""), wanted) };
    let body = format!(
        r#"{}<div class="title"><h1>Webhooks</h1>{new}</div>{}{filters}{table}{usage}"#,
        super::layout::section_nav("webhooks"),
        Notice::from_query(&query),
    );
    html::page(StatusCode::OK, "Webhooks", Some(&signed.viewer()), &body)
}

/// The list's search and health filter.
fn list_filters(q: &str, wanted: Option<&str>) -> String {
    let options: String = HEALTH
        .iter()
        .map(|(v, words)| {
            format!(r#"<option value="{v}"{}>{words}</option>"#, if wanted == Some(*v) { " selected" } else { "" })
        })
        .collect();
    format!(
        r#"<form method="get" action="/settings/webhooks" class="filters" role="search">
<div class="grow"><label for="search-q">Search</label><input id="search-q" name="q" type="search" value="{q}" placeholder="Name or URL, or a dlv_… id" spellcheck="false" autocomplete="off"></div>
<div><label for="filter-health">Health</label><select id="filter-health" name="health"><option value="">any</option>{options}</select></div>
<div><button type="submit" class="secondary">Show</button></div></form>"#,
        q = esc(q),
    )
}

/// What an organisation without webhooks sees first: what a webhook is and the first step.
fn empty_state(admin: bool) -> String {
    let first = if admin {
        r#"<p><a class="button" href="/settings/webhooks/new">Create your first webhook</a></p><p class="muted">Then send it a test event from its page to see a delivery arrive.</p>"#
    } else {
        r#"<p class="muted">An admin of your organisation can create one.</p>"#
    };
    format!(
        r#"<div class="empty"><h2>No webhooks yet</h2><p>A webhook sends your events as they happen to a URL you own — or to a queue or stream — each one signed so your server can trust it, and retried until it is received.</p>{first}</div>"#
    )
}

/// `GET /settings/webhooks/new`
pub(super) async fn new_form(State(doors): State<Pages>, signed: Signed) -> Response {
    if !signed.0.admin {
        return plain(StatusCode::FORBIDDEN, "Only organisation admins can change webhooks.");
    }
    let values = FormValues {
        sources: super::sources::choices(&doors.sources, &signed.0.org_id).await,
        ..FormValues::default()
    };
    let body = format!(
        "<h1>New webhook</h1>{}",
        webhook_form("/settings/webhooks", &signed.0.csrf, &values, "Create webhook")
    );
    html::page(StatusCode::OK, "New webhook", Some(&signed.viewer()), &body)
}

/// `POST /settings/webhooks`
pub(super) async fn create(State(doors): State<Pages>, Change(signed, form): Change) -> Response {
    match doors.webhooks.create(&signed.0.org_id, webhook_fields(&form)).await {
        Ok(webhook) => html::see_other(&format!("/settings/webhooks/{}?notice={}", webhook.id, Notice::Created.code())),
        Err(WebhookError::Store(_)) => store_down(),
        Err(e) => {
            let body = format!(
                "<h1>New webhook</h1>{}{}",
                html::errors(&problems(&e)),
                webhook_form(
                    "/settings/webhooks",
                    &signed.0.csrf,
                    &sent_with_sources(&doors, &signed, &form).await,
                    "Create webhook"
                )
            );
            html::page(StatusCode::UNPROCESSABLE_ENTITY, "New webhook", Some(&signed.viewer()), &body)
        }
    }
}

/// A new webhook's form as sent, offering the organisation's sources again.
async fn sent_with_sources(doors: &Pages, signed: &Signed, form: &super::session::Form) -> FormValues {
    FormValues { sources: super::sources::choices(&doors.sources, &signed.0.org_id).await, ..FormValues::sent(form) }
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
        Ok(_) => html::see_other(&format!("/settings/webhooks/{id}?notice={}#settings", Notice::Saved.code())),
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
        Ok(_) => html::see_other(&format!("/settings/webhooks/{id}?notice={}#settings", Notice::Saved.code())),
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
        Ok(_) => html::see_other(&format!("/settings/webhooks/{id}?notice={}#settings", Notice::Rotated.code())),
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
