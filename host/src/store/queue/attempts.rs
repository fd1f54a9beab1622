//! Attempts as a delivery row stores them (its `x` field, a JSON array of these) and as
//! the API shows them.

use serde_json::{Value, json};

/// An attempt as stored: `[at, status_code, duration_ms, error, response_body]`, `at` in
/// ms after `created_ms` (the delivery's id's time; negative if the clock of the process
/// that made it ran ahead).
pub fn attempt_json(
    created_ms: u64,
    at_ms: u64,
    status: Option<u16>,
    duration_ms: u64,
    error: Option<&str>,
    body: Option<&str>,
) -> String {
    use std::io::Write;
    let at = at_ms as i64 - created_ms as i64;
    let mut out = Vec::with_capacity(40 + error.map_or(0, str::len) + body.map_or(0, str::len));
    // Writing into a Vec cannot fail.
    let _ = match status {
        Some(code) => write!(out, "[{at},{code},{duration_ms},"),
        None => write!(out, "[{at},null,{duration_ms},"),
    };
    string_or_null(&mut out, error);
    out.push(b',');
    string_or_null(&mut out, body);
    out.push(b']');
    String::from_utf8(out).unwrap_or_default()
}

/// A JSON string (escaped by serde_json), or `null`.
fn string_or_null(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => {
            // Writing into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, text);
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// A stored attempt's time (ms since the epoch).
pub fn attempt_at(created_ms: u64, stored: &Value) -> Option<u64> {
    stored.get(0)?.as_i64().map(|at| created_ms.saturating_add_signed(at))
}

/// A stored attempt as the API shows it.
pub fn attempt_object(created_ms: u64, stored: &Value) -> Value {
    let at = attempt_at(created_ms, stored).map(crate::time::format_millis);
    json!({
        "at": at,
        "status_code": stored.get(1).cloned().unwrap_or(Value::Null),
        "error": stored.get(3).cloned().unwrap_or(Value::Null),
        "duration_ms": stored.get(2).cloned().unwrap_or(Value::Null),
        "response_body": stored.get(4).cloned().unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_is_stored_as_the_json_array_of_its_figures() {
        let cases = [
            (1_000, 1_250, Some(200), 12, None, Some("{\"ok\":true}")),
            (1_000, 900, None, 10_000, Some("timed out after \"10s\"\n"), None),
            (0, 5, Some(503), 0, Some("HTTP 503"), Some("é \u{1} </script>")),
        ];
        for (created, at, status, duration, error, body) in cases {
            let text = attempt_json(created, at, status, duration, error, body);
            let expected = json!([at as i64 - created as i64, status, duration, error, body]);
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected, "{text}");
            assert_eq!(text, expected.to_string());
            assert_eq!(attempt_at(created, &expected), Some(at));
        }
        let shown = attempt_object(1_000, &json!([250, 200, 12, null, "ok"]));
        assert_eq!(shown["status_code"], 200);
        assert_eq!(shown["at"], crate::time::format_millis(1_250));
    }
}
