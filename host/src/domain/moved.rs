//! What moved to history in PostgreSQL (`crate::history`, contract §8), read as if it had
//! not: every read of deliveries and events goes through here, asks Redis first and history
//! for the rest, so the API, the settings pages and `weir admin` show moved work exactly as
//! before. Without history configured each of these is the Redis read alone.

use std::sync::Arc;
use std::time::Duration;

use crate::history::{Here, History, Known, PointerRows, Reads as HistoryReads};
use crate::store::core::keys::{Partition, event_digest};
use crate::store::events::accepted::Accepted;
use crate::store::events::exports::ExportRecords;
use crate::store::events::exports::snapshot_of;
use crate::store::events::log::EventLog;
use crate::store::events::log::LogEntry;
use crate::store::events::publish::EventWrites;
use crate::store::events::publish::{EventDelivery, delivery_id};
use crate::store::events::stored::StoredEvent;
use crate::store::queue::deliveries::Rows;
use crate::store::queue::ended::Ended;
use crate::store::queue::index::MovedIndexes;
use crate::store::queue::listing::MovedRows;
use crate::store::queue::row::DeliveryRow;
use crate::store::queue::status::Status;
use crate::store::{Keys, StoreError};

/// The longest a publish with an id of its own waits for history to say whether it knows
/// the id (then it is accepted: at-least-once, as a publisher's retry is).
const KNOWN_WAIT: Duration = Duration::from_secs(2);

/// Whether history knows the event of `digest` (within `days`), waiting at most
/// [`KNOWN_WAIT`]; `false` (accepted) when it cannot say.
async fn ask(history: &Arc<History>, digest: [u8; 16], days: u32) -> bool {
    match tokio::time::timeout(KNOWN_WAIT, Known::of(history).event_known(digest, days)).await {
        Ok(Ok(known)) => known,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "cannot look for an event id in history; accepted");
            false
        }
        Err(_) => {
            history.note_unanswered(KNOWN_WAIT);
            false
        }
    }
}

/// What Redis holds of deliveries and events, as every read of them asks it first.
#[derive(Debug, Clone)]
pub(crate) struct MovedDoors {
    pub keys: Keys,
    pub rows: Rows,
    pub writes: EventWrites,
    pub log: EventLog,
    pub accepted: Accepted,
    pub ended: Ended,
    pub exports: ExportRecords,
}

impl MovedDoors {
    /// What history's fallbacks read and write back in Redis.
    fn here(&self) -> Here<'_> {
        Here { keys: &self.keys, writes: &self.writes, ended: &self.ended, accepted: &self.accepted }
    }
}

/// Reads of deliveries and events: Redis first, then history.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reads<'a> {
    pub doors: &'a MovedDoors,
    pub history: Option<&'a Arc<History>>,
    /// How long a revived event stays (the delivery retention).
    pub keep_events: Duration,
    /// How many days back an event may be looked for by id.
    pub days: u32,
}

/// The door to what moved, as a part a handle or a worker keeps: Redis and history, and
/// how long what comes back stays.
#[derive(Debug, Clone)]
pub(crate) struct Moved {
    doors: MovedDoors,
    history: Option<Arc<History>>,
    delivery_retention: Duration,
    event_retention: Duration,
}

impl Moved {
    pub(crate) fn new(
        doors: MovedDoors,
        history: Option<&Arc<History>>,
        (delivery_retention, event_retention): (Duration, Duration),
    ) -> Moved {
        Moved { doors, history: history.cloned(), delivery_retention, event_retention }
    }

    /// Its reads.
    pub(crate) fn reads(&self) -> Reads<'_> {
        Reads::new(&self.doors, self.history.as_ref(), self.delivery_retention, self.event_retention)
    }
}

