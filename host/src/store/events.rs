//! Events: each stored once, compressed, in the partition of its subject. Publishing writes
//! the event (its key is also its id's idempotency record), the snapshot pointer of its
//! record, and one delivery per subscribed webhook — with its index entries and its place
//! in the webhook's queue — in one script per partition for a whole batch of events
//! (`lua/publish.lua`).
//!
//! A stored event is `W3`, when it was accepted (ms, 8 bytes big-endian), its `created_at`
//! — `0xFF` and the time (ms, 8 bytes) when it is in the contract's form (it always is once
//! validated), else its length (one byte) and the text — then the envelope compressed with
//! zstd and a dictionary of Weir's own envelope vocabulary (`envelope.dict`: the envelope's
//! keys, id prefixes, the catalogue's actions and snapshot keys), its frame without the magic
//! number and the dictionary's id (the same for every event): about a third of a typical
//! envelope's size, and less for small ones.
//!
//! A delivery's id is derived from its organisation, event and webhook and the time the
//! event was accepted (`ids::derived_tagged`), so an event's deliveries are found from the
//! event alone (`GET /api/v2/events/{id}`), without an index.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::deliveries::Status;
use super::keys::Partition;
use super::scripts::{PUBLISH, RELEASE};
use super::{Result, Store, StoreError};
use crate::ids::{self, Kind};

/// Most record snapshots kept per organisation (the least recently updated, sampled, go
/// first); each partition keeps its share.
pub const MAX_SNAPSHOTS_PER_ORG: usize = 50_000;
/// Every this many snapshots a publish checks the organisation's cap (and then evicts up to
/// twice as many records as this): the check would cost Redis a command per event otherwise.
const CAP_CHECK_EVERY: u32 = 8;
/// Snapshots published by this process (for [`CAP_CHECK_EVERY`]).
static SNAPSHOTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Largest event kept as a record's snapshot (its envelope, uncompressed).
pub const MAX_SNAPSHOT_BYTES: usize = 256 * 1024;

/// zstd level: fast, and most of the gain on small JSON documents.
const LEVEL: i32 = 3;

/// An event as stored: what an attempt needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's `created_at` (sent as `X-Webhook-Timestamp`).
    pub created_at: String,
    /// The envelope, as published.
    pub envelope: String,
    /// When Weir accepted it (ms): the time of its deliveries' ids.
    pub accepted_ms: u64,
}

/// The tag of the stored form, and the byte saying a `created_at` follows as a time.
const TAG: &[u8; 2] = b"W3";
const CREATED_MS: u8 = 0xFF;
/// zstd's magic number, which stored frames leave out.
const ZSTD_MAGIC: [u8; 4] = 0xFD2F_B528_u32.to_le_bytes();

impl StoredEvent {
    /// The stored form of an event.
    pub fn encode(&self) -> Vec<u8> {
        let compressed = CONTEXTS.with_borrow_mut(|c| c.compress(self.envelope.as_bytes()));
        let frame = compressed.strip_prefix(&ZSTD_MAGIC).unwrap_or(&compressed);
        let mut out = Vec::with_capacity(20 + frame.len());
        out.extend_from_slice(TAG);
        out.extend_from_slice(&self.accepted_ms.to_be_bytes());
        match crate::time::parse_rfc3339(&self.created_at)
            .filter(|ms| crate::time::format_millis(*ms) == self.created_at)
        {
            Some(ms) => {
                out.push(CREATED_MS);
                out.extend_from_slice(&ms.to_be_bytes());
            }
            None => {
                let text = &self.created_at.as_bytes()[..self.created_at.len().min(usize::from(CREATED_MS) - 1)];
                out.push(text.len() as u8);
                out.extend_from_slice(text);
            }
        }
        out.extend_from_slice(frame);
        out
    }

