//! W3C trace context (contract §7): the `traceparent` (and `tracestate`) a publisher sent
//! with an event, or the trace Weir starts for it, continued into every delivery attempt.
//!
//! Weir derives what it does not keep: an event without a publisher's trace has its trace id
//! from its event id, and every attempt its parent id from the delivery id and the attempt's
//! number — so every delivery of an event shares one trace, each attempt is a new span, and
//! a delivery record shows the exact headers sent without storing them.

use sha2::{Digest, Sha256};

/// The longest `tracestate` kept (the W3C limit of 32 list members fits in it).
pub(crate) const MAX_TRACESTATE: usize = 512;

/// A trace an event belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
    /// The publisher's `tracestate`, passed on unchanged.
    pub state: Option<String>,
}

impl TraceContext {
    /// A publisher's trace context; `None` when `traceparent` is not a valid version-00 one
    /// (then Weir starts its own). A `tracestate` that is too long or not printable text is
    /// dropped, not the trace.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let parts: Vec<&str> = traceparent.trim().split('-').collect();
        let [version, trace, parent, flags] = parts[..] else { return None };
        let lower_hex =
            |s: &str, len: usize| s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if version != "00" || !lower_hex(trace, 32) || !lower_hex(parent, 16) || !lower_hex(flags, 2) {
            return None;
        }
        let mut trace_id = [0u8; 16];
        hex::decode_to_slice(trace, &mut trace_id).ok()?;
        if trace_id == [0; 16] || parent == "0000000000000000" {
            return None;
        }
        let flags = u8::from_str_radix(flags, 16).ok()?;
        let state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE && s.bytes().all(|b| (0x20..0x7f).contains(&b)))
            .map(str::to_owned);
        Some(TraceContext { trace_id, flags, state })
    }

    /// The trace Weir starts for an event that came without one: its id follows from the
    /// event's id, sampled.
    pub fn for_event(event_id: &str) -> TraceContext {
        let digest = Sha256::digest([b"weir trace\0".as_slice(), event_id.as_bytes()].concat());
        let mut trace_id = [0u8; 16];
        trace_id.copy_from_slice(&digest[..16]);
        TraceContext { trace_id, flags: 1, state: None }
    }

    pub fn trace_id_hex(&self) -> String {
        const_hex::encode(self.trace_id)
    }

    /// The `traceparent` of one attempt: this trace, a parent id of the attempt's own.
    pub fn traceparent(&self, delivery_id: &str, attempt: usize) -> String {
        let parent = self.attempt_span_id(delivery_id, attempt);
        format!("00-{}-{}-{:02x}", self.trace_id_hex(), const_hex::encode(parent), self.flags)
    }

    /// The span id of one attempt (the parent id its `traceparent` carries).
    pub fn attempt_span_id(&self, delivery_id: &str, attempt: usize) -> [u8; 8] {
        span_id(&[&self.trace_id[..], delivery_id.as_bytes(), &attempt.to_be_bytes()])
    }

    /// The span id of the request that published `event_id` in trace `trace_id` (the
    /// parent of its deliveries' attempts).
    pub fn publish_span_id(trace_id: [u8; 16], event_id: &str) -> [u8; 8] {
        span_id(&[b"weir publish\0".as_slice(), &trace_id[..], event_id.as_bytes()])
    }

    /// The span id of a delivery's `index`th plugin call.
    pub fn plugin_span_id(trace_id: [u8; 16], delivery_id: &str, index: usize) -> [u8; 8] {
        span_id(&[b"weir plugin\0".as_slice(), &trace_id[..], delivery_id.as_bytes(), &index.to_be_bytes()])
    }

    /// What a request's `traceparent` and `tracestate` headers carry: its trace context and
    /// the sender's span (the parent of the request's own); `None` for what is absent or not
    /// valid.
    pub fn of_request(headers: &http::HeaderMap) -> (Option<TraceContext>, Option<[u8; 8]>) {
        let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
        let Some(parent) = header("traceparent") else { return (None, None) };
        (TraceContext::parse(parent, header("tracestate")), TraceContext::parent_id(parent))
    }

    /// The parent id of a valid `traceparent` (the publisher's span).
    pub fn parent_id(traceparent: &str) -> Option<[u8; 8]> {
        let parent = traceparent.trim().split('-').nth(2)?;
        let mut id = [0u8; 8];
        hex::decode_to_slice(parent, &mut id).ok()?;
        Some(id)
    }

    /// The headers of one attempt: `traceparent`, and `tracestate` when the publisher sent one.
    pub fn headers(&self, delivery_id: &str, attempt: usize) -> Vec<(String, String)> {
        let mut headers = vec![("traceparent".to_owned(), self.traceparent(delivery_id, attempt))];
        if let Some(state) = &self.state {
            headers.push(("tracestate".to_owned(), state.clone()));
        }
        headers
    }

    /// The stored form: trace id, flags, then the `tracestate` (its length in two bytes).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.trace_id);
        out.push(self.flags);
        let state = self.state.as_deref().unwrap_or_default().as_bytes();
        let state = &state[..state.len().min(MAX_TRACESTATE)];
        out.extend_from_slice(&(state.len() as u16).to_be_bytes());
        out.extend_from_slice(state);
    }

    /// Reads the stored form at the start of `bytes`; the rest after it.
    pub fn decode(bytes: &[u8]) -> Option<(TraceContext, &[u8])> {
        let (trace_id, rest) = bytes.split_first_chunk::<16>()?;
        let (&flags, rest) = rest.split_first()?;
        let (len, rest) = rest.split_first_chunk::<2>()?;
        let (state, rest) = rest.split_at_checked(usize::from(u16::from_be_bytes(*len)))?;
        let state = (!state.is_empty()).then(|| String::from_utf8(state.to_vec()).ok()).flatten();
        Some((TraceContext { trace_id: *trace_id, flags, state }, rest))
    }
}

