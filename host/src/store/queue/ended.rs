//! Deliveries that ended, waiting to move to history (with history in PostgreSQL, contract
//! §8): the scripts that end a delivery (`record.lua`, `dead_letter.lua`, `end_pending.lua`)
//! note it in its partition's `ended` set, by when it ended. A mover (`crate::history`)
//! reads those ended long enough ago with their rows, writes them to PostgreSQL, then has
//! them forgotten here — each only if its row is still as it was read, so a delivery
//! retried meanwhile stays (`lua/history_forget.lua`). A row moved back (a retry, a
//! replay) is written as it was ([`Store::restore_row`]).

use std::collections::HashMap;

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::core::scripts::{HISTORY_FORGET, RESTORE_ROW};
use crate::store::error::Result;
use crate::store::queue::deliveries::Rows;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Ended {
    base: Base,
}

impl Ended {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Ended {
        Ended { base: base.clone() }
    }
}

/// A delivery row read for its move.
#[derive(Debug, Clone)]
pub struct EndedRow {
    pub id: String,
    /// Its fields as stored (empty: the row is gone).
    pub fields: Vec<(String, Vec<u8>)>,
}

impl EndedRow {
    /// The organisation the row belongs to, as stored.
    pub fn org(&self) -> Option<&[u8]> {
        self.fields.iter().find(|(f, _)| f == crate::store::queue::row::field::ORG).map(|(_, v)| v.as_slice())
    }

    /// What the forget script compares: the row's field count, status, latest attempt and
    /// last change, as read.
    fn stamp(&self) -> String {
        let get = |name: &str| {
            self.fields.iter().find(|(f, _)| f == name).map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        };
        format!(
            "{}|{}|{}|{}",
            self.fields.len(),
            get("s").unwrap_or_default(),
            get("l").unwrap_or_default(),
            get("u").unwrap_or_default()
        )
    }
}

impl Ended {
    /// Up to `n` deliveries of partition `p` that ended at or before `before_ms`, with
    /// their rows, oldest first.
    pub async fn ended_rows(&self, p: Partition, before_ms: u64, n: usize) -> Result<Vec<EndedRow>> {
        let ids = self.base.due_members(&self.base.keys().ended(p), before_ms, n).await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(self.base.keys().delivery(p, id));
        }
        let rows: Vec<HashMap<String, Vec<u8>>> = self.base.conn().query_reads(&pipe).await?;
        Ok(ids.into_iter().zip(rows).map(|(id, row)| EndedRow { id, fields: row.into_iter().collect() }).collect())
    }

    /// Forgets rows written to history: each is deleted (and leaves the `ended` set) if it
    /// is still as read; one changed since stays. How many were deleted.
    pub async fn forget_moved(&self, p: Partition, moved: &[EndedRow]) -> Result<usize> {
        if moved.is_empty() {
            return Ok(0);
        }
        let mut call = HISTORY_FORGET.call();
        call.key(&self.base.keys().ended(p));
        for row in moved {
            call.key(&self.base.keys().delivery(p, &row.id)).arg(&row.id).arg(row.stamp());
        }
        let deleted: i64 = call.run(&mut self.base.conn()).await?;
        Ok(deleted as usize)
    }

    /// How many deliveries of partition `p` ended at or before `before_ms` and wait to move.
    pub async fn ended_backlog(&self, p: Partition, before_ms: u64) -> Result<u64> {
        self.base.due_count(&self.base.keys().ended(p), before_ms).await
    }

    /// Whether each of `ids` has a row here.
    pub async fn rows_here(&self, ids: &[String]) -> Result<Vec<bool>> {
        let mut here = vec![false; ids.len()];
        for (p, at) in Rows::of(&self.base).by_partition(ids) {
            let mut pipe = redis::pipe();
            for &i in &at {
                pipe.cmd("EXISTS").arg(self.base.keys().delivery(p, &ids[i]));
            }
            let found: Vec<bool> = self.base.conn().query_reads(&pipe).await?;
            for (i, found) in at.into_iter().zip(found) {
                here[i] = found;
            }
        }
        Ok(here)
    }

    /// Writes a delivery's row back from history, as it was (noted as ended again), unless
    /// the row is here already; `true` when written.
    pub async fn restore_row(&self, p: Partition, id: &str, fields: &[(String, Vec<u8>)]) -> Result<bool> {
        let mut call = RESTORE_ROW.call();
        call.key(&self.base.keys().delivery(p, id))
            .key(&self.base.keys().ended(p))
            .arg(id)
            .arg(crate::time::now_millis());
        for (name, value) in fields {
            call.arg(name).arg(value.as_slice());
        }
        let written: i64 = call.run(&mut self.base.conn()).await?;
        Ok(written == 1)
    }
}
