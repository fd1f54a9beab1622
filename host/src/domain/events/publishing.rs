//! Publishing: the one path every event takes — from API publishers, Weir's own
//! `report_export_completed` and its operational events. It reads the webhooks subscribed
//! to the action, keeps those whose filter selects the event, places it (its subject's
//! partition, or a standby through a failover: `Store::place_event`), and hands it to its
//! partition's batch (group commit: publishes that arrive while one call is in flight share
//! the next); it returns once all of it is in Redis.

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;

use super::event::{Event, OPERATIONAL_CREATOR};
use super::operational::Operational;
use crate::catalog;
use crate::domain::filtering::Filtering;
use crate::domain::moved::Moved;
use crate::ids;
use crate::metrics::Metrics;
use crate::offload::{LARGE_INPUT, Offload};
use crate::shared::{Arrivals, Tokens};
use crate::store::events::daily::DailyCounts;
use crate::store::events::publish::{MAX_SNAPSHOT_BYTES, Publication, Published, Retention, delivery_id};
use crate::store::events::publisher::Publisher;
use crate::store::events::standby::{Placement, Standbys, ToPlace};
use crate::store::events::stored::StoredEvent;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::webhooks::Subscriber;
use crate::store::{Keys, Partition, StoreError};

/// What [`Publishing::prepare`] found: the envelope, the webhooks it goes to, and the
/// organisation's version they were read at.
#[derive(Debug)]
pub(super) struct Prepared {
    envelope: String,
    webhooks: Vec<Subscriber>,
    version: u64,
}

/// Where a prepared event goes and how: the webhook it must not go to, the organisation's
/// version what its publisher was kept with was read at (a token, a source: held to it
/// too), its retention, whether it counts among the day's events.
#[derive(Debug, Clone, Copy)]
pub(super) struct To<'a> {
    pub except: Option<&'a str>,
    pub kept_at: Option<u64>,
    pub retention: Retention,
    pub counted: bool,
}

/// What publishing uses, shared by every handle and worker that publishes.
#[derive(Debug, Clone)]
pub(crate) struct Publishing {
    /// Each organisation's plan (what it keeps, for how long).
    orgs: Orgs,
    /// Where an event is placed through a failover.
    standbys: Standbys,
    /// The day's events counted, given back when a publish fails.
    pub(super) counts: DailyCounts,
    keys: Keys,
    pub(super) publisher: Arc<Publisher>,
    filtering: Filtering,
    pub(super) metrics: Arc<Metrics>,
    moved: Moved,
    arrivals: Arc<Arrivals>,
    /// How long a standby keeps a partition's events (the delivery retention).
    kept: Duration,
    /// What each plan allows.
    pub(super) plans: Arc<crate::plans::Plans>,
    /// Token lookups, to look a publisher's token up again when its publish was stale.
    pub(super) tokens: Arc<Tokens>,
    /// Where large events are read and compressed.
    pub(super) offload: Arc<Offload>,
}

/// The parts [`Publishing`] is made of.
#[derive(Debug)]
pub(crate) struct PublishingParts {
    pub orgs: Orgs,
    pub standbys: Standbys,
    pub counts: DailyCounts,
    pub keys: Keys,
    pub publisher: Arc<Publisher>,
    pub filtering: Filtering,
    pub metrics: Arc<Metrics>,
    pub moved: Moved,
    pub arrivals: Arc<Arrivals>,
    pub delivery_retention: Duration,
    pub plans: Arc<crate::plans::Plans>,
    pub tokens: Arc<Tokens>,
    pub offload: Arc<Offload>,
}

impl Publishing {
    pub(crate) fn new(parts: PublishingParts) -> Publishing {
        let PublishingParts {
            orgs,
            standbys,
            counts,
            keys,
            publisher,
            filtering,
            metrics,
            moved,
            arrivals,
            delivery_retention,
            plans,
            tokens,
            offload,
        } = parts;
        let kept = delivery_retention;
        Publishing {
            orgs,
            standbys,
            counts,
            keys,
            publisher,
            filtering,
            metrics,
            moved,
            arrivals,
            kept,
            plans,
            tokens,
            offload,
        }
    }

    /// Publishes a validated event for an organisation. Idempotent on the event id.
    pub(crate) async fn publish(&self, org_id: &str, event: &Event<'_>) -> Result<Published, StoreError> {
        self.publish_except(org_id, event, None).await
    }

    /// Publishes an event to the organisation's subscribed webhooks but `except` (an
    /// operational event is never delivered to the webhook it is about).
    pub(crate) async fn publish_except(
        &self,
        org_id: &str,
        event: &Event<'_>,
        except: Option<&str>,
    ) -> Result<Published, StoreError> {
        match self.prepare(org_id, event, except, false).await? {
            None => Ok(Published::Duplicate),
            Some(prepared) => {
                let kept = self.retention_of_org(org_id).await?;
                let to = To { except, kept_at: None, retention: kept, counted: false };
                Ok(self.publish_prepared(org_id, event, prepared, to).await?.0)
            }
        }
    }

