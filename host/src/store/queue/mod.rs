//! A delivery's life in Redis: its row, claiming, loading and recording attempts, dead
//! letters, manual retries, reading and listing rows, retention, and the per-webhook state
//! the workers share (targets, failure streak, endpoint state, rate budgets).

pub mod attempts;
pub mod claim;
pub mod cursor;
pub mod deliveries;
pub mod ended;
pub mod endpoint;
pub mod index;
pub mod listing;
pub mod rate;
pub mod requeue;
pub mod row;
pub mod status;
pub mod streak;
pub mod tally;
pub mod targets;
pub(crate) mod trim;
pub mod work;
