//! Replays: a webhook's latest replay (`P:{replays}:r:{wh}`: what it replays and how far it
//! got) and the lease queue of running ones (`P:{replays}:jobs`), so that a replay whose
//! process dies is taken over and finished by another; and the step that queues one batch
//! of logged events of a partition to the webhook (`lua/replay.lua`).

use std::collections::HashMap;
use std::time::Duration;

use crate::store::core::base::Base;
use crate::store::core::keys::{self, Partition};
use crate::store::core::reply::name_of;
use crate::store::core::scripts::{REPLAY, REPLAY_JOB};
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct ReplayRecords {
    base: Base,
}

impl ReplayRecords {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> ReplayRecords {
        ReplayRecords { base: base.clone() }
    }
}

/// Where a replay stands: it queues the log hour by hour, and in each hour partition by
/// partition; `offset` entries of that list are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayPlace {
    pub hour: u32,
    pub partition: u16,
    pub offset: u64,
}

impl ReplayPlace {
    fn text(&self) -> String {
        format!("{}.{}.{}", self.hour, self.partition, self.offset)
    }

    fn parse(text: &str) -> Option<ReplayPlace> {
        let mut parts = text.splitn(3, '.');
        Some(ReplayPlace {
            hour: parts.next()?.parse().ok()?,
            partition: parts.next()?.parse().ok()?,
            offset: parts.next()?.parse().ok()?,
        })
    }
}

/// How a replay ended, or that it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayState {
    Running,
    /// Every event of its window was looked at.
    Completed,
    /// Its webhook was deactivated or deleted before it completed.
    Stopped,
}

impl ReplayState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReplayState::Running => "running",
            ReplayState::Completed => "completed",
            ReplayState::Stopped => "stopped",
        }
    }

    fn parse(text: &str) -> Option<ReplayState> {
        [ReplayState::Running, ReplayState::Completed, ReplayState::Stopped].into_iter().find(|s| s.as_str() == text)
    }
}

/// A webhook's replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub org_id: String,
    pub webhook_id: String,
    /// The window of acceptance times replayed, `[since_ms, until_ms)`.
    pub since_ms: u64,
    pub until_ms: u64,
    /// The actions the webhook subscribed to when the replay was asked for, and the sources
    /// it named (`src_…`).
    pub actions: Vec<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// Deliveries queued so far.
    pub queued: u64,
    pub state: ReplayState,
    /// Why it stopped.
    pub reason: Option<String>,
    pub place: ReplayPlace,
}

impl Replay {
    /// Whether log entries of `action` are replayed (a source's events are logged as
    /// [`crate::catalog::SOURCE_EVENTS`]: replayed when the webhook names a source).
    pub fn wants(&self, action: &str) -> bool {
        self.actions.iter().any(|a| a == action || (action == crate::catalog::SOURCE_EVENTS && a.starts_with("src_")))
    }

    fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("org", self.org_id.clone()),
            ("webhook", self.webhook_id.clone()),
            ("since", self.since_ms.to_string()),
            ("until", self.until_ms.to_string()),
            ("actions", self.actions.join(" ")),
            ("started_at", self.started_at.clone()),
            ("finished_at", self.finished_at.clone().unwrap_or_default()),
            ("queued", self.queued.to_string()),
            ("state", self.state.as_str().to_owned()),
            ("reason", self.reason.clone().unwrap_or_default()),
            ("place", self.place.text()),
        ]
    }

    fn from_fields(f: &HashMap<String, String>) -> Option<Replay> {
        let get = |name: &str| f.get(name).cloned().filter(|v| !v.is_empty());
        Some(Replay {
            org_id: get("org")?,
            webhook_id: get("webhook")?,
            since_ms: get("since")?.parse().ok()?,
            until_ms: get("until")?.parse().ok()?,
            actions: get("actions").map(|a| a.split(' ').map(str::to_owned).collect()).unwrap_or_default(),
            started_at: get("started_at")?,
            finished_at: get("finished_at"),
            queued: get("queued")?.parse().ok()?,
            state: ReplayState::parse(&get("state")?)?,
            reason: get("reason"),
            place: ReplayPlace::parse(&get("place")?)?,
        })
    }
}

/// One logged event to replay to a webhook.
#[derive(Debug, Clone)]
pub struct ReplayItem {
    /// The event's id (its key derives from it) and when it was accepted.
    pub event_id: String,
    pub accepted_ms: u64,
    pub action: &'static str,
    /// Its delivery to the webhook ([`crate::store::events::publish::delivery_id`] of the event: the same id publishing
    /// gives it, so an event is never given two deliveries to one webhook).
    pub delivery_id: String,
    /// `Type:id` of its subject when the webhook keeps each subject's order.
    pub subject: Option<String>,
}

/// What replaying one event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replayed {
    /// A delivery was made, or an ended one was given one more attempt.
    Queued,
    /// Its delivery is pending, succeeded or filtered: left alone.
    Kept,
    /// The event expired.
    Gone,
}

/// Whether a replay job write found its replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobWrite {
    Done,
    /// Create: one of the webhook is still running.
    Running,
    /// Progress or end: no running replay of the webhook.
    Missing,
}

impl ReplayRecords {
    async fn replay_job(&self, webhook: &str, mode: &str, when: u64, fields: &[(&str, String)]) -> Result<JobWrite> {
        let mut call = REPLAY_JOB.call();
        call.key(&self.base.keys().replay(webhook)).key(&self.base.keys().replay_jobs());
        call.arg(webhook).arg(mode).arg(when);
        for (name, value) in fields {
            call.arg(*name).arg(value);
        }
        let reply: String = call.run(&mut self.base.conn()).await?;
        name_of("replay_job.lua", &reply, |name| match name {
            "done" => Some(JobWrite::Done),
            "running" => Some(JobWrite::Running),
            "missing" => Some(JobWrite::Missing),
            _ => None,
        })
    }

