//! What a replay reads of an event's envelope.

use serde::Deserialize;

/// What a replay reads of an event: its id (its deliveries' ids derive from it) and, for an
/// operational event, what it is about.
#[derive(Deserialize)]
pub(super) struct Head {
    pub(super) id: String,
    #[serde(default)]
    subject: Option<Subject>,
    #[serde(default)]
    webhook_delivery: Option<AboutDelivery>,
}

#[derive(Deserialize)]
struct Subject {
    #[serde(rename = "type")]
    kind: String,
    id: String,
}

#[derive(Deserialize)]
struct AboutDelivery {
    webhook_id: String,
}

impl Head {
    /// Its subject as an ordered webhook's deliveries are keyed by (`Type:id`).
    pub(super) fn subject_key(&self) -> Option<String> {
        self.subject.as_ref().map(|s| format!("{}:{}", s.kind, s.id))
    }

    /// The source whose request this event is, if it is one's.
    pub(super) fn source(&self) -> Option<&str> {
        self.subject.as_ref().filter(|s| s.kind == crate::sources::forward::SUBJECT_TYPE).map(|s| s.id.as_str())
    }

    /// Whether this operational event is about `webhook` (it never goes to it).
    pub(super) fn is_about(&self, webhook: &str) -> bool {
        self.subject.as_ref().is_some_and(|s| s.id == webhook)
            || self.webhook_delivery.as_ref().is_some_and(|d| d.webhook_id == webhook)
    }
}
