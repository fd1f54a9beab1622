//! One delivery on the settings pages: its request, attempts and responses, plugin
//! outcomes, and a retry button.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::health::attempt_words;
use super::html::{self, Notice, badge, csrf_field, esc, plain, store_down};
use super::session::{Change, Id, Signed};
use super::when::when;
use crate::domain::deliveries::{Deliveries, Delivery, RetryError};
use crate::web::Query;

async fn delivery(deliveries: &Deliveries, signed: &Signed, id: &str) -> Result<Delivery, Response> {
    match deliveries.find(&signed.0.org_id, id).await {
        Ok(delivery) => Ok(delivery),
        Err(RetryError::NotFound) => Err(plain(StatusCode::NOT_FOUND, "No such delivery.")),
        Err(_) => Err(store_down()),
    }
}

fn pretty(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// `GET /settings/deliveries/{id}`
pub(super) async fn show(
    State(deliveries): State<Arc<Deliveries>>,
    signed: Signed,
    Id(id): Id,
    query: Query,
) -> Response {
    let d = match delivery(&deliveries, &signed, &id).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let status = d.status.as_str().to_owned();
    let notice = Notice::from_query(&query);
    let why = d
        .attempts
        .last()
        .filter(|_| status != "succeeded")
        .and_then(super::failures::explain)
        .map(|why| super::failures::explained_html(&why))
        .unwrap_or_default();
    let mut body = format!(
        r#"<p class="crumbs"><a href="/settings/webhooks/{wh}#deliveries">Back to the webhook</a></p><h1>Delivery {badge}</h1><p class="id"><code>{id}</code></p>{notice}{why}
<dl><dt>Event</dt><dd>{action} (<a href="/settings/search?q={event}">{event}</a>)</dd><dt>Created</dt><dd>{created}</dd><dt>Updated</dt><dd>{updated}</dd></dl>"#,
        id = esc(&d.id),
        badge = super::status::delivery_status(&d),
        wh = esc(&d.webhook_id),
        action = esc(&d.action),
        event = esc(&d.event_id),
        created = when(&d.created_at),
        updated = when(&d.updated_at),
    );
    if signed.0.admin && matches!(status.as_str(), "failed" | "succeeded" | "pending") {
        body.push_str(&format!(
            r#"<form method="post" action="/settings/deliveries/{id}/retry">{csrf}<button type="submit">Retry now</button></form>"#,
            id = esc(&d.id),
            csrf = csrf_field(&signed.0.csrf)
        ));
    }
    body.push_str(&timeline(&d));
    let headers: serde_json::Map<String, Value> = serde_json::from_str(d.request.headers.get()).unwrap_or_default();
    let rows: String = headers
        .iter()
        .map(|(k, v)| format!("<tr><th scope=\"row\">{}</th><td>{}</td></tr>", esc(k), esc(v.as_str().unwrap_or(""))))
        .collect();
    body.push_str(&format!(
        r#"<h2>Request</h2><div class="table-wrap"><table><caption class="muted">Headers of the latest attempt</caption><tbody>{rows}</tbody></table></div>
<p><strong>Body</strong></p><pre>{body}</pre>"#,
        body = esc(&pretty(&d.request.body)),
    ));
    let plugins: Vec<Value> = serde_json::from_str(d.plugins.get()).unwrap_or_default();
    if !plugins.is_empty() {
        body.push_str("<h2>Plugins</h2>");
        for p in plugins {
            body.push_str(&format!(
                "<h3>{} — {}</h3><p>{}</p><pre>{}</pre>",
                esc(p["plugin_id"].as_str().unwrap_or("")),
                esc(p["outcome"].as_str().unwrap_or("")),
                esc(p["error"].as_str().or(p["reason"].as_str()).unwrap_or("")),
                esc(&serde_json::to_string_pretty(&p["logs"]).unwrap_or_default()),
            ));
        }
    }
    html::page(StatusCode::OK, "Delivery", Some(&signed.viewer()), &body)
}

/// The attempt timeline: made, each attempt with its answer (a failure's in words; the
/// response body shown for the latest, folded for the others), and the next attempt or how
/// it ended.
fn timeline(d: &Delivery) -> String {
    let mut items = format!(r#"<li class="made"><strong>Made</strong> {}</li>"#, when(&d.created_at));
    for (i, a) in d.attempts.iter().enumerate() {
        let ok = a["status_code"].as_u64().is_some_and(|c| (200..300).contains(&c));
        let response = a["response_body"].as_str().unwrap_or("");
        let open = if i + 1 == d.attempts.len() { " open" } else { "" };
        let folded = if response.is_empty() {
            String::new()
        } else {
            format!(
                "<details{open}><summary>Response body (first 1 KiB)</summary><pre>{}</pre></details>",
                esc(response)
            )
        };
        let why = super::failures::explain(a).map(|e| format!(r#"<br><span class="muted">{}</span>"#, esc(&e.what)));
        items.push_str(&format!(
            r#"<li class="{class}"><strong>Attempt {n}</strong> {at} · {answer} · {ms} ms{why}{folded}</li>"#,
            why = why.unwrap_or_default(),
            class = if ok { "ok" } else { "bad" },
            n = i + 1,
            at = when(a["at"].as_str().unwrap_or("")),
            answer = esc(&attempt_words(a)),
            ms = a["duration_ms"].as_u64().unwrap_or(0),
        ));
    }
    let end = match (d.status.as_str(), d.next_attempt_at.as_deref()) {
        ("pending", Some(next)) => format!(r#"<li class="wait"><strong>Next attempt</strong> {}</li>"#, when(next)),
        ("pending", None) => r#"<li class="wait"><strong>Being attempted</strong></li>"#.to_owned(),
        (status, _) => {
            format!(r#"<li class="end"><strong>Ended</strong> {} {}</li>"#, badge(status), when(&d.updated_at))
        }
    };
    let none = if d.attempts.is_empty() { "<p>No request was sent.</p>" } else { "" };
    format!(r#"<h2>Attempts</h2>{none}<ol class="timeline">{items}{end}</ol>"#)
}

/// `POST /settings/deliveries/{id}/retry`
pub(super) async fn retry(
    State(deliveries): State<Arc<Deliveries>>,
    Id(id): Id,
    Change(signed, _form): Change,
) -> Response {
    if let Err(r) = delivery(&deliveries, &signed, &id).await {
        return r;
    }
    let notice = match deliveries.retry(&signed.0.org_id, &id).await {
        Ok(_) => Notice::Retried,
        Err(RetryError::Inactive) => Notice::RetryInactive,
        Err(RetryError::WebhookGone) => Notice::RetryWebhookGone,
        Err(RetryError::Filtered) => Notice::RetryFiltered,
        Err(RetryError::Store(_)) => return store_down(),
        Err(_) => Notice::RetryRefused,
    };
    html::see_other(&format!("/settings/deliveries/{id}?notice={}", notice.code()))
}
