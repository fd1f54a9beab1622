//! The first entries of indexes (day indexes, the event log's hours), moved from Redis
//! (`store::queue::index`): each run of entries a mover takes is one row, keyed by the
//! index and the place of its first entry, so a move repeated after a crash writes the same
//! row again (a longer run replaces a shorter one that starts at the same place: the index
//! only grows at its end). A run's entries are joined as their kind says
//! ([`IndexKind::join`]).

use super::records::Records;
use tokio_postgres::types::Type;

use crate::store::queue::index::{IndexKind, Placed};

use super::db::History;
use super::error::HistoryError;

/// History's part that this file holds (a view: it borrows the handle).
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexRuns<'a>(&'a History);

impl<'a> IndexRuns<'a> {
    /// This part of `history` for `history`.
    pub(crate) fn of(history: &'a History) -> Self {
        IndexRuns(history)
    }
}

/// A run of an index's entries to write.
#[derive(Debug, Clone)]
pub(crate) struct IndexRun {
    pub key: String,
    pub kind: IndexKind,
    /// The place of its first entry.
    pub first: u64,
    pub entries: Vec<Vec<u8>>,
}

/// Runs read per statement when reading back.
const RUNS: i64 = 4;

impl IndexRuns<'_> {
    /// Writes runs of entries (their days' partitions made first).
    pub(crate) async fn write_index_runs(&self, runs: &[IndexRun]) -> Result<(), HistoryError> {
        if runs.is_empty() {
            return Ok(());
        }
        Records::of(self.0).ensure_days(runs.iter().map(|r| r.kind.day())).await?;
        let days: Vec<i32> = runs.iter().map(|r| r.kind.day() as i32).collect();
        let keys: Vec<&str> = runs.iter().map(|r| r.key.as_str()).collect();
        let firsts: Vec<i64> = runs.iter().map(|r| r.first as i64).collect();
        let entries: Vec<Vec<u8>> = runs.iter().map(|r| r.kind.join(&r.entries)).collect();
        let sql = format!(
            "INSERT INTO {s}.indexes (day, key, first, entries)
             SELECT * FROM unnest($1::integer[], $2::text[], $3::bigint[], $4::bytea[])
             ON CONFLICT (key, first, day) DO UPDATE SET entries = EXCLUDED.entries",
            s = self.0.schema
        );
        let client = self.0.client().await?;
        self.0.timed(client.execute(&sql, &[&days, &keys, &firsts, &entries])).await?;
        Ok(())
    }

    /// Up to `n` entries of an index at places below `before`, with their places, in
    /// order (none for a key that is no index).
    pub(crate) async fn index_entries(&self, key: &str, before: u64, n: usize) -> Result<Placed, HistoryError> {
        let Some(kind) = IndexKind::of(key) else { return Ok(Vec::new()) };
        self.0.migrate().await?;
        let sql = format!(
            "SELECT first, entries FROM {s}.indexes WHERE key = $1 AND day = $2 AND first < $3
              ORDER BY first DESC LIMIT $4",
            s = self.0.schema
        );
        let mut out: Placed = Vec::new();
        let mut below = before;
        let client = self.0.client().await?;
        while out.len() < n && below > 0 {
            let (day, till) = (kind.day() as i32, below as i64);
            let rows = self
                .0
                .timed(client.query_typed(
                    &sql,
                    &[(&key, Type::TEXT), (&day, Type::INT4), (&till, Type::INT8), (&RUNS, Type::INT8)],
                ))
                .await?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let first = row.get::<_, i64>(0).max(0) as u64;
                // Newest first: this run's entries below `below`, from its last.
                let run: Placed = kind
                    .split(row.get::<_, &[u8]>(1))
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| (first + i as u64, e))
                    .filter(|(place, _)| *place < below)
                    .collect();
                for entry in run.into_iter().rev() {
                    if out.len() == n {
                        break;
                    }
                    out.push(entry);
                }
                below = below.min(first);
                if out.len() == n {
                    break;
                }
            }
        }
        out.reverse();
        Ok(out)
    }
}
