//! The move (contract §8): a background job per partition (`crate::jobs`, the `History`
//! queue: every process with workers takes part, one at a time per partition, the lease
//! kept while it works). Each turn writes to PostgreSQL the deliveries that ended at least
//! `WEIR_HISTORY_HOT` ago, then has Redis forget those still as they were read; then the
//! events accepted at least that long ago, forgotten once none of their deliveries has a
//! row in Redis (a delivery still retrying needs its event), with the report exports'
//! snapshot pointers that point at them (`super::snapshots`). Writing first and forgetting
//! second makes a move that is cut short (a crash, PostgreSQL going away) safe to repeat:
//! writes are keyed by id, and what was not forgotten is simply moved again. Once an hour a
//! turn also drops the days past the retention periods, and an idle one takes a step of the
//! sweep of pointers earlier releases left behind (`super::sweep`).

use super::indexes::IndexRuns;
use super::records::Records;
use super::snapshots::PointerRows;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::meters::Counter;

use super::db::History;
use super::indexes::IndexRun;
use super::records::{DeliveryRecord, EventRecord};
use super::snapshots::PointerRow;
use super::sweep::{Stores, Sweep};
use crate::jobs::{Ended, Job, Stopping};
use crate::store::core::jobs::JobQueue;
use crate::store::core::jobs::Jobs;
use crate::store::core::keys::{Partition, day_of, event_digest};
use crate::store::events::accepted::Accepted;
use crate::store::events::accepted::Forget;
use crate::store::events::exports::ExportRecords;
use crate::store::events::publish::delivery_id;
use crate::store::events::stored::StoredEvent;
use crate::store::queue::ended::Ended as EndedRows;
use crate::store::queue::index::IndexHeads;
use crate::store::queue::index::IndexKind;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::webhooks::WebhookRecords;
use crate::store::{Keys, StoreError};

/// Rows or events one batch moves (written to PostgreSQL in statements of 500, side by
/// side on the pool's three connections).
const BATCH: usize = 1500;
/// Day indexes one batch looks at.
const INDEXES: usize = 64;
/// How long one turn may work (well inside the lease).
const TURN: Duration = Duration::from_secs(10);
/// How often a partition with nothing due is looked at again.
const IDLE: Duration = Duration::from_secs(1);
/// How often old days are dropped.
const DROP_EVERY: Duration = Duration::from_secs(3600);

/// What the mover reads and forgets in Redis: ended rows, accepted events, snapshot
/// pointers and day indexes' heads, and its jobs' queue.
#[derive(Debug, Clone)]
pub(crate) struct MoverDoors {
    pub keys: Keys,
    pub orgs: Orgs,
    pub webhooks: WebhookRecords,
    pub ended: EndedRows,
    pub accepted: Accepted,
    pub exports: ExportRecords,
    pub index_heads: IndexHeads,
    pub jobs: Jobs,
}

/// The mover of one process.
pub(crate) struct Mover {
    history: Arc<History>,
    doors: MoverDoors,
    delivery_retention: Duration,
    event_retention: Duration,
    /// Each plan's retention, for the class its organisations' deliveries are written in.
    plans: Arc<crate::plans::Plans>,
    /// When days were last dropped (ms since the epoch; 0: never).
    dropped_at: AtomicU64,
    /// Deliveries and events this process moved (`/metrics`).
    moved: (Counter, Counter),
    /// Pointers earlier releases left behind (`super::sweep`).
    sweep: Sweep,
}

impl std::fmt::Debug for Mover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mover").field("history", &self.history).finish_non_exhaustive()
    }
}

impl Mover {
    pub(crate) fn new(
        history: Arc<History>,
        doors: MoverDoors,
        (retention, plans): ((Duration, Duration), &Arc<crate::plans::Plans>),
        moved: (Counter, Counter),
    ) -> Mover {
        let (delivery_retention, event_retention) = retention;
        let plans = plans.clone();
        let dropped_at = AtomicU64::new(0);
        let sweep = Sweep::default();
        Mover { history, doors, delivery_retention, event_retention, plans, dropped_at, moved, sweep }
    }

