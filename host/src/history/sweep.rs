//! Snapshot pointers that releases before 2026-11-28 left behind. Until then a record's
//! pointer to its newest event (`store::events::exports::Pointer`) stayed in Redis when
//! the event moved to PostgreSQL; since then it moves with it (`super::mover`). So an
//! installation upgraded with history on still holds such pointers, each pointing at an
//! event no longer in Redis. Once per partition the mover's idle turns walk the
//! partition's snapshot hashes, a step at a time (`HSCAN`), and move each such pointer as
//! a pointer moves today: written to history with its event's day (the event found there
//! by id), then forgotten in Redis if unchanged. One whose event is nowhere (gone with its
//! retention) is only forgotten: it pointed at nothing. Then `P:{q}:swept` is set, and the
//! partition is never walked again. A step repeated (a crash, a lease taken over) is
//! harmless: writes keep the newest, forgetting compares.

use super::reads::Reads;
use super::snapshots::PointerRows;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use super::db::History;
use super::snapshots::PointerRow;
use crate::store::StoreError;
use crate::store::core::keys::Partition;
use crate::store::events::exports::{ExportRecords, Pointer};
use crate::store::tenants::orgs::Orgs;

/// Fields one step asks `HSCAN` for, and about how many it reads.
const STEP: usize = 500;
/// Most organisations one step visits.
const ORGS_PER_STEP: usize = 64;

/// The sweeps of one process: how far each partition's got, and which are done.
#[derive(Debug, Default)]
pub(super) struct Sweep {
    progress: Mutex<HashMap<u16, Progress>>,
    done: Mutex<HashSet<u16>>,
}

/// A partition's sweep: the organisations still to walk (the current one last) and the
/// scan's cursor in the current one's hash.
#[derive(Debug)]
struct Progress {
    orgs: Vec<String>,
    cursor: u64,
}

/// Where a step reads and writes, and how far back events are looked for (days).
pub(super) struct Stores<'a> {
    pub exports: &'a ExportRecords,
    pub orgs: &'a Orgs,
    pub history: &'a History,
    pub days: u32,
}

impl Sweep {
    /// One step of partition `p`'s sweep, unless it is done: whether more is left.
    pub(super) async fn step(&self, to: &Stores<'_>, p: Partition) -> Result<bool, StoreError> {
        if self.done.lock().unwrap_or_else(|e| e.into_inner()).contains(&p.0) {
            return Ok(false);
        }
        let kept = self.progress.lock().unwrap_or_else(|e| e.into_inner()).remove(&p.0);
        let mut progress = match kept {
            Some(progress) => progress,
            None if to.exports.pointers_swept(p).await? => return Ok(self.finished(p)),
            None => {
                let mut orgs = to.orgs.org_ids().await?;
                orgs.reverse();
                Progress { orgs, cursor: 0 }
            }
        };
        // Organisations with few records (most: their hashes hold none here) take a round
        // trip each, so a step walks on until it has read a step's worth or visited many.
        let (mut read, mut visited) = (0, 0);
        while read < STEP && visited < ORGS_PER_STEP {
            let Some(org) = progress.orgs.last().cloned() else {
                to.exports.mark_pointers_swept(p).await?;
                return Ok(self.finished(p));
            };
            let (next, pointers) = to.exports.scan_pointers(p, &org, progress.cursor, STEP).await?;
            move_left_behind(to, p, &org, &pointers).await?;
            (read, visited) = (read + pointers.len(), visited + 1);
            progress.cursor = next;
            if next == 0 {
                progress.orgs.pop();
            }
        }
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).insert(p.0, progress);
        Ok(true)
    }

    fn finished(&self, p: Partition) -> bool {
        self.done.lock().unwrap_or_else(|e| e.into_inner()).insert(p.0);
        false
    }
}

/// Moves those of `org`'s pointers read in partition `p` whose event is no longer there.
/// (A tombstone is never left behind: tombstones came with pointers that move.)
async fn move_left_behind(
    to: &Stores<'_>,
    p: Partition,
    org: &str,
    read: &[(String, Pointer)],
) -> Result<(), StoreError> {
    let live: Vec<&(String, Pointer)> = read.iter().filter(|(_, pointer)| !pointer.gone).collect();
    let asked: Vec<(&str, &str)> = live.iter().map(|(_, pointer)| (org, pointer.event_id.as_str())).collect();
    let here = to.exports.events_here(p, &asked).await?;
    let left: Vec<&(String, Pointer)> = live.into_iter().zip(here).filter(|(_, here)| !here).map(|(l, _)| l).collect();
    // Their events looked for side by side (on the history pool's connections).
    let reads = Reads::of(to.history);
    let found = left.iter().map(|(_, pointer)| reads.find_event(org, &pointer.event_id, to.days));
    let found = futures_util::future::try_join_all(found).await?;
    let (mut rows, mut forget) = (Vec::new(), Vec::new());
    for ((subject, pointer), found) in left.into_iter().zip(found) {
        if let Some((_, event)) = found {
            rows.push(PointerRow::new(org, subject, event.accepted_ms, pointer));
        }
        forget.push((org, subject.as_str(), pointer.clone()));
    }
    PointerRows::of(to.history).write_pointers(&rows).await?;
    let forgotten = to.exports.forget_moved_pointers(p, &forget).await?;
    if forgotten > 0 {
        tracing::info!(
            partition = p.0,
            org_id = org,
            moved = rows.len(),
            forgotten,
            "snapshot pointers an earlier release left in Redis swept to history"
        );
    }
    Ok(())
}
