//! Sources in Settings > Webhooks and the portal (contract §10): `GET /settings/sources` lists
//! an organisation's sources with their ingest URLs to copy and makes new ones; a source's page
//! shows its last 24 hours of requests as a chart (accepted, rejected in red) and its latest
//! requests, each with its outcome and, when refused, why.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::html::{self, csrf_field, esc, plain, store_down};
use super::session::{Change, Form, Id, Signed};
use crate::domain::deliveries::Hourly;
use crate::domain::sources::{RequestView, SourceError, SourceView, Sources};
use crate::sources::KINDS;

/// Requests a source's page lists.
const SHOWN_REQUESTS: usize = 50;

/// The JSON a create form makes: `name`, `type`, `secret`, `dedup_window`, and the chosen
/// kind's settings object from its `<kind>.<field>` inputs.
fn source_fields(form: &Form) -> Map<String, Value> {
    let mut body = Map::new();
    let kind = form.get("type").unwrap_or_default();
    for name in ["name", "type", "secret", "dedup_window"] {
        if let Some(value) = form.get(name).filter(|v| !v.trim().is_empty()) {
            body.insert(name.into(), json!(value.trim()));
        }
    }
    if let Some(chosen) = KINDS.iter().find(|k| k.name == kind && !k.table.fields.is_empty()) {
        let object: Map<String, Value> = chosen
            .table
            .fields
            .iter()
            .filter_map(|f| {
                form.get(&format!("{}.{}", chosen.name, f.name))
                    .filter(|v| !v.is_empty())
                    .map(|v| (f.name.to_owned(), json!(v)))
            })
            .collect();
        body.insert(chosen.name.into(), Value::Object(object));
    }
    body
}

