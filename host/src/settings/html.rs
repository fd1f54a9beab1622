//! Building HTML safely: every piece of text goes through [`esc`]; pages share one layout.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub(crate) use super::escape::{csrf_field, esc};
pub(crate) use super::layout::{Viewer, page};

/// A short page with one message.
pub(crate) fn plain(status: StatusCode, message: &str) -> Response {
    page(
        status,
        "Weir",
        None,
        &format!("<h1>{}</h1><p><a href=\"/settings/webhooks\">Back to webhooks</a></p>", esc(message)),
    )
}

/// 503 while Redis cannot be reached.
pub(crate) fn store_down() -> Response {
    plain(StatusCode::SERVICE_UNAVAILABLE, "Storage is unavailable; try again shortly.")
}

/// The notices a page shows after a redirect (`?notice=<code>`). Only these fixed texts are
/// ever shown: a page never echoes text from the request, so a crafted link cannot put
/// words in Weir's mouth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notice {
    Created,
    Saved,
    Deleted,
    Reactivated,
    Deactivated,
    Retried,
    RetryInactive,
    RetryWebhookGone,
    RetryFiltered,
    RetryRefused,
    Rotated,
    RetriedFailed,
    SinceInvalid,
    Replayed,
    ReplayRunning,
    ReplayWindowInvalid,
    TestSent,
    TestNotSelected,
    TestTooMany,
}

impl Notice {
    const ALL: [Notice; 19] = [
        Notice::Created,
        Notice::Saved,
        Notice::Deleted,
        Notice::Reactivated,
        Notice::Deactivated,
        Notice::Retried,
        Notice::RetryInactive,
        Notice::RetryWebhookGone,
        Notice::RetryFiltered,
        Notice::RetryRefused,
        Notice::Rotated,
        Notice::RetriedFailed,
        Notice::SinceInvalid,
        Notice::Replayed,
        Notice::ReplayRunning,
        Notice::ReplayWindowInvalid,
        Notice::TestSent,
        Notice::TestNotSelected,
        Notice::TestTooMany,
    ];

    /// The code carried in the URL.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Notice::Created => "created",
            Notice::Saved => "saved",
            Notice::Deleted => "deleted",
            Notice::Reactivated => "reactivated",
            Notice::Deactivated => "deactivated",
            Notice::Retried => "retried",
            Notice::RetryInactive => "retry_inactive",
            Notice::RetryWebhookGone => "retry_webhook_gone",
            Notice::RetryFiltered => "retry_filtered",
            Notice::RetryRefused => "retry_refused",
            Notice::Rotated => "rotated",
            Notice::RetriedFailed => "retried_failed",
            Notice::SinceInvalid => "since_invalid",
            Notice::Replayed => "replayed",
            Notice::ReplayRunning => "replay_running",
            Notice::ReplayWindowInvalid => "replay_window_invalid",
            Notice::TestSent => "test_sent",
            Notice::TestNotSelected => "test_not_selected",
            Notice::TestTooMany => "test_too_many",
        }
    }

    /// The notice of a code; `None` for anything else.
    pub(crate) fn from_code(code: &str) -> Option<Notice> {
        Notice::ALL.into_iter().find(|n| n.code() == code)
    }

    /// The notice box: `ok` for done, `error` for refused.
    pub(crate) fn render(self) -> String {
        let (kind, text) = match self {
            Notice::Created => ("ok", "Webhook created. Send it a test event below to check the connection."),
            Notice::Saved => ("ok", "Changes saved."),
            Notice::Deleted => ("ok", "Webhook deleted; its queued deliveries were cancelled."),
            Notice::Reactivated => ("ok", "Webhook reactivated."),
            Notice::Deactivated => ("ok", "Webhook deactivated; its pending deliveries failed."),
            Notice::Retried => ("ok", "Retry queued."),
            Notice::RetryInactive => ("error", "The webhook is inactive: reactivate it first."),
            Notice::RetryWebhookGone => ("error", "The webhook of this delivery was deleted."),
            Notice::RetryFiltered => ("error", "A plugin filtered this delivery: there is no request to send."),
            Notice::RetryRefused => ("error", "This delivery cannot be retried."),
            Notice::Rotated => {
                ("ok", "Signing secret rotated. Give receivers the new secret before the old one stops.")
            }
            Notice::RetriedFailed => ("ok", "A new attempt of the failed deliveries since that time is queued."),
            Notice::SinceInvalid => ("error", "Choose a date and time to retry failed deliveries from."),
            Notice::Replayed => ("ok", "Replay queued; how far it got is shown under Replay."),
            Notice::ReplayRunning => ("error", "A replay of this webhook is still running: wait for it to end."),
            Notice::ReplayWindowInvalid => {
                ("error", "Choose a window within the event retention: since in the past, until (if any) after since.")
            }
            Notice::TestSent => ("ok", "Test event sent to this webhook alone: its delivery is shown here."),
            Notice::TestNotSelected => {
                ("error", "The webhook's filter does not select the example event: nothing was sent.")
            }
            Notice::TestTooMany => (
                "error",
                "Too many test events in the last minute (10 to a webhook, 60 from an organisation): wait a minute and send again.",
            ),
        };
        notice(kind, text)
    }

    /// The notice named by a page's `?notice=` parameter, rendered; empty for none or an
    /// unknown code.
    pub(crate) fn from_query(query: &crate::web::Query) -> String {
        query.get("notice").and_then(Notice::from_code).map(Notice::render).unwrap_or_default()
    }
}

/// A notice or error box (announced to screen readers).
pub(crate) fn notice(kind: &str, text: &str) -> String {
    let role = if kind == "error" { "alert" } else { "status" };
    format!(r#"<p class="notice {kind}" role="{role}">{}</p>"#, esc(text))
}

/// A list of field errors, keyed by field, shown above a form.
pub(crate) fn errors(errors: &[(String, String)]) -> String {
    if errors.is_empty() {
        return String::new();
    }
    let items: String =
        errors.iter().map(|(f, m)| format!("<li><strong>{}</strong>: {}</li>", esc(f), esc(m))).collect();
    format!(r#"<div class="notice error" role="alert"><p>Please correct the following:</p><ul>{items}</ul></div>"#)
}

/// A status badge whose meaning is in the text, not only the colour.
pub(crate) fn badge(status: &str) -> String {
    format!(r#"<span class="badge {s}">{s}</span>"#, s = esc(status))
}

/// A `303 See Other` to `location` (after a successful form post).
pub(crate) fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_that_matters() {
        assert_eq!(esc(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        assert_eq!(esc("plain"), "plain");
    }

    #[test]
    fn notices_are_fixed_texts_chosen_by_code() {
        for notice in Notice::ALL {
            assert_eq!(Notice::from_code(notice.code()), Some(notice));
        }
        assert_eq!(Notice::from_code("Your account is suspended: call +1 555 0100"), None);
        assert_eq!(Notice::from_code(""), None);
    }
}