/// A span id (never all zeros) from the digest of `parts`.
fn span_id(parts: &[&[u8]]) -> [u8; 8] {
    let digest = Sha256::digest(parts.concat());
    let mut id = [0u8; 8];
    id.copy_from_slice(&digest[..8]);
    if id == [0; 8] {
        id[7] = 1;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_publishers_trace_continues_with_a_new_parent_per_attempt() {
        let t = TraceContext::parse(PARENT, Some("congo=t61rcWkgMzE")).unwrap();
        assert_eq!(t.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        let first = t.traceparent("dlv_1", 1);
        let second = t.traceparent("dlv_1", 2);
        assert!(first.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-") && first.ends_with("-01"), "{first}");
        assert_ne!(first, second);
        assert_ne!(&first[36..52], "00f067aa0ba902b7");
        assert_eq!(t.headers("dlv_1", 1)[1], ("tracestate".to_owned(), "congo=t61rcWkgMzE".to_owned()));
    }

    #[test]
    fn invalid_traceparents_are_not_continued() {
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad}");
        }
        let long = "a=".to_owned() + &"b".repeat(MAX_TRACESTATE);
        assert_eq!(TraceContext::parse(PARENT, Some(&long)).unwrap().state, None);
        assert_eq!(TraceContext::parse(PARENT, Some("a=\u{1}")).unwrap().state, None);
    }

    #[test]
    fn an_event_without_one_gets_its_own_trace_shared_by_its_deliveries() {
        let a = TraceContext::for_event("evt_1");
        assert_eq!(a, TraceContext::for_event("evt_1"));
        assert_ne!(a.trace_id, TraceContext::for_event("evt_2").trace_id);
        assert!(a.traceparent("dlv_x", 1).contains(&a.trace_id_hex()));
    }

    #[test]
    fn the_stored_form_reads_back() {
        for t in [TraceContext::parse(PARENT, Some("k=v")).unwrap(), TraceContext::for_event("evt_9")] {
            let mut out = Vec::new();
            t.encode(&mut out);
            out.extend_from_slice(b"rest");
            assert_eq!(TraceContext::decode(&out), Some((t, &b"rest"[..])));
        }
        assert_eq!(TraceContext::decode(&[0; 5]), None);
    }
}