impl<'a> Reads<'a> {
    pub(crate) fn new(
        doors: &'a MovedDoors,
        history: Option<&'a Arc<History>>,
        delivery_retention: Duration,
        event_retention: Duration,
    ) -> Reads<'a> {
        let days = crate::history::lookback_days(delivery_retention, event_retention);
        Reads { doors, history, keep_events: delivery_retention, days }
    }

    /// What listings read of rows that left Redis (`None` without history).
    pub(crate) fn moved(&self) -> Option<&'a dyn MovedRows> {
        self.history.map(|h| &**h as &dyn MovedRows)
    }

    /// Where moved index entries are read, the event log's included (`None` without history).
    pub(crate) fn moved_indexes(&self) -> Option<&'a dyn MovedIndexes> {
        self.history.map(|h| &**h as &dyn MovedIndexes)
    }

    /// Deliveries' rows by id, with their events (`None` for unknown or expired ones).
    pub(crate) async fn rows(&self, ids: &[String]) -> Result<Vec<Option<DeliveryRow>>, StoreError> {
        let mut rows = self.doors.rows.get_deliveries(ids).await?;
        if let Some(history) = self.history {
            HistoryReads::of(history).fill_rows(self.doors.here(), ids, &mut rows).await?;
        }
        Ok(rows)
    }

    /// The organisation's delivery row, with its event.
    pub(crate) async fn row(&self, org_id: &str, id: &str) -> Result<Option<DeliveryRow>, StoreError> {
        let found = self.rows(&[id.to_owned()]).await?;
        Ok(found.into_iter().flatten().next().filter(|d| d.org_id == org_id))
    }

    /// Writes moved deliveries (and their events) back to Redis, so that a retry or a
    /// replay finds them there; those not moved are left alone.
    pub(crate) async fn revive(&self, ids: &[String]) -> Result<(), StoreError> {
        if let Some(history) = self.history {
            HistoryReads::of(history).revive(self.doors.here(), ids, self.keep_events.as_millis() as u64).await?;
        }
        Ok(())
    }

    /// The organisation's event by id, and its partition: from Redis, else history.
    pub(crate) async fn event(&self, org_id: &str, id: &str) -> Result<Option<(Partition, StoredEvent)>, StoreError> {
        if let Some(found) = self.doors.writes.find_event(org_id, id).await? {
            return Ok(Some(found));
        }
        match self.history {
            Some(history) if crate::ids::is_event_id(id) => {
                HistoryReads::of(history).find_event(org_id, id, self.days).await
            }
            _ => Ok(None),
        }
    }

    /// The deliveries of an event of partition `p` to any of `webhooks`, in their order:
    /// from Redis, else history.
    pub(crate) async fn event_deliveries(
        &self,
        p: Partition,
        org_id: &str,
        event_id: &str,
        accepted_ms: u64,
        webhooks: &[String],
    ) -> Result<Vec<EventDelivery>, StoreError> {
        let live = self.doors.writes.event_deliveries(p, org_id, event_id, accepted_ms, webhooks).await?;
        let Some(history) = self.history else { return Ok(live) };
        let ids: Vec<String> = webhooks.iter().map(|w| delivery_id(p, accepted_ms, org_id, event_id, w)).collect();
        let missing: Vec<String> = ids.iter().filter(|id| !live.iter().any(|d| &d.id == *id)).cloned().collect();
        if missing.is_empty() {
            return Ok(live);
        }
        let moved = HistoryReads::of(history).rows_of(&missing).await?;
        let mut all: Vec<EventDelivery> = live;
        for (id, row) in missing.into_iter().zip(moved) {
            let Some(row) = row.filter(|r| r.org_id == org_id && r.event_id == event_id) else { continue };
            // (A damaged row shows as failed, as the deliveries API shows it.)
            let status = row.status.unwrap_or(Status::Failed);
            all.push(EventDelivery { id, webhook_id: row.webhook_id, status });
        }
        all.sort_by_key(|d| ids.iter().position(|id| *id == d.id));
        Ok(all)
    }

    /// The events of log entries (`None` for those expired), from Redis, else history;
    /// and which of them came from history.
    pub(crate) async fn logged_events(
        &self,
        entries: &[(Partition, LogEntry)],
    ) -> Result<(Vec<Option<StoredEvent>>, Vec<usize>), StoreError> {
        let mut events = self.doors.log.logged_events(entries).await?;
        let moved = match self.history {
            Some(history) => HistoryReads::of(history).fill_logged(entries, &mut events).await?,
            None => Vec::new(),
        };
        Ok((events, moved))
    }

    /// Writes an event that moved back to Redis (a replay queues a delivery of it, which
    /// needs it there).
    pub(crate) async fn revive_event(
        &self,
        p: Partition,
        org_id: &str,
        event_id: &str,
        event: &StoredEvent,
    ) -> Result<(), StoreError> {
        let keep = self.keep_events.as_millis() as u64;
        self.doors.accepted.restore_event(p, org_id, event_id, &event.encode(), keep).await
    }

    /// The newest snapshot of a record, as JSON text: the newer of its pointers in Redis and
    /// in history (`store::events::exports::Pointer`), read from its event in Redis, else
    /// in history; none once the newer pointer is a deletion's.
    pub(crate) async fn snapshot(&self, org_id: &str, kind: &str, id: &str) -> Result<Option<String>, StoreError> {
        let here = self.doors.exports.newest_pointer(org_id, kind, id).await?;
        let Some(history) = self.history else {
            let Some(pointer) = here.filter(|pointer| !pointer.gone) else { return Ok(None) };
            let event = self.doors.writes.event(pointer.p, org_id, &pointer.event_id).await?;
            return Ok(event.as_ref().and_then(|e| snapshot_of(kind, e)));
        };
        let moved = match PointerRows::of(history)
            .newest_pointer(org_id, &format!("{kind}:{id}"))
            .await
            .map_err(StoreError::from)
        {
            Ok(moved) => moved,
            // PostgreSQL away: what Redis holds answers (a newer pointer that moved is missed
            // only when an older event about the record was published after it moved).
            Err(e @ StoreError::HistoryUnavailable(_)) if here.is_some() => {
                tracing::debug!(error = %e, "history cannot be read: a record's snapshot is read from Redis alone");
                None
            }
            Err(e) => return Err(e),
        };
        let event = match (here, moved) {
            (Some(here), Some(moved)) if moved.ms > here.ms => PointerRows::of(history).pointed(&moved).await?,
            (Some(here), _) if here.gone => None,
            (Some(here), _) => match self.doors.writes.event(here.p, org_id, &here.event_id).await? {
                Some(event) => Some(event),
                // (Its event moved, the pointer not yet.)
                None => HistoryReads::of(history)
                    .find_event(org_id, &here.event_id, self.days)
                    .await?
                    .map(|(_, event)| event),
            },
            (None, Some(moved)) => PointerRows::of(history).pointed(&moved).await?,
            (None, None) => None,
        };
        Ok(event.as_ref().and_then(|e| snapshot_of(kind, e)))
    }

    /// Whether an event with this id moved to history (an id seen before creates nothing
    /// new). While history cannot be read this answers `false` and says so in the log:
    /// publishing goes on, at the risk of accepting an id older than `WEIR_HISTORY_HOT`
    /// a second time.
    pub(crate) async fn moved_event_known(&self, org_id: &str, id: &str) -> bool {
        let Some(history) = self.history else { return false };
        let (digest, days) = (event_digest(org_id, id), self.days);
        // Once PostgreSQL is known down, no publish waits for it: each is accepted at once,
        // and once a second a question goes on alone, to notice it is back.
        if !history.is_up() {
            if history.may_probe() {
                let history = history.clone();
                tokio::spawn(async move { ask(&history, digest, days).await });
            }
            return false;
        }
        ask(history, digest, days).await
    }
}
