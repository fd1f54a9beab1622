//! A replay as the API and the settings pages show it.

use serde::Serialize;

use crate::store::events::replay::{Replay, ReplayState};

/// A replay as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ReplayView {
    /// Deliveries queued (so far, while `state` is `running`).
    pub count: u64,
    pub state: ReplayStatus,
    /// The window of acceptance times replayed (`null` when there is no replay).
    pub since: Option<String>,
    pub until: Option<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Why it stopped before completing.
    pub reason: Option<String>,
}

/// Where a webhook's latest replay is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReplayStatus {
    /// The webhook was never replayed (or its last replay ended more than 7 days ago).
    None,
    Running,
    /// Every event of its window was looked at.
    Completed,
    /// Its webhook was deactivated or deleted before it completed.
    Stopped,
}

impl ReplayStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ReplayStatus::None => "none",
            ReplayStatus::Running => "running",
            ReplayStatus::Completed => "completed",
            ReplayStatus::Stopped => "stopped",
        }
    }
}

impl ReplayView {
    pub(super) fn of(r: &Replay) -> ReplayView {
        ReplayView {
            count: r.queued,
            state: match r.state {
                ReplayState::Running => ReplayStatus::Running,
                ReplayState::Completed => ReplayStatus::Completed,
                ReplayState::Stopped => ReplayStatus::Stopped,
            },
            since: Some(crate::time::format_millis(r.since_ms)),
            until: Some(crate::time::format_millis(r.until_ms)),
            started_at: Some(r.started_at.clone()),
            finished_at: r.finished_at.clone(),
            reason: r.reason.clone(),
        }
    }

    /// A webhook that was never replayed.
    pub(super) fn none() -> ReplayView {
        ReplayView {
            count: 0,
            state: ReplayStatus::None,
            since: None,
            until: None,
            started_at: None,
            finished_at: None,
            reason: None,
        }
    }
}
