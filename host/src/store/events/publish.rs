//! Events: each stored once, compressed, in the partition of its subject. Publishing writes
//! the event (its key is also its id's idempotency record), the snapshot pointer of its
//! record, and one delivery per subscribed webhook — with its index entries and its place
//! in the webhook's queue — in one script per partition for a whole batch of events
//! (`lua/publish.lua`).
//!
//! An event is stored in its compressed form (`store::events::stored`).
//!
//! A delivery's id is derived from its organisation, event and webhook and the time the
//! event was accepted (`ids::derived_tagged`), so an event's deliveries are found from the
//! event alone (`GET /api/v2/events/{id}`), without an index.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::ids::{self, Kind};
use crate::store::core::base::Base;
use crate::store::core::keys::{HOUR_MS, Partition};
use crate::store::core::reply::{name_of, unexpected};
use crate::store::core::scripts::{Call, PUBLISH, RELEASE};
use crate::store::error::Result;
use crate::store::error::StoreError;
use crate::store::events::log::LogEntry;
use crate::store::events::standby::Standbys;
use crate::store::events::stored::StoredEvent;
use crate::store::queue::status::Status;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::source_requests;
use crate::store::tenants::webhooks::Subscriber;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct EventWrites {
    base: Base,
}

impl EventWrites {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> EventWrites {
        EventWrites { base: base.clone() }
    }
}

/// Every this many snapshots a publish checks the organisation's cap (and then evicts up to
/// twice as many records as this): the check would cost Redis a command per event otherwise.
/// (`Store::snapshots_published` counts them.)
pub(in crate::store) const CAP_CHECK_EVERY: u32 = 8;

/// Largest event kept as a record's snapshot (its envelope, uncompressed).
pub const MAX_SNAPSHOT_BYTES: usize = 256 * 1024;

/// Whether Redis refused a command before running it (so nothing of it was written).
fn refused_before_running(e: &redis::RedisError) -> bool {
    const REFUSED: &[&str] = &["MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN", "READONLY", "MASTERDOWN", "LOADING"];
    e.is_connection_refusal() || e.code().is_some_and(|code| REFUSED.contains(&code))
}

/// How long what a publish writes is kept: its organisation's plan's retentions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Events, and the deliveries they carry.
    pub deliveries: Duration,
    /// The event log (zero: no log).
    pub events: Duration,
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
    /// Its action as the catalogue names it, for the event log (`None`: not logged).
    pub logged_action: Option<&'static str>,
    /// The event as stored, and its stored form ([`StoredEvent::encode`] of it: encoded by
    /// the caller, so that concurrent publishes compress in parallel).
    pub event: Arc<StoredEvent>,
    pub stored: Arc<Vec<u8>>,
    /// The envelope may be kept as its record's snapshot (it is small enough).
    pub snapshot: bool,
    /// The active webhooks subscribed to the action.
    pub webhooks: Vec<Subscriber>,
    /// How long it is kept.
    pub retention: Retention,
    /// A publisher sent it: it counts among its organisation's events of the day (replays,
    /// test and operational events do not).
    pub counted: bool,
    /// The organisation's version its webhooks (and its publisher's token) were read at:
    /// older than its partition's copy, the event is refused as [`Published::Stale`]
    /// (`store::versions`).
    pub version: u64,
    /// A source's request it is: the mark its duplicate id leaves, its entry in the
    /// source's listing.
    pub intake: Option<Intake>,
}

/// What publishing a source's request writes beside its event, in the same call: its
/// duplicate id's mark (unless one is there: then nothing is written, [`Published::Seen`])
/// and its entry in the source's listing.
#[derive(Debug, Clone)]
pub struct Intake {
    pub source_id: String,
    /// The duplicate id's digest (`SourceRecords::digest_of`).
    pub digest: String,
    /// How long the mark stays (ms).
    pub window_ms: u64,
    /// Its listing entry, encoded (`SourceRecords::entry`).
    pub entry: String,
}

/// The id of the delivery of an event to a webhook (see the module's documentation).
pub fn delivery_id(p: Partition, accepted_ms: u64, org_id: &str, event_id: &str, webhook_id: &str) -> String {
    ids::derived_tagged(Kind::Delivery, accepted_ms, p.0, &[org_id, event_id, webhook_id])
}

/// A delivery of an event (the event lookup shows them).
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Not accepted: what it was read from changed since (its [`Publication::version`] is
    /// older than the organisation's); nothing was written.
    Stale,
    /// Not accepted: its source's request was seen within the source's window (its
    /// [`Intake`]); nothing was written, and the mark names the event it became.
    Seen,
}

