//! Indexes whose first entries move to history (with history in PostgreSQL, contract §8):
//! the day indexes of deliveries (`P:{q}:od:{org}:{day}`, `P:{q}:wd:{wh}:{day}`) and the
//! event log's hour lists (`P:{q}:el:{org}:{hour}`, `store::events::log`). Each is a list
//! that only grows at its end; every entry has a *place*, counted from the index's first
//! entry ever. Once entries are older than the hot period, a mover (`crate::history`)
//! writes them to PostgreSQL with their places and has them forgotten here from the head of
//! the list (`lua/index_forget.lua`), adding as many to the index's *base* (`P:{q}:lb`): the
//! entries at places below the base are in history, the others here. Places never change,
//! so a cursor stays valid while the entries under it move; a reading takes the base and the
//! entries above it in one step (`lua/index_read.lua`), then history for the rest.
//! `publish.lua` notes each index it writes to in `P:{q}:lm` (unless there), by when: the
//! mover then keeps it there by when its first entry here was made.

use crate::store::core::base::Base;
use crate::store::core::keys::{self, HOUR_MS, Partition};
use crate::store::core::reply::unexpected;
use crate::store::core::scripts::{INDEX_FORGET, INDEX_READ};
use crate::store::error::Result;
use crate::store::events::log_entry as log;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct IndexHeads {
    base: Base,
}

impl IndexHeads {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> IndexHeads {
        IndexHeads { base: base.clone() }
    }
}

/// What an index keeps here below a place: `entries` are at places
/// `[end - entries.len(), end)`; places below `base` moved to history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSlice {
    pub base: u64,
    pub end: u64,
    pub entries: Vec<Vec<u8>>,
}

/// The most buckets [`Store::newest_filled`] looks at in one call.
const MAX_BUCKETS_AT_ONCE: usize = 256;

/// Entries of an index with their places, in order.
pub type Placed = Vec<(u64, Vec<u8>)>;

/// Where the entries of indexes that moved can be read (history in PostgreSQL,
/// `crate::history`).
pub trait MovedIndexes: Send + Sync {
    /// Up to `n` entries of the index `key` (a day index or an hour of the event log) at
    /// places below `before` that moved there, with their places, in order.
    fn index_entries<'a>(
        &'a self,
        key: &'a str,
        before: u64,
        n: usize,
    ) -> futures_util::future::BoxFuture<'a, Result<Placed>>;
}

/// Which index a key is, from the key alone (the mover and history read any of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// A day index of deliveries: entries are delivery ids without `dlv_`.
    Deliveries { day: u32 },
    /// An hour of the event log: entries are [`log::ENTRY_LEN`] bytes each.
    EventLog { hour: u32 },
}

impl IndexKind {
    /// The kind of an index key (`P:{q}:od|wd:{id}:{day}` or `P:{q}:el:{org}:{hour}`).
    pub fn of(key: &str) -> Option<IndexKind> {
        let (_, rest) = key.split_once("}:")?;
        let (kind, rest) = rest.split_once(':')?;
        let number: u32 = rest.rsplit(':').next()?.parse().ok()?;
        match kind {
            "od" | "wd" => Some(IndexKind::Deliveries { day: number }),
            "el" => Some(IndexKind::EventLog { hour: number }),
            _ => None,
        }
    }

    /// The day whose history partition holds the index's moved entries.
    pub fn day(self) -> u32 {
        match self {
            IndexKind::Deliveries { day } => day,
            IndexKind::EventLog { hour } => keys::day_of(u64::from(hour) * HOUR_MS),
        }
    }

    /// When an entry was made (ms), if it can be read.
    pub fn made_ms(self, entry: &[u8]) -> Option<u64> {
        match self {
            IndexKind::Deliveries { .. } => {
                let entry = std::str::from_utf8(entry).ok()?;
                crate::ids::millis_of(crate::ids::Kind::Delivery, &keys::delivery_of_entry(entry))
            }
            IndexKind::EventLog { hour } => log::accepted_ms_of(entry, hour),
        }
    }

    /// A run of entries as history keeps it: a day index's newline-separated (its entries
    /// are ids), the log's one after the other (they are binary, of one length).
    pub fn join(self, entries: &[Vec<u8>]) -> Vec<u8> {
        match self {
            IndexKind::Deliveries { .. } => entries.join(&b'\n'),
            IndexKind::EventLog { .. } => entries.concat(),
        }
    }

    /// The entries of a run [`IndexKind::join`] made.
    pub fn split(self, run: &[u8]) -> Vec<Vec<u8>> {
        match self {
            IndexKind::Deliveries { .. } => run.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect(),
            IndexKind::EventLog { .. } => run.chunks(log::ENTRY_LEN).map(<[u8]>::to_vec).collect(),
        }
    }
}

