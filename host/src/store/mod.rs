//! The Redis store: everything Weir keeps, and the only module that speaks Redis. It keeps
//! records and answers with them; how the API shows one is the domain's (`crate::domain::views`).
//!
//! - [`core`]: the connection (one Redis or a cluster: `conn`), the one key layout (`keys`,
//!   with its table) and `lua/` with every script (scripts get all their keys through `KEYS`,
//!   and every script's keys share one slot, so the same code runs on one Redis and on a
//!   Redis Cluster), script replies read by name (`reply`), group commit (`batch`), and the
//!   `redis-server` Weir runs itself when none is configured (`managed`).
//! - [`queue`]: a delivery's life — its row (`row`, `attempts`, `status`), claiming
//!   (`claim`), loading and recording attempts and dead letters (`work`), manual retries and
//!   ending a stopped webhook's deliveries (`requeue`), reading and listing rows
//!   (`deliveries`, `listing`), retention (`trim`), and what the workers share about a
//!   webhook (`targets`, `streak`, `endpoint`, `rate`).
//! - [`events`]: publishing (`publish`, `publisher`), the stored form (`stored`), the events
//!   this process just published (`recent`), the event log (`log`), replays (`replay`), and
//!   report exports with the snapshots they are built from (`exports`).
//! - [`tenants`]: organisations, API clients and tokens, people and sessions, webhooks
//!   (`webhooks`: changes; `webhook_record`: the record and its hash) and plugins.
//!
//! Writes that must be all-or-nothing are Lua scripts or `MULTI`, so no request leaves
//! half-written state behind. With `WEIR_REDIS_WAIT_REPLICAS` set, a write the API
//! acknowledges has also reached that many replicas ([`Store::acknowledged`]).

pub mod core;
mod error;
pub mod events;
pub mod queue;
pub mod tenants;
pub mod versions;

pub use self::core::base::{Base, CLUSTER_PARTITIONS, LISTPACK_VALUE, MAX_SNAPSHOTS_PER_ORG, Settings};
pub use self::core::conn::{Conn, Target};
pub use self::core::keys::{Keys, Partition};
pub use self::error::{Result, StoreError, not_ready};

/// A handle on the store, for the process's wiring (`crate::service`) and the tests: it
/// connects, and opens each concern — the parts of Weir are handed the concerns they use,
/// never the store. Cloning is cheap.
#[derive(Clone, Debug)]
pub struct Store {
    base: Base,
}

impl Store {
    /// Connects, failing fast when Redis cannot be reached (waiting while it loads its data),
    /// and reads (or creates) the data set's layout: an existing data set keeps its
    /// partition count.
    pub async fn connect(settings: &Settings) -> Result<Store> {
        Ok(Store { base: Base::connect(settings).await? })
    }

    /// The same store over a connection of its own, driven by the calling runtime (the
    /// delivery workers run on a thread of their own). Everything else is shared.
    pub async fn another_connection(&self) -> Result<Store> {
        Ok(Store { base: self.base.another_connection().await? })
    }

    /// The shared connection.
    pub fn conn(&self) -> Conn {
        self.base.conn()
    }

    /// The names of every key.
    pub fn keys(&self) -> &Keys {
        self.base.keys()
    }

    /// The key prefix, without the trailing colon.
    pub fn prefix(&self) -> &str {
        self.base.prefix()
    }

    pub async fn ping(&self) -> Result<()> {
        self.base.ping().await
    }

    /// Redis's `hash-max-listpack-value` when it is below [`LISTPACK_VALUE`]; `None` when it
    /// is not (or `CONFIG` is not allowed, as on some managed services).
    pub async fn small_listpack_values(&self) -> Option<u64> {
        self.base.small_listpack_values().await
    }

    /// Makes a write to `key`'s node acknowledged (`Base::acknowledged`).
    pub async fn acknowledged(&self, key: &str) -> Result<()> {
        self.base.acknowledged(key).await
    }

    pub fn health(&self) -> core::health::Health {
        core::health::Health::of(&self.base)
    }

    pub fn jobs(&self) -> core::jobs::Jobs {
        core::jobs::Jobs::of(&self.base)
    }

    pub fn versions(&self) -> versions::Versions {
        versions::Versions::of(&self.base)
    }

    pub fn orgs(&self) -> tenants::orgs::Orgs {
        tenants::orgs::Orgs::of(&self.base)
    }

    pub fn plan_changes(&self) -> tenants::plan_change::PlanChanges {
        tenants::plan_change::PlanChanges::of(&self.base)
    }

    pub fn clients(&self) -> tenants::clients::Clients {
        tenants::clients::Clients::of(&self.base)
    }

    pub fn users(&self) -> tenants::users::Users {
        tenants::users::Users::of(&self.base)
    }

