//! Reads that fall back to history for what left Redis: a delivery's row (and its event),
//! the fields a listing filters on, an event found by id, the events of log entries. Redis
//! is asked first — a row moved back (a retry) is there — then PostgreSQL for the rest; what
//! comes back is the same row Redis kept, so every view of it is the same. A moved
//! delivery or event can also be written back to Redis ([`History::revive`]) for a retry or a
//! replay.

use super::indexes::IndexRuns;
use super::records::Records;
use std::sync::Arc;
use std::time::Duration;

use super::db::History;
use crate::store::core::keys::{Partition, day_of, event_digest};
use crate::store::events::accepted::Accepted;
use crate::store::events::log::LogEntry;
use crate::store::events::publish::EventWrites;
use crate::store::events::stored::StoredEvent;
use crate::store::queue::ended::Ended;
use crate::store::queue::index::{MovedIndexes, Placed};
use crate::store::queue::listing::{Listed, MovedRows};
use crate::store::queue::row::DeliveryRow;
use crate::store::{Keys, Result, StoreError};

/// History's part that this file holds (a view: it borrows the handle).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reads<'a>(&'a History);

impl<'a> Reads<'a> {
    /// This part of `history` for `history`.
    pub(crate) fn of(history: &'a History) -> Self {
        Reads(history)
    }
}

/// How many days back an event may be looked for by id: the longer of the two retention
/// periods, in whole days, and the day under way.
pub(crate) fn lookback_days(delivery_retention: Duration, event_retention: Duration) -> u32 {
    (delivery_retention.max(event_retention).as_secs() / 86_400) as u32 + 1
}

/// What Redis holds, as the fallbacks read it and bring rows back into it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Here<'a> {
    pub keys: &'a Keys,
    pub writes: &'a EventWrites,
    pub ended: &'a Ended,
    pub accepted: &'a Accepted,
}

