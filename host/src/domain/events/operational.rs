//! Publishing an operational event (contract §7): one Weir emits itself, about one of the
//! organisation's own resources — its id derived from what it reports, so reporting the
//! same occasion twice publishes it once. What each one reports is its reporter's
//! (`crate::domain::notices`, and the usage warning of `super::counted`).

use serde_json::Value;

/// What an operational event says.
#[derive(Debug)]
pub(crate) struct Operational<'a> {
    pub action: &'static str,
    /// Subject type and id.
    pub subject: (&'a str, &'a str),
    pub snapshot: Value,
    /// What makes this occurrence one (with the action and subject, its id).
    pub occasion: &'a str,
}