    /// How long what an organisation on `plan` publishes is kept.
    pub(super) fn retention(&self, plan: &str) -> Retention {
        Retention { deliveries: self.plans.delivery_retention(plan), events: self.plans.event_retention(plan) }
    }

    /// [`Publishing::retention`] of the organisation's plan, read now.
    async fn retention_of_org(&self, org_id: &str) -> Result<Retention, StoreError> {
        Ok(self.retention(&self.orgs.org_plan_name(org_id).await?))
    }

    /// What an event needs before it is placed: its envelope and the webhooks it goes to
    /// (the subscribers its filters select, but `except`), as kept or (`fresh`) read now;
    /// `None` when its id was seen.
    pub(super) async fn prepare(
        &self,
        org_id: &str,
        event: &Event<'_>,
        except: Option<&str>,
        fresh: bool,
    ) -> Result<Option<Prepared>, StoreError> {
        // An id seen before creates nothing new: Redis knows those of events still there;
        // an event that moved to history is looked for there.
        if !event.fresh_id && self.moved.reads().moved_event_known(org_id, &event.id).await {
            return Ok(None);
        }
        let envelope = event.envelope(org_id);
        let subscribers = self.publisher.subscribers(org_id, event.subscription(), fresh).await?;
        let mut webhooks = subscribers.list.clone();
        webhooks.retain(|w| Some(w.webhook.as_str()) != except);
        self.filtering.keep_selected(org_id, &envelope, &mut webhooks).await;
        Ok(Some(Prepared { envelope, webhooks, version: subscribers.version }))
    }

    /// Publishes what [`Publishing::prepare`] found. When what it was read from changed
    /// since (the publish script answers [`Published::Stale`]: a change that returned after
    /// the cache was read), the subscribers are read again and the event published from
    /// those — which nothing older can make stale; with a publisher kept (a token, a
    /// source), [`Published::Stale`] is returned instead (`publish_counted` looks the token
    /// up; a source's ingest reads its source again).
    pub(super) async fn publish_prepared(
        &self,
        org_id: &str,
        event: &Event<'_>,
        prepared: Prepared,
        to: To<'_>,
    ) -> Result<(Published, Option<(Partition, u64)>), StoreError> {
        let version = prepared.version.min(to.kept_at.unwrap_or(u64::MAX));
        let done = self.place_and_publish(org_id, event, prepared, version, (to.retention, to.counted)).await?;
        if done.0 != Published::Stale {
            return Ok(done);
        }
        self.metrics.stale_publishes.inc();
        if to.kept_at.is_some() {
            // What the publisher was kept with is read again by the caller, and its plan.
            return Ok(done);
        }
        match self.prepare(org_id, event, to.except, true).await? {
            None => Ok((Published::Duplicate, None)),
            Some(prepared) => {
                self.place_and_publish(org_id, event, prepared, u64::MAX, (to.retention, to.counted)).await
            }
        }
    }

    /// Publishes a test event (contract §9) to one webhook only, through its filter (and,
    /// as it is delivered, its plugins): not in the event log, no snapshot, never replayed.
    /// The delivery's id; `None` when the webhook is not an active subscriber of the action
    /// or its filter does not select the event.
    pub(crate) async fn publish_test(
        &self,
        org_id: &str,
        webhook_id: &str,
        event: &Event<'_>,
    ) -> Result<Option<String>, StoreError> {
        let envelope = event.envelope(org_id);
        // Read now: a webhook made or changed a moment ago is tested as it is.
        let subscribers = self.publisher.subscribers(org_id, &event.action, true).await?;
        let mut webhooks = subscribers.list.clone();
        webhooks.retain(|w| w.webhook == webhook_id);
        self.filtering.keep_selected(org_id, &envelope, &mut webhooks).await;
        if webhooks.is_empty() {
            return Ok(None);
        }
        let kept = self.retention_of_org(org_id).await?;
        let prepared = Prepared { envelope, webhooks, version: subscribers.version };
        let to = To { except: None, kept_at: None, retention: kept, counted: false };
        let (published, placed) = self.publish_prepared(org_id, event, prepared, to).await?;
        let (Published::New { deliveries: 1 }, Some((p, accepted_ms))) = (published, placed) else { return Ok(None) };
        tracing::info!(org_id, webhook_id, event_id = %event.id, "test event published");
        Ok(Some(delivery_id(p, accepted_ms, org_id, &event.id, webhook_id)))
    }

