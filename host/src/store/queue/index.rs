//! Day indexes whose first entries move to history (with history in PostgreSQL, contract
//! §8). A day index (`P:{q}:od:{org}:{day}`, `P:{q}:wd:{wh}:{day}`) is a list that only
//! grows at its end; every entry has a *place*, counted from the index's first entry ever.
//! Once entries are older than the hot period, a mover (`crate::history`) writes them to
//! PostgreSQL with their places and has them forgotten here from the head of the list
//! (`lua/index_forget.lua`), adding as many to the index's *base* (`P:{q}:lb`): the entries
//! at places below the base are in history, the others here. Places never change, so a
//! listing's cursor stays valid while the entries under it move; a listing reads the base
//! and the entries above it in one step (`lua/index_read.lua`), then history for the rest.
//! `publish.lua` notes each index it writes to in `P:{q}:lm` (unless there), by when: the
//! mover then keeps it there by when its first entry here was made.

use crate::store::core::keys::Partition;
use crate::store::core::reply::unexpected;
use crate::store::core::scripts::{INDEX_FORGET, INDEX_READ};
use crate::store::{Result, Store};

/// What an index keeps here below a place: `entries` are at places
/// `[end - entries.len(), end)`; places below `base` moved to history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSlice {
    pub base: u64,
    pub end: u64,
    pub entries: Vec<String>,
}

/// The day of a day index, from its key.
pub fn day_of_index(key: &str) -> Option<u32> {
    key.rsplit(':').next()?.parse().ok()
}

impl Store {
    /// Up to `most` entries of an index here, ending before place `end` (`None`: its end).
    pub async fn read_index(&self, p: Partition, key: &str, end: Option<u64>, most: u64) -> Result<IndexSlice> {
        let mut call = INDEX_READ.call();
        call.key(key).key(&self.keys().index_bases(p));
        call.arg(end.map_or(-1, |e| e as i64)).arg(most);
        let reply: Vec<String> = call.run(&mut self.conn()).await?;
        let mut reply = reply.into_iter();
        let mut number = || reply.next().and_then(|n| n.parse::<u64>().ok());
        let (Some(base), Some(end)) = (number(), number()) else {
            return Err(unexpected("index_read.lua", "a base and an end expected"));
        };
        Ok(IndexSlice { base, end, entries: reply.collect() })
    }

    /// Up to `n` indexes of partition `p` whose next entry here was made by `due_ms`.
    pub async fn indexes_due(&self, p: Partition, due_ms: u64, n: usize) -> Result<Vec<String>> {
        self.due_members(&self.keys().index_moves(p), due_ms, n).await
    }

    /// An index's base and up to `n` of its first entries here (only a mover, one per
    /// partition, takes entries from the head).
    pub async fn index_head(&self, p: Partition, key: &str, n: usize) -> Result<(u64, Vec<String>)> {
        let mut pipe = redis::pipe();
        pipe.cmd("HGET").arg(self.keys().index_bases(p)).arg(key);
        pipe.cmd("LRANGE").arg(key).arg(0).arg(n.saturating_sub(1));
        let (base, entries): (Option<u64>, Vec<String>) = pipe.query_async(&mut self.conn()).await?;
        Ok((base.unwrap_or(0), entries))
    }

    /// Forgets an index's first `n` entries, which history has, if its base is still `base`;
    /// an index with entries left is looked at again at `again_ms`. Whether it was done.
    pub async fn forget_index_head(&self, p: Partition, key: &str, base: u64, n: usize, again_ms: u64) -> Result<bool> {
        let mut call = INDEX_FORGET.call();
        call.key(key).key(&self.keys().index_bases(p)).key(&self.keys().index_moves(p));
        call.arg(base).arg(n).arg(again_ms);
        let done: i64 = call.run(&mut self.conn()).await?;
        Ok(done == 1)
    }

    /// Forgets the bases of indexes that were dropped (retention, a deleted webhook).
    pub(crate) async fn drop_index_bases(&self, p: Partition, keys: &[String]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        pipe.cmd("HDEL").arg(self.keys().index_bases(p)).arg(keys).ignore();
        pipe.cmd("ZREM").arg(self.keys().index_moves(p)).arg(keys).ignore();
        let _: () = pipe.query_async(&mut self.conn()).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_key_names_its_day() {
        assert_eq!(day_of_index("weir:{3}:od:org_1:20783"), Some(20783));
        assert_eq!(day_of_index("weir:{3}:wd:wh_1:x"), None);
    }
}