/// The form that makes a source.
fn new_form(csrf: &str) -> String {
    let options: String =
        KINDS.iter().map(|k| format!(r#"<option value="{}">{}</option>"#, k.name, esc(k.table.label))).collect();
    let settings: String = KINDS
        .iter()
        .filter(|k| !k.table.fields.is_empty())
        .map(|k| {
            let inputs: String = k
                .table
                .fields
                .iter()
                .map(|f| {
                    let kind = if f.secret == crate::kinds::Secret::No { "text" } else { "password" };
                    format!(
                        r#"<label for="{k}-{n}">{label}</label><input id="{k}-{n}" name="{k}.{n}" type="{kind}" placeholder="{ex}" autocomplete="off">"#,
                        k = k.name,
                        n = f.name,
                        label = esc(f.label),
                        ex = esc(f.example)
                    )
                })
                .collect();
            format!(r#"<fieldset><legend>For {}</legend>{inputs}</fieldset>"#, esc(k.table.label))
        })
        .collect();
    format!(
        r#"<form method="post" action="/settings/sources" class="stack" novalidate>{csrf}<h2>New source</h2><label for="source-type">Provider</label><select id="source-type" name="type">{options}</select><label for="source-name">Name</label><input id="source-name" name="name" type="text" maxlength="200" placeholder="Stripe"><label for="source-secret">Signing secret</label><input id="source-secret" name="secret" type="password" autocomplete="off" placeholder="whsec_…"><p class="muted">The provider's secret: Stripe's endpoint secret, GitHub's webhook secret, Shopify's app secret, Slack's signing secret, Twilio's auth token. Kept sealed, never shown again.</p><details><summary>HMAC, Basic auth and API key settings</summary>{settings}</details><label for="source-window">Duplicates remembered for</label><input id="source-window" name="dedup_window" type="text" placeholder="24h"><button type="submit">Create source</button></form>"#,
        csrf = csrf_field(csrf)
    )
}

/// An ingest URL in a box to copy.
fn url_box(id: &str, url: &str) -> String {
    format!(r#"<input type="text" class="copy" id="url-{id}" readonly value="{}" aria-label="Ingest URL">"#, esc(url))
}

/// `GET /settings/sources`
pub(super) async fn list(State(sources): State<Arc<Sources>>, signed: Signed) -> Response {
    let org = &signed.0.org_id;
    let Ok((listed, _)) = sources.list(org, None, 100).await else { return store_down() };
    let rows: String = listed
        .iter()
        .map(|s| {
            format!(
                r#"<tr><td data-label="Source"><a href="/settings/sources/{id}">{name}</a></td><td data-label="Provider">{kind}</td><td data-label="Ingest URL">{url}</td></tr>"#,
                id = esc(&s.id),
                name = esc(&s.name),
                kind = esc(label_of(&s.kind)),
                url = url_box(&s.id, &s.ingest_url)
            )
        })
        .collect();
    let table = if listed.is_empty() {
        r#"<p class="empty">No sources yet. A source is a URL you give a provider — Stripe, GitHub, Shopify, Slack, Twilio — so Weir checks its signature, keeps each request and forwards it to your webhooks.</p>"#.to_owned()
    } else {
        format!(
            r#"<div class="table-wrap"><table class="cards"><thead><tr><th scope="col">Source</th><th scope="col">Provider</th><th scope="col">Ingest URL</th></tr></thead><tbody>{rows}</tbody></table></div>"#
        )
    };
    let form = if signed.0.admin { new_form(&signed.0.csrf) } else { String::new() };
    let body = format!(
        "{}<h1>Sources</h1><p>Where providers send webhooks to you. Weir verifies each one and forwards it, as the provider sent it, to the webhooks that name the source.</p>{table}{form}",
        super::layout::section_nav("sources")
    );
    html::page(StatusCode::OK, "Sources", Some(&signed.viewer()), &body)
}

fn label_of(kind: &str) -> &str {
    KINDS.iter().find(|k| k.name == kind).map_or(kind, |k| k.table.label)
}

/// `POST /settings/sources`
pub(super) async fn create(State(sources): State<Arc<Sources>>, Change(signed, form): Change) -> Response {
    match sources.create(&signed.0.org_id, source_fields(&form)).await {
        Ok(source) => html::see_other(&format!("/settings/sources/{}", source.id)),
        Err(SourceError::Store(_)) => store_down(),
        Err(e) => {
            let problems: Vec<(String, String)> = match &e {
                SourceError::Invalid(invalid) => {
                    invalid.0.iter().map(|d| (d.field.clone(), d.message.clone())).collect()
                }
                other => vec![("source".into(), other.to_string())],
            };
            let body = format!("<h1>New source</h1>{}{}", html::errors(&problems), new_form(&signed.0.csrf));
            html::page(StatusCode::UNPROCESSABLE_ENTITY, "New source", Some(&signed.viewer()), &body)
        }
    }
}

/// The last 24 hours of requests, per hour: accepted and duplicates as succeeded, rejected as failed.
fn hourly(requests: &[RequestView]) -> Hourly {
    let now = crate::time::now_millis();
    let mut h = Hourly::none_until(now);
    for r in requests {
        let Some(ms) = crate::time::parse_rfc3339(&r.received_at) else { continue };
        let Some(i) = (ms / 3_600_000).checked_sub(h.first_hour).map(|i| i as usize).filter(|i| *i < 24) else {
            continue;
        };
        let (done, tried) = if r.outcome == "rejected" {
            (&mut h.failed, &mut h.attempts_failed)
        } else {
            (&mut h.succeeded, &mut h.attempts_ok)
        };
        done[i] += 1;
        tried[i] += 1;
    }
    h
}

/// `GET /settings/sources/{id}`
pub(super) async fn show(State(sources): State<Arc<Sources>>, signed: Signed, Id(id): Id) -> Response {
    let org = &signed.0.org_id;
    let source: SourceView = match sources.find(org, &id).await {
        Ok(s) => s,
        Err(SourceError::NotFound) => return plain(StatusCode::NOT_FOUND, "No such source."),
        Err(_) => return store_down(),
    };
    let Ok((requests, _)) = sources.requests(org, &id, (None, None), 1000).await else { return store_down() };
    let h = hourly(&requests);
    let rows: String = requests
        .iter()
        .take(SHOWN_REQUESTS)
        .map(|r| {
            let event = r.event_id.as_deref().map(|e| format!("<code>{}</code>", esc(e))).unwrap_or_default();
            format!(
                r#"<tr><td data-label="Received">{}</td><td data-label="Outcome">{}</td><td data-label="Why">{}</td><td data-label="Event">{event}</td><td data-label="Size">{} B</td></tr>"#,
                esc(&r.received_at),
                html::badge(&r.outcome),
                esc(r.reason.as_deref().unwrap_or("")),
                r.size
            )
        })
        .collect();
    let table = if requests.is_empty() {
        r#"<p class="empty">No requests yet. Give the provider the URL above; each request it sends shows here, accepted or not and why.</p>"#.to_owned()
    } else {
        format!(
            r#"<div class="table-wrap"><table class="cards"><thead><tr><th scope="col">Received</th><th scope="col">Outcome</th><th scope="col">Why</th><th scope="col">Event</th><th scope="col">Size</th></tr></thead><tbody>{rows}</tbody></table></div>"#
        )
    };
    let delete = if signed.0.admin {
        format!(
            r#"<form method="post" action="/settings/sources/{}/delete">{}<button type="submit" class="danger">Delete source</button></form>"#,
            esc(&source.id),
            csrf_field(&signed.0.csrf)
        )
    } else {
        String::new()
    };
    let body = format!(
        r#"<p class="crumbs"><a href="/settings/sources">Sources</a></p><h1>{name}</h1><p>{kind} · duplicates remembered for {window}</p><label for="url-{id}">Ingest URL — give it to the provider</label>{url}<p class="muted">Webhooks that name this source in their settings receive each accepted request as the provider sent it.</p><h2>Last 24 hours</h2>{chart}<p class="muted">{totals}</p><h2>Latest requests</h2>{table}{delete}"#,
        name = esc(&source.name),
        kind = esc(label_of(&source.kind)),
        window = esc(&source.dedup_window),
        id = esc(&source.id),
        url = url_box(&source.id, &source.ingest_url),
        chart = super::chart::chart(&h, false),
        totals = requests_totals(&h),
    );
    html::page(StatusCode::OK, &source.name, Some(&signed.viewer()), &body)
}

/// `1 accepted, 2 rejected`, in the last 24 hours.
fn requests_totals(h: &Hourly) -> String {
    let (ok, bad) = (h.succeeded.iter().sum::<u64>(), h.failed.iter().sum::<u64>());
    format!("{ok} accepted, {bad} rejected in the last 24 hours")
}

/// The organisation's sources a webhook's form offers: id and name (none when they cannot
/// be read: the form then leaves a webhook's sources as they are).
pub(super) async fn choices(sources: &Sources, org_id: &str) -> Vec<(String, String)> {
    sources.names(org_id).await.unwrap_or_default()
}

/// `POST /settings/sources/{id}/delete`
pub(super) async fn delete(State(sources): State<Arc<Sources>>, Id(id): Id, Change(signed, _): Change) -> Response {
    match sources.delete(&signed.0.org_id, &id).await {
        Ok(()) | Err(SourceError::NotFound) => html::see_other("/settings/sources"),
        Err(_) => store_down(),
    }
}