    /// Places an event (its subject's partition, or a standby through a failover) and
    /// publishes it to its webhooks, held to `version`; what was published, and where and
    /// when it was accepted (`None`: a duplicate, or stale).
    async fn place_and_publish(
        &self,
        org_id: &str,
        event: &Event<'_>,
        Prepared { envelope, webhooks, .. }: Prepared,
        version: u64,
        (retention, counted): (Retention, bool),
    ) -> Result<(Published, Option<(Partition, u64)>), StoreError> {
        let home = self.keys.partition_of_subject(org_id, &event.subject_type, &event.subject_id);
        let to_place = ToPlace {
            home,
            must_stay: webhooks.iter().any(|w| w.ordered),
            chosen_id: (!event.fresh_id).then_some((org_id, event.id.as_str())),
            kept: self.kept,
        };
        let Placement::Into(p) = self.standbys.place_event(to_place).await? else {
            return Ok((Published::Duplicate, None));
        };
        // Operational events are about Weir's own resources: no report exports them; a test
        // event is about no record.
        let snapshot = envelope.len() <= MAX_SNAPSHOT_BYTES
            && !catalog::is_operational(&event.action)
            && !event.test
            && event.source.is_none();
        let accepted_ms = crate::time::now_millis();
        let as_stored = Arc::new(StoredEvent {
            created_at: event.created_at.clone(),
            envelope,
            accepted_ms,
            trace: event.trace.clone(),
        });
        let subject = format!("{}:{}", event.subject_type, event.subject_id);
        let event_ms = crate::time::parse_rfc3339(&event.created_at).unwrap_or_else(crate::time::now_millis);
        let publication = Publication {
            org_id: org_id.to_owned(),
            event_id: event.id.clone(),
            action: event.action.clone(),
            subject: subject.clone(),
            deleted: event.deleted,
            event_ms,
            logged_action: match (event.test, &event.source) {
                (true, _) => None,
                (false, Some(_)) => Some(catalog::SOURCE_EVENTS),
                (false, None) => catalog::named(&event.action),
            },
            stored: Arc::new(encode_on(&self.offload, org_id, &as_stored).await),
            event: as_stored,
            snapshot,
            webhooks,
            retention,
            counted,
            version,
            intake: event.source.as_ref().map(|s| s.intake.clone()),
        };
        let published = self.publisher.publish(p, publication).await?;
        if published == Published::Stale {
            return Ok((published, None));
        }
        if let Published::New { deliveries } = published {
            // A failure leaves the older snapshot exportable: logged, as the deletion itself
            // is already acknowledged.
            if event.deleted
                && let Err(e) = self.standbys.forget_older_snapshots((home, p), org_id, &subject, event_ms).await
            {
                tracing::warn!(error = %e, org_id, event_id = %event.id, "cannot forget a deleted record's older snapshot; an export may still find it");
            }
            self.metrics.events_published.inc();
            if deliveries > 0 {
                self.arrivals.arrived(p);
            }
        }
        Ok((published, Some((p, accepted_ms))))
    }

    /// Publishes an operational event to the organisation's webhooks that subscribe to it
    /// but `except` (the webhook it is about). A failure is logged, not returned: what it
    /// reports is stored already.
    pub(crate) async fn publish_operational(&self, org_id: &str, about: Operational<'_>, except: Option<&str>) {
        let Operational { action, subject: (subject_type, subject_id), snapshot, occasion } = about;
        // The prefix is Weir's: publishers may not use it (`events::validate`).
        let id = format!(
            "{}{}",
            ids::OPERATIONAL_EVENT_PREFIX,
            hex::encode(&ids::digest(&["weir", action, subject_id, occasion])[..12])
        );
        let Some(snapshot_key) = catalog::snapshot_key_for(action) else { return };
        let Ok(snapshot) = RawValue::from_string(snapshot.to_string()) else { return };
        let event = Event {
            id,
            fresh_id: false,
            action: action.to_owned(),
            created_at: crate::time::now_rfc3339(),
            creator_id: OPERATIONAL_CREATOR.to_owned(),
            creator_name: "Weir".to_owned(),
            subject_type: subject_type.to_owned(),
            subject_id: subject_id.to_owned(),
            deleted: false,
            snapshot_key,
            snapshot: std::borrow::Cow::Borrowed(&snapshot),
            trace: None,
            test: false,
            source: None,
        };
        match self.publish_except(org_id, &event, except).await {
            Ok(_) => tracing::info!(org_id = %org_id, event_id = %event.id, action, "operational event published"),
            Err(e) => tracing::warn!(error = %e, org_id = %org_id, action, "cannot publish an operational event"),
        }
    }
}

/// The event's stored form ([`StoredEvent::encode`]: compressed), a large one
/// ([`LARGE_INPUT`]) on `offload`'s threads, in the organisation's slot.
pub(super) async fn encode_on(offload: &Offload, org_id: &str, event: &Arc<StoredEvent>) -> Vec<u8> {
    if event.envelope.len() < LARGE_INPUT {
        return event.encode();
    }
    let compressing = event.clone();
    match offload.run(org_id, move || compressing.encode()).await {
        Some(stored) => stored,
        None => event.encode(),
    }
}
