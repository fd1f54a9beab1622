//! The organisation's usage of its plan on Settings > Webhooks (and so in the portal):
//! each figure of `GET /api/v2/usage` with a bar toward its limit (contract §9 "Plans").

use super::html::esc;
use crate::domain::usage::UsageView;
use crate::plans::Quota;

/// What each figure is called on the page.
fn label(quota: Quota) -> &'static str {
    match quota {
        Quota::EventsPerDay => "Events today (UTC)",
        Quota::Webhooks => "Webhooks",
        Quota::Plugins => "Plugins",
        Quota::PluginBytes => "Plugin code",
    }
}

/// A count as people read it (bytes in KiB or MiB).
fn amount(quota: Quota, n: u64) -> String {
    match quota {
        Quota::PluginBytes if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        Quota::PluginBytes if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        Quota::PluginBytes => format!("{n} bytes"),
        _ => n.to_string(),
    }
}

/// The usage section: one row per figure, with a `<meter>` where the plan sets a limit
/// (high from 80%, when Weir also tells the organisation's webhooks of its events).
pub(super) fn section(usage: &UsageView) -> String {
    let mut rows = String::new();
    for (quota, figure) in usage.figures() {
        let (of, bar) = match figure.limit {
            Some(limit) => (
                format!(" of {}", amount(quota, limit)),
                format!(
                    r#"<meter min="0" max="{max}" low="{low}" high="{high}" optimum="0" value="{used}" aria-label="{label}: {pct}% of the plan's limit">{pct}%</meter>"#,
                    max = limit.max(1),
                    low = limit * 4 / 5,
                    high = limit * 4 / 5,
                    used = figure.used.min(limit.max(1)),
                    label = label(quota),
                    pct = figure.percent().unwrap_or(0),
                ),
            ),
            None => (" (no limit)".to_owned(), String::new()),
        };
        rows.push_str(&format!(
            r#"<tr data-quota="{key}"><th scope="row">{label}</th><td>{used}{of}</td><td>{bar}</td></tr>"#,
            key = quota.key(),
            label = label(quota),
            used = amount(quota, figure.used),
        ));
    }
    format!(
        r#"<section class="usage" aria-labelledby="usage-title"><h2 id="usage-title">Plan: {plan}</h2><div class="table-wrap"><table class="cards"><caption class="muted">Usage on {day}</caption><tbody>{rows}</tbody></table></div></section>"#,
        plan = esc(&usage.plan),
        day = esc(&usage.day),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::usage::Figure;

    #[test]
    fn each_limit_has_a_bar_and_no_limit_says_so() {
        let usage = UsageView {
            plan: "free".into(),
            day: "2026-11-28".into(),
            events: Figure { used: 9_000, limit: Some(10_000) },
            webhooks: Figure { used: 3, limit: Some(100) },
            plugins: Figure { used: 0, limit: None },
            plugin_bytes: Figure { used: 3 << 20, limit: Some(256 << 20) },
        };
        let html = section(&usage);
        assert!(html.contains("Plan: free"), "{html}");
        assert!(html.contains(r#"value="9000""#) && html.contains("90%"), "{html}");
        assert!(html.contains("0 (no limit)"), "{html}");
        assert!(html.contains("3.0 MiB of 256.0 MiB"), "{html}");
        assert_eq!(html.matches("<meter").count(), 3);
    }
}
