//! Finding a delivery by its id, or an event and its deliveries by the event's id
//! (`GET /settings/search?q=…`), within the organisation only.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::html::{self, badge, esc, store_down};
use super::pages::Pages;
use super::session::Signed;
use super::when::when;
use crate::domain::deliveries::RetryError;
use crate::domain::events::Events;
use crate::domain::views::WebhookView as Webhook;
use crate::web::Query;

/// Whether a search for `q` names `w`: its name or URL holds it, in any case (an empty `q`
/// names every webhook).
pub(super) fn names(w: &Webhook, q: &str) -> bool {
    let q = q.to_lowercase();
    q.is_empty() || w.name.to_lowercase().contains(&q) || w.url.to_lowercase().contains(&q)
}

/// To the search's answer for `q` (an id, or text no webhook's name or URL holds).
pub(super) fn redirect(q: &str) -> Response {
    let q = serde_urlencoded::to_string([("q", q)]).unwrap_or_default();
    html::see_other(&format!("/settings/search?{q}"))
}

/// The search box (`q`: what was searched for).
pub(super) fn form(q: &str) -> String {
    format!(
        r#"<form method="get" action="/settings/search" class="search" role="search">
<div><label for="search-q">Find a delivery or an event</label><input id="search-q" name="q" type="search" value="{q}" placeholder="dlv_… or an event id" spellcheck="false" autocomplete="off"></div>
<div><button type="submit" class="secondary">Find</button></div></form>"#,
        q = esc(q),
    )
}

/// `GET /settings/search?q=`: a delivery id goes to its page, an event id to its deliveries.
pub(super) async fn search(
    State(doors): State<Pages>,
    State(events): State<Arc<Events>>,
    signed: Signed,
    query: Query,
) -> Response {
    let q = query.get("q").unwrap_or("").trim();
    if q.is_empty() {
        return html::see_other("/settings/webhooks");
    }
    let org_id = &signed.0.org_id;
    if q.starts_with("dlv_") {
        return match doors.deliveries.find(org_id, q).await {
            Ok(d) => html::see_other(&format!("/settings/deliveries/{}", d.id)),
            Err(RetryError::NotFound) => nothing(&signed, q),
            Err(_) => store_down(),
        };
    }
    let event = match events.lookup(org_id, q).await {
        Ok(Some(event)) => event,
        Ok(None) => return nothing(&signed, q),
        Err(_) => return store_down(),
    };
    let names: std::collections::HashMap<String, String> =
        doors.webhooks.all(org_id).await.unwrap_or_default().into_iter().map(|w| (w.id, w.name)).collect();
    let rows: String = event
        .deliveries
        .iter()
        .map(|d| {
            format!(
                r#"<tr><td><a href="/settings/deliveries/{id}">{id}</a></td><td>{webhook}</td><td>{status}</td></tr>"#,
                id = esc(&d.id),
                webhook = esc(names.get(&d.webhook_id).unwrap_or(&d.webhook_id)),
                status = badge(d.status.as_str()),
            )
        })
        .collect();
    let table = if rows.is_empty() {
        "<p>No webhook was sent this event.</p>".to_owned()
    } else {
        format!(
            r#"<div class="table-wrap"><table><thead><tr><th scope="col">Delivery</th><th scope="col">Webhook</th><th scope="col">Status</th></tr></thead><tbody>{rows}</tbody></table></div>"#
        )
    };
    let body = format!(
        r#"{form}<h1>Event <code>{id}</code></h1><dl><dt>Event</dt><dd>{action}</dd><dt>Created</dt><dd>{created}</dd></dl><h2>Deliveries</h2>{table}"#,
        form = form(q),
        id = esc(&event.id),
        action = esc(&event.action),
        created = when(&event.created_at),
    );
    html::page(StatusCode::OK, "Event", Some(&signed.viewer()), &body)
}

fn nothing(signed: &Signed, q: &str) -> Response {
    let body = format!(
        r#"{}<h1>Nothing found</h1><p>No delivery or event of this organisation has that id (or it is older than what is kept).</p><p><a href="/settings/webhooks">Back to webhooks</a></p>"#,
        form(q)
    );
    html::page(StatusCode::NOT_FOUND, "Nothing found", Some(&signed.viewer()), &body)
}
