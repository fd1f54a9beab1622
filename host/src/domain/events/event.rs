//! An event as publish checked it, and its envelope (service document §2).

use serde_json::value::RawValue;

/// The creator id of Weir's own (operational) events: publishers may not use it.
pub(crate) const OPERATIONAL_CREATOR: &str = "weir";

/// A validated event, ready to become an envelope.
#[derive(Debug)]
pub(crate) struct Event<'a> {
    pub id: String,
    /// Weir made the id just now (none given): no event had it before.
    pub fresh_id: bool,
    pub action: String,
    pub created_at: String,
    pub creator_id: String,
    pub creator_name: String,
    pub subject_type: String,
    pub subject_id: String,
    pub deleted: bool,
    pub snapshot_key: &'static str,
    pub snapshot: &'a RawValue,
    /// The W3C trace context the publisher sent (contract §7), if valid.
    pub trace: Option<crate::trace::TraceContext>,
    /// A test event (contract §9): its envelope says `"test": true`.
    pub test: bool,
}

impl Event<'_> {
    /// The envelope (service document §2), with the snapshot's bytes as published.
    pub(crate) fn envelope(&self, org_id: &str) -> String {
        let mut out = Vec::with_capacity(200 + self.snapshot.get().len());
        let mut push = |text: &str, value: &str| {
            out.extend_from_slice(text.as_bytes());
            // Writing a string into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut out, value);
        };
        push("{\"id\":", &self.id);
        push(",\"action\":", &self.action);
        push(",\"created_at\":", &self.created_at);
        push(",\"organisation\":{\"id\":", org_id);
        push("},\"creator\":{\"id\":", &self.creator_id);
        push(",\"name\":", &self.creator_name);
        push("},\"subject\":{\"type\":", &self.subject_type);
        push(",\"id\":", &self.subject_id);
        if self.deleted {
            out.extend_from_slice(b",\"deleted\":true");
        }
        out.extend_from_slice(b"},\"");
        out.extend_from_slice(self.snapshot_key.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(self.snapshot.get().as_bytes());
        if self.test {
            out.extend_from_slice(b",\"test\":true");
        }
        out.push(b'}');
        // Only JSON text and valid UTF-8 strings went in.
        String::from_utf8(out).unwrap_or_default()
    }
}