    /// Reads a stored event; `None` if it is not one.
    pub fn decode(bytes: &[u8]) -> Option<StoredEvent> {
        let rest = bytes.strip_prefix(TAG)?;
        let (ms, rest) = rest.split_first_chunk::<8>()?;
        let (&len, rest) = rest.split_first()?;
        let (created_at, frame) = if len == CREATED_MS {
            let (ms, rest) = rest.split_first_chunk::<8>()?;
            (crate::time::format_millis(u64::from_be_bytes(*ms)), rest)
        } else {
            let (text, rest) = rest.split_at_checked(usize::from(len))?;
            (String::from_utf8(text.to_vec()).ok()?, rest)
        };
        let mut whole = Vec::with_capacity(4 + frame.len());
        whole.extend_from_slice(&ZSTD_MAGIC);
        whole.extend_from_slice(frame);
        let envelope = CONTEXTS.with_borrow_mut(|c| c.decompress(&whole))?;
        Some(StoredEvent {
            created_at,
            envelope: String::from_utf8(envelope).ok()?,
            accepted_ms: u64::from_be_bytes(*ms),
        })
    }
}

/// Largest envelope a stored event may hold, once decompressed.
const MAX_ENVELOPE: u64 = 64 * 1024 * 1024;

/// The dictionary of stored events (written `W1` when it was first used). Stored events depend on it byte for byte:
/// never edit it; a new vocabulary is a new file and a new version tag.
const DICTIONARY_W1: &[u8] = include_bytes!("envelope.dict");

/// zstd's contexts, made once per thread: making one costs far more than compressing a
/// small document.
struct Contexts {
    compressor: Option<zstd::bulk::Compressor<'static>>,
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
}

thread_local! {
    static CONTEXTS: std::cell::RefCell<Contexts> =
        const { std::cell::RefCell::new(Contexts { compressor: None, decompressor: None }) };
}

impl Contexts {
    fn compress(&mut self, data: &[u8]) -> Vec<u8> {
        if self.compressor.is_none() {
            self.compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, DICTIONARY_W1)
                .and_then(|mut c| c.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).map(|()| c))
                .ok();
        }
        self.compressor.as_mut().and_then(|c| c.compress(data).ok()).unwrap_or_default()
    }

    /// The frame says its content size (bulk compression writes it): exactly that much is
    /// allocated.
    fn decompress(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        let size = zstd::zstd_safe::get_frame_content_size(frame).ok()??;
        if size > MAX_ENVELOPE {
            return None;
        }
        if self.decompressor.is_none() {
            self.decompressor = zstd::bulk::Decompressor::with_dictionary(DICTIONARY_W1).ok();
        }
        self.decompressor.as_mut()?.decompress(frame, size as usize).ok()
    }
}

/// An event to publish, with the webhooks it goes to.
#[derive(Debug, Clone)]
pub struct Publication {
    pub org_id: String,
    pub event_id: String,
    pub action: String,
    /// `Type:id` of the subject.
    pub subject: String,
    /// The subject was deleted: its snapshot goes.
    pub deleted: bool,
    /// The event's time (ms): newer snapshots replace older ones, whatever the arrival order.
    pub event_ms: u64,
    /// The event as stored, and its stored form ([`StoredEvent::encode`] of it: encoded by
    /// the caller, so that concurrent publishes compress in parallel).
    pub event: Arc<StoredEvent>,
    pub stored: Arc<Vec<u8>>,
    /// The envelope may be kept as its record's snapshot (it is small enough).
    pub snapshot: bool,
    /// The active webhooks subscribed to the action.
    pub webhooks: Vec<String>,
}

/// The id of the delivery of an event to a webhook (see the module's documentation).
pub fn delivery_id(p: Partition, accepted_ms: u64, org_id: &str, event_id: &str, webhook_id: &str) -> String {
    ids::derived_tagged(Kind::Delivery, accepted_ms, p.0, &[org_id, event_id, webhook_id])
}

/// A delivery of an event, as the event lookup shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct EventDelivery {
    pub id: String,
    pub webhook_id: String,
    pub status: Status,
}

