//! A replay's window, as the request gives it: `since` and `until`, checked against the
//! event retention.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::domain::Invalid;
use crate::domain::fields::Fields;

/// `[since, until)` from the request, checked against the event retention (contract §7).
pub(super) fn of(body: Map<String, Value>, now: u64, event_retention: Duration) -> Result<(u64, u64), Invalid> {
    let mut fields = Fields::new(body);
    let since = fields.required_string("since");
    // `null` is the same as leaving it out: up to now.
    let until = match fields.value("until") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        Some(_) => {
            fields.error("until", "must be a string (an RFC 3339 UTC timestamp) or null");
            None
        }
    };
    let format = "must be an RFC 3339 UTC timestamp such as 2026-11-22T11:00:38.123Z";
    let since_ms = since.as_deref().and_then(|s| match crate::time::parse_rfc3339(s) {
        None => {
            fields.error("since", format);
            None
        }
        Some(ms) if ms > now => {
            fields.error("since", "must not be in the future");
            None
        }
        Some(_) if event_retention.is_zero() => {
            fields.error("since", "is before the event retention: the event log is off (WEIR_EVENT_RETENTION=0s)");
            None
        }
        Some(ms) if ms < now.saturating_sub(event_retention.as_millis() as u64) => {
            fields.error(
                "since",
                format!(
                    "is older than the event retention ({}, the organisation's plan's within WEIR_EVENT_RETENTION): earlier events are not kept",
                    crate::config::duration::format(event_retention)
                ),
            );
            None
        }
        Some(ms) => Some(ms),
    });
    let until_ms = match until.as_deref().map(crate::time::parse_rfc3339) {
        None => Some(now),
        Some(None) => {
            fields.error("until", format);
            None
        }
        Some(Some(ms)) if since_ms.is_some_and(|since| ms <= since) => {
            fields.error("until", "must be after since");
            None
        }
        // Nothing was accepted after now yet.
        Some(Some(ms)) => Some(ms.min(now)),
    };
    fields.finish()?;
    match (since_ms, until_ms) {
        (Some(since), Some(until)) => Ok((since, until)),
        _ => Err(Invalid::field("since", "is required")),
    }
}