    /// The retention class of an organisation (`super::classes`), its plan read now (once
    /// a batch: `known` keeps what was read).
    async fn class_of(&self, org: &str, known: &mut HashMap<String, u32>) -> Result<u32, StoreError> {
        if let Some(class) = known.get(org) {
            return Ok(*class);
        }
        let kept = self.plans.delivery_retention(&self.doors.orgs.org_plan_name(org).await?);
        let class = super::classes::class_of(kept, self.delivery_retention);
        known.insert(org.to_owned(), class);
        Ok(class)
    }

    /// What waits in Redis past the hot period: ended deliveries, and events.
    pub(crate) async fn backlog(&self) -> Result<(u64, u64), StoreError> {
        let before = crate::time::now_millis().saturating_sub(self.history.hot().as_millis() as u64);
        let (mut deliveries, mut events) = (0, 0);
        for p in self.doors.keys.partitions() {
            deliveries += self.doors.ended.ended_backlog(p, before).await?;
            events += self.doors.accepted.accepted_backlog(p, before).await?;
        }
        Ok((deliveries, events))
    }

    /// Makes every partition a job of the history queue (those that are not yet).
    pub(crate) async fn enlist(&self) -> Result<(), StoreError> {
        let partitions: Vec<String> = self.doors.keys.partitions().map(|p| p.0.to_string()).collect();
        self.doors.jobs.ensure_jobs(JobQueue::History, &partitions).await
    }

    /// Moves what is due in partition `p` for up to [`TURN`]; whether work is left.
    async fn turn(&self, p: Partition, stopping: &Stopping) -> Result<bool, StoreError> {
        self.history.migrate().await?;
        self.drop_old_days().await?;
        let started = Instant::now();
        while started.elapsed() < TURN && !stopping.is_set() {
            let before = crate::time::now_millis().saturating_sub(self.history.hot().as_millis() as u64);
            let rows = self.move_deliveries(p, before).await?;
            let events = self.move_events(p, before).await?;
            let indexes = self.move_indexes(p, before).await?;
            if rows < BATCH && events < BATCH && indexes < INDEXES {
                // Nothing more due: a step of the sweep, while it has one.
                let days = super::reads::lookback_days(self.delivery_retention, self.event_retention);
                let to = Stores { exports: &self.doors.exports, orgs: &self.doors.orgs, history: &self.history, days };
                return self.sweep.step(&to, p).await;
            }
        }
        Ok(true)
    }

    /// One batch of ended deliveries: how many were read.
    async fn move_deliveries(&self, p: Partition, before_ms: u64) -> Result<usize, StoreError> {
        let rows = self.doors.ended.ended_rows(p, before_ms, BATCH).await?;
        let mut classes = HashMap::new();
        let mut records = Vec::with_capacity(rows.len());
        for r in rows.iter().filter(|r| !r.fields.is_empty()) {
            let Some(ms) = crate::ids::millis_of(crate::ids::Kind::Delivery, &r.id) else { continue };
            let class = match r.org() {
                Some(org) => self.class_of(&String::from_utf8_lossy(org), &mut classes).await?,
                None => 0,
            };
            let day = super::classes::stored_day(class, day_of(ms));
            records.push(DeliveryRecord { day, id: r.id.clone(), fields: r.fields.clone() });
        }
        Records::of(&self.history).write_deliveries(&records).await?;
        let forgotten = self.doors.ended.forget_moved(p, &rows).await?;
        self.moved.0.inc_by(forgotten as u64);
        Ok(rows.len())
    }

