//! Timestamps as the contract writes them: RFC 3339, UTC, milliseconds.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
pub fn now_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `2026-11-22T11:00:38.123Z` for a time in milliseconds since the epoch.
pub fn format_millis(millis: u64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(millis);
    humantime::format_rfc3339_millis(t).to_string()
}

/// `2026-11-22`: the UTC day of a time in milliseconds since the epoch.
pub fn format_day(millis: u64) -> String {
    let mut text = format_millis(millis);
    text.truncate(10);
    text
}

/// The current time, formatted.
pub fn now_rfc3339() -> String {
    format_millis(now_millis())
}

/// Parses an RFC 3339 UTC timestamp (`Z` suffix, optional fraction) into milliseconds.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339(text).ok()?;
    t.duration_since(UNIX_EPOCH).ok().map(|d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(1_795_345_238_123), "2026-11-22T11:00:38.123Z");
    }

    #[test]
    fn parses_utc_only() {
        assert_eq!(parse_rfc3339("2026-11-22T11:00:38.123Z"), Some(1_795_345_238_123));
        assert_eq!(parse_rfc3339("2026-11-22T11:00:38Z"), Some(1_795_345_238_000));
        assert_eq!(parse_rfc3339("2026-11-22 11:00"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