impl Reads<'_> {
    /// Fills in `rows[i]` (of `ids[i]`) that Redis did not have, from history, each with its
    /// event (from Redis, or history); and the events of rows Redis had whose events moved
    /// (a delivery to a webhook deleted since keeps its row here a while).
    pub(crate) async fn fill_rows(
        &self,
        here: Here<'_>,
        ids: &[String],
        rows: &mut [Option<DeliveryRow>],
    ) -> Result<()> {
        let missing: Vec<usize> = (0..ids.len()).filter(|&i| rows[i].is_none()).collect();
        if !missing.is_empty() {
            let wanted: Vec<String> = missing.iter().map(|&i| ids[i].clone()).collect();
            for (&i, row) in missing.iter().zip(self.rows_of(&wanted).await?) {
                rows[i] = row;
            }
        }
        self.fill_events(here, ids, rows).await
    }

    /// The events of rows that lack theirs: all asked of Redis at once, then what Redis
    /// did not have in one statement.
    async fn fill_events(&self, here: Here<'_>, ids: &[String], rows: &mut [Option<DeliveryRow>]) -> Result<()> {
        // (row, partition, accepted at, organisation, event id) of each row lacking its event.
        let asked: Vec<(usize, Partition, u64, String, String)> = (0..ids.len())
            .filter_map(|i| {
                let row = rows[i].as_ref().filter(|r| r.event.is_none() && !r.event_id.is_empty())?;
                let p = here.keys.partition_of_delivery(&ids[i])?;
                let accepted_ms = crate::ids::millis_of(crate::ids::Kind::Delivery, &ids[i]).unwrap_or(0);
                Some((i, p, accepted_ms, row.org_id.clone(), row.event_id.clone()))
            })
            .collect();
        let writes = here.writes;
        let here =
            futures_util::future::try_join_all(asked.iter().map(|(_, p, _, org, event)| writes.event(*p, org, event)))
                .await?;
        let mut moved = Vec::new();
        for (ask, event) in asked.iter().zip(here) {
            match event {
                Some(event) => set_event(rows, ask.0, event),
                None => moved.push(ask),
            }
        }
        if moved.is_empty() {
            return Ok(());
        }
        let keys: Vec<(u32, [u8; 16])> =
            moved.iter().map(|(_, _, ms, org, event)| (day_of(*ms), event_digest(org, event))).collect();
        let found = Records::of(self.0).events(&keys).await?;
        for (ask, stored) in moved.iter().zip(found) {
            if let Some(event) = stored.as_deref().and_then(StoredEvent::decode) {
                set_event(rows, ask.0, event);
            }
        }
        Ok(())
    }

    /// An event found by its id alone in history, within the last `days` days
    /// ([`lookback_days`]): its
    /// partition and stored form.
    pub(crate) async fn find_event(
        &self,
        org_id: &str,
        event_id: &str,
        days: u32,
    ) -> Result<Option<(Partition, StoredEvent)>> {
        let today = day_of(crate::time::now_millis());
        let found = Records::of(self.0)
            .event_any_day(event_digest(org_id, event_id), today.saturating_sub(days), today + 1)
            .await?;
        Ok(found.and_then(|(p, stored)| Some((Partition(p), StoredEvent::decode(&stored)?))))
    }

    /// Fills in the events of log entries that Redis did not have, from history; which
    /// were found there.
    pub(crate) async fn fill_logged(
        &self,
        entries: &[(Partition, LogEntry)],
        events: &mut [Option<StoredEvent>],
    ) -> Result<Vec<usize>> {
        let missing: Vec<usize> = (0..entries.len()).filter(|&i| events[i].is_none()).collect();
        if missing.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<(u32, [u8; 16])> =
            missing.iter().map(|&i| (day_of(entries[i].1.accepted_ms), entries[i].1.digest)).collect();
        let found = Records::of(self.0).events(&keys).await?;
        let mut filled = Vec::new();
        for (&i, stored) in missing.iter().zip(found) {
            events[i] = stored.as_deref().and_then(StoredEvent::decode);
            if events[i].is_some() {
                filled.push(i);
            }
        }
        Ok(filled)
    }

    /// Writes moved deliveries back to Redis (with their events, when those moved too), so
    /// that a retry or a replay works on them as on any other; the ids history does not
    /// have are left alone. How many rows came back.
    pub(crate) async fn revive(&self, here: Here<'_>, ids: &[String], keep_events_ms: u64) -> Result<usize> {
        let present = here.ended.rows_here(ids).await?;
        let wanted: Vec<String> =
            ids.iter().zip(&present).filter(|(_, present)| !**present).map(|(id, _)| id.clone()).collect();
        if wanted.is_empty() {
            return Ok(0);
        }
        let found = Records::of(self.0).deliveries(&wanted).await?;
        let mut revived = 0;
        for (id, fields) in wanted.iter().zip(found) {
            let Some(fields) = fields else { continue };
            let Some(p) = here.keys.partition_of_delivery(id) else { continue };
            let get = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| String::from_utf8_lossy(v));
            let (Some(org), Some(event_id)) = (get("o").map(|s| s.into_owned()), get("e").map(|s| s.into_owned()))
            else {
                continue;
            };
            let accepted_ms = crate::ids::millis_of(crate::ids::Kind::Delivery, id).unwrap_or(0);
            if !here.accepted.event_exists(p, &org, &event_id).await? {
                let keys = [(day_of(accepted_ms), event_digest(&org, &event_id))];
                if let Some(Some(stored)) = Records::of(self.0).events(&keys).await?.into_iter().next() {
                    here.accepted.restore_event(p, &org, &event_id, &stored, keep_events_ms).await?;
                }
            }
            if here.ended.restore_row(p, id, &fields).await? {
                revived += 1;
            }
        }
        Ok(revived)
    }

    /// Rows of deliveries in history (without their events), by id, in order.
    pub(crate) async fn rows_of(&self, ids: &[String]) -> Result<Vec<Option<DeliveryRow>>> {
        let found = Records::of(self.0).deliveries(ids).await?;
        Ok(ids
            .iter()
            .zip(found)
            .map(|(id, fields)| DeliveryRow::decode(&format!("history {id}"), id, fields?.into_iter().collect()))
            .collect())
    }
}

impl MovedIndexes for History {
    fn index_entries<'a>(
        &'a self,
        key: &'a str,
        before: u64,
        n: usize,
    ) -> futures_util::future::BoxFuture<'a, Result<Placed>> {
        Box::pin(async move { Ok(IndexRuns::of(self).index_entries(key, before, n).await?) })
    }
}

impl MovedRows for History {
    fn listed<'a>(&'a self, ids: &'a [String]) -> futures_util::future::BoxFuture<'a, Result<Vec<Option<Listed>>>> {
        Box::pin(async move {
            let found = Records::of(self).deliveries(ids).await.map_err(StoreError::from)?;
            Ok(found.into_iter().map(|fields| Listed::of_fields(&fields?)).collect())
        })
    }
}

fn set_event(rows: &mut [Option<DeliveryRow>], i: usize, event: StoredEvent) {
    if let Some(row) = rows[i].as_mut() {
        row.event = Some(Arc::new(event));
    }
}
