//! A webhook's health at a glance, for the person on call: the last delivery's outcome and
//! time, the failure streak, and how many of the last 24 hours' deliveries succeeded (read
//! from the latest [`SAMPLE`] deliveries), drawn as a small server-rendered SVG bar.

use serde_json::Value;

use super::html::{badge, esc};
use super::pages::Pages;
use crate::domain::StoreError;
use crate::domain::deliveries::{Delivery, Filter, Status};

/// Most deliveries read per webhook for the 24-hour share.
pub(super) const SAMPLE: usize = 100;

/// What the list and the webhook's page show.
#[derive(Debug, Default)]
pub(super) struct Health {
    pub(super) last: Option<Last>,
    /// Failed attempts in a row since the last success.
    pub(super) streak: u32,
    pub(super) day: Day,
}

/// The latest delivery.
#[derive(Debug)]
pub(super) struct Last {
    pub(super) status: Status,
    pub(super) at: String,
    /// Its latest attempt in words (`HTTP 500`, `connection failed: …`), if one was made.
    pub(super) attempt: Option<String>,
}

/// Deliveries created in the last 24 hours, by status.
#[derive(Debug, Default)]
pub(super) struct Day {
    pub(super) succeeded: usize,
    pub(super) failed: usize,
    pub(super) pending: usize,
    /// Filtered by a plugin or cancelled.
    pub(super) other: usize,
    /// Whether the sample ran out before 24 hours did (a busy webhook).
    pub(super) capped: bool,
}

impl Day {
    fn total(&self) -> usize {
        self.succeeded + self.failed + self.pending + self.other
    }
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
    let (latest, _) = doors.deliveries.list(org_id, filter, None, SAMPLE, SAMPLE).await?;
    let streak = doors.webhooks.failure_streak(org_id, webhook_id).await?;
    let since = crate::time::now_millis().saturating_sub(24 * 3_600_000);
    let mut day = Day::default();
    let recent: Vec<&Delivery> =
        latest.iter().filter(|d| crate::time::parse_rfc3339(&d.created_at).is_some_and(|at| at >= since)).collect();
    for d in &recent {
        match d.status {
            Status::Succeeded => day.succeeded += 1,
            Status::Failed => day.failed += 1,
            Status::Pending => day.pending += 1,
            Status::Filtered | Status::Cancelled => day.other += 1,
        }
    }
    day.capped = recent.len() == SAMPLE;
    let last = latest.first().map(|d| Last {
        status: d.status,
        at: d.updated_at.clone(),
        attempt: d.attempts.last().map(attempt_words),
    });
    Ok(Health { last, streak, day })
}

/// The last delivery: status, time and latest attempt.
pub(super) fn last_html(health: &Health) -> String {
    match &health.last {
        None => r#"<span class="muted">none yet</span>"#.to_owned(),
        Some(last) => format!(
            r#"{} <time>{}</time>{}"#,
            badge(last.status.as_str()),
            esc(&last.at),
            last.attempt.as_ref().map(|a| format!(r#"<br><span class="muted">{}</span>"#, esc(a))).unwrap_or_default()
        ),
    }
}

/// The failure streak in words.
pub(super) fn streak_html(health: &Health) -> String {
    match health.streak {
        0 => r#"<span class="muted">none</span>"#.to_owned(),
        1 => "1 failed attempt".to_owned(),
        n => format!("{n} failed attempts in a row"),
    }
}

/// The last 24 hours: an SVG bar (green succeeded, red failed, grey pending, light other)
/// and the share that succeeded.
pub(super) fn day_html(health: &Health) -> String {
    let day = &health.day;
    let total = day.total();
    if total == 0 {
        return r#"<span class="muted">no deliveries</span>"#.to_owned();
    }
    let mut x = 0.0;
    let mut rects = String::new();
    for (count, class) in [(day.succeeded, "ok"), (day.failed, "bad"), (day.pending, "wait"), (day.other, "other")] {
        if count == 0 {
            continue;
        }
        let width = 100.0 * count as f64 / total as f64;
        rects.push_str(&format!(r#"<rect class="{class}" x="{x:.2}" y="0" width="{width:.2}" height="8"/>"#));
        x += width;
    }
    let share = 100 * day.succeeded / total;
    let of = if day.capped { format!("latest {total}") } else { total.to_string() };
    let label = format!(
        "{share}% of {of} succeeded ({} failed, {} pending, {} filtered or cancelled)",
        day.failed, day.pending, day.other
    );
    format!(
        r#"<span class="day"><svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" width="100" height="8" role="img" aria-label="{label}"><title>{label}</title>{rects}</svg> {share}% of {of}</span>"#,
        label = esc(&label),
    )
}