/// How often, and after how long, a publish refused before it ran (the cluster between two
/// views of its slots) is sent again.
const AGAIN_AFTER: [Duration; 3] = [Duration::from_millis(50), Duration::from_millis(200), Duration::from_millis(500)];

impl EventWrites {
    /// Runs the publish script; when Redis refused it before it ran — the client's map of
    /// the slots behind the cluster's (`MOVED`), the cluster between masters (`CLUSTERDOWN`,
    /// `TRYAGAIN`), a replica that just lost its master's role (`READONLY`) — runs it again
    /// a few times, as nothing of it was written.
    async fn run_unwritten_again(
        &self,
        partition: Partition,
        call: &crate::store::core::scripts::Call<'_>,
    ) -> Result<Vec<String>> {
        let mut again = AGAIN_AFTER.iter();
        loop {
            match call.run(&mut self.base.conn()).await {
                Err(StoreError::Unavailable(e)) if refused_before_running(&e) => match again.next() {
                    Some(wait) => tokio::time::sleep(*wait).await,
                    None => {
                        // Its master is down or being replaced: the next events go to a
                        // standby meanwhile.
                        Standbys::of(&self.base).shun(partition);
                        return Err(StoreError::Unavailable(e));
                    }
                },
                done => return done,
            }
        }
    }

    /// Publishes events of one partition (all or nothing each), and waits for replicas when
    /// configured: once this returns, every `New` event is acknowledged.
    pub async fn publish(&self, p: Partition, batch: &[Publication]) -> Result<Vec<Published>> {
        let keys = self.base.keys();
        let mut call = PUBLISH.call();
        let now = crate::time::now_millis();
        let day = crate::store::core::keys::day_of(now);
        call.key(&keys.ready(p)).key(&keys.released_events(p)).key(&keys.accepted(p)).key(&keys.index_moves(p));
        call.key(&keys.published_of_day(p, day)).key(&keys.versions(p));
        let cap = self.base.snapshots_per_org.div_ceil(usize::from(keys.partition_count()));
        call.arg(now).arg(cap);
        call.arg(self.base.history_flag()).arg(crate::store::events::daily::expiry(day));
        call.arg(source_requests::KEPT_REQUESTS).arg(source_requests::LISTING_KEPT_MS);
        for event in batch {
            self.add_event(&mut call, p, event);
        }
        let replies: Vec<String> = self.run_unwritten_again(p, &call).await?;
        if replies.len() != batch.len() {
            return Err(unexpected("publish.lua", "one reply per event expected"));
        }
        let published: Vec<Published> = replies
            .iter()
            .zip(batch)
            .map(|(reply, event)| {
                name_of("publish.lua", reply, |name| match name {
                    "new" => Some(Published::New { deliveries: event.webhooks.len() }),
                    "dup" => Some(Published::Duplicate),
                    "stale" => Some(Published::Stale),
                    "seen" => Some(Published::Seen),
                    _ => None,
                })
            })
            .collect::<Result<_>>()?;
        if published.iter().any(|p| matches!(p, Published::New { .. }))
            && let Err(e) = self.base.acknowledged(&keys.ready(p)).await
        {
            if matches!(e, StoreError::NotReplicated { .. }) {
                // Its master has lost its replicas: the next events go to a standby.
                Standbys::of(&self.base).shun(p);
            }
            return Err(e);
        }
        for (outcome, event) in published.iter().zip(batch) {
            if matches!(outcome, Published::New { deliveries } if *deliveries > 0) {
                self.base.recent.keep(&event.org_id, &event.event_id, event.event.clone());
            }
        }
        Ok(published)
    }

