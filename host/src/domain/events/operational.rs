//! Publishing an operational event (contract §7): one Weir emits itself, about one of the
//! organisation's own resources — its id derived from what it reports, so reporting the
//! same occasion twice publishes it once. What each one reports is its reporter's
//! (`crate::domain::notices`, and the usage warning of `super::counted`).

use serde_json::Value;
use serde_json::value::RawValue;

use super::event::{Event, OPERATIONAL_CREATOR};
use super::publishing::Publishing;
use crate::catalog;
use crate::ids;

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

impl Publishing {
    /// Publishes an operational event to the organisation's webhooks that subscribe to it
    /// but `except` (the webhook it is about). A failure is logged, not returned: what it
    /// reports is stored already.
    pub(crate) async fn publish_operational(&self, org_id: &str, about: Operational<'_>, except: Option<&str>) {
        let Operational { action, subject: (subject_type, subject_id), snapshot, occasion } = about;
        // The prefix is Weir's: publishers may not use it (`events::validate`).
        let id = format!(
            "{}{}",
            ids::OPERATIONAL_EVENT_PREFIX,
            hex::encode(&ids::digest(&["weir", action, subject_id, occasion])[..12])
        );
        let Some(snapshot_key) = catalog::snapshot_key_for(action) else { return };
        let Ok(snapshot) = RawValue::from_string(snapshot.to_string()) else { return };
        let event = Event {
            id,
            fresh_id: false,
            action: action.to_owned(),
            created_at: crate::time::now_rfc3339(),
            creator_id: OPERATIONAL_CREATOR.to_owned(),
            creator_name: "Weir".to_owned(),
            subject_type: subject_type.to_owned(),
            subject_id: subject_id.to_owned(),
            deleted: false,
            snapshot_key,
            snapshot: std::borrow::Cow::Borrowed(&snapshot),
            trace: None,
            test: false,
        };
        match self.publish_except(org_id, &event, except).await {
            Ok(_) => tracing::info!(org_id = %org_id, event_id = %event.id, action, "operational event published"),
            Err(e) => tracing::warn!(error = %e, org_id = %org_id, action, "cannot publish an operational event"),
        }
    }
}
