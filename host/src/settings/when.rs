//! Times as a person reads them: "3 min ago", "in 2 h", with the exact time (UTC) on hover
//! and in the `datetime` attribute for machines.

use super::html::esc;

/// A `<time>` element for an RFC 3339 timestamp, relative to now; the text itself when it is
/// not a timestamp, `—` when empty.
pub(super) fn when(rfc3339: &str) -> String {
    when_at(rfc3339, crate::time::now_millis())
}

fn when_at(rfc3339: &str, now_ms: u64) -> String {
    if rfc3339.is_empty() {
        return "—".to_owned();
    }
    let Some(then_ms) = crate::time::parse_rfc3339(rfc3339) else { return esc(rfc3339) };
    format!(
        r#"<time datetime="{at}" title="{exact}">{relative}</time>"#,
        at = esc(rfc3339),
        exact = exact(then_ms),
        relative = relative(then_ms, now_ms),
    )
}

/// `2026-11-28 09:30:12 UTC`.
fn exact(ms: u64) -> String {
    let text = crate::time::format_millis(ms);
    format!("{} {} UTC", &text[..10], &text[11..19])
}

/// How far `then_ms` is from `now_ms` in words.
pub(super) fn relative(then_ms: u64, now_ms: u64) -> String {
    let (secs, past) =
        if then_ms <= now_ms { ((now_ms - then_ms) / 1000, true) } else { ((then_ms - now_ms) / 1000, false) };
    let amount = match secs {
        0..45 => return if past { "just now".to_owned() } else { "in a few seconds".to_owned() },
        45..3_570 => format!("{} min", (secs + 30) / 60),
        3_570..129_600 => format!("{} h", (secs + 1_800) / 3_600),
        129_600..2_592_000 => format!("{} days", (secs + 43_200) / 86_400),
        _ => return format!("on {}", crate::time::format_day(then_ms)),
    };
    if past { format!("{amount} ago") } else { format!("in {amount}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_795_000_000_000;

    #[test]
    fn near_times_read_as_words_far_ones_as_dates() {
        assert_eq!(relative(NOW - 10_000, NOW), "just now");
        assert_eq!(relative(NOW - 180_000, NOW), "3 min ago");
        assert_eq!(relative(NOW - 60_000, NOW), "1 min ago");
        assert_eq!(relative(NOW - 2 * 3_600_000, NOW), "2 h ago");
        assert_eq!(relative(NOW - 3 * 86_400_000, NOW), "3 days ago");
        assert_eq!(relative(NOW + 120_000, NOW), "in 2 min");
        assert_eq!(relative(NOW + 3_598_000, NOW), "in 1 h", "not \"60 min\"");
        assert_eq!(relative(NOW + 5_000, NOW), "in a few seconds");
        assert!(relative(NOW - 40 * 86_400_000, NOW).starts_with("on 20"));
    }

    #[test]
    fn the_exact_time_is_on_hover_and_odd_text_is_escaped() {
        let at = crate::time::format_millis(NOW - 180_000);
        let html = when_at(&at, NOW);
        assert!(html.starts_with(&format!(r#"<time datetime="{at}" title=""#)), "{html}");
        assert!(html.contains(" UTC\">3 min ago</time>"), "{html}");
        assert_eq!(when_at("<b>", NOW), "&lt;b&gt;");
        assert_eq!(when_at("", NOW), "—");
    }
}
