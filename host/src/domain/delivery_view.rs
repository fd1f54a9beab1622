//! A delivery as the API and the settings pages show it: the view of its row, with the
//! request of its latest attempt rebuilt (headers signed as they were sent).

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::ids::{self, Kind};
use crate::sign;
use crate::store::queue::attempts::{attempt_at, attempt_object};
use crate::store::queue::row::DeliveryRow;
use crate::store::queue::status::Status;
use crate::telemetry::Telemetry;
use crate::trace::TraceContext;

/// An attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Attempt {
    pub at: String,
    /// `null` when no response came (the error says why).
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
    /// The first 1 KiB of the response body.
    pub response_body: Option<String>,
}

/// What one attached plugin did to a delivery.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PluginRun {
    pub plugin_id: String,
    /// `deliver`, `drop` or `error`.
    pub outcome: String,
    pub logs: Vec<String>,
    pub error: Option<String>,
}

/// The request of a delivery: the exact headers of its latest attempt and the body.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = DeliveryRequest)]
pub(crate) struct Request {
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub headers: Box<RawValue>,
    pub body: String,
}

/// A delivery record as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Delivery {
    pub id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub action: String,
    pub status: Status,
    #[schema(value_type = Vec<Attempt>)]
    pub attempts: Vec<Value>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub request: Request,
    #[schema(value_type = Vec<PluginRun>)]
    pub plugins: Box<RawValue>,
    /// Why the delivery was taken out of the queue without an outcome (a record that could
    /// not be read); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Delivery {
    /// The view of a delivery's row, with the request of its latest attempt rebuilt: the
    /// headers follow from the row (its signatures, the plugins' headers) and the event.
    pub(crate) fn of(row: DeliveryRow, telemetry: &Telemetry) -> Delivery {
        let id = row.id.as_str();
        let created_ms = ids::millis_of(Kind::Delivery, id).unwrap_or(0);
        let created_at = crate::time::format_millis(created_ms);
        let mut error = row.dead_letter.clone();
        let status = row.status.unwrap_or_else(|| {
            // A damaged row shows as failed (the workers dead-letter it when they meet it).
            error.get_or_insert_with(|| "the delivery record cannot be read: unknown status".into());
            Status::Failed
        });
        let next_attempt_at = match status {
            Status::Pending => row.due_ms.map(crate::time::format_millis).or_else(|| Some(created_at.clone())),
            _ => None,
        };
        let attempts: Vec<Value> = row.attempts.iter().map(|a| attempt_object(created_ms, a)).collect();
        let headers = request_headers(&row, created_ms, telemetry);
        let body = match &row.body {
            Some(body) => body.clone(),
            None => row.event.as_ref().map(|e| e.envelope.clone()).unwrap_or_default(),
        };
        let updated = updated_ms(row.updated_ms, created_ms, &row.attempts);
        Delivery {
            webhook_id: row.webhook_id.clone(),
            event_id: row.event_id.clone(),
            action: row.action.clone(),
            status,
            attempts,
            next_attempt_at,
            updated_at: updated.map(crate::time::format_millis).unwrap_or_else(|| created_at.clone()),
            created_at,
            request: Request { headers: raw(id, Some(headers), "{}"), body },
            plugins: raw(id, row.plugins.clone(), "[]"),
            error,
            id: row.id,
        }
    }
}

/// The headers of a delivery's latest attempt as they were sent, as a JSON object; `{}`
/// before its first attempt.
fn request_headers(row: &DeliveryRow, created_ms: u64, telemetry: &Telemetry) -> String {
    let signatures = row.signatures.as_deref().filter(|_| row.latest > 0).and_then(sign::Signatures::decode);
    let Some(signatures) = signatures else { return "{}".to_owned() };
    let pairs = |text: Option<&str>| -> Vec<(String, String)> {
        text.and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default()
    };
    // The webhook's own headers by name: their values are its secrets, never kept with a
    // delivery (rows written before that rule kept them: they are blanked here).
    let webhook: Vec<(String, String)> =
        pairs(row.webhook_headers.as_deref()).into_iter().map(|(name, _)| (name, String::new())).collect();
    let plugins = pairs(row.headers.as_deref());
    // The latest attempt was signed when it started.
    let signed_at = row.attempts.last().and_then(|a| attempt_at(created_ms, a)).unwrap_or(0) / 1000;
    let event_created_at = row.event.as_ref().map(|e| e.created_at.as_str()).unwrap_or_default();
    let attempt = sign::Attempt { delivery_id: &row.id, number: row.latest, event_created_at, signed_at };
    let trace = match &row.event {
        Some(event) => telemetry.passed_on(event.trace_of(&row.event_id), event.trace.is_some()),
        None => telemetry.passed_on(TraceContext::for_event(&row.event_id), false),
    };
    let pairs = attempt_headers(attempt, &signatures, &webhook, &plugins, &trace);
    let map: Map<String, Value> = pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
    Value::Object(map).to_string()
}

/// The headers of an attempt, as sent and as its delivery record shows them: Weir's with
/// the signatures, the webhook's own `headers` (but those a plugin set: the plugin's win),
/// the plugins', and the trace context (a parent id of the attempt's own).
pub(crate) fn attempt_headers(
    attempt: sign::Attempt<'_>,
    signatures: &sign::Signatures,
    webhook: &[(String, String)],
    plugins: &[(String, String)],
    trace: &TraceContext,
) -> Vec<(String, String)> {
    let mut extra: Vec<(String, String)> = webhook
        .iter()
        .filter(|(name, _)| !plugins.iter().any(|(set, _)| set.eq_ignore_ascii_case(name)))
        .cloned()
        .collect();
    extra.extend(plugins.iter().cloned());
    let mut headers = sign::request_headers(attempt, signatures, &extra);
    headers.extend(trace.headers(attempt.delivery_id, attempt.number));
    headers
}

/// A JSON field of a row; one that cannot be parsed reads as `default` (and is logged), so
/// that one damaged row cannot make a listing fail.
fn raw(id: &str, text: Option<String>, default: &'static str) -> Box<RawValue> {
    let text = text.filter(|t| !t.is_empty()).unwrap_or_else(|| default.to_owned());
    RawValue::from_string(text).unwrap_or_else(|e| {
        tracing::warn!(delivery_id = %id, error = %e, "a delivery row has a field that is not JSON");
        RawValue::from_string(default.to_owned()).unwrap_or_default()
    })
}

/// When a delivery last changed: its latest attempt's end, or `updated` when something
/// later changed it without an attempt (a manual retry, its webhook going away).
fn updated_ms(updated: Option<u64>, created_ms: u64, attempts: &[Value]) -> Option<u64> {
    let attempted =
        attempts.last().and_then(|a| Some(attempt_at(created_ms, a)? + a.get(2).and_then(Value::as_u64).unwrap_or(0)));
    updated.max(attempted)
}