impl IndexHeads {
    /// Up to `most` entries of an index here, ending before place `end` (`None`: its end).
    pub async fn read_index(&self, p: Partition, key: &str, end: Option<u64>, most: u64) -> Result<IndexSlice> {
        let mut call = INDEX_READ.call();
        call.key(key).key(&self.base.keys().index_bases(p));
        call.arg(end.map_or(-1, |e| e as i64)).arg(most);
        let reply: Vec<Vec<u8>> = call.run(&mut self.base.conn()).await?;
        let mut reply = reply.into_iter();
        let mut number = || reply.next().and_then(|n| std::str::from_utf8(&n).ok()?.parse::<u64>().ok());
        let (Some(base), Some(end)) = (number(), number()) else {
            return Err(unexpected("index_read.lua", "a base and an end expected"));
        };
        Ok(IndexSlice { base, end, entries: reply.collect() })
    }

    /// The newest bucket from `from` down to `oldest` whose index (`key_of` the bucket)
    /// holds entries here or in history, found in one round trip (every index's length and
    /// base read together): a listing passes over empty days or hours at once, not one read
    /// each. `None` when none does. (Reads of one key each, not a script over all of them:
    /// mid-reshard only a command alone follows its key to the node it moves to.)
    pub async fn newest_filled(
        &self,
        p: Partition,
        key_of: impl Fn(u32) -> String,
        from: u32,
        oldest: u32,
    ) -> Result<Option<u32>> {
        let buckets: Vec<u32> = (oldest..=from).rev().collect();
        for run in buckets.chunks(MAX_BUCKETS_AT_ONCE) {
            let keys: Vec<String> = run.iter().map(|b| key_of(*b)).collect();
            let mut pipe = redis::pipe();
            for key in &keys {
                pipe.cmd("LLEN").arg(key);
            }
            pipe.cmd("HMGET").arg(self.base.keys().index_bases(p)).arg(&keys);
            let mut replies: Vec<redis::Value> = self.base.conn().query_reads(&pipe).await?;
            let unreadable = |e: redis::ParsingError| unexpected("index lengths", e.to_string());
            let bases: Vec<Option<u64>> = match replies.pop() {
                Some(bases) => redis::from_redis_value(bases).map_err(unreadable)?,
                None => Vec::new(),
            };
            for (i, length) in replies.into_iter().enumerate() {
                let length: u64 = redis::from_redis_value(length).map_err(unreadable)?;
                if length > 0 || bases.get(i).copied().flatten().unwrap_or(0) > 0 {
                    return Ok(Some(run[i]));
                }
            }
        }
        Ok(None)
    }

    /// Up to `batch` entries of a list ending before `end` (`None`: its end), with their
    /// places counted from its head, in order, and where the part read ends — without
    /// history, where nothing moved.
    pub async fn index_here(&self, key: &str, end: Option<u64>, batch: u64) -> Result<(u64, Placed)> {
        // Where the unread part ends: the cursor's position, or the list's length on its
        // first page. Two commands, not a transaction: mid-reshard only a command alone
        // follows its key to the node it moves to (`ASK`). A list only grows at its tail,
        // so positions counted from its head stay valid between them.
        // A cursor's place past the list's end (none Weir gave out) reads from the end.
        let len: u64 = redis::cmd("LLEN").arg(key).query_async(&mut self.base.conn()).await?;
        let end = end.map_or(len, |e| e.min(len));
        let raw: Vec<Vec<u8>> = match end {
            0 => Vec::new(),
            _ => {
                let start = end.saturating_sub(batch);
                redis::cmd("LRANGE").arg(key).arg(start).arg(end - 1).query_async(&mut self.base.conn()).await?
            }
        };
        let first = end - raw.len() as u64;
        Ok((end, raw.into_iter().enumerate().map(|(k, e)| (first + k as u64, e)).collect()))
    }

    /// Up to `batch` entries of an index ending before place `end` (`None`: its end), with
    /// their places, in order, and where the part read ends: the entries here and the base
    /// in one step; history's only once nothing is left here below `end` (so a reading
    /// of what is still in Redis needs nothing of PostgreSQL).
    pub async fn index_back(
        &self,
        p: Partition,
        key: &str,
        end: Option<u64>,
        batch: u64,
        moved: &dyn MovedIndexes,
    ) -> Result<(u64, Placed)> {
        let slice = self.read_index(p, key, end, batch).await?;
        let here_from = slice.end - slice.entries.len() as u64;
        let mut entries: Placed =
            slice.entries.into_iter().enumerate().map(|(k, e)| (here_from + k as u64, e)).collect();
        if entries.is_empty() && here_from > 0 {
            entries = moved.index_entries(key, here_from, batch as usize).await?;
        }
        Ok((slice.end, entries))
    }

