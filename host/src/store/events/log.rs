//! The event log: every event an organisation publishes, whether or not anything subscribed,
//! listed by the hour in the partition of its subject (`P:{q}:el:{org}:{hour}`, written by
//! `lua/publish.lua` with the event), so a window of time is read in order without scanning
//! anything outside it. The events themselves are the ones deliveries use (stored once,
//! `store::events::publish`); the log holds 22 bytes per event (`store::events::log_entry`).
//!
//! Each hour's list expires `WEIR_EVENT_RETENTION` after the hour ends. With history in
//! PostgreSQL its first entries move there once past the hot period, as the day indexes'
//! do (`store::queue::index`: every entry keeps its place). Reading follows
//! `store::queue::listing`: a cursor says where each partition stands.

use crate::store::core::base::Base;
use crate::store::core::keys::{self, Partition};
use crate::store::error::Result;
use crate::store::error::StoreError;
pub use crate::store::events::log_entry::{ENTRY_LEN, LogEntry, accepted_ms_of, action_code};
use crate::store::events::stored::StoredEvent;
use crate::store::queue::cursor::{Cursor, Position};
use crate::store::queue::index::IndexHeads;
use crate::store::queue::index::MovedIndexes;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct EventLog {
    base: Base,
}

/// Which entries of an hour of the log to read: up to `n` from place `start`.
#[derive(Debug, Clone, Copy)]
pub struct LogSlice {
    pub hour: u32,
    pub start: u64,
    pub n: usize,
}

impl EventLog {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> EventLog {
        EventLog { base: base.clone() }
    }
}

/// Which events a reading of the log keeps: accepted in `[since_ms, until_ms)`, of `action`
/// when it is given.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    pub since_ms: u64,
    pub until_ms: u64,
    pub action: Option<&'a str>,
}

impl Window<'_> {
    pub fn keeps(&self, entry: &LogEntry) -> bool {
        (self.since_ms..self.until_ms).contains(&entry.accepted_ms) && self.action.is_none_or(|a| a == entry.action)
    }
}

impl EventLog {
    /// Up to `n` entries of one partition's hour from place `start` (counted from the
    /// hour's first entry ever), in the order they were logged, `None` for one that cannot
    /// be read; and the place to read from next (`start` at the end). Entries that moved
    /// to history are read there through `moved` (without it, places count from the
    /// list's head, as before anything moved).
    pub async fn read_log(
        &self,
        p: Partition,
        org: &str,
        slice: LogSlice,
        moved: Option<&dyn MovedIndexes>,
    ) -> Result<(Vec<Option<LogEntry>>, u64)> {
        let LogSlice { hour, start, n } = slice;
        let key = self.base.keys().event_log(p, org, hour);
        let (next, entries) = match moved {
            Some(moved) => IndexHeads::of(&self.base).index_forward(p, &key, start, n as u64, moved).await?,
            None => {
                let raw: Vec<Vec<u8>> = redis::cmd("LRANGE")
                    .arg(&key)
                    .arg(start)
                    .arg(start + n.max(1) as u64 - 1)
                    .query_async(&mut self.base.conn())
                    .await?;
                (start + raw.len() as u64, raw.into_iter().map(|e| (0, e)).collect())
            }
        };
        Ok((entries.iter().map(|(_, bytes)| LogEntry::decode(bytes, hour)).collect(), next))
    }

    /// A page of the organisation's log newest first, from `cursor` (a [`Cursor`]'s text;
    /// `None`: from the window's end), keeping what `window` keeps and looking at no more
    /// than about `scan` entries. Returns the entries with their partition and the cursor to
    /// continue from (`None` at the end).
    pub async fn list_event_log(
        &self,
        org: &str,
        window: Window<'_>,
        cursor: Option<&str>,
        (limit, scan): (usize, usize),
        moved: Option<&dyn MovedIndexes>,
    ) -> Result<(Vec<(Partition, LogEntry)>, Option<String>)> {
        let partitions = self.base.keys().partition_count();
        let newest_hour = keys::hour_of(window.until_ms.saturating_sub(1));
        let oldest_hour = keys::hour_of(window.since_ms);
        let mut cursor = match cursor {
            Some(text) => Cursor::parse(text, partitions, newest_hour).unwrap_or_else(|| Cursor::done(partitions)),
            None => Cursor::start(partitions, newest_hour),
        };
        let batch = limit.clamp(10, 200);
        let mut buffers: Vec<Vec<(u64, LogEntry)>> = vec![Vec::new(); usize::from(partitions)];
        let mut kept = Vec::new();
        let mut scanned = 0;
        loop {
            let refills = cursor
                .positions()
                .iter_mut()
                .zip(buffers.iter_mut())
                .enumerate()
                .filter(|(_, (_, b))| b.is_empty())
                .map(|(i, (position, buffer))| async move {
                    self.log_back((Partition(i as u16), org), position, buffer, (batch, oldest_hour), moved).await
                });
            futures_util::future::try_join_all(refills).await?;
            let mut progressed = false;
            // The newest of every partition's next entries, until one partition runs dry.
            while scanned < scan {
                let Some(i) = (0..buffers.len())
                    .filter(|i| !buffers[*i].is_empty())
                    .max_by_key(|i| buffers[*i].last().map(|e| e.1.accepted_ms))
                else {
                    break;
                };
                let Some((place, entry)) = buffers[i].pop() else { break };
                progressed = true;
                scanned += 1;
                // Listed (or passed over): the partition continues below it.
                if let Some(position) = cursor.positions()[i].as_mut() {
                    position.end = Some(place);
                }
                if window.keeps(&entry) {
                    kept.push((Partition(i as u16), entry));
                    if kept.len() == limit {
                        return Ok((kept, cursor.text_unless_exhausted()));
                    }
                }
                if buffers[i].is_empty() && cursor.positions()[i].is_some() {
                    break;
                }
            }
            if !progressed {
                return Ok((kept, None));
            }
            if scanned >= scan {
                return Ok((kept, cursor.text_unless_exhausted()));
            }
        }
    }

