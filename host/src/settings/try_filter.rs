//! "Try it on a recent event" beside a webhook form's filter: the filter as typed is tried
//! on the organisation's latest events of the chosen actions (the same evaluation as
//! `POST /api/v2/filters/test`), and the form comes back as it was, with the verdicts under
//! the filter. Nothing is saved.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, json};

use super::html::{self, esc};
use super::pages::Pages;
use super::session::{Change, Form, Id};
use super::webhook_forms::{FormValues, webhook_form};
use super::webhooks::{Shown, render_show, webhook};
use super::when::when;
use crate::domain::event_log::Bounds;
use crate::domain::events::Events;
use crate::domain::filtering::TestError;
use crate::web::Query;

/// Events tried at most.
const TRIED: usize = 3;
/// Latest events looked through for ones of the chosen actions.
const LOOKED: usize = 50;

/// `POST /settings/webhooks/{id}/try_filter`: the webhook's page with the form as sent.
pub(super) async fn on_webhook(
    State(doors): State<Pages>,
    State(events): State<Arc<Events>>,
    Id(id): Id,
    Change(signed, form): Change,
) -> Response {
    let w = match webhook(&doors.webhooks, &signed, &id).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let tried = tried(&events, &signed.0.org_id, &form).await;
    render_show(
        &doors,
        &signed,
        &w,
        Shown { edited: Some(&form), tried: &tried, ..Shown::default() },
        &Query::default(),
    )
    .await
}

/// `POST /settings/webhooks/try_filter`: the new webhook's form as sent.
pub(super) async fn on_new(
    State(events): State<Arc<Events>>,
    State(sources): State<Arc<crate::domain::sources::Sources>>,
    Change(signed, form): Change,
) -> Response {
    let values = FormValues {
        tried: tried(&events, &signed.0.org_id, &form).await,
        sources: super::sources::choices(&sources, &signed.0.org_id).await,
        ..FormValues::sent(&form)
    };
    let body = format!(
        "<h1>New webhook</h1>{}",
        webhook_form("/settings/webhooks", &signed.0.csrf, &values, "Create webhook")
    );
    html::page(StatusCode::OK, "New webhook", Some(&signed.viewer()), &body)
}

/// The verdicts of the form's filter on the latest events of its actions, as HTML.
pub(super) async fn tried(events: &Events, org_id: &str, form: &Form) -> String {
    let filter = form.get("filter").unwrap_or("").trim();
    if filter.is_empty() {
        return result("ok", "An empty filter lets every event of the chosen actions through.", "");
    }
    let actions = form.all("subscribed_actions");
    let bounds = Bounds { since_ms: None, until_ms: None, action: None };
    let Ok((logged, _)) = events.log(org_id, bounds, None, LOOKED).await else {
        return result("error", "The events cannot be read right now; try again shortly.", "");
    };
    let recent: Vec<_> =
        logged.iter().filter(|e| actions.is_empty() || actions.contains(&e.action.as_str())).take(TRIED).collect();
    if recent.is_empty() {
        return result("error", "No recent event of the chosen actions to try it on: publish one first.", "");
    }
    let mut items = String::new();
    for event in recent {
        let mut body = Map::new();
        body.insert("filter".into(), json!(filter));
        body.insert("event_id".into(), json!(event.id));
        let verdict = match events.test_filter(org_id, body).await {
            Ok(t) if t.matched => "<strong>delivered</strong>".to_owned(),
            Ok(t) => match t.error {
                Some(why) => format!("<strong>not delivered</strong>: the filter failed ({})", esc(&why)),
                None => "<strong>not delivered</strong>".to_owned(),
            },
            Err(TestError::Invalid(invalid)) => {
                let why: Vec<String> = invalid.0.iter().map(|e| e.message.clone()).collect();
                return result("error", &format!("The filter is not valid: {}", why.join("; ")), "");
            }
            Err(TestError::UnknownEvent(_)) => "expired meanwhile".to_owned(),
            Err(TestError::Store(_)) => return result("error", "The events cannot be read right now.", ""),
        };
        items.push_str(&format!(
            "<li><code>{}</code> {} {}: {verdict}</li>",
            esc(&event.id),
            esc(&event.action),
            when(&event.created_at)
        ));
    }
    result("ok", "Tried on the latest events of the chosen actions:", &format!("<ul>{items}</ul>"))
}

fn result(kind: &str, text: &str, list: &str) -> String {
    format!(r#"<div class="tried notice {kind}" role="status" id="filter-tried"><p>{}</p>{list}</div>"#, esc(text))
}