    /// One batch of accepted events: how many were read. An event some of whose deliveries
    /// are still in Redis waits another hot period, unwritten; the others are written, then
    /// forgotten by a script that checks their deliveries again (one retried meanwhile keeps
    /// its event here, written twice at most, by id).
    async fn move_events(&self, p: Partition, before_ms: u64) -> Result<usize, StoreError> {
        let events = self.doors.accepted.accepted_events(p, before_ms, BATCH).await?;
        let later = crate::time::now_millis() + self.history.hot().as_millis() as u64;
        let mut webhooks: HashMap<String, Vec<String>> = HashMap::new();
        // Each event readable: its record and its deliveries' ids (one per webhook there is).
        let mut readable: Vec<(&str, EventRecord, Vec<String>, Identity)> = Vec::new();
        let mut forgets = Vec::new();
        let mut classes = HashMap::new();
        for event in &events {
            let Some(stored) = &event.stored else {
                forgets.push(Forget { event_key: event.key.clone(), delivery_keys: Vec::new() });
                continue;
            };
            let Some(identity) = identity(stored) else {
                tracing::warn!(key = %event.key, "an accepted event cannot be read; it stays in Redis");
                self.doors.accepted.note_accepted(p, &[event.key.as_str()], later).await?;
                continue;
            };
            let (org, id, accepted_ms) = (identity.org.clone(), &identity.id, identity.accepted_ms);
            if !webhooks.contains_key(&org) {
                webhooks.insert(org.clone(), self.doors.webhooks.webhook_ids(&org).await?);
            }
            let ids = webhooks[&org].iter().map(|w| delivery_id(p, accepted_ms, &org, id, w)).collect();
            let class = self.class_of(&org, &mut classes).await?;
            let record = EventRecord {
                day: super::classes::stored_day(class, day_of(accepted_ms)),
                part: p.0,
                digest: event_digest(&org, id),
                stored: stored.clone(),
            };
            readable.push((event.key.as_str(), record, ids, identity));
        }
        let all_ids: Vec<String> = readable.iter().flat_map(|(_, _, ids, _)| ids.iter().cloned()).collect();
        let mut here = self.doors.ended.rows_here(&all_ids).await?.into_iter();
        let (mut records, mut waiting, mut written) = (Vec::new(), Vec::new(), Vec::new());
        for (key, record, ids, identity) in readable {
            // This event's share of the answers (taken whole: they run in step with `all_ids`).
            let answers: Vec<bool> = here.by_ref().take(ids.len()).collect();
            let needed = answers.len() < ids.len() || answers.contains(&true);
            if needed {
                // Not written: only what was written may be forgotten.
                waiting.push(key);
                continue;
            }
            records.push(record);
            written.push(identity);
            let delivery_keys = ids.iter().map(|id| self.doors.keys.delivery(p, id)).collect();
            forgets.push(Forget { event_key: key.to_owned(), delivery_keys });
        }
        self.doors.accepted.note_accepted(p, &waiting, later).await?;
        Records::of(&self.history).write_events(&records).await?;
        self.move_pointers(p, &written).await?;
        let forgotten = self.doors.accepted.forget_events(p, &forgets, later).await?;
        self.moved.1.inc_by(forgotten as u64);
        Ok(events.len())
    }

    /// The snapshot pointers (`store::events::exports::Pointer`) that still point at events
    /// just written move with them: written to history, then forgotten in Redis if still
    /// the same (a newer one stays, to move with its own event). Cut short, this is
    /// repeated with the events: written twice at most, newest wins.
    async fn move_pointers(&self, p: Partition, written: &[Identity]) -> Result<(), StoreError> {
        let about: Vec<(&Identity, &str)> = written.iter().filter_map(|e| Some((e, e.subject.as_deref()?))).collect();
        let records: Vec<(&str, &str)> = about.iter().map(|(e, subject)| (e.org.as_str(), *subject)).collect();
        let pointers = self.doors.exports.pointers(p, &records).await?;
        let (mut rows, mut moved) = (Vec::new(), Vec::new());
        for ((event, subject), pointer) in about.into_iter().zip(pointers) {
            let Some(pointer) = pointer.filter(|pointer| pointer.event_id == event.id) else { continue };
            rows.push(PointerRow::new(&event.org, subject, event.accepted_ms, &pointer));
            moved.push((event.org.as_str(), subject, pointer));
        }
        PointerRows::of(&self.history).write_pointers(&rows).await?;
        self.doors.exports.forget_moved_pointers(p, &moved).await?;
        Ok(())
    }