    /// Up to `n` entries of an index from place `start` on, with their places, in order, and
    /// the place to read from next (`start` when there is nothing more): history's below the
    /// base, then the entries here.
    pub async fn index_forward(
        &self,
        p: Partition,
        key: &str,
        start: u64,
        n: u64,
        moved: &dyn MovedIndexes,
    ) -> Result<(u64, Placed)> {
        let n = n.max(1);
        let slice = self.read_index(p, key, Some(start + n), n).await?;
        let here_from = slice.end - slice.entries.len() as u64;
        let mut entries: Placed = Vec::new();
        if start < slice.base {
            let below = slice.base.min(start + n);
            entries = moved.index_entries(key, below, (below - start) as usize).await?;
            entries.retain(|(place, _)| *place >= start);
        }
        entries.extend(
            slice
                .entries
                .into_iter()
                .enumerate()
                .map(|(k, e)| (here_from + k as u64, e))
                .filter(|(at, _)| *at >= start),
        );
        Ok((start.max(slice.end), entries))
    }

    /// Up to `n` indexes of partition `p` whose next entry here was made by `due_ms`.
    pub async fn indexes_due(&self, p: Partition, due_ms: u64, n: usize) -> Result<Vec<String>> {
        self.base.due_members(&self.base.keys().index_moves(p), due_ms, n).await
    }

    /// An index's base and up to `n` of its first entries here (only a mover, one per
    /// partition, takes entries from the head).
    pub async fn index_head(&self, p: Partition, key: &str, n: usize) -> Result<(u64, Vec<Vec<u8>>)> {
        let mut pipe = redis::pipe();
        pipe.cmd("HGET").arg(self.base.keys().index_bases(p)).arg(key);
        pipe.cmd("LRANGE").arg(key).arg(0).arg(n.saturating_sub(1));
        let (base, entries): (Option<u64>, Vec<Vec<u8>>) = pipe.query_async(&mut self.base.conn()).await?;
        Ok((base.unwrap_or(0), entries))
    }

    /// Forgets an index's first `n` entries, which history has, if its base is still `base`;
    /// an index with entries left is looked at again at `again_ms`. Whether it was done.
    pub async fn forget_index_head(&self, p: Partition, key: &str, base: u64, n: usize, again_ms: u64) -> Result<bool> {
        let mut call = INDEX_FORGET.call();
        call.key(key).key(&self.base.keys().index_bases(p)).key(&self.base.keys().index_moves(p));
        call.arg(base).arg(n).arg(again_ms);
        let done: i64 = call.run(&mut self.base.conn()).await?;
        Ok(done == 1)
    }

    /// Forgets the bases of indexes that were dropped (retention, a deleted webhook).
    pub(crate) async fn drop_index_bases(&self, p: Partition, keys: &[String]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        pipe.cmd("HDEL").arg(self.base.keys().index_bases(p)).arg(keys).ignore();
        pipe.cmd("ZREM").arg(self.base.keys().index_moves(p)).arg(keys).ignore();
        let _: () = pipe.query_async(&mut self.base.conn()).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_key_names_its_kind_and_day() {
        assert_eq!(IndexKind::of("weir:{3}:od:org_1:20783"), Some(IndexKind::Deliveries { day: 20783 }));
        assert_eq!(IndexKind::of("weir:{3}:wd:wh_1:20783").map(IndexKind::day), Some(20783));
        assert_eq!(IndexKind::of("weir:{3}:wd:wh_1:x"), None);
        assert_eq!(IndexKind::of("weir:{3}:el:org_1:498792"), Some(IndexKind::EventLog { hour: 498792 }));
        assert_eq!(IndexKind::of("weir:{3}:el:org_1:498792").map(IndexKind::day), Some(20783));
        assert_eq!(IndexKind::of("weir:{3}:d:abc"), None);
    }

    #[test]
    fn runs_split_back_into_their_entries() {
        let ids = vec![b"0a1b".to_vec(), b"0a1c".to_vec()];
        let day = IndexKind::Deliveries { day: 1 };
        assert_eq!(day.split(&day.join(&ids)), ids);
        let hour = IndexKind::EventLog { hour: 498_792 };
        let entry = |ms: u64| log::LogEntry::of("org_1", "evt_1", ms, "form_completed").encode().to_vec();
        let at = 498_792 * HOUR_MS;
        // Binary entries may hold a newline: they are cut by length, not by separator.
        let entries = vec![entry(at + 10), b"\n".repeat(log::ENTRY_LEN), entry(at + 20)];
        assert_eq!(hour.split(&hour.join(&entries)), entries);
        assert_eq!(hour.made_ms(&entries[2]), Some(at + 20));
        assert_eq!(day.made_ms(b"not an id"), None);
    }
}
