//! Reading delivery rows (`store::queue::row`) by id. The queue (`store::queue::claim`) writes them, and
//! `store::queue::listing` pages through the indexes that list them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::error::Result;
use crate::store::error::StoreError;
use crate::store::events::publish::EventWrites;
use crate::store::events::stored::StoredEvent;
use crate::store::queue::row::DeliveryRow;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Rows {
    base: Base,
}

impl Rows {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Rows {
        Rows { base: base.clone() }
    }
}

impl Rows {
    /// The delivery's row if it exists and belongs to `org_id`.
    pub async fn get_delivery(&self, org_id: &str, id: &str) -> Result<Option<DeliveryRow>> {
        let found = self.get_deliveries(&[id.to_owned()]).await?;
        Ok(found.into_iter().flatten().next().filter(|d| d.org_id == org_id))
    }

    /// The positions of `ids` grouped by the partition each delivery id names (ids of no
    /// partition of this data set are left out).
    pub(in crate::store) fn by_partition(&self, ids: &[String]) -> BTreeMap<Partition, Vec<usize>> {
        let mut by_partition: BTreeMap<Partition, Vec<usize>> = BTreeMap::new();
        for (i, id) in ids.iter().enumerate() {
            if let Some(p) = self.base.keys().partition_of_delivery(id) {
                by_partition.entry(p).or_default().push(i);
            }
        }
        by_partition
    }

    /// Several deliveries' rows by id (`None` for expired or unknown ones), in order, each
    /// with its event. Rows are read per partition, then the events they need.
    pub async fn get_deliveries(&self, ids: &[String]) -> Result<Vec<Option<DeliveryRow>>> {
        let by_partition = self.by_partition(ids);
        let reads = by_partition.iter().map(|(p, at)| async move {
            let mut pipe = redis::pipe();
            for &i in at {
                pipe.hgetall(self.base.keys().delivery(*p, &ids[i]));
            }
            // Read alone on a cluster: mid-reshard the slot's rows sit on two nodes.
            let raw: Vec<HashMap<String, Vec<u8>>> = self.base.conn().query_reads(&pipe).await?;
            let mut rows: Vec<Option<DeliveryRow>> = at
                .iter()
                .zip(raw)
                .map(|(&i, raw)| DeliveryRow::decode(&self.base.keys().delivery(*p, &ids[i]), &ids[i], raw))
                .collect();
            let mut events: HashMap<(String, String), Option<Arc<StoredEvent>>> = HashMap::new();
            for row in rows.iter().flatten().filter(|r| !r.event_id.is_empty()) {
                events.entry((row.org_id.clone(), row.event_id.clone())).or_default();
            }
            for ((org, evt), slot) in events.iter_mut() {
                *slot = EventWrites::of(&self.base).event(*p, org, evt).await?.map(Arc::new);
            }
            for row in rows.iter_mut().flatten() {
                row.event = events.get(&(row.org_id.clone(), row.event_id.clone())).cloned().flatten();
            }
            Ok::<_, StoreError>(at.iter().copied().zip(rows).collect::<Vec<_>>())
        });
        let mut out: Vec<Option<DeliveryRow>> = ids.iter().map(|_| None).collect();
        for part in futures_util::future::try_join_all(reads).await? {
            for (i, row) in part {
                out[i] = row;
            }
        }
        Ok(out)
    }
}
