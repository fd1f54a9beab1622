//! Replaying a window of the event log to a webhook (contract §7): backfill for a new
//! webhook, and recovery after an outage or a deactivation. Every event of the organisation
//! accepted in `[since, until)` whose action the webhook subscribes to is sent to it through
//! its current plugins: an event with no delivery to it gets one, a delivery that ended
//! `failed` or `cancelled` gets one more attempt, and nothing else is touched — so a replay
//! run twice, or taken over after a crash, sends nothing twice.
//!
//! A replay is a job (`store::events::replay`): the request queues it and works on it for up to
//! [`INLINE`] (a window of some thousands of events completes within it, and the answer
//! says so); a larger one goes on in the background, in batches of [`BATCH`] log entries
//! (each a few milliseconds of Redis), leased like deliveries so that another process
//! finishes it if this one dies.
//!
//! A replay is background work: it queues more only while fewer than [`WAITING`] of its
//! deliveries wait unclaimed in the partition (it queues as fast as they go out, not
//! faster), and once another webhook was seen with work due there it queues one batch per
//! [`YIELD`] only, so live traffic keeps its pace and a replay still moves.

mod error;
mod head;
pub(crate) mod job;
mod view;
mod window;

pub(crate) use self::error::ReplayError;
use self::head::Head;
pub(crate) use self::view::{ReplayStatus, ReplayView};

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::filtering::Filtering;
use super::moved::Moved;
use crate::catalog;
use crate::ids::{self, Kind};
use crate::store::core::jobs::{JobQueue, Jobs};
use crate::store::core::keys::{self, Partition};
use crate::store::events::log::{EventLog, LogEntry, LogSlice, Window};
use crate::store::events::publish::delivery_id;
use crate::store::events::replay::{JobWrite, Replay, ReplayItem, ReplayPlace, ReplayRecords, ReplayState, Replayed};
use crate::store::events::stored::StoredEvent;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::webhooks::WebhookRecords;
use crate::store::{Keys, StoreError};

/// How long a replay request works before answering (the rest goes on in the background).
pub(crate) const INLINE: Duration = Duration::from_millis(500);
/// Log entries read (and events replayed, at most) per step.
pub(crate) const BATCH: usize = 256;
/// Most of a replay's deliveries waiting unclaimed in a partition before it queues more.
const WAITING: u64 = 64;
/// Once other work was seen due, a replay queues one batch per this long (for this long).
pub(crate) const YIELD: Duration = Duration::from_secs(1);
/// How long a replay waits before looking at the pressure again.
const BACKOFF: Duration = Duration::from_millis(20);
/// How long a process holds a replay before another may take it over.
const LEASE: Duration = Duration::from_secs(30);
/// How long an ended replay stays readable (`GET /api/v2/webhooks/{id}/replay`).
const KEEP_ENDED: Duration = Duration::from_secs(7 * 86_400);
/// How often an idle worker looks for replays to take over.
const POLL: Duration = Duration::from_secs(1);

/// Replays, for the surfaces: request one, and read how the latest went.
#[derive(Debug, Clone)]
pub(crate) struct Replays {
    replayer: Replayer,
    telemetry: std::sync::Arc<crate::telemetry::Telemetry>,
}

impl Replays {
    pub(crate) fn new(replayer: &Replayer, telemetry: &std::sync::Arc<crate::telemetry::Telemetry>) -> Replays {
        Replays { replayer: replayer.clone(), telemetry: telemetry.clone() }
    }
}

