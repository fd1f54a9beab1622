//! Events accepted, waiting to move to history (with history in PostgreSQL, contract §8):
//! `publish.lua` notes each new event's key in its partition's `accepted` set, by when it
//! was accepted. A mover (`crate::history`) reads those accepted long enough ago, writes
//! them to PostgreSQL, then has them forgotten here — each only once none of its
//! deliveries has a row here any more (`lua/history_forget_events.lua`): a delivery still
//! retrying needs its event. An event that is its record's newest snapshot moves too: the
//! record's pointer (`snap:{org}`) stays, and report exports read the event from history.
//! An event moved back (a retry or a replay of one of its deliveries) is written as it was
//! ([`Store::restore_event`]).

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::core::scripts::HISTORY_FORGET_EVENTS;
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Accepted {
    base: Base,
}

impl Accepted {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Accepted {
        Accepted { base: base.clone() }
    }
}

/// An event read for its move.
#[derive(Debug, Clone)]
pub struct AcceptedEvent {
    /// Its key.
    pub key: String,
    /// Its stored form (`store::events::stored`); `None`: gone already.
    pub stored: Option<Vec<u8>>,
}

/// An event to forget once its deliveries are gone from here: its key and theirs.
#[derive(Debug, Clone)]
pub struct Forget {
    pub event_key: String,
    pub delivery_keys: Vec<String>,
}

impl Accepted {
    /// Up to `n` events of partition `p` accepted at or before `before_ms`, oldest first.
    pub async fn accepted_events(&self, p: Partition, before_ms: u64, n: usize) -> Result<Vec<AcceptedEvent>> {
        let keys = self.base.due_members(&self.base.keys().accepted(p), before_ms, n).await?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.cmd("GET").arg(key);
        }
        let values: Vec<Option<Vec<u8>>> = self.base.conn().query_reads(&pipe).await?;
        Ok(keys.into_iter().zip(values).map(|(key, stored)| AcceptedEvent { key, stored }).collect())
    }

    /// Forgets events written to history whose deliveries are gone from here; one whose
    /// delivery is still here stays, noted again for `later_ms`. How many were deleted.
    pub async fn forget_events(&self, p: Partition, events: &[Forget], later_ms: u64) -> Result<usize> {
        if events.is_empty() {
            return Ok(0);
        }
        let mut call = HISTORY_FORGET_EVENTS.call();
        call.key(&self.base.keys().accepted(p)).arg(later_ms);
        for e in events {
            call.key(&e.event_key).arg(e.delivery_keys.len());
            for key in &e.delivery_keys {
                call.key(key);
            }
        }
        let deleted: i64 = call.run(&mut self.base.conn()).await?;
        Ok(deleted as usize)
    }

    /// Notes events of partition `p` (their keys) to be looked at again at `at_ms`.
    pub async fn note_accepted(&self, p: Partition, event_keys: &[&str], at_ms: u64) -> Result<()> {
        if event_keys.is_empty() {
            return Ok(());
        }
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(self.base.keys().accepted(p));
        for key in event_keys {
            zadd.arg(at_ms).arg(*key);
        }
        let _: i64 = zadd.query_async(&mut self.base.conn()).await?;
        Ok(())
    }

    /// How many events of partition `p` were accepted at or before `before_ms` and wait to
    /// move.
    pub async fn accepted_backlog(&self, p: Partition, before_ms: u64) -> Result<u64> {
        self.base.due_count(&self.base.keys().accepted(p), before_ms).await
    }

    /// Whether an event is here.
    pub async fn event_exists(&self, p: Partition, org_id: &str, event_id: &str) -> Result<bool> {
        Ok(redis::cmd("EXISTS")
            .arg(self.base.keys().event(p, org_id, event_id))
            .query_async(&mut self.base.conn())
            .await?)
    }

    /// Writes an event back from history (its stored form), kept for `keep_ms`, unless it
    /// is here already; noted to move again later.
    pub async fn restore_event(
        &self,
        p: Partition,
        org_id: &str,
        event_id: &str,
        stored: &[u8],
        keep_ms: u64,
    ) -> Result<()> {
        let key = self.base.keys().event(p, org_id, event_id);
        let mut pipe = redis::pipe();
        pipe.cmd("SET").arg(&key).arg(stored).arg("NX").arg("PX").arg(keep_ms.max(1)).ignore();
        pipe.cmd("ZADD").arg(self.base.keys().accepted(p)).arg(crate::time::now_millis()).arg(&key).ignore();
        let () = pipe.query_async(&mut self.base.conn()).await?;
        Ok(())
    }
}
