//! The event log (`GET /api/v2/events`): the organisation's events newest first, whether or
//! not anything subscribed, for as long as `WEIR_EVENT_RETENTION` keeps them.

use serde::{Deserialize, Serialize};

use super::moved::Moved;
use crate::store::events::log::{EventLog, Window};
use crate::store::queue::cursor::Cursor;
use crate::store::{Keys, StoreError};

/// Most log entries one request looks at before answering with a cursor (a filter that
/// keeps few events may answer a short page).
pub(crate) const SCAN_LIMIT: usize = 5000;

/// How far past now the default end of a window reaches: events accepted by a process whose
/// clock runs a little ahead are listed too.
const CLOCK_SKEW_MS: u64 = 60_000;

/// An event as the log lists it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct LoggedEvent {
    pub id: String,
    pub action: String,
    pub created_at: String,
    /// When Weir accepted it: replay windows (`POST /webhooks/{id}/replay`) are in this time.
    pub accepted_at: String,
    pub subject: Subject,
    /// The source whose request it is (contract §10); absent for a published event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// What an event is about.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct Subject {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// What the log reads of an envelope.
#[derive(Deserialize)]
struct Head {
    id: String,
    action: String,
    created_at: String,
    subject: Subject,
    #[serde(default)]
    source: Option<String>,
}

/// A listing's bounds: acceptance times (ms), each `None` for the default.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bounds<'a> {
    pub since_ms: Option<u64>,
    pub until_ms: Option<u64>,
    pub action: Option<&'a str>,
}

/// Whether `cursor` is one a listing of this data set gave out.
pub(super) fn valid_cursor(keys: &Keys, cursor: &str) -> bool {
    let newest = crate::store::core::keys::hour_of(crate::time::now_millis() + CLOCK_SKEW_MS);
    Cursor::parse(cursor, keys.partition_count(), newest).is_some()
}

/// The event log as a listing reads it: Redis, what moved, and how far back it reaches.
#[derive(Debug)]
pub(super) struct Log<'a> {
    pub log: &'a EventLog,
    pub moved: &'a Moved,
    pub retention: std::time::Duration,
}

impl Log<'_> {
    /// A page of the organisation's event log, newest first, from `cursor`.
    pub(super) async fn list(
        &self,
        org_id: &str,
        bounds: Bounds<'_>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<LoggedEvent>, Option<String>), StoreError> {
        list(self, org_id, bounds, cursor, limit).await
    }
}

async fn list(
    log: &Log<'_>,
    org_id: &str,
    bounds: Bounds<'_>,
    cursor: Option<&str>,
    limit: usize,
) -> Result<(Vec<LoggedEvent>, Option<String>), StoreError> {
    let now = crate::time::now_millis();
    let retention = log.retention.as_millis() as u64;
    if retention == 0 {
        return Ok((Vec::new(), None));
    }
    let oldest = now.saturating_sub(retention);
    let window = Window {
        since_ms: bounds.since_ms.unwrap_or(0).max(oldest),
        // Nothing was accepted in the future: a later end reads no more (and walks no hours).
        until_ms: bounds.until_ms.unwrap_or(u64::MAX).min(now + CLOCK_SKEW_MS),
        action: bounds.action,
    };
    if window.until_ms <= window.since_ms {
        return Ok((Vec::new(), None));
    }
    let reads = log.moved.reads();
    let (entries, next) =
        log.log.list_event_log(org_id, window, cursor, (limit, SCAN_LIMIT), reads.moved_indexes()).await?;
    let (events, _) = reads.logged_events(&entries).await?;
    let listed = entries
        .iter()
        .zip(events)
        .filter_map(|((_, entry), event)| {
            let event = event?;
            let head: Head = serde_json::from_str(&event.envelope).ok()?;
            Some(LoggedEvent {
                id: head.id,
                action: head.action,
                created_at: head.created_at,
                accepted_at: crate::time::format_millis(entry.accepted_ms),
                subject: head.subject,
                source: head.source,
            })
        })
        .collect();
    Ok((listed, next))
}