    /// Stores a new replay, leased to the caller for `lease`; [`JobWrite::Running`] when
    /// one of the webhook is still running.
    pub async fn create_replay(&self, replay: &Replay, lease: Duration) -> Result<JobWrite> {
        let until = crate::time::now_millis() + lease.as_millis() as u64;
        let written = self.replay_job(&replay.webhook_id, "create", until, &replay.fields()).await?;
        if written == JobWrite::Done {
            self.base.acknowledged(&self.base.keys().replay(&replay.webhook_id)).await?;
        }
        Ok(written)
    }

    /// A webhook's latest replay (running, or ended within the time ended ones are kept).
    pub async fn get_replay(&self, webhook: &str) -> Result<Option<Replay>> {
        let f: HashMap<String, String> =
            redis::cmd("HGETALL").arg(self.base.keys().replay(webhook)).query_async(&mut self.base.conn()).await?;
        Ok(Replay::from_fields(&f))
    }

    /// Records how far a running replay got.
    pub async fn replay_progress(&self, webhook: &str, place: ReplayPlace, queued: u64) -> Result<JobWrite> {
        self.replay_job(webhook, "progress", 0, &[("place", place.text()), ("queued", queued.to_string())]).await
    }

    /// Ends a running replay; its record is kept for `keep`.
    pub async fn end_replay(
        &self,
        webhook: &str,
        state: ReplayState,
        reason: Option<&str>,
        queued: u64,
        keep: Duration,
    ) -> Result<JobWrite> {
        let fields = [
            ("state", state.as_str().to_owned()),
            ("reason", reason.unwrap_or_default().to_owned()),
            ("queued", queued.to_string()),
            ("finished_at", crate::time::now_rfc3339()),
        ];
        self.replay_job(webhook, "end", keep.as_millis() as u64, &fields).await
    }

    /// How busy partition `p` is for a replay to `webhook`: the webhook's deliveries
    /// waiting there unclaimed, and whether another webhook has work due there now.
    pub async fn replay_pressure(&self, p: Partition, webhook: &str) -> Result<(u64, bool)> {
        let k = self.base.keys();
        let mut pipe = redis::pipe();
        pipe.cmd("LLEN").arg(k.webhook_new(p, webhook));
        pipe.cmd("ZRANGE")
            .arg(k.ready(p))
            .arg("-inf")
            .arg(crate::time::now_millis())
            .arg("BYSCORE")
            .arg("LIMIT")
            .arg(0)
            .arg(2);
        let replies: Vec<redis::Value> = self.base.conn().query_reads(&pipe).await?;
        let mut replies = replies.into_iter();
        let mut next = || {
            replies
                .next()
                .ok_or_else(|| crate::store::core::reply::unexpected("replay pressure", "two replies expected"))
        };
        let backlog: u64 = redis::from_redis_value(next()?).map_err(redis::RedisError::from)?;
        let due: Vec<String> = redis::from_redis_value(next()?).map_err(redis::RedisError::from)?;
        Ok((backlog, due.iter().any(|w| w != webhook)))
    }

    /// Replays a batch of logged events of partition `p` to a webhook (`lua/replay.lua`).
    pub async fn replay_batch(
        &self,
        p: Partition,
        org: &str,
        webhook: &str,
        items: &[ReplayItem],
        retention: Duration,
    ) -> Result<Vec<Replayed>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let k = self.base.keys();
        let mut call = REPLAY.call();
        call.key(&k.ready(p)).key(&k.index_moves(p));
        call.arg(crate::time::now_millis()).arg(retention.as_millis() as u64).arg(org).arg(webhook);
        call.arg(self.base.history_flag());
        for item in items {
            let day = keys::day_of(item.accepted_ms);
            call.key(&k.event(p, org, &item.event_id))
                .key(&k.delivery(p, &item.delivery_id))
                .key(&k.org_deliveries(p, org, day))
                .key(&k.webhook_deliveries(p, webhook, day))
                .key(&k.webhook_new(p, webhook))
                .key(&k.webhook_queue(p, webhook))
                .keys(k.order(p, webhook));
            call.arg(&item.delivery_id).arg(&item.event_id).arg(item.action).arg(item.subject.as_deref().unwrap_or(""));
        }
        let replies: Vec<String> = call.run(&mut self.base.conn()).await?;
        let replayed = replies
            .iter()
            .map(|reply| {
                name_of("replay.lua", reply, |name| match name {
                    "queued" => Some(Replayed::Queued),
                    "kept" => Some(Replayed::Kept),
                    "gone" => Some(Replayed::Gone),
                    _ => None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if replayed.contains(&Replayed::Queued) {
            self.base.acknowledged(&k.ready(p)).await?;
        }
        Ok(replayed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_reads_back_from_its_fields() {
        let replay = Replay {
            org_id: "org_1".into(),
            webhook_id: "wh_1".into(),
            since_ms: 1,
            until_ms: 2,
            actions: vec!["form_completed".into(), "form_created".into()],
            started_at: "2026-11-25T00:00:00.000Z".into(),
            finished_at: None,
            queued: 7,
            state: ReplayState::Running,
            reason: None,
            place: ReplayPlace { hour: 490_000, partition: 3, offset: 500 },
        };
        let fields: HashMap<String, String> = replay.fields().into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        assert_eq!(Replay::from_fields(&fields), Some(replay));
        assert_eq!(Replay::from_fields(&HashMap::new()), None);
    }
}