/// The result of publishing an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    /// The id was accepted before; nothing new was created.
    Duplicate,
    /// Accepted, with this many deliveries.
    New { deliveries: usize },
}

impl Store {
    /// Publishes events of one partition (all or nothing each), and waits for replicas when
    /// configured: once this returns, every `New` event is acknowledged.
    pub async fn publish(&self, p: Partition, batch: &[Publication], retention: Duration) -> Result<Vec<Published>> {
        let keys = self.keys();
        let mut call = PUBLISH.call();
        call.key(&keys.ready(p)).key(&keys.released_events(p));
        let cap = self.snapshots_per_org.div_ceil(usize::from(keys.partition_count()));
        call.arg(crate::time::now_millis()).arg(retention.as_millis() as u64).arg(cap);
        for event in batch {
            call.key(&keys.event(p, &event.org_id, &event.event_id)).key(&keys.snapshots(p, &event.org_id));
            call.arg(&event.event_id)
                .arg(&event.org_id)
                .arg(event.stored.as_slice())
                .arg(&event.action)
                .arg(&event.subject)
                .arg(event.event_ms)
                .arg(if event.deleted { "1" } else { "0" })
                .arg(match event.snapshot {
                    false => "n",
                    true if SNAPSHOTS.fetch_add(1, Ordering::Relaxed).is_multiple_of(CAP_CHECK_EVERY) => "c",
                    true => "y",
                })
                .arg(event.webhooks.len());
            // Its deliveries' ids are derived from the time it was accepted.
            let accepted_ms = event.event.accepted_ms;
            let day = super::keys::day_of(accepted_ms);
            // In id order, so the indexes list one event's deliveries (which share a time)
            // newest first by id too.
            let mut fan_out: Vec<(String, &String)> = event
                .webhooks
                .iter()
                .map(|w| (delivery_id(p, accepted_ms, &event.org_id, &event.event_id, w), w))
                .collect();
            fan_out.sort();
            for (delivery, webhook) in &fan_out {
                call.key(&keys.delivery(p, delivery))
                    .key(&keys.org_deliveries(p, &event.org_id, day))
                    .key(&keys.webhook_deliveries(p, webhook, day))
                    .key(&keys.webhook_new(p, webhook));
                call.arg(delivery).arg(webhook);
            }
        }
        let replies: Vec<String> = call.run(&mut self.conn()).await?;
        if replies.len() != batch.len() {
            return Err(StoreError::Corrupt {
                key: keys.ready(p),
                reason: "publish: one reply per event expected".into(),
            });
        }
        let published: Vec<Published> = replies
            .iter()
            .zip(batch)
            .map(|(reply, event)| match reply.as_str() {
                "new" => Published::New { deliveries: event.webhooks.len() },
                _ => Published::Duplicate,
            })
            .collect();
        if published.iter().any(|p| matches!(p, Published::New { .. })) {
            self.acknowledged(&keys.ready(p)).await?;
        }
        for (outcome, event) in published.iter().zip(batch) {
            if matches!(outcome, Published::New { deliveries } if *deliveries > 0) {
                self.recent.keep(&event.org_id, &event.event_id, event.event.clone());
            }
        }
        Ok(published)
    }

    /// A stored event.
    pub async fn event(&self, p: Partition, org_id: &str, event_id: &str) -> Result<Option<StoredEvent>> {
        let bytes: Option<Vec<u8>> =
            redis::cmd("GET").arg(self.keys().event(p, org_id, event_id)).query_async(&mut self.conn()).await?;
        Ok(bytes.as_deref().and_then(StoredEvent::decode))
    }

    /// An event of the organisation found by its id alone: every partition is asked (an
    /// event lives in the partition of its subject, which its id does not tell).
    pub async fn find_event(&self, org_id: &str, event_id: &str) -> Result<Option<(Partition, StoredEvent)>> {
        if !ids::is_event_id(event_id) {
            return Ok(None);
        }
        let reads = self
            .keys()
            .partitions()
            .map(|p| async move { Ok::<_, StoreError>((p, self.event(p, org_id, event_id).await?)) });
        let found = futures_util::future::try_join_all(reads).await?;
        Ok(found.into_iter().find_map(|(p, e)| e.map(|e| (p, e))))
    }