    /// Reads the next entries of one partition going back in time into `buffer` (oldest
    /// first, with their places), `batch` at a time, moving to earlier hours as they run
    /// out; `position` becomes `None` past `oldest_hour`. Entries that cannot be read are
    /// passed over; those that moved to history are read there through `moved`.
    async fn log_back(
        &self,
        (p, org): (Partition, &str),
        position: &mut Option<Position>,
        buffer: &mut Vec<(u64, LogEntry)>,
        (batch, oldest_hour): (usize, u32),
        moved: Option<&dyn MovedIndexes>,
    ) -> Result<()> {
        while let Some(at) = *position {
            if at.bucket < oldest_hour {
                *position = None;
                break;
            }
            let key = self.base.keys().event_log(p, org, at.bucket);
            let (end, entries) = match moved {
                Some(moved) => IndexHeads::of(&self.base).index_back(p, &key, at.end, batch as u64, moved).await?,
                None => IndexHeads::of(&self.base).index_here(&key, at.end, batch as u64).await?,
            };
            if entries.is_empty() {
                let below = match at.bucket.checked_sub(1) {
                    Some(from) if from >= oldest_hour => {
                        let key_of = |hour| self.base.keys().event_log(p, org, hour);
                        IndexHeads::of(&self.base).newest_filled(p, key_of, from, oldest_hour).await?
                    }
                    _ => None,
                };
                *position = below.map(|bucket| Position { bucket, end: None });
                continue;
            }
            let first = entries.first().map_or(end, |(place, _)| *place);
            buffer.extend(
                entries.iter().filter_map(|(place, bytes)| Some((*place, LogEntry::decode(bytes, at.bucket)?))),
            );
            if buffer.is_empty() {
                // Nothing readable in this batch: the partition continues below it.
                *position = Some(Position { bucket: at.bucket, end: Some(first) });
                continue;
            }
            *position = Some(Position { bucket: at.bucket, end: Some(end) });
            break;
        }
        Ok(())
    }

    /// The stored events of log entries (`None`: expired, or not readable), read with one
    /// pipeline per partition.
    pub async fn logged_events(&self, entries: &[(Partition, LogEntry)]) -> Result<Vec<Option<StoredEvent>>> {
        let by_partition = {
            let mut map: std::collections::BTreeMap<Partition, Vec<usize>> = std::collections::BTreeMap::new();
            for (i, (p, _)) in entries.iter().enumerate() {
                map.entry(*p).or_default().push(i);
            }
            map
        };
        let reads = by_partition.iter().map(|(p, at)| async move {
            let mut pipe = redis::pipe();
            for &i in at {
                pipe.cmd("GET").arg(self.base.keys().event_named(*p, &keys::name_of_digest(&entries[i].1.digest)));
            }
            let values: Vec<Option<Vec<u8>>> = self.base.conn().query_reads(&pipe).await?;
            Ok::<_, StoreError>(at.iter().copied().zip(values).collect::<Vec<_>>())
        });
        let mut out = vec![None; entries.len()];
        for part in futures_util::future::try_join_all(reads).await? {
            for (i, value) in part {
                out[i] = value.as_deref().and_then(StoredEvent::decode);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_keeps_its_half_open_range_and_action() {
        let entry = LogEntry::of("org_1", "evt_1", 5_000, "form_completed");
        let window = Window { since_ms: 5_000, until_ms: 6_000, action: None };
        assert!(window.keeps(&entry));
        assert!(!Window { until_ms: 5_000, ..window }.keeps(&entry), "until is excluded");
        assert!(!Window { action: Some("form_created"), ..window }.keeps(&entry));
    }
}
