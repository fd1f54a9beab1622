//! What history keeps of a delivery and of an event, written in batches and read by id.
//!
//! A delivery is kept as its Redis row's fields (`store::queue::row`), each as its name's
//! length (one byte), the name, a LEB128 length and the value: rows read back from history
//! decode exactly as rows read from Redis, so every view of them is the same by
//! construction. An event is kept in its stored form (`store::events::stored`).
//!
//! Writes are multi-row `INSERT … ON CONFLICT DO UPDATE` keyed by id: a move repeated after
//! a crash writes nothing twice.

use std::collections::{BTreeSet, HashMap};

use tokio_postgres::types::Type;

use super::db::History;
use super::error::HistoryError;

/// History's part that this file holds (a view: it borrows the handle).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Records<'a>(&'a History);

impl<'a> Records<'a> {
    /// This part of `history` for `history`.
    pub(crate) fn of(history: &'a History) -> Self {
        Records(history)
    }
}

/// The most rows one statement writes.
const CHUNK: usize = 500;

/// A delivery to write: its day, id and row.
#[derive(Debug, Clone)]
pub(crate) struct DeliveryRecord {
    pub day: u32,
    pub id: String,
    pub fields: Vec<(String, Vec<u8>)>,
}

/// An event to write: the day it was accepted, its digest and its stored form.
#[derive(Debug, Clone)]
pub(crate) struct EventRecord {
    pub day: u32,
    /// Its partition in Redis.
    pub part: u16,
    pub digest: [u8; 16],
    pub stored: Vec<u8>,
}

/// A row's fields as history keeps them.
pub(crate) fn encode(fields: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.iter().map(|(n, v)| n.len() + v.len() + 3).sum());
    for (name, value) in fields {
        let name = &name.as_bytes()[..name.len().min(255)];
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        let mut n = value.len() as u64;
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            out.push(if n == 0 { byte } else { byte | 0x80 });
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(value);
    }
    out
}

