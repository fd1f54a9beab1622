//! An event as publish checked it, and its envelope (service document §2).

use std::borrow::Cow;

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
    /// As the request's bytes hold it, or (an event read on the tenant threads) a copy.
    pub snapshot: Cow<'a, RawValue>,
    /// The W3C trace context the publisher sent (contract §7), if valid.
    pub trace: Option<crate::trace::TraceContext>,
    /// A test event (contract §9): its envelope says `"test": true`.
    pub test: bool,
    /// A source's request (contract §10).
    pub source: Option<FromSource>,
}

/// A source's request an event is: its envelope, made by `crate::sources::forward` (the
/// snapshot is not part of it), and what its publish writes beside it.
#[derive(Debug)]
pub(crate) struct FromSource {
    pub envelope: String,
    pub intake: crate::store::events::publish::Intake,
}

impl Event<'_> {
    /// The same event, holding its own snapshot.
    pub(crate) fn into_owned(self) -> Event<'static> {
        Event {
            id: self.id,
            fresh_id: self.fresh_id,
            action: self.action,
            created_at: self.created_at,
            creator_id: self.creator_id,
            creator_name: self.creator_name,
            subject_type: self.subject_type,
            subject_id: self.subject_id,
            deleted: self.deleted,
            snapshot_key: self.snapshot_key,
            snapshot: Cow::Owned(self.snapshot.into_owned()),
            trace: self.trace,
            test: self.test,
            source: self.source,
        }
    }

    /// What its subscribers are found by: a source's event goes to the webhooks naming the
    /// source, any other to those subscribed to its action.
    pub(crate) fn subscription(&self) -> &str {
        if self.source.is_some() { &self.subject_id } else { &self.action }
    }

    /// The envelope (service document §2), with the snapshot's bytes as published.
    pub(crate) fn envelope(&self, org_id: &str) -> String {
        if let Some(source) = &self.source {
            return source.envelope.clone();
        }
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
