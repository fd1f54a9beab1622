//! Events: publishing them (the batcher and the script), their stored form, the ones this
//! process just published, the event log, replays, and report exports with the snapshots
//! they are built from.

pub mod accepted;
pub mod daily;
pub mod exports;
pub mod log;
pub mod log_entry;
pub mod publish;
pub mod publisher;
pub(crate) mod recent;
pub mod replay;
pub(crate) mod shunned;
pub(crate) mod standby;
pub mod stored;
pub mod test_events;