    /// One batch of indexes with entries due (day indexes, the event log's hours): their
    /// first entries made before `before_ms` move (`store::queue::index`), and each is noted
    /// again by when its next entry here was made (the hot period is applied when reading,
    /// so a new setting holds at once). How many indexes were looked at.
    async fn move_indexes(&self, p: Partition, before_ms: u64) -> Result<usize, StoreError> {
        let now = crate::time::now_millis();
        let keys = self.doors.index_heads.indexes_due(p, before_ms, INDEXES).await?;
        let (mut runs, mut heads) = (Vec::new(), Vec::new());
        for key in &keys {
            let (base, entries) = self.doors.index_heads.index_head(p, key, BATCH).await?;
            let kind = IndexKind::of(key);
            let made = |entry: &Vec<u8>| kind.and_then(|k| k.made_ms(entry));
            let due = match kind {
                Some(_) => entries.iter().take_while(|e| made(e).is_some_and(|ms| ms <= before_ms)).count(),
                None => 0,
            };
            let again = match entries.get(due) {
                // (An entry that cannot be read stays, looked at once a hot period.)
                Some(next) => made(next).unwrap_or(now),
                // All it had here is due: more may have come since.
                None => 0,
            };
            if let (Some(kind), true) = (kind, due > 0) {
                runs.push(IndexRun { key: key.clone(), kind, first: base, entries: entries[..due].to_vec() });
            }
            heads.push((key, base, due, again));
        }
        IndexRuns::of(&self.history).write_index_runs(&runs).await?;
        for (key, base, due, again) in heads {
            self.doors.index_heads.forget_index_head(p, key, base, due, again).await?;
        }
        Ok(keys.len())
    }

    /// Drops the days past the retention periods, once an hour (by whichever process gets
    /// there first; dropping is idempotent).
    async fn drop_old_days(&self) -> Result<(), StoreError> {
        let now = crate::time::now_millis();
        let last = self.dropped_at.load(Ordering::Relaxed);
        if now.saturating_sub(last) < DROP_EVERY.as_millis() as u64 {
            return Ok(());
        }
        self.dropped_at.store(now, Ordering::Relaxed);
        // The day that still has something kept is kept whole.
        let first = |keep: Duration| day_of(now.saturating_sub(keep.as_millis() as u64));
        let events = if self.event_retention.is_zero() { self.delivery_retention } else { self.event_retention };
        let dropped = self.history.drop_old_days(first(self.delivery_retention), first(events)).await?;
        if dropped > 0 {
            tracing::info!(days = dropped, "history: day partitions past the retention dropped");
        }
        Ok(())
    }
}

/// Who a stored event is: its organisation, id, acceptance time and record (`Type:id`).
struct Identity {
    org: String,
    id: String,
    accepted_ms: u64,
    subject: Option<String>,
}

/// The [`Identity`] of a stored event.
fn identity(stored: &[u8]) -> Option<Identity> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: String,
        organisation: Id,
        subject: Option<Subject>,
    }
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
    }
    #[derive(serde::Deserialize)]
    struct Subject {
        #[serde(rename = "type")]
        kind: String,
        id: String,
    }
    let event = StoredEvent::decode(stored)?;
    let head: Head = serde_json::from_str(&event.envelope).ok()?;
    let subject = head.subject.map(|s| format!("{}:{}", s.kind, s.id));
    Some(Identity { org: head.organisation.id, id: head.id, accepted_ms: event.accepted_ms, subject })
}

/// The movers of a process, as a background job of the history queue.
#[derive(Debug)]
pub(crate) struct MoverJob(pub Arc<Mover>);

impl Job for MoverJob {
    const QUEUE: JobQueue = JobQueue::History;
    const LEASE: Duration = Duration::from_secs(30);
    const POLL: Duration = Duration::from_millis(500);
    const AT_ONCE: usize = 1;
    type Error = StoreError;

    async fn run(&self, partition: &str, stopping: &Stopping) -> Result<Ended, StoreError> {
        let Ok(p) = partition.parse::<u16>() else { return Ok(Ended::Done) };
        if p >= self.0.doors.keys.partition_count() {
            return Ok(Ended::Done);
        }
        match self.0.turn(Partition(p), stopping).await {
            Ok(true) => Ok(Ended::Again(Duration::ZERO)),
            Ok(false) => Ok(Ended::Again(IDLE)),
            // PostgreSQL away: the partition is looked at again a little later.
            Err(e) if e.is_unavailable() => Ok(Ended::Again(Duration::from_secs(5))),
            Err(e) => Err(e),
        }
    }
}
