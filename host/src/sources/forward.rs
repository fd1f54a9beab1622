//! A source's request as an event, and back: the envelope a verified request is published
//! as, and what its deliveries send — the provider's body byte for byte and its headers.
//!
//! The envelope begins with `"source"` (no other envelope does), then the usual head, the
//! request's headers (lower-case names, hop-by-hop ones, `host`, `content-length` and cookies
//! left out; repeated ones joined with `, `) and its `body`: the JSON the body is, as it is
//! written, or its text as a JSON string. When `body` does not hold the bytes exactly (text
//! that is not JSON, JSON with space around it), `raw` holds them too. Filters see all of it
//! as `event` (`event.body.type`, `event.headers["x-github-event"]`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The subject type of a source's events (their subject id is the source's).
pub(crate) const SUBJECT_TYPE: &str = crate::store::tenants::source_requests::SUBJECT_TYPE;
/// How every source event's envelope begins.
const MARK: &str = "{\"source\":";

/// A verified request, about to become an event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrived<'a> {
    pub event_id: &'a str,
    pub action: &'a str,
    pub created_at: &'a str,
    pub org_id: &'a str,
    pub source: (&'a str, &'a str),
    pub headers: &'a http::HeaderMap,
    pub body: &'a str,
}

/// Whether a header of the provider's request is passed on.
pub(crate) fn passed_on(lower_name: &str) -> bool {
    !crate::sign::is_hop_by_hop(lower_name)
        && !matches!(lower_name, "host" | "content-length" | "cookie" | "set-cookie")
}

/// The request's headers as the envelope holds them.
fn headers_of(headers: &http::HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let name = name.as_str();
        if !passed_on(name) {
            continue;
        }
        let value = String::from_utf8_lossy(value.as_bytes());
        out.entry(name.to_owned()).and_modify(|v| *v = format!("{v}, {value}")).or_insert_with(|| value.into_owned());
    }
    out
}

/// The envelope of a source's request.
pub(crate) fn envelope(arrived: &Arrived<'_>) -> String {
    let (source_id, source_name) = arrived.source;
    let string = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut out = String::with_capacity(400 + 2 * arrived.body.len());
    out.push_str(MARK);
    out.push_str(&string(source_id));
    for (key, value) in [("id", arrived.event_id), ("action", arrived.action), ("created_at", arrived.created_at)] {
        out.push_str(&format!(",\"{key}\":{}", string(value)));
    }
    out.push_str(&format!(",\"organisation\":{{\"id\":{}}}", string(arrived.org_id)));
    out.push_str(&format!(",\"creator\":{{\"id\":{},\"name\":{}}}", string(source_id), string(source_name)));
    out.push_str(&format!(",\"subject\":{{\"type\":\"{SUBJECT_TYPE}\",\"id\":{}}}", string(source_id)));
    out.push_str(",\"headers\":");
    out.push_str(&serde_json::to_string(&headers_of(arrived.headers)).unwrap_or_else(|_| "{}".into()));
    out.push_str(",\"body\":");
    match serde_json::from_str::<&RawValue>(arrived.body) {
        Ok(json) if json.get() == arrived.body => out.push_str(json.get()),
        Ok(json) => {
            out.push_str(json.get());
            out.push_str(",\"raw\":");
            out.push_str(&string(arrived.body));
        }
        Err(_) => {
            out.push_str(&string(arrived.body));
            out.push_str(",\"raw\":");
            out.push_str(&string(arrived.body));
        }
    }
    out.push('}');
    out
}

/// What a delivery of a source's event sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Forwarded {
    pub source: String,
    /// The provider's body, byte for byte.
    pub body: String,
    /// The provider's headers, as passed on.
    pub headers: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct Read<'a> {
    source: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(borrow)]
    body: &'a RawValue,
    #[serde(default)]
    raw: Option<String>,
}

/// Whether `envelope` is a source's event.
pub(crate) fn is_source_event(envelope: &str) -> bool {
    envelope.starts_with(MARK)
}

/// What a delivery of the event `envelope` sends, when it is a source's event.
pub(crate) fn forwarded(envelope: &str) -> Option<Forwarded> {
    if !is_source_event(envelope) {
        return None;
    }
    let read: Read<'_> = serde_json::from_str(envelope).ok()?;
    let body = read.raw.unwrap_or_else(|| read.body.get().to_owned());
    Some(Forwarded { source: read.source, body, headers: read.headers.into_iter().collect() })
}
