//! Records' pointers to their newest event (report exports' snapshots) that moved out of
//! Redis with their events (`super::mover`): a row per record and day, the day its event
//! was accepted (so a pointer goes when its event's day is dropped), read as the newest of
//! the record's rows. A tombstone (a deletion) moves as a row too, and hides the older ones.

use super::records::Records;
use std::collections::HashMap;

use tokio_postgres::types::Type;

use super::db::History;
use super::error::HistoryError;
use crate::store::core::keys::{day_of, event_digest};
use crate::store::events::exports::Pointer;
use crate::store::events::stored::StoredEvent;

/// History's part that this file holds (a view: it borrows the handle).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PointerRows<'a>(&'a History);

impl<'a> PointerRows<'a> {
    /// This part of `history` for `history`.
    pub(crate) fn of(history: &'a History) -> Self {
        PointerRows(history)
    }
}

/// The most rows one statement writes.
const CHUNK: usize = 500;

/// A moved pointer: its record's key ([`record_key`]), its event's day (as accepted) and
/// digest, its time (the newest wins), and whether the record was deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PointerRow {
    pub key: [u8; 16],
    pub day: u32,
    pub event: [u8; 16],
    pub ms: u64,
    pub gone: bool,
}

impl PointerRow {
    /// The row of `org`'s record `subject`'s (`Type:id`) pointer, whose event was accepted at
    /// `accepted_ms`.
    pub(crate) fn new(org: &str, subject: &str, accepted_ms: u64, pointer: &Pointer) -> Self {
        let (key, event) = (record_key(org, subject), event_digest(org, &pointer.event_id));
        PointerRow { key, day: day_of(accepted_ms), event, ms: pointer.ms, gone: pointer.gone }
    }
}

/// A record's key: a digest of its organisation and `Type:id`.
pub(crate) fn record_key(org: &str, subject: &str) -> [u8; 16] {
    crate::ids::digest_128(&["snapshot", org, subject])
}

impl PointerRows<'_> {
    /// Writes moved pointers; of two for one record and day, the newer stays.
    pub(crate) async fn write_pointers(&self, rows: &[PointerRow]) -> Result<(), HistoryError> {
        // (One statement may not change a row twice.)
        let mut newest: HashMap<([u8; 16], u32), &PointerRow> = HashMap::new();
        for row in rows {
            let kept = newest.entry((row.key, row.day)).or_insert(row);
            if row.ms > kept.ms {
                *kept = row;
            }
        }
        if newest.is_empty() {
            return Ok(());
        }
        let rows: Vec<&PointerRow> = newest.into_values().collect();
        Records::of(self.0).ensure_days(rows.iter().map(|r| r.day)).await?;
        futures_util::future::try_join_all(rows.chunks(CHUNK).map(|chunk| self.insert_pointers(chunk))).await?;
        Ok(())
    }

    async fn insert_pointers(&self, rows: &[&PointerRow]) -> Result<(), HistoryError> {
        let days: Vec<i32> = rows.iter().map(|r| r.day as i32).collect();
        let keys: Vec<&[u8]> = rows.iter().map(|r| r.key.as_slice()).collect();
        let events: Vec<&[u8]> = rows.iter().map(|r| r.event.as_slice()).collect();
        let ms: Vec<i64> = rows.iter().map(|r| r.ms as i64).collect();
        let gone: Vec<bool> = rows.iter().map(|r| r.gone).collect();
        let sql = format!(
            "INSERT INTO {s}.snapshots AS t (day, key, event, ms, gone)
             SELECT * FROM unnest($1::integer[], $2::bytea[], $3::bytea[], $4::bigint[], $5::boolean[])
             ON CONFLICT (key, day) DO UPDATE SET event = EXCLUDED.event, ms = EXCLUDED.ms, gone = EXCLUDED.gone
             WHERE EXCLUDED.ms >= t.ms",
            s = self.0.schema
        );
        let client = self.0.client().await?;
        self.0.timed(client.execute(&sql, &[&days, &keys, &events, &ms, &gone])).await?;
        Ok(())
    }

    /// The newest moved pointer of `org`'s record `subject` (`Type:id`).
    pub(crate) async fn newest_pointer(&self, org: &str, subject: &str) -> Result<Option<PointerRow>, HistoryError> {
        self.0.migrate().await?;
        let sql = format!(
            "SELECT day, event, ms, gone FROM {s}.snapshots WHERE key = $1 ORDER BY ms DESC, day DESC LIMIT 1",
            s = self.0.schema
        );
        let key = record_key(org, subject);
        let client = self.0.client().await?;
        let rows = self.0.timed(client.query_typed(&sql, &[(&key.as_slice(), Type::BYTEA)])).await?;
        Ok(rows.first().and_then(|r| {
            let event: Vec<u8> = r.get(1);
            Some(PointerRow {
                key,
                day: r.get::<_, i32>(0) as u32,
                event: event.try_into().ok()?,
                ms: r.get::<_, i64>(2) as u64,
                gone: r.get(3),
            })
        }))
    }

    /// The event a moved pointer points at (`None` for a deletion's, or once its day is
    /// dropped).
    pub(crate) async fn pointed(&self, row: &PointerRow) -> Result<Option<StoredEvent>, HistoryError> {
        if row.gone {
            return Ok(None);
        }
        let found = Records::of(self.0).events(&[(row.day, row.event)]).await?;
        Ok(found.into_iter().next().flatten().as_deref().and_then(StoredEvent::decode))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_records_key_is_its_organisations_and_its_own() {
        assert_eq!(record_key("org_1", "Form:f"), record_key("org_1", "Form:f"));
        assert_ne!(record_key("org_1", "Form:f"), record_key("org_2", "Form:f"));
        assert_ne!(record_key("org_1", "Form:f"), record_key("org_1", "Form:g"));
        let pointer = Pointer::parse(crate::store::Partition(0), "7d evt_1".to_owned()).unwrap();
        let row = PointerRow::new("org_1", "Form:f", 86_400_000 * 3 + 5, &pointer);
        assert_eq!(row.event, event_digest("org_1", "evt_1"));
        assert_eq!((row.day, row.ms, row.gone), (3, 7, true));
    }
}
