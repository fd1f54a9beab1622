//! A webhook's "Replay" section in Settings > Webhooks: the API's replay (`POST
//! /api/v2/webhooks/{id}/replay`, `crate::domain::replay`) as a form, and how the latest
//! replay went.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde_json::{Map, json};

use super::html::{self, Notice, badge, csrf_field, esc, plain, store_down};
use super::pages::Pages;
use super::session::{Change, Id, Signed};
use super::webhook_deliveries::since_rfc3339;
use crate::domain::replay::{ReplayError, ReplayStatus, Replays};
use crate::domain::views::WebhookView as Webhook;

/// The section: the latest replay, and (for admins) the form.
pub(super) async fn section(doors: &Pages, signed: &Signed, w: &Webhook) -> String {
    let latest = match doors.replays.status(&signed.0.org_id, &w.id).await {
        Ok(Some(r)) if r.state != ReplayStatus::None => format!(
            r#"<p id="replay-status">Latest replay: events accepted from <time>{since}</time> to <time>{until}</time>: {state} {count} deliveries queued{reason}.</p>"#,
            since = esc(r.since.as_deref().unwrap_or_default()),
            until = esc(r.until.as_deref().unwrap_or_default()),
            state = badge(r.state.as_str()),
            count = r.count,
            reason = r.reason.map(|why| format!(" ({})", esc(&why))).unwrap_or_default(),
        ),
        Ok(_) | Err(_) => String::new(),
    };
    let form = if signed.0.admin && doors.replays.event_retention() > std::time::Duration::ZERO {
        let hour_ago = crate::time::format_millis(crate::time::now_millis().saturating_sub(3_600_000));
        format!(
            r#"<form method="post" action="/settings/webhooks/{id}/replay" class="filters">{csrf}
<div><label for="replay-since">Events accepted since (UTC)</label><input id="replay-since" name="since" type="datetime-local" step="1" value="{since}"></div>
<div><label for="replay-until">until (UTC; empty: now)</label><input id="replay-until" name="until" type="datetime-local" step="1"></div>
<div><button type="submit">Replay</button></div></form>"#,
            id = esc(&w.id),
            csrf = csrf_field(&signed.0.csrf),
            since = esc(&hour_ago[..19]),
        )
    } else {
        String::new()
    };
    format!(
        r#"<section id="replay" aria-labelledby="replay-title"><h2 id="replay-title">Replay</h2><p class="muted">Sends every event of the window that this webhook subscribes to and did not receive (events from before it existed or while it was inactive included), and retries its failed deliveries; nothing it received is sent again. Events are kept for {keep}.</p>{latest}{form}</section>"#,
        keep = esc(&crate::config::duration::format(doors.replays.event_retention())),
    )
}

/// `POST /settings/webhooks/{id}/replay` with `since` and `until`.
pub(super) async fn replay(State(replays): State<Arc<Replays>>, Id(id): Id, Change(signed, form): Change) -> Response {
    let mut body = Map::new();
    let until = form.get("until").map(str::trim).filter(|u| !u.is_empty());
    match (form.get("since").and_then(since_rfc3339), until.map(since_rfc3339)) {
        (Some(since), None) => {
            body.insert("since".into(), json!(since));
        }
        (Some(since), Some(Some(until))) => {
            body.insert("since".into(), json!(since));
            body.insert("until".into(), json!(until));
        }
        _ => return back(&id, Notice::ReplayWindowInvalid),
    }
    let notice = match replays.request(&signed.0.org_id, &id, body).await {
        Ok(_) => Notice::Replayed,
        Err(ReplayError::NotFound) => return plain(axum::http::StatusCode::NOT_FOUND, "No such webhook."),
        Err(ReplayError::Inactive) => Notice::RetryInactive,
        Err(ReplayError::Running) => Notice::ReplayRunning,
        Err(ReplayError::Invalid(_)) => Notice::ReplayWindowInvalid,
        Err(ReplayError::Store(_)) => return store_down(),
    };
    back(&id, notice)
}

fn back(id: &str, notice: Notice) -> Response {
    html::see_other(&format!("/settings/webhooks/{id}?notice={}#replay", notice.code()))
}
