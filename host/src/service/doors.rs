//! Which of the store's concerns each part is handed: made here once for the process
//! (`app.rs`) and for `weir admin`'s one-shot commands, so the parts themselves never hold the
//! store.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::deliveries::DeliveryDoors;
use crate::domain::moved::{Moved, MovedDoors};
use crate::domain::replay::ReplayDoors;
use crate::domain::usage::Usage;
use crate::history::{History, MoverDoors};
use crate::plans::Plans;
use crate::store::Store;

/// Redis's side of every read of deliveries and events, and history's.
pub(crate) fn moved(store: &Store, history: Option<&Arc<History>>, retentions: (Duration, Duration)) -> Moved {
    let doors = MovedDoors {
        keys: store.keys().clone(),
        rows: store.rows(),
        writes: store.event_writes(),
        log: store.event_log(),
        accepted: store.accepted(),
        ended: store.ended(),
        exports: store.exports(),
    };
    Moved::new(doors, history, retentions)
}

/// What a replay works with.
pub(crate) fn replays(store: &Store) -> ReplayDoors {
    ReplayDoors {
        keys: store.keys().clone(),
        orgs: store.orgs(),
        webhooks: store.webhooks(),
        replays: store.replays(),
        jobs: store.jobs(),
        log: store.event_log(),
    }
}

/// What the deliveries' door reads and writes.
pub(crate) fn deliveries(store: &Store) -> DeliveryDoors {
    DeliveryDoors {
        keys: store.keys().clone(),
        listings: store.listings(),
        tallies: store.tallies(),
        webhooks: store.webhooks(),
        requeue: store.requeue(),
    }
}

/// An organisation's usage.
pub(crate) fn usage(store: &Store, plans: &Arc<Plans>) -> Usage {
    Usage::new(store.orgs(), store.daily_counts(), store.webhooks(), store.plugins(), plans)
}

/// What the move to history reads and forgets.
pub(crate) fn mover(store: &Store) -> MoverDoors {
    MoverDoors {
        keys: store.keys().clone(),
        orgs: store.orgs(),
        webhooks: store.webhooks(),
        ended: store.ended(),
        accepted: store.accepted(),
        exports: store.exports(),
        index_heads: store.index_heads(),
        jobs: store.jobs(),
    }
}
