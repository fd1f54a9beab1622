//! A webhook's last 24 hours drawn on the server as SVG (no script, no library): one bar per
//! hour of the attempts made, those that succeeded stacked under those that failed (in red),
//! so an endpoint failing now shows at once, long before its deliveries end; each bar's
//! numbers in its `<title>` (shown on hover, read by screen readers), and the totals in words
//! beside it.

use super::html::esc;
use crate::domain::deliveries::Hourly;

/// The totals in words: `1,204 delivered, 3 failed (99.8% delivered)`, and the failed
/// attempts when there were any (` · 40 failed attempts`).
pub(super) fn totals(h: &Hourly) -> String {
    let (ok, bad) = (h.succeeded.iter().sum::<u64>(), h.failed.iter().sum::<u64>());
    let ended = match (1000 * ok).checked_div(ok + bad) {
        None => "no deliveries ended".to_owned(),
        Some(share) => {
            format!("{} delivered, {} failed ({}.{}% delivered)", grouped(ok), grouped(bad), share / 10, share % 10)
        }
    };
    match h.attempts_failed.iter().sum::<u64>() {
        0 => ended,
        1 => format!("{ended} · 1 failed attempt"),
        n => format!("{ended} · {} failed attempts", grouped(n)),
    }
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The chart: `small` for a row of the list (no axis), else with hour labels.
pub(super) fn chart(h: &Hourly, small: bool) -> String {
    let (width, height, axis) = if small { (120.0, 24.0, 0.0) } else { (480.0, 96.0, 14.0) };
    let top = h.attempts_ok.iter().zip(&h.attempts_failed).map(|(s, f)| s + f).max().unwrap_or(0).max(1) as f64;
    let slot = width / 24.0;
    let plot = height - axis;
    let mut bars = String::new();
    for i in 0..24 {
        let (ok, bad) = (h.attempts_ok[i], h.attempts_failed[i]);
        let x = i as f64 * slot + 0.5;
        let w = slot - 1.0;
        let ok_h = plot * ok as f64 / top;
        let bad_h = plot * bad as f64 / top;
        let hour = (h.first_hour + i as u64) % 24;
        bars.push_str(&format!(
            r#"<g><title>{hour:02}:00–{next:02}:00 UTC: {ok} attempts succeeded, {bad} failed; {ended_ok} delivered, {ended_bad} failed</title><rect class="slot" x="{x:.1}" y="0" width="{w:.1}" height="{plot:.1}"/>"#,
            next = (hour + 1) % 24,
            ended_ok = h.succeeded[i],
            ended_bad = h.failed[i],
        ));
        if ok > 0 {
            bars.push_str(&format!(
                r#"<rect class="ok" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{ok_h:.1}"/>"#,
                y = plot - ok_h
            ));
        }
        if bad > 0 {
            bars.push_str(&format!(
                r#"<rect class="bad" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{bad_h:.1}"/>"#,
                y = plot - ok_h - bad_h
            ));
        }
        bars.push_str("</g>");
    }
    if !small {
        for (i, label) in [(0, "24 h ago"), (12, "12 h ago"), (23, "now")] {
            let (x, anchor) = match i {
                0 => (0.0, "start"),
                23 => (width, "end"),
                _ => (i as f64 * slot, "middle"),
            };
            bars.push_str(&format!(
                r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">{label}</text>"#,
                y = height - 2.0
            ));
        }
    }
    let label = format!("Last 24 hours: {}", totals(h));
    format!(
        r#"<svg class="chart{size}" viewBox="0 0 {width} {height}" role="img" aria-label="{label}"><title>{label}</title>{bars}</svg>"#,
        size = if small { " small" } else { "" },
        label = esc(&label),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day() -> Hourly {
        let mut h = Hourly::empty(24 * 100 + 10);
        h.succeeded[0] = 1_200;
        h.attempts_ok[0] = 1_200;
        h.succeeded[23] = 4;
        h.attempts_ok[23] = 4;
        h.failed[23] = 3;
        h.attempts_failed[23] = 9;
        h
    }

    #[test]
    fn totals_read_in_words() {
        assert_eq!(totals(&day()), "1,204 delivered, 3 failed (99.7% delivered) · 9 failed attempts");
        let mut empty = Hourly::empty(0);
        assert_eq!(totals(&empty), "no deliveries ended");
        empty.attempts_failed[5] = 40;
        assert_eq!(totals(&empty), "no deliveries ended · 40 failed attempts", "failing, not idle");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }

    #[test]
    fn each_hour_is_a_bar_with_its_numbers() {
        let svg = chart(&day(), false);
        assert_eq!(svg.matches("<g>").count(), 24);
        assert!(
            svg.contains("<title>10:00–11:00 UTC: 1200 attempts succeeded, 0 failed; 1200 delivered, 0 failed</title>"),
            "{svg}"
        );
        assert!(
            svg.contains("<title>09:00–10:00 UTC: 4 attempts succeeded, 9 failed; 4 delivered, 3 failed</title>"),
            "the last hour wraps the day"
        );
        assert_eq!(svg.matches(r#"class="bad""#).count(), 1);
        // A webhook failing now, none of its deliveries ended yet: its failures are bars.
        let mut failing = Hourly::empty(0);
        failing.attempts_failed[22] = 20;
        failing.attempts_failed[23] = 20;
        assert_eq!(chart(&failing, true).matches(r#"class="bad""#).count(), 2);
        assert!(svg.contains(">now</text>"));
        assert!(!chart(&day(), true).contains("<text"), "the small chart has no axis");
    }
}
