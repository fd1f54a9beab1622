//! A webhook's health at a glance, for the person on call and for an operator's customer: one
//! line that starts with a word (`Healthy`, `Failing`, `Paused`, `Off`, `Waiting`) and says
//! why and since when, and the last 24 hours as a chart (`chart`).

use serde_json::Value;

use super::chart;
use super::html::esc;
use super::pages::Pages;
use super::when::when;
use crate::domain::StoreError;
use crate::domain::deliveries::{Filter, Hourly, Status};
use crate::domain::views::{EndpointState, WebhookView as Webhook};

/// Most index entries read to find a webhook's latest delivery.
const SCAN: usize = 100;

/// What the list and the webhook's page show.
#[derive(Debug, Default)]
pub(super) struct Health {
    pub(super) last: Option<Last>,
    /// Failed attempts in a row since the last success.
    pub(super) streak: u32,
}

/// The latest delivery.
#[derive(Debug)]
pub(super) struct Last {
    pub(super) status: Status,
    pub(super) at: String,
    /// Its latest attempt in words (`HTTP 500`, `connection failed: …`), if one was made.
    pub(super) attempt: Option<String>,
    /// That attempt's failure explained, if it failed.
    pub(super) explained: Option<super::failures::Explained>,
}

/// An attempt (`deliveries::attempt_json`, as the API shows it) in words.
pub(super) fn attempt_words(attempt: &Value) -> String {
    match (attempt["status_code"].as_u64(), attempt["error"].as_str()) {
        (Some(code), _) => format!("HTTP {code}"),
        (None, Some(error)) => error.to_owned(),
        (None, None) => "no response".to_owned(),
    }
}

/// The health of one webhook.
pub(super) async fn of(doors: &Pages, org_id: &str, webhook_id: &str) -> Result<Health, StoreError> {
    let filter = Filter { webhook: Some(webhook_id), ..Filter::default() };
    let (latest, _) = doors.deliveries.list(org_id, filter, None, 1, SCAN).await?;
    let streak = doors.webhooks.failure_streak(org_id, webhook_id).await?;
    let last = latest.first().map(|d| Last {
        status: d.status,
        at: d.updated_at.clone(),
        attempt: d.attempts.last().map(attempt_words),
        explained: d.attempts.last().and_then(super::failures::explain),
    });
    Ok(Health { last, streak })
}

/// The last 24 hours of each of `webhooks` (empty charts when they cannot be read).
pub(super) async fn hourly(doors: &Pages, org_id: &str, webhooks: &[Webhook]) -> Vec<Hourly> {
    let ids: Vec<&str> = webhooks.iter().map(|w| w.id.as_str()).collect();
    let now = crate::time::now_millis();
    doors
        .deliveries
        .hourly(org_id, &ids)
        .await
        .unwrap_or_else(|_| ids.iter().map(|_| Hourly::none_until(now)).collect())
}

/// The chart and its totals in words.
pub(super) fn day_html(hourly: &Hourly, small: bool) -> String {
    format!(
        r#"<span class="day">{}<span class="totals">{}</span></span>"#,
        chart::chart(hourly, small),
        esc(&chart::totals(hourly))
    )
}

/// The health line: a word, then why and since when.
pub(super) fn line(w: &Webhook, health: &Health) -> String {
    let (class, word, text) = words(w, health);
    format!(r#"<p class="health {class}"><strong>{word}</strong> — {text}</p>"#)
}

/// How the list's health filter names a webhook's health: `healthy`, `waiting` (no delivery
/// yet), or `failing` (failing, paused, switched off, or its last delivery failed).
pub(super) fn kind(w: &Webhook, health: &Health) -> &'static str {
    match words(w, health).1 {
        "Healthy" => "healthy",
        "Waiting" => "waiting",
        _ => "failing",
    }
}

fn words(w: &Webhook, health: &Health) -> (&'static str, &'static str, String) {
    let last_attempt = || {
        health
            .last
            .as_ref()
            .and_then(|l| l.attempt.as_ref())
            .map(|a| format!(" (last: {})", esc(a)))
            .unwrap_or_default()
    };
    if !w.active {
        let why = match w.deactivation_reason.as_deref() {
            Some("failing") => "switched off because it kept failing",
            Some("gone") => "switched off: the endpoint answered 410 Gone",
            Some(_) | None => "deactivated by hand",
        };
        let since = w.deactivated_at.as_deref().map(when).unwrap_or_default();
        return ("bad", "Off", format!("{why} {since}; it receives no events until it is reactivated."));
    }
    let e = &w.endpoint;
    let reason = e.endpoint_state_reason.as_deref().map(|r| format!(" ({})", esc(r))).unwrap_or_default();
    match e.endpoint_state {
        EndpointState::Paused => {
            let until = e.paused_until.as_deref().map(when).unwrap_or_default();
            return ("warn", "Paused", format!("the endpoint asked for a pause{reason}; next attempt {until}."));
        }
        EndpointState::Probing => {
            let since = e.endpoint_state_since.as_deref().map(when).unwrap_or_default();
            let n = match health.streak {
                0 | 1 => "attempts are failing".to_owned(),
                n => format!("{n} failed attempts in a row"),
            };
            return (
                "bad",
                "Failing",
                format!("{n} since {since}{reason}; probing: one delivery at a time until one succeeds."),
            );
        }
        EndpointState::Healthy => {}
    }
    if health.streak > 0 {
        return ("bad", "Failing", format!("{} failed attempts in a row{}.", health.streak, last_attempt()));
    }
    match &health.last {
        None => ("muted", "Waiting", "no deliveries yet.".to_owned()),
        Some(last) => {
            let at = when(&last.at);
            match last.status {
                Status::Succeeded => ("ok", "Healthy", format!("the last delivery succeeded {at}.")),
                Status::Failed => ("bad", "Attention", format!("the last delivery failed {at}{}.", last_attempt())),
                Status::Pending => ("ok", "Healthy", format!("the last delivery is on its way ({at}).")),
                Status::Filtered | Status::Cancelled => {
                    ("ok", "Healthy", format!("the last delivery was {} {at}.", last.status.as_str()))
                }
            }
        }
    }
}
