//! The delivery queue in Redis: which delivery is due, who is working on it, and every
//! state change of a delivery, each done atomically by a Lua script in `lua/`.
//!
//! # Keys (prefix `P`)
//! | key | type | holds |
//! |---|---|---|
//! | `P:q:ready` | stream, group `workers` | deliveries to attempt now; entry fields `d` (delivery id), `w` (webhook id) |
//! | `P:q:scheduled` | zset | deliveries waiting for a retry, scored by due time (ms) |
//! | `P:q:parked:{wh}` | list | deliveries of a webhook that was at its in-flight cap |
//! | `P:q:parked` | set | webhooks with parked deliveries |
//! | `P:evt:{org}:{evt}` | string, TTL | the event envelope (JSON), also the idempotency record of its id |
//! | `P:dlv:{dlv}` | hash, TTL | a delivery ([`crate::store::deliveries`]) |
//! | `P:org:{org}:dlvs`, `P:wh:{wh}:dlvs` | zset (lex) | delivery ids of an organisation / a webhook, for listing |
//! | `P:wh:{wh}:pending` | set | the webhook's deliveries still `pending` (cancelled or failed together) |
//!
//! # Life of a delivery
//! `publish.lua` writes the event, one delivery per subscribed active webhook, and a
//! stream entry for each, in one step: a `202` means all of it is in Redis. A worker reads
//! entries with `XREADGROUP`; the entry stays in the group's pending list (PEL) until
//! `record.lua` has written the outcome, so a worker that dies mid-attempt loses nothing:
//! its entries go idle and another worker takes them over with `XAUTOCLAIM`. Live workers
//! refresh the idle time of what they hold every few seconds (`XCLAIM … JUSTID`), so only
//! a dead worker's entries are taken. A lease field on the delivery (`lease_until`, set by
//! `load.lua`) keeps two workers from sending the same delivery at once. A failed attempt
//! with attempts left goes to `P:q:scheduled`; `schedule.lua`, run by every process, moves
//! due ones back to the stream. There is no leader: every step is one atomic script.
//! Loads and records are batched ([`batch`]): one script call handles many deliveries,
//! each as if alone.
//!
//! If Redis restarts without the consumer group (an empty or older data set), the next
//! read gets `NOGROUP`, and the group is created again from the start of the stream.

pub mod batch;
mod lifecycle;
mod stream;

pub use lifecycle::{
    Loaded, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOTS_PER_ORG, NewEvent, Outcome, Published, Record, RecordRules, Recorded,
    Recording, RetryRefused, WebhookTarget, Work,
};
pub use stream::Entry;

use std::sync::LazyLock;

use redis::Script;

use crate::store::Store;

/// The consumer group of the ready stream.
pub const GROUP: &str = "workers";

const LIB: &str = include_str!("lua/lib.lua");

static PUBLISH: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/publish.lua")));
static LOAD: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/load.lua")));
static RECORD: LazyLock<Script> = LazyLock::new(|| Script::new(&format!("{LIB}\n{}", include_str!("lua/record.lua"))));
static SCHEDULE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/schedule.lua")));
static PARK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/park.lua")));
static UNPARK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/unpark.lua")));
static REQUEUE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/requeue.lua")));
static RETRY: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/retry.lua")));
static DEAD_LETTER: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lua/dead_letter.lua")));
static WEBHOOK_OFF: LazyLock<Script> =
    LazyLock::new(|| Script::new(&format!("{LIB}\n{}", include_str!("lua/webhook_off.lua"))));

/// The queue of one installation (key prefix). Cloning is cheap.
#[derive(Debug, Clone)]
pub struct Queue {
    store: Store,
    ready: String,
    scheduled: String,
    parked: String,
}

impl Queue {
    pub fn new(store: Store) -> Queue {
        Queue {
            ready: store.key(&["q", "ready"]),
            scheduled: store.key(&["q", "scheduled"]),
            parked: store.key(&["q", "parked"]),
            store,
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    fn parked_list(&self, webhook: &str) -> String {
        self.store.key(&["q", "parked", webhook])
    }

    fn delivery_key(&self, delivery: &str) -> String {
        self.store.key(&["dlv", delivery])
    }
}