impl Replays {
    /// Validates a replay request for the organisation's webhook, queues it and works on it
    /// for up to [`INLINE`].
    pub(crate) async fn request(
        &self,
        org_id: &str,
        webhook_id: &str,
        body: Map<String, Value>,
    ) -> Result<ReplayView, ReplayError> {
        let start = std::time::SystemTime::now();
        let done = self.replayer.request(org_id, webhook_id, body, INLINE).await;
        if let Ok(view) = &done {
            // The part done while the request waited (the rest, if any, is its job's).
            let attributes = vec![
                ("weir.webhook.id", webhook_id.to_owned()),
                ("weir.organisation.id", org_id.to_owned()),
                ("weir.replay.queued", view.count.to_string()),
                (
                    "weir.replay.state",
                    serde_json::to_value(view.state)
                        .ok()
                        .and_then(|s| s.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                ),
            ];
            self.telemetry.job("replay", attributes, start, None);
        }
        done
    }

    /// The organisation's webhook's latest replay (`None`: no such webhook).
    pub(crate) async fn status(&self, org_id: &str, webhook_id: &str) -> Result<Option<ReplayView>, StoreError> {
        self.replayer.status(org_id, webhook_id).await
    }

    /// How far back replays reach (`WEIR_EVENT_RETENTION`; zero: no event log).
    pub(crate) fn event_retention(&self) -> Duration {
        self.replayer.plans.ceiling().events
    }
}

/// What a replay needs: the store and what moved to history, the retention settings, where
/// a webhook's filter is evaluated, and this process's delivery workers to tell of new work
/// (`None` from `weir admin`: the serving processes' workers find it within their poll).
#[derive(Debug, Clone)]
pub(crate) struct Replayer {
    doors: ReplayDoors,
    moved: Moved,
    filtering: Filtering,
    arrivals: Option<std::sync::Arc<crate::shared::Arrivals>>,
    /// Each plan's retentions (a replay reaches back its organisation's plan's).
    plans: std::sync::Arc<crate::plans::Plans>,
}

/// The store's concerns a replay works with: the organisation's plan and webhook, the replay
/// itself and its job's lease, and the event log it walks.
#[derive(Debug, Clone)]
pub(crate) struct ReplayDoors {
    pub keys: Keys,
    pub orgs: Orgs,
    pub webhooks: WebhookRecords,
    pub replays: ReplayRecords,
    pub jobs: Jobs,
    pub log: EventLog,
}

impl Replayer {
    pub(crate) fn new(
        doors: ReplayDoors,
        (moved, filtering): (&Moved, &Filtering),
        arrivals: Option<&std::sync::Arc<crate::shared::Arrivals>>,
        plans: &std::sync::Arc<crate::plans::Plans>,
    ) -> Replayer {
        Replayer {
            doors,
            moved: moved.clone(),
            filtering: filtering.clone(),
            arrivals: arrivals.cloned(),
            plans: plans.clone(),
        }
    }

    /// The organisation's plan's delivery and event retentions, its plan read now.
    async fn retentions_of(&self, org_id: &str) -> Result<(Duration, Duration), StoreError> {
        let plan = self.doors.orgs.org_plan_name(org_id).await?;
        Ok((self.plans.delivery_retention(&plan), self.plans.event_retention(&plan)))
    }

    /// Validates a replay request (`{"since": ts, "until"?: ts}`) for the organisation's
    /// webhook, queues it and works on it for up to `inline`.
    pub(crate) async fn request(
        &self,
        org_id: &str,
        webhook_id: &str,
        body: Map<String, Value>,
        inline: Duration,
    ) -> Result<ReplayView, ReplayError> {
        if !ids::is_valid(Kind::Webhook, webhook_id) {
            return Err(ReplayError::NotFound);
        }
        let webhook = self.doors.webhooks.get_webhook(org_id, webhook_id).await?.ok_or(ReplayError::NotFound)?;
        let now = crate::time::now_millis();
        let (_, event_retention) = self.retentions_of(org_id).await?;
        let (since_ms, until_ms) = window::of(body, now, event_retention)?;
        if !webhook.active {
            return Err(ReplayError::Inactive);
        }
        let mut replay = Replay {
            org_id: org_id.to_owned(),
            webhook_id: webhook_id.to_owned(),
            since_ms,
            until_ms,
            // Its sources too: their events are logged as `source_event` (`step` keeps its own).
            actions: webhook.subscribed_actions.iter().chain(&webhook.subscribed_sources).cloned().collect(),
            started_at: crate::time::format_millis(now),
            finished_at: None,
            queued: 0,
            state: ReplayState::Running,
            reason: None,
            place: ReplayPlace { hour: keys::hour_of(since_ms), partition: 0, offset: 0 },
        };
        if self.doors.replays.create_replay(&replay, LEASE).await? == JobWrite::Running {
            return Err(ReplayError::Running);
        }
        // Queued: from here on the replay is answered as it stands, never as a failure — a
        // `503` would say nothing was done while its job goes on (and a client's retry would
        // meet it as `409`). Work it could not do now (history or Redis down) waits for a
        // worker of any process, once its lease ends if it cannot be made due at once.
        if let Err(e) = self.work(&mut replay, Instant::now() + inline).await {
            tracing::warn!(error = %e, webhook_id, "a replay could not go on now; it goes on later");
        }
        if replay.state == ReplayState::Running {
            // Due at once: a worker (of any process) goes on with it.
            if let Err(e) = self.doors.jobs.renew_job(JobQueue::Replays, webhook_id, Duration::ZERO).await {
                tracing::debug!(error = %e, webhook_id, "a replay goes on when its lease ends");
            }
        }
        Ok(ReplayView::of(&replay))
    }

