//! "Send test event" on a webhook's page (contract §9): an example event of one of its
//! actions, to it alone, through the same domain call as `POST /api/v2/webhooks/{id}/test`,
//! and the endpoint's or broker's answer shown: a connection test.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, json};

use super::html::{self, Notice, csrf_field, esc, plain, store_down};
use super::session::{Change, Id, Signed};
use crate::domain::deliveries::Deliveries;
use crate::domain::events::Events;
use crate::domain::events::test_event::TestEventError;
use crate::domain::views::WebhookView as Webhook;

/// How long sending a test event waits for its first attempt's answer before showing the
/// delivery (which says "being attempted" when it is not in yet).
const ANSWER_WAIT: Duration = Duration::from_secs(3);

/// `POST /settings/webhooks/{id}/test` with `action`: to the test delivery's page, once its
/// first attempt has the endpoint's or broker's answer (or after [`ANSWER_WAIT`]), so that
/// the page shows whether the connection works.
pub(super) async fn send(
    State(events): State<Arc<Events>>,
    State(deliveries): State<Arc<Deliveries>>,
    Id(id): Id,
    Change(signed, form): Change,
) -> Response {
    let mut body = Map::new();
    if let Some(action) = form.get("action").filter(|a| !a.is_empty()) {
        body.insert("action".into(), json!(action));
    }
    let back = |notice: Notice| html::see_other(&format!("/settings/webhooks/{id}?notice={}", notice.code()));
    match events.send_test(&signed.0.org_id, &id, body).await {
        Ok(delivery) => {
            answered(&deliveries, &signed.0.org_id, &delivery).await;
            html::see_other(&format!("/settings/deliveries/{delivery}?notice={}", Notice::TestSent.code()))
        }
        Err(TestEventError::NotFound) => plain(StatusCode::NOT_FOUND, "No such webhook."),
        Err(TestEventError::Inactive) => back(Notice::RetryInactive),
        Err(TestEventError::Invalid(_)) => back(Notice::TestNotSelected),
        Err(TestEventError::TooMany { .. }) => back(Notice::TestTooMany),
        Err(TestEventError::Store(_)) => store_down(),
    }
}

/// Waits (a bounded number of looks) until the delivery has an attempt.
async fn answered(deliveries: &Deliveries, org_id: &str, id: &str) {
    let started = tokio::time::Instant::now();
    while started.elapsed() < ANSWER_WAIT {
        match deliveries.find(org_id, id).await {
            Ok(d) if !d.attempts.is_empty() => return,
            Ok(_) => tokio::time::sleep(Duration::from_millis(150)).await,
            Err(_) => return,
        }
    }
}

/// The form on the webhook's page (admins, an active webhook).
pub(super) fn form(signed: &Signed, w: &Webhook) -> String {
    if !signed.0.admin || !w.active {
        return String::new();
    }
    let options: String =
        w.subscribed_actions.iter().map(|a| format!(r#"<option value="{a}">{a}</option>"#, a = esc(a))).collect();
    format!(
        r#"<form method="post" action="/settings/webhooks/{id}/test" class="test-event">{csrf}<label for="test-action">Test the connection: send an example event and see the answer</label><span class="row"><select id="test-action" name="action">{options}</select> <button type="submit" class="secondary">Send test event</button></span></form>"#,
        id = esc(&w.id),
        csrf = csrf_field(&signed.0.csrf),
    )
}
