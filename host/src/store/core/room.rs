//! Room in bounded sets whose entries each hold their place until a time (`lua/room.lua`):
//! the test events of the last minute, an organisation's unused portal links. One call
//! checks every set given and adds the entry to all of them, or to none.

use std::time::Duration;

use crate::store::core::conn::Conn;
use crate::store::core::scripts::ROOM;
use crate::store::error::Result;

/// One set an entry must find room in: its key and how many entries it holds at most.
#[derive(Debug, Clone, Copy)]
pub struct Bounded<'a> {
    pub key: &'a str,
    pub limit: u64,
}

/// An entry to add, and until when it holds its place (ms).
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    pub member: &'a str,
    pub until_ms: u64,
}

/// No room: the first set (its index in the call's) that is full, and how long until one of
/// its entries leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full {
    pub set: usize,
    pub wait: Duration,
}

/// Adds `entry` to every set of `sets` (all in one slot) if each has room at `now_ms`.
pub async fn take(
    conn: &mut Conn,
    sets: &[Bounded<'_>],
    entry: Entry<'_>,
    now_ms: u64,
) -> Result<std::result::Result<(), Full>> {
    let mut call = ROOM.call();
    call.keys(sets.iter().map(|s| s.key)).arg(now_ms).arg(entry.member).arg(entry.until_ms);
    for set in sets {
        call.arg(set.limit);
    }
    let (full, wait_ms): (usize, u64) = call.run(conn).await?;
    Ok(match full {
        0 => Ok(()),
        i => Err(Full { set: i - 1, wait: Duration::from_millis(wait_ms) }),
    })
}