    /// The organisation's webhook's latest replay (`None`: no such webhook).
    pub(crate) async fn status(&self, org_id: &str, webhook_id: &str) -> Result<Option<ReplayView>, StoreError> {
        if !ids::is_valid(Kind::Webhook, webhook_id)
            || self.doors.webhooks.get_webhook(org_id, webhook_id).await?.is_none()
        {
            return Ok(None);
        }
        let replay = self.doors.replays.get_replay(webhook_id).await?;
        Ok(Some(replay.filter(|r| r.org_id == org_id).as_ref().map_or_else(ReplayView::none, ReplayView::of)))
    }

    /// Works on a running replay until it ends or `deadline` passes, saving how far it got
    /// after every step and keeping its lease; ends it (completed, or stopped when its
    /// webhook is no longer active). The caller holds the lease when it starts.
    pub(crate) async fn work(&self, replay: &mut Replay, deadline: Instant) -> Result<(), StoreError> {
        let partitions = self.doors.keys.partition_count();
        let last_hour = keys::hour_of(replay.until_ms.saturating_sub(1));
        let window = Window { since_ms: replay.since_ms, until_ms: replay.until_ms, action: None };
        let mut renewed = Instant::now();
        let mut last_step = Instant::now() - YIELD;
        let mut busy_until = Instant::now();
        while replay.state == ReplayState::Running {
            if renewed.elapsed() > LEASE / 3 {
                // Still ours: no other process takes it over while this one works on it.
                self.doors.jobs.renew_job(JobQueue::Replays, &replay.webhook_id, LEASE).await?;
                renewed = Instant::now();
            }
            if replay.place.hour > last_hour || replay.until_ms <= replay.since_ms {
                return self.end(replay, ReplayState::Completed, None).await;
            }
            match self.doors.webhooks.get_webhook(&replay.org_id, &replay.webhook_id).await? {
                None => return self.end(replay, ReplayState::Stopped, Some("the webhook was deleted")).await,
                Some(w) if !w.active => {
                    return self.end(replay, ReplayState::Stopped, Some("the webhook was deactivated")).await;
                }
                Some(_) => {}
            }
            if Instant::now() >= deadline {
                return Ok(());
            }
            let place = replay.place;
            let p = Partition(place.partition);
            let (backlog, others_due) = self.doors.replays.replay_pressure(p, &replay.webhook_id).await?;
            if others_due {
                busy_until = Instant::now() + YIELD;
            }
            if backlog >= WAITING || (Instant::now() < busy_until && last_step.elapsed() < YIELD) {
                tokio::time::sleep(BACKOFF).await;
                continue;
            }
            last_step = Instant::now();
            let reads = self.moved.reads();
            let (entries, read_to) = self
                .doors
                .log
                .read_log(
                    p,
                    &replay.org_id,
                    LogSlice { hour: place.hour, start: place.offset, n: BATCH },
                    reads.moved_indexes(),
                )
                .await?;
            if read_to == place.offset {
                replay.place = match place.partition + 1 {
                    next if next < partitions => ReplayPlace { partition: next, offset: 0, ..place },
                    _ => ReplayPlace { hour: place.hour + 1, partition: 0, offset: 0 },
                };
            } else {
                let wanted: Vec<(Partition, LogEntry)> = entries
                    .into_iter()
                    .flatten()
                    .filter(|e| window.keeps(e) && replay.wants(e.action))
                    .map(|e| (p, e))
                    .collect();
                let queued = self.step(replay, p, &wanted).await?;
                replay.queued += queued;
                replay.place = ReplayPlace { offset: read_to, ..place };
            }
            if self.doors.replays.replay_progress(&replay.webhook_id, replay.place, replay.queued).await?
                == JobWrite::Missing
            {
                // Ended elsewhere (a process that took it over meanwhile finished it).
                replay.state = ReplayState::Stopped;
            }
        }
        Ok(())
    }

