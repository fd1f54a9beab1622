//! The connection (one Redis or a cluster), the one key layout, the Lua scripts and their
//! replies read by name, group commit, and the `redis-server` Weir manages.

pub mod base;
pub mod batch;
pub mod conn;
pub mod health;
pub mod jobs;
pub mod keys;
pub mod managed;
pub(crate) mod reply;
pub mod room;
pub(crate) mod scripts;
pub mod shards;