    /// The deliveries of an event stored in partition `p` to any of `webhooks` (those it had
    /// none to are left out): each id is derived, and read with one pipeline.
    pub async fn event_deliveries(
        &self,
        p: Partition,
        org_id: &str,
        event_id: &str,
        accepted_ms: u64,
        webhooks: &[String],
    ) -> Result<Vec<EventDelivery>> {
        if webhooks.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = webhooks.iter().map(|w| delivery_id(p, accepted_ms, org_id, event_id, w)).collect();
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.cmd("HMGET").arg(self.keys().delivery(p, id)).arg("o").arg("w").arg("e").arg("s");
        }
        let rows: Vec<Vec<Option<String>>> = self.conn().query_reads(&pipe).await?;
        Ok(ids
            .into_iter()
            .zip(rows)
            .filter_map(|(id, row)| {
                let [o, w, e, s] = <[Option<String>; 4]>::try_from(row).ok()?;
                (o.as_deref() == Some(org_id) && e.as_deref() == Some(event_id)).then_some(())?;
                // (A damaged record shows as failed, as the deliveries API shows it.)
                let status = Status::stored(s.as_deref()).unwrap_or(Status::Failed);
                Some(EventDelivery { id, webhook_id: w?, status })
            })
            .collect())
    }

    /// Gives superseded snapshot events their TTL back (up to `n` of them); how many.
    pub async fn release_snapshots(&self, p: Partition, retention: Duration, n: usize) -> Result<usize> {
        let list = self.keys().released_events(p);
        let entries: Vec<String> =
            redis::cmd("LRANGE").arg(&list).arg(0).arg(n.max(1) as i64 - 1).query_async(&mut self.conn()).await?;
        if entries.is_empty() {
            return Ok(0);
        }
        let mut call = RELEASE.call();
        call.key(&list);
        for entry in &entries {
            if let Some((org, event)) = entry.split_once(' ') {
                call.key(&self.keys().event(p, org, event));
            }
        }
        call.arg(retention.as_millis() as u64).arg(entries.len());
        let _: i64 = call.run(&mut self.conn()).await?;
        Ok(entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_is_the_one_stored_events_were_written_with() {
        // Changing it would make every stored event unreadable: add a new version instead.
        use sha2::Digest;
        assert_eq!(
            hex::encode(sha2::Sha256::digest(DICTIONARY_W1)),
            "76b71ee02019e64e4c22a594d950347237d4b93d95de1b8fe8529cd06c7fbe9d",
        );
    }

    #[test]
    fn a_stored_event_reads_back_and_is_smaller() {
        let envelope =
            format!(r#"{{"id":"evt_1","work_order":{{"description":"{}"}}}}"#, "Replace the seal. ".repeat(40));
        let event =
            StoredEvent { created_at: "2026-11-22T11:00:38.123Z".into(), envelope, accepted_ms: 1_700_000_000_000 };
        let stored = event.encode();
        assert!(stored.len() < event.envelope.len() / 2, "{} of {}", stored.len(), event.envelope.len());
        assert_eq!(StoredEvent::decode(&stored).as_ref(), Some(&event));
        assert_eq!(StoredEvent::decode(b"not an event"), None);
        assert_eq!(StoredEvent::decode(b"W3"), None);
        assert_eq!(StoredEvent::decode(b"W3\0\0\0\0\0\0\0\0\xFF\0"), None);
        // A created_at in another form is kept as it was written.
        let odd = StoredEvent { created_at: "2026-11-22T11:00:38Z".into(), ..event.clone() };
        assert_eq!(StoredEvent::decode(&odd.encode()).as_ref(), Some(&odd));
        assert_eq!(odd.encode().len(), stored.len() + 20 - 8, "the canonical form is stored as 8 bytes");
    }
}
