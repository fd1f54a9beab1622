//! A webhook's deliveries on its settings page: filtered by status and action, a page at a
//! time (the API's cursors), each failed attempt in words, a retry button per delivery and
//! "retry all failed since …" (the API's `retry_failed`).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde_json::{Map, json};

use super::health::attempt_words;
use super::html::{self, Notice, csrf_field, esc, plain, store_down};
use super::pages::Pages;
use super::session::{Change, Id, Signed};
use super::when::when;
use crate::catalog;
use crate::domain::deliveries::Deliveries;
use crate::domain::deliveries::{Filter, RetryError, Status};
use crate::domain::views::WebhookView as Webhook;
use crate::web::Query;

/// Deliveries per page.
const PAGE: usize = 20;
/// Most index entries one page looks at (as the API).
const SCAN: usize = 2000;

/// The page's `status`, `action` and `cursor` parameters; anything unknown is ignored.
struct View<'a> {
    status: Option<Status>,
    action: Option<&'a str>,
    cursor: Option<&'a str>,
}

impl<'a> View<'a> {
    fn of(deliveries: &Deliveries, query: &'a Query) -> View<'a> {
        View {
            status: query.get("status").and_then(Status::parse),
            action: query.get("action").filter(|a| catalog::is_known(a)),
            cursor: query.get("cursor").filter(|c| deliveries.valid_cursor(c)),
        }
    }

    /// The page's link with these filters and `cursor`.
    fn link(&self, webhook_id: &str, cursor: Option<&str>) -> String {
        let mut params = Vec::new();
        if let Some(s) = self.status {
            params.push(format!("status={}", s.as_str()));
        }
        if let Some(a) = self.action {
            params.push(format!("action={a}"));
        }
        if let Some(c) = cursor {
            params.push(format!("cursor={c}"));
        }
        let query = if params.is_empty() { String::new() } else { format!("?{}", params.join("&")) };
        format!("/settings/webhooks/{webhook_id}{query}#deliveries")
    }
}

fn filter_form(w: &Webhook, view: &View<'_>) -> String {
    let mut statuses = String::from(r#"<option value="">any</option>"#);
    for s in [Status::Pending, Status::Succeeded, Status::Failed, Status::Filtered, Status::Cancelled] {
        let on = if view.status == Some(s) { " selected" } else { "" };
        statuses.push_str(&format!(r#"<option value="{s}"{on}>{s}</option>"#, s = s.as_str()));
    }
    let mut actions = String::from(r#"<option value="">any</option>"#);
    for a in &w.subscribed_actions {
        let on = if view.action == Some(a.as_str()) { " selected" } else { "" };
        actions.push_str(&format!(r#"<option value="{a}"{on}>{a}</option>"#, a = esc(a)));
    }
    format!(
        r#"<form method="get" action="/settings/webhooks/{id}#deliveries" class="filters">
<div><label for="filter-status">Status</label><select id="filter-status" name="status">{statuses}</select></div>
<div><label for="filter-action">Event</label><select id="filter-action" name="action">{actions}</select></div>
<div><button type="submit" class="secondary">Show</button></div></form>"#,
        id = esc(&w.id),
    )
}

/// The deliveries section of a webhook's page.
pub(super) async fn section(doors: &Pages, signed: &Signed, w: &Webhook, query: &Query) -> String {
    let view = View::of(&doors.deliveries, query);
    let filter = Filter { status: view.status, action: view.action, webhook: Some(&w.id) };
    let Ok((deliveries, next)) = doors.deliveries.list(&signed.0.org_id, filter, view.cursor, PAGE, SCAN).await else {
        return html::notice("error", "The deliveries cannot be read right now; try again shortly.");
    };
    let admin = signed.0.admin;
    let mut rows = String::new();
    for d in &deliveries {
        let last = d.attempts.last().map(attempt_words).unwrap_or_else(|| "—".into());
        let retry = if admin && matches!(d.status, Status::Failed | Status::Succeeded | Status::Pending) {
            format!(
                r#"<form method="post" action="/settings/deliveries/{id}/retry">{csrf}<button type="submit" class="secondary" aria-label="Retry delivery {id}">Retry</button></form>"#,
                id = esc(&d.id),
                csrf = csrf_field(&signed.0.csrf)
            )
        } else {
            String::new()
        };
        rows.push_str(&format!(
            r#"<tr><td><a href="/settings/deliveries/{id}">{created}</a></td><td>{action}</td><td>{status}</td><td>{n}</td><td>{last}</td><td>{retry}</td></tr>"#,
            id = esc(&d.id),
            created = when(&d.created_at),
            action = esc(&d.action),
            status = super::status::delivery_status(d),
            n = d.attempts.len(),
            last = esc(&last),
        ));
    }
    let table = if rows.is_empty() {
        "<p>No deliveries match.</p>".to_owned()
    } else {
        format!(
            r#"<div class="table-wrap"><table><thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last attempt</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>{rows}</tbody></table></div>"#
        )
    };
    let mut pager = String::new();
    if view.cursor.is_some() {
        pager.push_str(&format!(r#"<a href="{}">Newest</a>"#, esc(&view.link(&w.id, None))));
    }
    if let Some(next) = &next {
        pager.push_str(&format!(r#"<a href="{}" rel="next">Older deliveries</a>"#, esc(&view.link(&w.id, Some(next)))));
    }
    let bulk = if admin {
        let day_ago = crate::time::format_millis(crate::time::now_millis().saturating_sub(24 * 3_600_000));
        format!(
            r#"<form method="post" action="/settings/webhooks/{id}/retry_failed" class="filters">{csrf}
<div><label for="retry-since">Retry every failed delivery created since (UTC)</label><input id="retry-since" name="since" type="datetime-local" step="1" value="{since}"></div>
<div><button type="submit">Retry failed</button></div></form>"#,
            id = esc(&w.id),
            csrf = csrf_field(&signed.0.csrf),
            since = esc(&day_ago[..19]),
        )
    } else {
        String::new()
    };
    format!(
        r#"<section id="deliveries" aria-labelledby="deliveries-title"><h2 id="deliveries-title">Deliveries</h2>{search}{filters}{table}<p class="pager">{pager}</p>{bulk}</section>"#,
        filters = filter_form(w, &view),
        search = super::search::form(""),
    )
}

/// A `since` from the form: `datetime-local` text (`2026-11-23T10:00` or with seconds),
/// taken as UTC, or an RFC 3339 timestamp.
pub(super) fn since_rfc3339(text: &str) -> Option<String> {
    let text = text.trim();
    if crate::time::parse_rfc3339(text).is_some() {
        return Some(text.to_owned());
    }
    let full = match text.len() {
        16 => format!("{text}:00.000Z"),
        19 => format!("{text}.000Z"),
        _ => return None,
    };
    crate::time::parse_rfc3339(&full).map(|_| full)
}

/// `POST /settings/webhooks/{id}/retry_failed` with `since`.
pub(super) async fn retry_failed(
    State(deliveries): State<Arc<Deliveries>>,
    Id(id): Id,
    Change(signed, form): Change,
) -> Response {
    let Some(since) = form.get("since").and_then(since_rfc3339) else {
        return html::see_other(&format!("/settings/webhooks/{id}?notice={}#deliveries", Notice::SinceInvalid.code()));
    };
    let mut body = Map::new();
    body.insert("since".into(), json!(since));
    let notice = match deliveries.retry_failed(&signed.0.org_id, &id, body).await {
        Ok(n) => {
            return html::see_other(&format!(
                "/settings/webhooks/{id}?notice={}&queued={n}#deliveries",
                Notice::RetriedFailed.code()
            ));
        }
        Err(RetryError::WebhookNotFound) => {
            return plain(axum::http::StatusCode::NOT_FOUND, "No such webhook.");
        }
        Err(RetryError::Inactive) => Notice::RetryInactive,
        Err(RetryError::Store(_)) => return store_down(),
        Err(_) => Notice::SinceInvalid,
    };
    html::see_other(&format!("/settings/webhooks/{id}?notice={}#deliveries", notice.code()))
}

/// The count of a "retried failed" notice (`queued`, digits only).
pub(super) fn queued(query: &Query) -> Option<u32> {
    query.get("queued").and_then(|n| n.parse().ok())
}
