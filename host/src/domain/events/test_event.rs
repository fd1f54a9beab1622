//! Test events (contract §9): an example event of one of a webhook's actions, sent to that
//! webhook alone — through its filter and plugins, signed as any other, its envelope marked
//! `"test": true` — so a subscriber can check its endpoint. It is not in the event log, makes
//! no snapshot and is never replayed. Its id is in a namespace of its own (`evt_test_…`),
//! it does not count toward the plan's events of the day, and at most 10 a minute go to one
//! webhook and 60 from one organisation (`429` beyond).

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::event::{Event, OPERATIONAL_CREATOR};
use super::publishing::Publishing;
use crate::catalog;
use crate::domain::fields::Fields;
use crate::domain::{Invalid, StoreError};
use crate::ids::{self, Kind};
use crate::store::events::test_events::{PER_ORG, PER_WEBHOOK, TestEventBudget};
use crate::store::tenants::webhooks::WebhookRecords;

/// Why no test event was sent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TestEventError {
    #[error("invalid request")]
    Invalid(Invalid),
    #[error("no such webhook")]
    NotFound,
    #[error("the webhook is inactive: reactivate it first")]
    Inactive,
    /// The test events' budget of the webhook or the organisation (contract §10).
    #[error(
        "too many test events: at most {} a minute to one webhook and {} from one organisation; the {scope}'s are used up",
        PER_WEBHOOK,
        PER_ORG
    )]
    TooMany { scope: &'static str, wait: std::time::Duration },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for TestEventError {
    fn from(invalid: Invalid) -> TestEventError {
        TestEventError::Invalid(invalid)
    }
}

/// Where a test event goes through: the webhook it is for, the test events' budget, publishing.
#[derive(Debug, Clone, Copy)]
pub(super) struct TestTo<'a> {
    pub publishing: &'a Publishing,
    pub webhooks: &'a WebhookRecords,
    pub budget: &'a TestEventBudget,
}

/// Sends a test event of `{"action"?}` (default: the webhook's first action) to the
/// organisation's webhook; the delivery's id.
pub(super) async fn send(
    to: TestTo<'_>,
    org_id: &str,
    webhook_id: &str,
    body: Map<String, Value>,
) -> Result<String, TestEventError> {
    if !ids::is_valid(Kind::Webhook, webhook_id) {
        return Err(TestEventError::NotFound);
    }
    let mut fields = Fields::new(body);
    let asked = fields.string("action");
    fields.finish()?;
    let webhook = to.webhooks.get_webhook(org_id, webhook_id).await?.ok_or(TestEventError::NotFound)?;
    let action = match asked {
        Some(action) if !webhook.subscribed_actions.contains(&action) => {
            return Err(Invalid::field("action", format!("the webhook does not subscribe to {action}")).into());
        }
        Some(action) => action,
        None => webhook.subscribed_actions.first().cloned().ok_or(TestEventError::Inactive)?,
    };
    if !webhook.active {
        return Err(TestEventError::Inactive);
    }
    if let Err(full) = to.budget.count_test_event(org_id, webhook_id).await? {
        return Err(TestEventError::TooMany { scope: full.scope, wait: full.wait });
    }
    let snapshot_key = catalog::snapshot_key_for(&action).unwrap_or("work_order");
    let subject_type = catalog::subject_type(snapshot_key);
    let snapshot = json!({"id": "test", "name": format!("Example {subject_type}"), "test": true});
    let snapshot = RawValue::from_string(snapshot.to_string())
        .map_err(|e| StoreError::Corrupt { key: "test event".into(), reason: e.to_string() })?;
    let event = Event {
        id: ids::new_test_event(),
        fresh_id: true,
        action,
        created_at: crate::time::now_rfc3339(),
        creator_id: OPERATIONAL_CREATOR.to_owned(),
        creator_name: "Weir test event".to_owned(),
        subject_type,
        subject_id: "test".to_owned(),
        deleted: false,
        snapshot_key,
        snapshot: std::borrow::Cow::Borrowed(&snapshot),
        trace: None,
        test: true,
        source: None,
    };
    match to.publishing.publish_test(org_id, webhook_id, &event).await? {
        Some(delivery) => Ok(delivery),
        None => Err(Invalid::field("action", "the webhook's filter does not select the example event").into()),
    }
}
