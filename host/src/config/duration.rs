//! Durations as operators write them: `500ms`, `5s`, `5m`, `2h`, `5d` (and combinations such
//! as `1h 30m`). Parsing is delegated to `humantime`; this module adds the rule that a
//! duration is never zero and the comma-separated list form used by `WEIR_RETRY_SCHEDULE`.

use std::time::Duration;

/// Parses one duration. A bare number is refused: the unit is never guessed.
pub fn parse(text: &str) -> Result<Duration, String> {
    let d = parse_span(text)?;
    if d.is_zero() {
        return Err(format!("`{}` must be greater than zero", text.trim()));
    }
    Ok(d)
}

/// Parses a duration that may be zero (`0s`), for settings where zero means "no minimum".
pub fn parse_span(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    humantime::parse_duration(text)
        .map_err(|e| format!("`{text}` is not a duration ({e}); use a number and a unit: ms, s, m, h, d"))
}

/// Parses a comma-separated list of durations.
pub fn parse_list(text: &str) -> Result<Vec<Duration>, String> {
    text.split(',').map(parse).collect()
}

/// Formats a duration in the shortest exact unit (`300ms`, `5s`, `5m`, `2h`, `1d`).
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [("d", 86_400_000u128), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit() {
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("5d"), Ok(Duration::from_secs(5 * 86_400)));
        assert_eq!(parse(" 1h 30m "), Ok(Duration::from_secs(5400)));
    }

    #[test]
    fn refuses_bad_durations() {
        assert!(parse("").is_err());
        assert!(parse("10").unwrap_err().contains("unit"));
        assert!(parse("0s").unwrap_err().contains("greater than zero"));
        assert_eq!(parse_span("0s"), Ok(Duration::ZERO));
        assert!(parse_span("soon").is_err());
        assert!(parse("soon").is_err());
        assert!(parse("-5s").is_err());
    }

    #[test]
    fn parses_lists() {
        let list = parse_list("5s,5m, 30m").unwrap();
        assert_eq!(list, vec![Duration::from_secs(5), Duration::from_secs(300), Duration::from_secs(1800)]);
        assert!(parse_list("5s,,5m").is_err());
    }

    #[test]
    fn formats_shortest_unit() {
        assert_eq!(format(Duration::from_millis(300)), "300ms");
        assert_eq!(format(Duration::from_secs(90)), "90s");
        assert_eq!(format(Duration::from_secs(300)), "5m");
        assert_eq!(format(Duration::from_secs(86_400)), "1d");
    }
}
