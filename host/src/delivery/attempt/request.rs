//! An attempt's request, signed when it starts, and what its answer means: the policy's
//! view of it, the attempt as stored, the endpoint's signal, the log's words.

use std::collections::BTreeMap;
use std::time::Duration;

use super::retry::{self, AttemptResult};
use crate::delivery::claiming::lanes::Signal;
use crate::destinations::message::SendError;
use crate::destinations::send::Sent;
use crate::domain::deliveries::attempt_headers;
use crate::sign;
use crate::store::events::stored::StoredEvent;
use crate::store::queue::attempts::attempt_json;
use crate::store::queue::claim::Member;
use crate::store::queue::targets::WebhookTarget;
use crate::store::queue::work::Outcome;
use crate::telemetry::Telemetry;
use crate::trace::TraceContext;

/// Whose attempt: the webhook's, of which delivery, its number.
#[derive(Debug, Clone, Copy)]
pub(in crate::delivery) struct Attempt<'a> {
    pub(in crate::delivery) webhook_id: &'a str,
    pub(in crate::delivery) member: &'a Member,
    pub(in crate::delivery) number: u32,
}

/// One attempt's request, signed now (replay protection: the attempt's time is the
/// signature's timestamp, so the row can show the headers as sent). Built from what the
/// attempt is handed alone: the delivery, its event, its webhook, the prepared body.
pub(super) struct Request {
    pub(super) headers: Vec<(String, String)>,
    /// The signatures, as the row keeps them.
    pub(super) signature: Vec<u8>,
    /// The names of the webhook's own headers it carries (their values are not kept).
    pub(super) webhook_header_names: Vec<String>,
    pub(super) trace: Traced,
    pub(super) at_ms: u64,
}

/// The trace an attempt belongs to.
pub(super) struct Traced {
    pub(super) context: TraceContext,
    /// Whether the publisher sent it (else Weir started it).
    pub(super) from_publisher: bool,
}

impl Traced {
    /// The trace of the attempt at `member`, as it is passed on to the subscriber.
    pub(super) fn of(member: &Member, event: Option<&StoredEvent>, telemetry: &Telemetry) -> Traced {
        let context = event.map_or_else(|| TraceContext::for_event(&member.event), |e| e.trace_of(&member.event));
        let from_publisher = event.is_some_and(|e| e.trace.is_some());
        Traced { context: telemetry.passed_on(context, from_publisher), from_publisher }
    }
}

impl Request {
    /// The request of `attempt` of `event` to `webhook`, its body prepared (`extra_headers`:
    /// the plugins').
    pub(super) fn signed(
        attempt: &Attempt<'_>,
        event: Option<&StoredEvent>,
        trace: Traced,
        webhook: &WebhookTarget,
        (body, extra_headers): (&str, &[(String, String)]),
    ) -> Request {
        let Attempt { webhook_id, member, number: attempt_no } = *attempt;
        let created_at = event.map(|e| e.created_at.as_str()).unwrap_or_default();
        let at = crate::time::now_millis();
        let previous = webhook.previous_secret.as_ref().filter(|(_, ends)| *ends > at).map(|(s, _)| s.as_str());
        let secrets = sign::Secrets { current: &webhook.signing_secret, previous };
        let signatures = sign::Signatures::sign(secrets, &member.delivery, at / 1000, body.as_bytes());
        let this = sign::Attempt {
            delivery_id: &member.delivery,
            number: attempt_no as usize,
            event_created_at: created_at,
            signed_at: at / 1000,
        };
        let own_headers: Vec<(String, String)> = match webhook.headers.as_deref() {
            None => Vec::new(),
            Some(text) => match serde_json::from_str::<BTreeMap<String, String>>(text) {
                Ok(map) => map.into_iter().collect(),
                Err(e) => {
                    tracing::error!(webhook_id, error = %e, "the webhook's headers cannot be read; sent without them");
                    Vec::new()
                }
            },
        };
        let mut headers = attempt_headers(this, &signatures, &own_headers, extra_headers, &trace.context);
        if event.is_some_and(|e| crate::sources::forward::is_source_event(&e.envelope)) {
            // A provider's request keeps its own media type and agent.
            sign::take_over(&mut headers, extra_headers, &["content-type", "user-agent"]);
        }
        Request {
            headers,
            signature: signatures.encode(),
            webhook_header_names: own_headers.into_iter().map(|(name, _)| name).collect(),
            trace,
            at_ms: at,
        }
    }
}

/// What an attempt's answer says of its endpoint (`None`: nothing — the proxy failed).
pub(super) fn signal_of(
    sent: &Sent,
    result: &AttemptResult,
    cause: Option<&str>,
    place: usize,
    schedule: &[std::time::Duration],
) -> Option<Signal> {
    let why = || cause.unwrap_or_default().to_owned();
    match (&sent.result, retry::pause(result, place, schedule)) {
        (_, Some(pause)) => Some(Signal::Pause {
            until_ms: crate::time::now_millis() + pause.as_millis() as u64,
            reason: cause.map(|c| format!("{c} with Retry-After")).unwrap_or_default(),
        }),
        (Ok(answer), None) if answer.succeeded() => Some(Signal::Success),
        (Ok(_), None) => Some(Signal::Failed(why())),
        (Err(SendError::Blocked(_)), None) => Some(Signal::Failed(why())),
        // The proxy's failure says nothing of the endpoint.
        (Err(SendError::Proxy(_)), None) => None,
        (Err(_), None) => Some(Signal::NoAnswer(why())),
    }
}

/// The policy's view of a send, the attempt as stored, and why it failed (`None` for a
/// 2xx).
pub(super) fn describe(sent: &Sent, created_ms: u64, at_ms: u64) -> (AttemptResult, String, Option<String>) {
    let duration_ms = sent.duration.as_millis() as u64;
    match &sent.result {
        Ok(answer) => {
            let error = (!answer.succeeded()).then(|| format!("HTTP {}", answer.status()));
            (
                AttemptResult::Status { code: answer.status(), retry_after: answer.retry_after().map(str::to_owned) },
                attempt_json(
                    created_ms,
                    at_ms,
                    answer.status_code(),
                    duration_ms,
                    error.as_deref(),
                    Some(&answer.body()),
                ),
                error,
            )
        }
        Err(e) => {
            let error = e.to_string();
            let attempt = attempt_json(created_ms, at_ms, None, duration_ms, Some(&error), None);
            (AttemptResult::NoResponse, attempt, Some(error))
        }
    }
}

/// What happens after a failed attempt, in words for the log.
pub(super) fn next_in_words(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Retry { due_ms } => {
            let wait = due_ms.saturating_sub(crate::time::now_millis());
            format!("retry in {}", humantime::format_duration(Duration::from_secs(wait.div_ceil(1000))))
        }
        Outcome::Gone => "no retry: 410 Gone switches the webhook off".to_owned(),
        _ => "no retry: the delivery failed for good".to_owned(),
    }
}
