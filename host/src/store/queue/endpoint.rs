//! How deliveries to a webhook's endpoint are going, as every process sees it: kept in the
//! webhook's hash by the delivery workers on each change of state (never per delivery).
//!
//! | field | holds |
//! |---|---|
//! | `endpoint_state` | `probing` while the endpoint is probed one attempt at a time (its recent attempts failed or timed out); empty when healthy |
//! | `endpoint_state_since`, `endpoint_state_reason` | when that state began (ms), and why (the failure that began it) |
//! | `paused_until`, `paused_since`, `paused_reason` | a pause asked for by the endpoint (`429`/`503` with `Retry-After`): until when (ms), since when, why |
//!
//! A process's own view lives in `crate::delivery` (its lanes); it reads this with each
//! webhook lookup, so a state one process found is taken up by the others. The API's view of
//! it is `crate::domain::views::EndpointView`.

use crate::store::core::base::Base;
use crate::store::core::scripts::SET_IF_EXISTS;
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct EndpointStates {
    base: Base,
}

impl EndpointStates {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> EndpointStates {
        EndpointStates { base: base.clone() }
    }
}

/// A change of an endpoint's state, to keep in its webhook's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointChange {
    Healthy { at_ms: u64 },
    Probing { at_ms: u64, reason: String },
    Paused { at_ms: u64, until_ms: u64, reason: String },
}

/// The raw fields (`store::core::keys` names the hash), as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointFields {
    pub probing: bool,
    pub since_ms: Option<u64>,
    pub reason: Option<String>,
    pub paused_until_ms: Option<u64>,
    pub paused_since_ms: Option<u64>,
    pub paused_reason: Option<String>,
}

/// The hash fields, in the order [`EndpointFields::read`] takes them.
pub const FIELDS: [&str; 6] = [
    "endpoint_state",
    "endpoint_state_since",
    "endpoint_state_reason",
    "paused_until",
    "paused_since",
    "paused_reason",
];

impl EndpointFields {
    /// Reads the values of [`FIELDS`], in order.
    pub fn read(values: &[Option<String>]) -> EndpointFields {
        let get = |i: usize| values.get(i).cloned().flatten().filter(|v| !v.is_empty());
        let ms = |i: usize| get(i).and_then(|v| v.parse().ok());
        EndpointFields {
            probing: get(0).as_deref() == Some("probing"),
            since_ms: ms(1),
            reason: get(2),
            paused_until_ms: ms(3),
            paused_since_ms: ms(4),
            paused_reason: get(5),
        }
    }

    /// The pause's end when it is still ahead at `now_ms`.
    pub fn paused_at(&self, now_ms: u64) -> Option<u64> {
        self.paused_until_ms.filter(|until| *until > now_ms)
    }
}

/// The fields that put a webhook's endpoint back to healthy (a new URL, a reactivation).
pub fn reset_fields() -> Vec<(&'static str, String)> {
    FIELDS.iter().map(|f| (*f, String::new())).collect()
}

impl EndpointStates {
    /// Keeps a change of the endpoint's state in its webhook's hash (nothing if the webhook
    /// is gone).
    pub async fn set_endpoint_state(&self, org_id: &str, webhook: &str, change: &EndpointChange) -> Result<()> {
        let fields: Vec<(&str, String)> = match change {
            EndpointChange::Healthy { at_ms } => vec![
                ("endpoint_state", String::new()),
                ("endpoint_state_since", at_ms.to_string()),
                ("endpoint_state_reason", String::new()),
            ],
            EndpointChange::Probing { at_ms, reason } => vec![
                ("endpoint_state", "probing".into()),
                ("endpoint_state_since", at_ms.to_string()),
                ("endpoint_state_reason", reason.clone()),
            ],
            EndpointChange::Paused { at_ms, until_ms, reason } => vec![
                ("paused_until", until_ms.to_string()),
                ("paused_since", at_ms.to_string()),
                ("paused_reason", reason.clone()),
            ],
        };
        let mut call = SET_IF_EXISTS.call();
        call.key(&self.base.keys().webhook(org_id, webhook));
        for (name, value) in &fields {
            call.arg(*name).arg(value);
        }
        let set: i64 = call.run(&mut self.base.conn()).await?;
        crate::store::core::reply::done("set_if_exists.lua", set)?;
        Ok(())
    }
}