    /// One event's keys and arguments for `publish.lua`: the event, its snapshot and log
    /// entry, and each delivery of its fan-out.
    fn add_event(&self, call: &mut Call<'_>, p: Partition, event: &Publication) {
        let retention = event.retention;
        let keys = self.base.keys();
        let accepted_ms = event.event.accepted_ms;
        let hour = crate::store::core::keys::hour_of(accepted_ms);
        call.key(&keys.event(p, &event.org_id, &event.event_id))
            .key(&keys.snapshots(p, &event.org_id))
            .key(&keys.event_log(p, &event.org_id, hour));
        call.arg(&event.event_id)
            .arg(&event.org_id)
            .arg(event.stored.as_slice())
            .arg(&event.action)
            .arg(&event.subject)
            .arg(event.event_ms)
            .arg(if event.deleted { "1" } else { "0" })
            .arg(match event.snapshot {
                false => "n",
                true if self
                    .base
                    .snapshots_published
                    .fetch_add(1, Ordering::Relaxed)
                    .is_multiple_of(CAP_CHECK_EVERY) =>
                {
                    "c"
                }
                true => "y",
            })
            .arg(event.webhooks.len());
        match (retention.events.as_millis() as u64, event.logged_action) {
            (0, _) | (_, None) => call.arg("").arg(""),
            (keep, Some(action)) => {
                let entry = LogEntry::of(&event.org_id, &event.event_id, accepted_ms, action);
                call.arg(entry.encode().as_slice()).arg((u64::from(hour) + 1) * HOUR_MS + keep)
            }
        };
        call.arg(retention.deliveries.as_millis() as u64).arg(if event.counted { "1" } else { "0" }).arg(event.version);
        match &event.intake {
            None => call.arg("").arg(""),
            Some(intake) => {
                call.key(&keys.source_seen(p, &event.org_id, &intake.source_id, &intake.digest))
                    .key(&keys.source_requests(p, &event.org_id, &intake.source_id));
                call.arg(intake.window_ms.max(1)).arg(&intake.entry)
            }
        };
        // Its deliveries' ids are derived from the time it was accepted.
        let day = crate::store::core::keys::day_of(accepted_ms);
        // In id order, so the indexes list one event's deliveries (which share a time)
        // newest first by id too.
        let mut fan_out: Vec<(String, &Subscriber)> = event
            .webhooks
            .iter()
            .map(|w| (delivery_id(p, accepted_ms, &event.org_id, &event.event_id, &w.webhook), w))
            .collect();
        fan_out.sort();
        for (delivery, to) in &fan_out {
            let webhook = &to.webhook;
            call.key(&keys.delivery(p, delivery))
                .key(&keys.org_deliveries(p, &event.org_id, day))
                .key(&keys.webhook_deliveries(p, webhook, day))
                .key(&keys.webhook_new(p, webhook));
            call.arg(delivery).arg(webhook);
            if to.ordered {
                call.keys(keys.order(p, webhook));
                call.arg("s");
            } else {
                call.arg("");
            }
        }
    }

    /// A stored event.
    pub async fn event(&self, p: Partition, org_id: &str, event_id: &str) -> Result<Option<StoredEvent>> {
        let bytes: Option<Vec<u8>> = redis::cmd("GET")
            .arg(self.base.keys().event(p, org_id, event_id))
            .query_async(&mut self.base.conn())
            .await?;
        Ok(bytes.as_deref().and_then(StoredEvent::decode))
    }

    /// An event of the organisation found by its id alone: every partition is asked (an
    /// event lives in the partition of its subject, which its id does not tell).
    pub async fn find_event(&self, org_id: &str, event_id: &str) -> Result<Option<(Partition, StoredEvent)>> {
        if !ids::is_event_id(event_id) {
            return Ok(None);
        }
        let reads = self
            .base
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
            pipe.cmd("HMGET").arg(self.base.keys().delivery(p, id)).arg("o").arg("w").arg("e").arg("s");
        }
        let rows: Vec<Vec<Option<String>>> = self.base.conn().query_reads(&pipe).await?;
        Ok(ids
            .into_iter()
            .zip(rows)
            .filter_map(|(id, row)| {
                let [o, w, e, s] = <[Option<String>; 4]>::try_from(row).ok()?;
                (o.as_deref() == Some(org_id) && e.as_deref() == Some(event_id)).then_some(())?;
                // (A damaged row shows as failed, as the deliveries API shows it.)
                let status = Status::stored(s.as_deref()).unwrap_or(Status::Failed);
                Some(EventDelivery { id, webhook_id: w?, status })
            })
            .collect())
    }

    /// Gives superseded snapshot events their TTL back (up to `n` of them): the retention
    /// of their organisation's plan (`kept`, of its name). How many.
    pub async fn release_snapshots(
        &self,
        p: Partition,
        kept: &(dyn Fn(&str) -> Duration + Sync),
        n: usize,
    ) -> Result<usize> {
        let list = self.base.keys().released_events(p);
        let entries: Vec<String> =
            redis::cmd("LRANGE").arg(&list).arg(0).arg(n.max(1) as i64 - 1).query_async(&mut self.base.conn()).await?;
        if entries.is_empty() {
            return Ok(0);
        }
        let mut retentions: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
        let mut call = RELEASE.call();
        call.key(&list).arg(entries.len());
        for entry in &entries {
            if let Some((org, event)) = entry.split_once(' ') {
                let ms = match retentions.get(org) {
                    Some(ms) => *ms,
                    None => {
                        let ms = kept(&Orgs::of(&self.base).org_plan_name(org).await?).as_millis() as u64;
                        *retentions.entry(org).or_insert(ms)
                    }
                };
                call.key(&self.base.keys().event(p, org, event)).arg(ms);
            }
        }
        let _: i64 = call.run(&mut self.base.conn()).await?;
        Ok(entries.len())
    }
}
