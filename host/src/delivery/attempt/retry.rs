//! The retry policy: what an attempt's result means, and when the next attempt is due.
//!
//! Any 2xx is success. `410 Gone` fails the delivery and deactivates the webhook at once.
//! Everything else (3xx included, since redirects are not followed; timeouts; connection
//! errors; a URL that now resolves to a private address) fails the attempt: the next one
//! follows the schedule with ±20% jitter, and a `Retry-After` on 429 or 503 is honoured
//! (never retrying sooner than it asks) up to double the scheduled delay. After the last
//! delay the delivery is `failed`.

use std::time::{Duration, SystemTime};

/// What an attempt produced, as far as the policy cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AttemptResult {
    /// The endpoint answered with this status (and maybe a `Retry-After` header value).
    Status { code: u16, retry_after: Option<String> },
    /// No answer: connection refused, timeout, TLS failure, blocked address…
    NoResponse,
}

/// What happens next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Succeeded,
    RetryIn(Duration),
    Failed,
    Gone,
}

/// Decides what follows attempt number `attempt` (1-based) of a delivery allowed
/// attempts up to place `last_place` of `schedule` (the schedule's end, or where a manual
/// retry stopped it). `jitter` is a number in `[-1, 1]`.
pub(crate) fn next(
    result: &AttemptResult,
    attempt: usize,
    last_place: usize,
    schedule: &[Duration],
    jitter: f64,
) -> Next {
    let retry_after = match result {
        AttemptResult::Status { code: 200..=299, .. } => return Next::Succeeded,
        AttemptResult::Status { code: 410, .. } => return Next::Gone,
        AttemptResult::Status { code: 429 | 503, retry_after } => retry_after.as_deref().and_then(parse_retry_after),
        _ => None,
    };
    if attempt >= last_place || attempt == 0 || attempt > schedule.len() {
        return Next::Failed;
    }
    let scheduled = schedule[attempt - 1];
    let mut delay = scheduled.mul_f64(1.0 + 0.2 * jitter.clamp(-1.0, 1.0));
    if let Some(asked) = retry_after {
        delay = delay.max(asked.min(scheduled * 2));
    }
    Next::RetryIn(delay)
}

/// How long a `429` or `503` with `Retry-After` pauses the whole webhook (contract §7): what
/// it asked for, up to double the delay scheduled after attempt `place` (after the last
/// place, the last delay). `None` for any other answer.
pub(crate) fn pause(result: &AttemptResult, place: usize, schedule: &[Duration]) -> Option<Duration> {
    let AttemptResult::Status { code: 429 | 503, retry_after: Some(value) } = result else { return None };
    let asked = parse_retry_after(value)?;
    let scheduled = schedule.get(place.clamp(1, schedule.len().max(1)) - 1).copied().unwrap_or_default();
    Some(asked.min(scheduled * 2)).filter(|d| !d.is_zero())
}

/// A `Retry-After` value: delay-seconds or an HTTP date.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule() -> Vec<Duration> {
        vec![Duration::from_secs(5), Duration::from_secs(300), Duration::from_secs(1800)]
    }

    fn status(code: u16) -> AttemptResult {
        AttemptResult::Status { code, retry_after: None }
    }

    #[test]
    fn success_gone_and_failure() {
        let s = schedule();
        assert_eq!(next(&status(200), 1, 4, &s, 0.0), Next::Succeeded);
        assert_eq!(next(&status(204), 4, 4, &s, 0.0), Next::Succeeded);
        assert_eq!(next(&status(410), 1, 4, &s, 0.0), Next::Gone);
        assert_eq!(next(&status(301), 1, 4, &s, 0.0), Next::RetryIn(Duration::from_secs(5)));
        assert_eq!(next(&status(500), 2, 4, &s, 0.0), Next::RetryIn(Duration::from_secs(300)));
        assert_eq!(next(&AttemptResult::NoResponse, 3, 4, &s, 0.0), Next::RetryIn(Duration::from_secs(1800)));
        assert_eq!(next(&status(500), 4, 4, &s, 0.0), Next::Failed);
    }

    #[test]
    fn a_manual_retrys_last_place_ends_after_its_attempt() {
        assert_eq!(next(&status(500), 5, 5, &schedule(), 0.0), Next::Failed);
        assert_eq!(next(&status(500), 1, 1, &schedule(), 0.0), Next::Failed);
    }

    #[test]
    fn jitter_stays_within_twenty_percent() {
        let s = schedule();
        assert_eq!(next(&status(500), 1, 4, &s, 1.0), Next::RetryIn(Duration::from_secs(6)));
        assert_eq!(next(&status(500), 1, 4, &s, -1.0), Next::RetryIn(Duration::from_secs(4)));
        assert_eq!(next(&status(500), 1, 4, &s, 7.0), Next::RetryIn(Duration::from_secs(6)));
    }

    #[test]
    fn retry_after_is_honoured_up_to_double_the_delay() {
        let s = schedule();
        let asked = |secs: &str, code| AttemptResult::Status { code, retry_after: Some(secs.into()) };
        assert_eq!(next(&asked("8", 429), 1, 4, &s, 0.0), Next::RetryIn(Duration::from_secs(8)));
        assert_eq!(next(&asked("3600", 503), 1, 4, &s, 0.0), Next::RetryIn(Duration::from_secs(10)));
        // Never sooner than the schedule.
        assert_eq!(next(&asked("1", 429), 1, 4, &s, 0.0), Next::RetryIn(Duration::from_secs(5)));
        // Only on 429 and 503.
        assert_eq!(next(&asked("8", 500), 1, 4, &s, 0.0), Next::RetryIn(Duration::from_secs(5)));
    }

    #[test]
    fn a_retry_after_pauses_the_webhook_up_to_double_the_scheduled_delay() {
        let s = schedule();
        let asked = |secs: &str, code| AttemptResult::Status { code, retry_after: Some(secs.into()) };
        assert_eq!(pause(&asked("8", 429), 1, &s), Some(Duration::from_secs(8)));
        assert_eq!(pause(&asked("3600", 503), 1, &s), Some(Duration::from_secs(10)), "capped at twice 5s");
        assert_eq!(pause(&asked("3600", 503), 9, &s), Some(Duration::from_secs(3600)), "after the last place: 2 × 30m");
        assert_eq!(pause(&asked("8", 500), 1, &s), None, "only 429 and 503");
        assert_eq!(pause(&status(429), 1, &s), None, "only with Retry-After");
        assert_eq!(pause(&asked("0", 429), 1, &s), None);
    }

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
        let later = SystemTime::now() + Duration::from_secs(90);
        let parsed = parse_retry_after(&httpdate::fmt_http_date(later)).unwrap();
        assert!(parsed <= Duration::from_secs(90) && parsed >= Duration::from_secs(85), "{parsed:?}");
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
    }
}
