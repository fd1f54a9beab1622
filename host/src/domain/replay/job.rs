//! Replays as background jobs: left to the background by a request, or taken over from a
//! process that stopped working on them.

use std::time::{Duration, Instant};

use super::{LEASE, POLL, Replayer};
use crate::jobs::{Ended, Job, Stopping};
use crate::store::StoreError;
use crate::store::core::jobs::JobQueue;
use crate::store::events::replay::ReplayState;

/// Replays left to the background, or whose process stopped working on them, taken over
/// by any process with workers (`crate::jobs` runs them, renewing each one's lease).
#[derive(Debug)]
pub(crate) struct ReplayJobs {
    replayer: Replayer,
    telemetry: std::sync::Arc<crate::telemetry::Telemetry>,
}

impl ReplayJobs {
    pub(crate) fn new(replayer: &Replayer, telemetry: &std::sync::Arc<crate::telemetry::Telemetry>) -> ReplayJobs {
        ReplayJobs { replayer: replayer.clone(), telemetry: telemetry.clone() }
    }
}

impl Job for ReplayJobs {
    const QUEUE: JobQueue = JobQueue::Replays;
    const LEASE: Duration = LEASE;
    const POLL: Duration = POLL;
    const AT_ONCE: usize = 1;
    type Error = StoreError;

    /// Works on the replay of webhook `id` in slices well inside the lease until it ends or
    /// the process stops.
    async fn run(&self, webhook: &str, stopping: &Stopping) -> Result<Ended, StoreError> {
        let replayer = &self.replayer;
        let Some(mut replay) = replayer.doors.replays.get_replay(webhook).await? else { return Ok(Ended::Done) };
        let start = std::time::SystemTime::now();
        let mut worked = Ok(());
        while replay.state == ReplayState::Running && !stopping.is_set() && worked.is_ok() {
            worked = replayer.work(&mut replay, Instant::now() + LEASE / 3).await;
        }
        let attributes = vec![
            ("weir.webhook.id", webhook.to_owned()),
            ("weir.replay.queued", replay.queued.to_string()),
            ("weir.replay.state", format!("{:?}", replay.state).to_lowercase()),
        ];
        self.telemetry.job("replay", attributes, start, worked.as_ref().err().map(ToString::to_string));
        worked?;
        if replay.state == ReplayState::Running {
            return Ok(Ended::Yielded);
        }
        tracing::info!(webhook_id = %webhook, queued = replay.queued, state = ?replay.state, "replay ended");
        Ok(Ended::Done)
    }
}
