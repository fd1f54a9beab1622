//! The store's doors, one per concern: `store.webhooks().get_webhook(…)`, `store.queue()
//! .claim(…)`. Each is a view of the one connection and key layout (`crate::store::core`)
//! that opens only its concern's records and scripts; `Store` itself keeps the connection,
//! the key layout and the few reads every concern shares.

use std::ops::Deref;

use super::Store;

macro_rules! concern {
    ($(#[$doc:meta])* $name:ident, $open:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name<'a>(&'a Store);

        impl Store {
            $(#[$doc])*
            pub fn $open(&self) -> $name<'_> {
                $name(self)
            }
        }

        impl Deref for $name<'_> {
            type Target = Store;

            /// The connection, the key layout and the shared reads (not another concern).
            fn deref(&self) -> &Store {
                self.0
            }
        }
    };
}

concern!(
    /// Organisations, API clients and their tokens, people who sign in and their sessions
    /// (`tenants/orgs.rs`, `clients.rs`, `users.rs`).
    Tenants,
    tenants
);
concern!(
    /// Webhooks: records, the subscription index, secrets and certificates
    /// (`tenants/webhooks.rs`).
    Webhooks,
    webhooks
);
concern!(
    /// Plugins: records and code stored once per organisation and hash (`tenants/plugins.rs`).
    Plugins,
    plugins
);
concern!(
    /// What the delivery workers share about a webhook: its target, failure streak, endpoint
    /// state and rate (`queue/targets.rs`, `streak.rs`, `endpoint.rs`, `rate.rs`).
    Endpoints,
    endpoints
);
concern!(
    /// The delivery queue: claims and leases, loads and outcomes, manual retries, retention
    /// (`queue/claim.rs`, `work.rs`, `requeue.rs`, `trim.rs`).
    Queue,
    queue
);
concern!(
    /// Deliveries read: rows by id, listings by the day indexes (`queue/deliveries.rs`,
    /// `listing.rs`).
    Deliveries,
    deliveries
);
concern!(
    /// What may move to history and what moved: ended rows, accepted events, index heads
    /// (`queue/ended.rs`, `index.rs`, `events/accepted.rs`).
    Moving,
    moving
);
concern!(
    /// Events: publishing (through a failover too), the event log (`events/publish.rs`,
    /// `standby.rs`, `log.rs`).
    Events,
    events
);
concern!(
    /// Replays: requests, their progress, the work in slices (`events/replay.rs`).
    Replays,
    replays
);
concern!(
    /// Report exports and the record snapshots they read (`events/exports.rs`).
    Exports,
    exports
);
concern!(
    /// Lease queues of background jobs (`core/jobs.rs`).
    Jobs,
    jobs
);
concern!(
    /// Organisation versions, which prove a publish's cache current (`versions.rs`).
    Versions,
    versions
);
