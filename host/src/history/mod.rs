//! History in PostgreSQL (contract §8): deliveries that ended and events accepted move from
//! Redis to PostgreSQL once `WEIR_HISTORY_HOT` old, so Redis keeps only what is live. The
//! only module that speaks PostgreSQL.
//!
//! - `db`: the handle ([`History`]): settings, schema, pool, whether PostgreSQL answered.
//! - `error`: why history could not be read or written.
//! - `pool`: a few connections, reopened when they break; every query has a deadline.
//! - `schema`: Weir's tables in a schema of its own, migrated under an advisory lock,
//!   partitioned by day; retention drops whole days.
//! - `classes`: deliveries of plans that keep them for less, in day partitions of their own.
//! - `indexes`: the first entries of day indexes (what listings walk), in runs.
//! - `known`: whether an event id was accepted before, asked in batches.
//! - `records`: what is kept of a delivery (its Redis row, as it was) and of an event (its
//!   stored form), written in idempotent batches, read by id.
//! - `snapshots`: records' pointers to their newest event (report exports), moved with
//!   their events.
//! - `sweep`: once per partition, the pointers releases before 2026-11-28 left in Redis
//!   after their events moved, moved too.
//! - `mover`: a background job per partition (every process takes part, one at a time per
//!   partition): write what is due, then have Redis forget it.
//! - `reads`: reads that fall back to history for what left Redis — the same rows, so
//!   every view of them is the same.
//!
//! While PostgreSQL cannot be reached, publishing and delivery go on, ended work waits in
//! Redis, and reads that need history fail with `HistoryError::Unavailable` (`503`).

mod classes;
mod db;
mod error;
mod indexes;
mod known;
mod mover;
mod pool;
mod reads;
mod records;
mod schema;
mod snapshots;
mod sweep;

pub(crate) use self::db::History;
pub(crate) use self::known::Known;
pub(crate) use self::mover::{Mover, MoverDoors, MoverJob};
pub(crate) use self::reads::lookback_days;
pub(crate) use self::reads::{Here, Reads};
pub(crate) use self::snapshots::PointerRows;
