//! The event catalogue as a customer reads it: `GET /settings/events` lists every action by
//! category with the record it carries (its subject type and snapshot key), each under an
//! anchor of its own name (`#work_order_created`) that a webhook's page links to. This is the
//! place each event's schema and example go when Weir publishes them.

use axum::http::StatusCode;
use axum::response::Response;

use super::html::{self, esc};
use super::session::Signed;
use crate::catalog::{self, CATEGORIES};
use crate::domain::views::WebhookView as Webhook;

/// What an action's deliveries carry, in words.
fn carries(action: &str) -> String {
    match catalog::snapshot_key_for(action) {
        Some(key) => {
            format!("a <code>{}</code> under <code>data.{}</code>", esc(&catalog::subject_type(key)), esc(key))
        }
        None => "the record it is about, under its own snapshot key".to_owned(),
    }
}

/// `GET /settings/events`
pub(super) async fn catalogue(signed: Signed) -> Response {
    let mut body = String::from(
        r#"<p class="crumbs"><a href="/settings/webhooks">Webhooks</a></p><h1>Event catalogue</h1><p>Every event a webhook can subscribe to. Each delivery is a JSON envelope with the event's <code>action</code>, <code>id</code>, <code>created_at</code>, its creator, and the record it is about.</p>"#,
    );
    for category in CATEGORIES {
        let rows: String = category
            .events
            .iter()
            .map(|a| format!(r#"<tr id="{a}"><td><code>{a}</code></td><td>{}</td></tr>"#, carries(a), a = esc(a)))
            .collect();
        body.push_str(&format!(
            r#"<h2>{}</h2><div class="table-wrap"><table><thead><tr><th scope="col">Event</th><th scope="col">Carries</th></tr></thead><tbody>{rows}</tbody></table></div>"#,
            esc(category.name)
        ));
    }
    html::page(StatusCode::OK, "Event catalogue", Some(&signed.viewer()), &body)
}

/// The events a webhook receives, each linked to its entry in the catalogue.
pub(super) fn subscribed(w: &Webhook) -> String {
    let items: String = w
        .subscribed_actions
        .iter()
        .map(|a| format!(r#"<li><a href="/settings/events#{a}"><code>{a}</code></a></li>"#, a = esc(a)))
        .collect();
    format!(
        r#"<section id="event-catalogue" aria-labelledby="events-title"><h2 id="events-title">Events it receives</h2><ul class="events">{items}</ul><p class="muted"><a href="/settings/events">Event catalogue</a>: what each event carries.</p></section>"#
    )
}