    pub fn portal_links(&self) -> tenants::portal::PortalLinks {
        tenants::portal::PortalLinks::of(&self.base)
    }

    pub fn portal_sessions(&self) -> tenants::portal_sessions::PortalSessions {
        tenants::portal_sessions::PortalSessions::of(&self.base)
    }

    pub fn plugins(&self) -> tenants::plugins::PluginRecords {
        tenants::plugins::PluginRecords::of(&self.base)
    }

    pub fn sources(&self) -> tenants::sources::SourceRecords {
        tenants::sources::SourceRecords::of(&self.base)
    }

    pub fn source_requests(&self) -> tenants::source_requests::SourceRequests {
        tenants::source_requests::SourceRequests::of(&self.base)
    }

    pub fn webhooks(&self) -> tenants::webhooks::WebhookRecords {
        tenants::webhooks::WebhookRecords::of(&self.base)
    }

    pub fn subscriptions(&self) -> tenants::subscribers::Subscriptions {
        tenants::subscribers::Subscriptions::of(&self.base)
    }

    pub fn claims(&self) -> queue::claim::Claims {
        queue::claim::Claims::of(&self.base)
    }

    pub fn work(&self) -> queue::work::Work {
        queue::work::Work::of(&self.base)
    }

    pub fn requeue(&self) -> queue::requeue::Requeue {
        queue::requeue::Requeue::of(&self.base)
    }

    pub fn trim(&self) -> queue::trim::Trim {
        queue::trim::Trim::of(&self.base)
    }

    pub fn rows(&self) -> queue::deliveries::Rows {
        queue::deliveries::Rows::of(&self.base)
    }

    pub fn listings(&self) -> queue::listing::Listings {
        queue::listing::Listings::of(&self.base)
    }

    pub fn tallies(&self) -> queue::tally::Tallies {
        queue::tally::Tallies::of(&self.base)
    }

    pub fn targets(&self) -> queue::targets::Targets {
        queue::targets::Targets::of(&self.base)
    }

    pub fn endpoint_states(&self) -> queue::endpoint::EndpointStates {
        queue::endpoint::EndpointStates::of(&self.base)
    }

    pub fn streaks(&self) -> queue::streak::Streaks {
        queue::streak::Streaks::of(&self.base)
    }

    pub fn rates(&self) -> queue::rate::Rates {
        queue::rate::Rates::of(&self.base)
    }

    pub fn ended(&self) -> queue::ended::Ended {
        queue::ended::Ended::of(&self.base)
    }

    pub fn index_heads(&self) -> queue::index::IndexHeads {
        queue::index::IndexHeads::of(&self.base)
    }

    pub fn accepted(&self) -> events::accepted::Accepted {
        events::accepted::Accepted::of(&self.base)
    }

    pub fn event_writes(&self) -> events::publish::EventWrites {
        events::publish::EventWrites::of(&self.base)
    }

    pub fn daily_counts(&self) -> events::daily::DailyCounts {
        events::daily::DailyCounts::of(&self.base)
    }

    pub fn standbys(&self) -> events::standby::Standbys {
        events::standby::Standbys::of(&self.base)
    }

    pub fn event_log(&self) -> events::log::EventLog {
        events::log::EventLog::of(&self.base)
    }

    pub fn test_event_budget(&self) -> events::test_events::TestEventBudget {
        events::test_events::TestEventBudget::of(&self.base)
    }

    pub fn replays(&self) -> events::replay::ReplayRecords {
        events::replay::ReplayRecords::of(&self.base)
    }

    pub fn exports(&self) -> events::exports::ExportRecords {
        events::exports::ExportRecords::of(&self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_not_being_ready_is_unavailable_and_a_refused_request_is_not() {
        for code in ["TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "OOM"] {
            let e = parse_error(&format!("-{code} not now\r\n"));
            assert!(matches!(StoreError::from(e), StoreError::Unavailable(_)), "{code}");
        }
        let loading = parse_error("-LOADING Redis is loading the dataset in memory\r\n");
        assert_eq!(loading.code(), Some("LOADING"));
        assert!(matches!(StoreError::from(loading), StoreError::Unavailable(_)));
        let busy =
            parse_error("-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n");
        assert!(matches!(StoreError::from(busy), StoreError::Unavailable(_)));
        let wrongtype = parse_error("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
        assert!(matches!(StoreError::from(wrongtype), StoreError::Redis(_)));
    }

    /// A server error as the client reads it off the wire.
    fn parse_error(wire: &str) -> redis::RedisError {
        match redis::parse_redis_value(wire.as_bytes()) {
            Ok(redis::Value::ServerError(e)) => e.into(),
            other => panic!("not a server error: {other:?}"),
        }
    }
}