    /// Replays one batch of log entries of partition `p`: how many were queued.
    async fn step(&self, replay: &Replay, p: Partition, wanted: &[(Partition, LogEntry)]) -> Result<u64, StoreError> {
        if wanted.is_empty() {
            return Ok(0);
        }
        // The log holds each event's digest; its delivery's id derives from its id, which
        // only the stored event tells.
        let reads = self.moved.reads();
        let (events, moved) = reads.logged_events(wanted).await?;
        // An ordered webhook's replayed deliveries queue behind their subjects' pending ones;
        // its filter, as it is now, decides which events it gets.
        let webhook = self.doors.webhooks.get_webhook(&replay.org_id, &replay.webhook_id).await?;
        let ordered =
            webhook.as_ref().is_some_and(|w| w.ordering == crate::store::tenants::webhooks::Ordering::Subject);
        let filter = webhook.and_then(|w| w.filter);
        let candidates: Vec<(usize, &LogEntry, StoredEvent, Head)> = wanted
            .iter()
            .zip(events)
            .enumerate()
            .filter_map(|(i, ((_, entry), event))| {
                let event = event?;
                let head: Head = serde_json::from_str(&event.envelope).ok()?;
                let about_it = catalog::is_operational(entry.action) && head.is_about(&replay.webhook_id);
                let other_source = head.source().is_some_and(|s| !replay.actions.iter().any(|a| a == s));
                (!about_it && !other_source).then_some((i, entry, event, head))
            })
            .collect();
        let selected = match filter {
            None => vec![true; candidates.len()],
            Some(source) => {
                let compiled = crate::filters::Filter::compile(&source).ok().map(std::sync::Arc::new);
                let envelopes = candidates.iter().map(|c| c.2.envelope.clone()).collect();
                let about = (replay.org_id.as_str(), replay.webhook_id.as_str());
                self.filtering.replayed(about, compiled, envelopes).await
            }
        };
        let mut revive = Vec::new();
        let items: Vec<ReplayItem> = candidates
            .into_iter()
            .zip(selected)
            .filter(|(_, selected)| *selected)
            .map(|((i, entry, event, head), _)| {
                if moved.contains(&i) {
                    revive.push((head.id.clone(), event.clone()));
                }
                let subject = head.subject_key().filter(|_| ordered);
                ReplayItem {
                    delivery_id: delivery_id(p, event.accepted_ms, &replay.org_id, &head.id, &replay.webhook_id),
                    event_id: head.id,
                    accepted_ms: event.accepted_ms,
                    action: entry.action,
                    subject,
                }
            })
            .collect();
        // What moved to history comes back first: the events (a delivery needs its event),
        // and the deliveries (a replay never makes a second row beside a moved one).
        for (id, event) in &revive {
            reads.revive_event(p, &replay.org_id, id, event).await?;
        }
        let ids: Vec<String> = items.iter().map(|item| item.delivery_id.clone()).collect();
        reads.revive(&ids).await?;
        let (kept, _) = self.retentions_of(&replay.org_id).await?;
        let replayed = self.doors.replays.replay_batch(p, &replay.org_id, &replay.webhook_id, &items, kept).await?;
        let queued = replayed.iter().filter(|r| **r == Replayed::Queued).count() as u64;
        if queued > 0
            && let Some(arrivals) = &self.arrivals
        {
            arrivals.arrived(p);
        }
        Ok(queued)
    }

    async fn end(&self, replay: &mut Replay, state: ReplayState, reason: Option<&str>) -> Result<(), StoreError> {
        self.doors.replays.end_replay(&replay.webhook_id, state, reason, replay.queued, KEEP_ENDED).await?;
        replay.state = state;
        replay.reason = reason.map(str::to_owned);
        replay.finished_at = Some(crate::time::now_rfc3339());
        Ok(())
    }
}
