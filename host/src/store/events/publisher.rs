//! Publishing in batches: one batcher per partition (group commit: publishes that arrive
//! while one call is in flight share the next), and the subscriber lookups before them,
//! also in batches (concurrent publishes share one round trip, and those of one
//! organisation and action one lookup) and kept: each with the organisation's version it
//! was read at, which the publish script holds it to (`store::versions`).

use std::sync::Arc;

use crate::recent::Recent;
use crate::store::Store;
use crate::store::core::batch::Batcher;
use crate::store::core::keys::Partition;
use crate::store::error::StoreError;
use crate::store::events::daily::{Take, Taken};
use crate::store::events::publish::{Publication, Published};
use crate::store::tenants::webhooks::Subscribers;
use crate::store::versions::KEPT_AT_MOST;

/// Most events sent to Redis in one publish call.
const BATCH: usize = 64;
/// What the (organisation, action) subscriber sets kept per process may weigh, about their
/// size in bytes (an organisation with many webhooks and long filters weighs its share).
const KEPT_BYTES: usize = 32 * 1024 * 1024;

/// Publishes batches of events, one batcher per partition, after finding their subscribers
/// (also in batches: concurrent publishes share one round trip, and those of one
/// organisation and action one lookup).
#[derive(Debug)]
pub struct Publisher {
    partitions: Vec<Batcher<Publication, Published>>,
    subscribers: Batcher<(String, String), Result<Subscribers, StoreError>>,
    kept: Recent<(String, String), Arc<Subscribers>>,
    /// The organisations' events of the day, taken before a publish (`events::daily`).
    daily: Batcher<Take, Taken>,
}

impl Publisher {
    /// Starts the batchers (inside a Tokio runtime).
    pub fn start(store: &Store) -> Publisher {
        let writes = store.event_writes();
        let partitions =
            Batcher::per_partition(store.keys().partitions(), writes, BATCH, |writes, p, batch| async move {
                writes.publish(p, &batch).await
            });
        let lookups = store.clone();
        let subscribers = Batcher::spawn_distinct(BATCH, move |pairs: Vec<(String, String)>| {
            let store = lookups.clone();
            async move { store.subscriptions().subscribers_of(&pairs).await }
        });
        let counters = store.clone();
        let daily = Batcher::spawn(BATCH, move |takes: Vec<Take>| {
            let store = counters.clone();
            async move { store.daily_counts().take_daily(&takes).await }
        });
        Publisher { partitions, subscribers, kept: Recent::new(KEPT_BYTES, KEPT_AT_MOST), daily }
    }

    /// The active webhooks of the organisation subscribed to the action, as kept (or read
    /// now when not kept, or `fresh`: then kept for the next).
    pub async fn subscribers(&self, org_id: &str, action: &str, fresh: bool) -> Result<Arc<Subscribers>, StoreError> {
        let key = (org_id.to_owned(), action.to_owned());
        if !fresh && let Some(kept) = self.kept.get(&key) {
            return Ok(kept);
        }
        let read = Arc::new(self.subscribers.call(key.clone()).await??);
        let weight: usize =
            read.list.iter().map(|s| 48 + s.webhook.len() + s.filter.as_ref().map_or(0, String::len)).sum();
        self.kept.put(key, read.clone(), None, 64 + weight);
        Ok(read)
    }

    /// Takes a publish's places among its organisation's events of the day (batched:
    /// concurrent publishes share a round trip, one script per organisation).
    pub async fn take_daily(&self, take: Take) -> Result<Taken, StoreError> {
        self.daily.call(take).await
    }

    pub async fn publish(&self, p: Partition, publication: Publication) -> Result<Published, StoreError> {
        match self.partitions.get(usize::from(p.0)) {
            Some(batcher) => batcher.call(publication).await,
            None => Err(StoreError::NoPartition(p.0)),
        }
    }
}
