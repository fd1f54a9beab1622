//! The log across webhooks (`GET /settings/deliveries`): every delivery of the organisation,
//! newest first, filtered by status, event, webhook and how recent, and searched by a
//! webhook's name or URL — a delivery's or an event's id goes to its own page (`search`).
//! Pages of 20, the filters kept in the pager's links.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::health::attempt_words;
use super::html::{self, esc, store_down};
use super::pages::Pages;
use super::search::{names, redirect};
use super::session::Signed;
use super::when::when;
use crate::catalog;
use crate::domain::deliveries::{Delivery, Filter, Status};
use crate::domain::views::WebhookView as Webhook;
use crate::web::Query;

/// Deliveries on a page.
const PAGE: usize = 20;
/// Most index entries looked at for a page.
const SCAN: usize = 2000;
/// The windows a page can be narrowed to: parameter, words, milliseconds.
const WINDOWS: [(&str, &str, u64); 3] = [
    ("1h", "the last hour", 3_600_000),
    ("24h", "the last 24 hours", 86_400_000),
    ("7d", "the last 7 days", 604_800_000),
];

/// The page's filters, as read from its query (anything unknown is ignored).
struct Wanted<'a> {
    q: &'a str,
    status: Option<Status>,
    action: Option<&'a str>,
    webhook: Option<&'a str>,
    since: Option<&'static str>,
    cursor: Option<&'a str>,
}