/// The fields of [`encode`]'s output; `None` when it is not one.
pub(crate) fn decode(mut bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut fields = Vec::new();
    while let Some((&len, rest)) = bytes.split_first() {
        let (name, rest) = rest.split_at_checked(usize::from(len))?;
        let (mut n, mut shift, mut rest) = (0u64, 0u32, rest);
        loop {
            let (&byte, after) = rest.split_first()?;
            rest = after;
            n |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
        let (value, rest) = rest.split_at_checked(usize::try_from(n).ok()?)?;
        fields.push((String::from_utf8(name.to_vec()).ok()?, value.to_vec()));
        bytes = rest;
    }
    Some(fields)
}

impl Records<'_> {
    /// Writes deliveries (their days' partitions made first), in statements of at most
    /// [`CHUNK`] rows run side by side on the pool's connections.
    pub(crate) async fn write_deliveries(&self, records: &[DeliveryRecord]) -> Result<(), HistoryError> {
        if records.is_empty() {
            return Ok(());
        }
        self.ensure_days(records.iter().map(|r| r.day)).await?;
        futures_util::future::try_join_all(records.chunks(CHUNK).map(|chunk| self.insert_deliveries(chunk))).await?;
        Ok(())
    }

    async fn insert_deliveries(&self, records: &[DeliveryRecord]) -> Result<(), HistoryError> {
        let days: Vec<i32> = records.iter().map(|r| r.day as i32).collect();
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        let blobs: Vec<Vec<u8>> = records.iter().map(|r| encode(&r.fields)).collect();
        let sql = format!(
            "INSERT INTO {s}.deliveries (day, id, fields)
             SELECT * FROM unnest($1::integer[], $2::text[], $3::bytea[])
             ON CONFLICT (id, day) DO UPDATE SET fields = EXCLUDED.fields",
            s = self.0.schema
        );
        let client = self.0.client().await?;
        self.0.timed(client.execute(&sql, &[&days, &ids, &blobs])).await?;
        Ok(())
    }

    /// Writes events (their days' partitions made first), as deliveries are written.
    pub(crate) async fn write_events(&self, records: &[EventRecord]) -> Result<(), HistoryError> {
        if records.is_empty() {
            return Ok(());
        }
        self.ensure_days(records.iter().map(|r| r.day)).await?;
        futures_util::future::try_join_all(records.chunks(CHUNK).map(|chunk| self.insert_events(chunk))).await?;
        Ok(())
    }

    async fn insert_events(&self, records: &[EventRecord]) -> Result<(), HistoryError> {
        let days: Vec<i32> = records.iter().map(|r| r.day as i32).collect();
        let digests: Vec<&[u8]> = records.iter().map(|r| r.digest.as_slice()).collect();
        let parts: Vec<i16> = records.iter().map(|r| r.part as i16).collect();
        let stored: Vec<&[u8]> = records.iter().map(|r| r.stored.as_slice()).collect();
        let sql = format!(
            "INSERT INTO {s}.events (day, digest, part, stored)
             SELECT * FROM unnest($1::integer[], $2::bytea[], $3::smallint[], $4::bytea[])
             ON CONFLICT (digest, day) DO UPDATE SET stored = EXCLUDED.stored",
            s = self.0.schema
        );
        let client = self.0.client().await?;
        self.0.timed(client.execute(&sql, &[&days, &digests, &parts, &stored])).await?;
        Ok(())
    }

    /// Delivery rows by id (`None` for those history does not have), in order: each id
    /// looked for on its day in every retention class (`super::classes`).
    pub(crate) async fn deliveries(&self, ids: &[String]) -> Result<Vec<Option<Vec<(String, Vec<u8>)>>>, HistoryError> {
        self.0.migrate().await?;
        let classes = self.0.classes();
        let (mut days, mut keys): (Vec<i32>, Vec<&str>) = (Vec::new(), Vec::new());
        for id in ids {
            let Some(ms) = crate::ids::millis_of(crate::ids::Kind::Delivery, id) else { continue };
            for class in &classes {
                days.push(super::classes::stored_day(*class, crate::store::core::keys::day_of(ms)) as i32);
                keys.push(id);
            }
        }
        let ids_asked = ids;
        let ids = &keys;
        let sql = format!(
            "SELECT d.id, d.fields FROM {s}.deliveries d
               JOIN unnest($1::integer[], $2::text[]) AS k(day, id) ON d.day = k.day AND d.id = k.id",
            s = self.0.schema
        );
        let client = self.0.client().await?;
        let rows =
            self.0.timed(client.query_typed(&sql, &[(&days, Type::INT4_ARRAY), (&ids, Type::TEXT_ARRAY)])).await?;
        let mut found: HashMap<String, Vec<u8>> = rows.into_iter().map(|r| (r.get(0), r.get(1))).collect();
        Ok(ids_asked.iter().map(|id| found.remove(id).and_then(|blob| decode(&blob))).collect())
    }

    /// Events by (day accepted, digest), in order (`None` for those history does not have),
    /// each looked for on its day in every retention class (`super::classes`).
    pub(crate) async fn events(&self, keys: &[(u32, [u8; 16])]) -> Result<Vec<Option<Vec<u8>>>, HistoryError> {
        self.0.migrate().await?;
        let classes = self.0.classes();
        let (mut days, mut digests): (Vec<i32>, Vec<&[u8]>) = (Vec::new(), Vec::new());
        for (day, digest) in keys {
            for class in &classes {
                days.push(super::classes::stored_day(*class, *day) as i32);
                digests.push(digest.as_slice());
            }
        }
        let sql = format!(
            "SELECT e.day, e.digest, e.stored FROM {s}.events e
               JOIN unnest($1::integer[], $2::bytea[]) AS k(day, digest) ON e.day = k.day AND e.digest = k.digest",
            s = self.0.schema
        );
        let client = self.0.client().await?;
        let rows =
            self.0.timed(client.query_typed(&sql, &[(&days, Type::INT4_ARRAY), (&digests, Type::BYTEA_ARRAY)])).await?;
        let found: HashMap<(i32, Vec<u8>), Vec<u8>> = rows
            .into_iter()
            .map(|r| ((super::classes::split(r.get::<_, i32>(0) as u32).1 as i32, r.get(1)), r.get(2)))
            .collect();
        // A key may be asked for more than once (deliveries of one event).
        Ok(keys.iter().map(|(d, g)| found.get(&(*d as i32, g.to_vec())).cloned()).collect())
    }

    /// An event by its digest alone, searching the days from `newest` back to `oldest`:
    /// its partition and stored form.
    pub(crate) async fn event_any_day(
        &self,
        digest: [u8; 16],
        oldest: u32,
        newest: u32,
    ) -> Result<Option<(u16, Vec<u8>)>, HistoryError> {
        self.0.migrate().await?;
        let sql = format!(
            "SELECT part, stored FROM {s}.events WHERE digest = $1 AND {within} ORDER BY day % {span} DESC LIMIT 1",
            s = self.0.schema,
            within = super::classes::day_within(&self.0.classes(), "$2", "$3"),
            span = super::classes::SPAN,
        );
        let client = self.0.client().await?;
        let (digest, oldest, newest) = (digest.as_slice(), oldest as i32, newest as i32);
        let rows = self
            .0
            .timed(client.query_typed(&sql, &[(&digest, Type::BYTEA), (&oldest, Type::INT4), (&newest, Type::INT4)]))
            .await?;
        Ok(rows.first().map(|r| (r.get::<_, i16>(0) as u16, r.get(1))))
    }

    /// Makes the day partitions of `days` that this process has not seen made.
    pub(super) async fn ensure_days(&self, days: impl Iterator<Item = u32>) -> Result<(), HistoryError> {
        let missing: BTreeSet<u32> = {
            let made = self.0.days_made.lock().unwrap_or_else(|e| e.into_inner());
            days.filter(|d| !made.contains(d)).collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let mut client = self.0.connect().await?;
        self.0.timed(super::schema::make_days(&mut client, &self.0.schema, &missing)).await?;
        self.0.days_made.lock().unwrap_or_else(|e| e.into_inner()).extend(missing);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_it_was_written() {
        let fields = vec![
            ("o".to_owned(), b"org_1".to_vec()),
            ("g".to_owned(), vec![0u8, 255, 7, 128]),
            ("x".to_owned(), vec![b'x'; 300]),
            ("".to_owned(), Vec::new()),
        ];
        let blob = encode(&fields);
        assert_eq!(decode(&blob), Some(fields));
        assert_eq!(decode(&blob[..blob.len() - 1]), None, "a cut blob is refused");
        assert_eq!(decode(&[]), Some(Vec::new()));
    }
}
