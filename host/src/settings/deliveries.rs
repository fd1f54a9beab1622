//! One delivery on the settings pages: its request, attempts and responses, plugin
//! outcomes, and a retry button.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::html::{self, Notice, badge, csrf_field, esc, plain, store_down};
use super::session::{Change, Id, Signed};
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
    let mut body = format!(
        r#"<h1>Delivery {id} {badge}</h1>{notice}
<p><a href="/settings/webhooks/{wh}">Back to the webhook</a></p>
<dl><dt>Event</dt><dd>{action} ({event})</dd><dt>Created</dt><dd>{created}</dd><dt>Updated</dt><dd>{updated}</dd><dt>Next attempt</dt><dd>{next}</dd></dl>"#,
        id = esc(&d.id),
        badge = badge(&status),
        wh = esc(&d.webhook_id),
        action = esc(&d.action),
        event = esc(&d.event_id),
        created = esc(&d.created_at),
        updated = esc(&d.updated_at),
        next = esc(d.next_attempt_at.as_deref().unwrap_or("—")),
    );
    if signed.0.admin && matches!(status.as_str(), "failed" | "succeeded" | "pending") {
        body.push_str(&format!(
            r#"<form method="post" action="/settings/deliveries/{id}/retry">{csrf}<button type="submit">Retry now</button></form>"#,
            id = esc(&d.id),
            csrf = csrf_field(&signed.0.csrf)
        ));
    }
    let attempts = &d.attempts;
    body.push_str("<h2>Attempts</h2>");
    if attempts.is_empty() {
        body.push_str("<p>No request was sent.</p>");
    }
    for (i, a) in attempts.iter().enumerate() {
        let code = a["status_code"].as_u64().map(|c| c.to_string()).unwrap_or_else(|| "no response".into());
        body.push_str(&format!(
            r#"<h3>Attempt {n}: {code}</h3><dl><dt>At</dt><dd>{at}</dd><dt>Duration</dt><dd>{ms} ms</dd><dt>Error</dt><dd>{error}</dd></dl>
<p><strong>Response body</strong> (first 1 KiB)</p><pre>{response}</pre>"#,
            n = i + 1,
            code = esc(&code),
            at = esc(a["at"].as_str().unwrap_or("")),
            ms = a["duration_ms"].as_u64().unwrap_or(0),
            error = esc(a["error"].as_str().unwrap_or("—")),
            response = esc(a["response_body"].as_str().unwrap_or("")),
        ));
    }
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