impl<'a> Wanted<'a> {
    fn of(query: &'a Query, doors: &Pages) -> Wanted<'a> {
        Wanted {
            q: query.get("q").unwrap_or("").trim(),
            status: query.get("status").and_then(Status::parse),
            action: query.get("action").filter(|a| catalog::is_known(a)),
            webhook: query.get("webhook").filter(|w| w.starts_with("wh_")),
            since: query.get("since").and_then(|s| WINDOWS.iter().find(|w| w.0 == s)).map(|w| w.0),
            cursor: query.get("cursor").filter(|c| doors.deliveries.valid_cursor(c)),
        }
    }

    /// The page's address with these filters and `cursor`.
    fn link(&self, cursor: Option<&str>) -> String {
        let status = self.status.map(Status::as_str);
        let pairs = [
            ("q", Some(self.q).filter(|q| !q.is_empty())),
            ("status", status),
            ("action", self.action),
            ("webhook", self.webhook),
            ("since", self.since),
            ("cursor", cursor),
        ];
        let params: Vec<(&str, &str)> = pairs.iter().filter_map(|(k, v)| v.map(|v| (*k, v))).collect();
        let query = serde_urlencoded::to_string(&params).unwrap_or_default();
        if query.is_empty() { "/settings/deliveries".to_owned() } else { format!("/settings/deliveries?{query}") }
    }

    /// The oldest creation time shown (milliseconds), if a window is chosen.
    fn since_ms(&self) -> Option<u64> {
        let window = WINDOWS.iter().find(|w| Some(w.0) == self.since)?;
        Some(crate::time::now_millis().saturating_sub(window.2))
    }
}

/// `GET /settings/deliveries`
pub(super) async fn log(State(doors): State<Pages>, signed: Signed, query: Query) -> Response {
    let org_id = &signed.0.org_id;
    let wanted = Wanted::of(&query, &doors);
    let Ok(webhooks) = doors.webhooks.all(org_id).await else { return store_down() };
    let searched: Vec<&Webhook> = webhooks.iter().filter(|w| names(w, wanted.q)).collect();
    // An id, or text no webhook's name or URL holds: the search finds the delivery or event.
    if wanted.q.starts_with("dlv_") || (!wanted.q.is_empty() && searched.is_empty()) {
        return redirect(wanted.q);
    }
    let one = match (wanted.webhook, searched.as_slice()) {
        (Some(id), _) => Some(id),
        (None, [only]) if !wanted.q.is_empty() => Some(only.id.as_str()),
        _ => None,
    };
    let filter = Filter { status: wanted.status, action: wanted.action, webhook: one };
    let Ok((deliveries, next)) = doors.deliveries.list(org_id, filter, wanted.cursor, PAGE, SCAN).await else {
        return store_down();
    };
    let since = wanted.since_ms();
    let recent =
        |d: &Delivery| since.is_none_or(|s| crate::time::parse_rfc3339(&d.created_at).is_some_and(|at| at >= s));
    let shown: Vec<&Delivery> = deliveries
        .iter()
        .filter(|d| wanted.q.is_empty() || searched.iter().any(|w| w.id == d.webhook_id))
        .filter(|d| recent(d))
        .collect();
    // Past the window: no older page.
    let next = next.filter(|_| deliveries.last().is_none_or(recent));
    let body = format!(
        "{}<h1>Deliveries</h1>{}{}{}",
        super::layout::section_nav("deliveries"),
        filters(&wanted, &webhooks),
        table(&shown, &webhooks),
        pager(&wanted, next.as_deref()),
    );
    html::page(StatusCode::OK, "Deliveries", Some(&signed.viewer()), &body)
}

fn table(shown: &[&Delivery], webhooks: &[Webhook]) -> String {
    if shown.is_empty() {
        return r#"<p class="empty">No deliveries match. Widen the filters, or send a test event from a webhook's page.</p>"#
            .to_owned();
    }
    let name = |id: &str| webhooks.iter().find(|w| w.id == id).map_or(id.to_owned(), |w| w.name.clone());
    let rows: String = shown
        .iter()
        .map(|d| {
            format!(
                r#"<tr><td><a href="/settings/deliveries/{id}">{created}</a></td><td><a href="/settings/webhooks/{wh}">{name}</a></td><td data-label="Event">{action}</td><td>{status}</td><td data-label="Attempts">{n}</td><td data-label="Last attempt">{last}</td></tr>"#,
                id = esc(&d.id),
                created = when(&d.created_at),
                wh = esc(&d.webhook_id),
                name = esc(&name(&d.webhook_id)),
                action = esc(&d.action),
                status = super::status::delivery_status(d),
                n = d.attempts.len(),
                last = esc(&d.attempts.last().map(attempt_words).unwrap_or_else(|| "—".into())),
            )
        })
        .collect();
    format!(
        r#"<div class="table-wrap"><table class="cards"><thead><tr><th scope="col">Created</th><th scope="col">Webhook</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last attempt</th></tr></thead><tbody>{rows}</tbody></table></div>"#
    )
}

/// The filters' form, showing what is chosen.
fn filters(wanted: &Wanted<'_>, webhooks: &[Webhook]) -> String {
    let option = |value: &str, words: &str, on: bool| {
        format!(r#"<option value="{}"{}>{}</option>"#, esc(value), if on { " selected" } else { "" }, esc(words))
    };
    let statuses: String = [Status::Pending, Status::Succeeded, Status::Failed, Status::Filtered, Status::Cancelled]
        .iter()
        .map(|s| option(s.as_str(), s.as_str(), wanted.status == Some(*s)))
        .collect();
    let actions: String = catalog::actions().map(|a| option(a, a, wanted.action == Some(a))).collect();
    let hooks: String =
        webhooks.iter().map(|w| option(&w.id, &w.name, wanted.webhook == Some(w.id.as_str()))).collect();
    let windows: String = WINDOWS.iter().map(|(v, words, _)| option(v, words, wanted.since == Some(*v))).collect();
    format!(
        r#"<form method="get" action="/settings/deliveries" class="filters" role="search">
<div class="grow"><label for="log-q">Search</label><input id="log-q" name="q" type="search" value="{q}" placeholder="Webhook name or URL, a dlv_… or event id" spellcheck="false" autocomplete="off"></div>
<div><label for="log-status">Status</label><select id="log-status" name="status"><option value="">any</option>{statuses}</select></div>
<div><label for="log-action">Event</label><select id="log-action" name="action"><option value="">any</option>{actions}</select></div>
<div><label for="log-webhook">Webhook</label><select id="log-webhook" name="webhook"><option value="">any</option>{hooks}</select></div>
<div><label for="log-since">Created</label><select id="log-since" name="since"><option value="">any time</option>{windows}</select></div>
<div><button type="submit" class="secondary">Show</button></div></form>"#,
        q = esc(wanted.q),
    )
}

fn pager(wanted: &Wanted<'_>, next: Option<&str>) -> String {
    let mut links = String::new();
    if wanted.cursor.is_some() {
        links.push_str(&format!(r#"<a href="{}">Newest</a>"#, esc(&wanted.link(None))));
    }
    if let Some(next) = next {
        links.push_str(&format!(r#"<a href="{}" rel="next">Older deliveries</a>"#, esc(&wanted.link(Some(next)))));
    }
    format!(r#"<p class="pager">{links}</p>"#)
}
