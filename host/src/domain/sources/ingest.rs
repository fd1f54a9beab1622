//! A provider's request to an ingest URL (`POST /in/<token>`): found by its token's hash
//! (the source as this process keeps it: `kept.rs`), verified by its source's kind, and
//! published as an event — counted among the organisation's events of the day — in one call
//! that also marks its duplicate id and lists it (`store::tenants::source_requests`): unless
//! the id was seen within the source's window, when nothing is written and the first
//! event's id is the answer. Answered once it is as durable as a published event, after one
//! round trip to Redis where a publish takes one. Every request is counted and listed by
//! outcome; a rejected body is never kept.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::budget::{self, Budgets};
use super::kept::{Found, KeptSources};
use super::parts::{SourceParts, context};
use crate::domain::events::{By, Event, FromSource, Kept, PublishError, Published, Publishing, publish_counted};
use crate::domain::quota::QuotaExceeded;
use crate::ids::{self, Kind};
use crate::metrics::Metrics;
use crate::plans::Plans;
use crate::shared::SecretKeys;
use crate::sources::forward::{self, Arrived};
use crate::sources::{Inbound, Key, Refusal, Scheme};
use crate::store::StoreError;
use crate::store::events::publish::Intake;
use crate::store::tenants::source_requests::{RequestEntry, SourceRequests, digest_of};
use crate::store::tenants::sources::SourceRecord;

/// A request to an ingest URL, as it arrived.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    pub token: &'a str,
    pub headers: &'a http::HeaderMap,
    pub body: &'a [u8],
    /// The path and query it was sent to (`/in/<token>?…`).
    pub path_and_query: &'a str,
    /// The client's address (behind trusted proxies, the one they name).
    pub address: &'a str,
    /// The W3C trace context it carried, if valid.
    pub trace: Option<&'a crate::trace::TraceContext>,
}

/// A request stored: the event it is, whether it was one seen before, the organisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ingested {
    pub event_id: String,
    pub duplicate: bool,
    pub org_id: String,
}

/// Why a request was not stored.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IngestError {
    #[error("no source has this URL")]
    UnknownToken,
    #[error("{}", .0.message())]
    Refused(Refusal),
    #[error("the body is not UTF-8 text")]
    NotText,
    #[error("too many rejected requests; retry in {0} s")]
    Throttled(u64),
    #[error(transparent)]
    Quota(QuotaExceeded),
    #[error("the source's secret cannot be opened")]
    Sealed,
    #[error("the source changed while its request was taken in; send it again")]
    Changed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What became of a verified request.
#[derive(Debug)]
enum Attempt {
    /// Published as this event (its publish listed it).
    Published { event_id: String },
    /// Seen within its source's window: the event it became first.
    Duplicate { event_id: String },
    /// What the source was kept with changed since: to be read again.
    Stale,
}

/// The keys a request's rejections are counted under: its address's, its source's.
#[derive(Debug)]
struct Budgeted {
    address: String,
    source: String,
}

/// The ingest of providers' requests.
#[derive(Debug)]
pub(crate) struct Ingest {
    kept: KeptSources,
    requests: SourceRequests,
    secret_keys: Arc<SecretKeys>,
    public_url: String,
    publishing: Publishing,
    plans: Arc<Plans>,
    metrics: Arc<Metrics>,
    budgets: Budgets,
}

impl Ingest {
    pub(super) fn new(parts: &SourceParts) -> Ingest {
        Ingest {
            kept: KeptSources::new(parts.records.clone(), parts.orgs.clone(), parts.versions.clone()),
            requests: parts.requests.clone(),
            secret_keys: parts.secret_keys.clone(),
            public_url: parts.public_url.clone(),
            publishing: parts.publishing.clone(),
            plans: parts.plans.clone(),
            metrics: parts.metrics.clone(),
            budgets: Budgets::default(),
        }
    }

    /// Takes in one request: the event it is, or why not. A source kept by this process is
    /// taken as kept; when its request was refused, or its publish found the source (or its
    /// plan) changed, it is read again and the request tried once more under it.
    pub(crate) async fn receive(&self, request: Request<'_>) -> Result<Ingested, IngestError> {
        let token_hash = crate::auth::secrets::hash(request.token);
        let budgeted =
            Budgeted { address: format!("address {}", request.address), source: format!("source {token_hash}") };
        for (key, limit) in [(&budgeted.address, budget::PER_ADDRESS), (&budgeted.source, budget::PER_SOURCE)] {
            if let Some(wait) = self.budgets.spent(key, limit) {
                self.metrics.source_request("rejected", "throttled");
                return Err(IngestError::Throttled(wait));
            }
        }
        let unknown = || {
            self.budgets.count(&budgeted.address);
            self.metrics.source_request("rejected", "unknown_source");
            IngestError::UnknownToken
        };
        let Some(mut found) = self.kept.find(&token_hash, false).await? else { return Err(unknown()) };
        let mut attempt = self.attempt(&found, &request).await;
        let again = matches!(
            attempt,
            Ok(Attempt::Stale) | Err(IngestError::Refused(_) | IngestError::Quota(_) | IngestError::Sealed)
        );
        if found.kept_at.is_some() && again {
            let Some(now) = self.kept.find(&token_hash, true).await? else { return Err(unknown()) };
            found = now;
            attempt = self.attempt(&found, &request).await;
        }
        let org_id = found.source.org_id.clone();
        let outcome = match attempt {
            Ok(Attempt::Published { event_id }) => Ok(Ingested { event_id, duplicate: false, org_id }),
            Ok(Attempt::Duplicate { event_id }) => Ok(Ingested { event_id, duplicate: true, org_id }),
            Ok(Attempt::Stale) => Err(IngestError::Changed),
            Err(e) => Err(e),
        };
        self.account(&found.source, (&request, &budgeted), &outcome).await;
        outcome
    }

    /// Counts a request to a known source by its outcome, against its budgets when it was
    /// rejected, and lists it unless its publish did.
    async fn account(
        &self,
        source: &SourceRecord,
        (request, budgeted): (&Request<'_>, &Budgeted),
        outcome: &Result<Ingested, IngestError>,
    ) {
        let (outcome_name, reason, event_id) = match outcome {
            Ok(ingested) if ingested.duplicate => ("duplicate", "", Some(ingested.event_id.clone())),
            Ok(ingested) => ("accepted", "", Some(ingested.event_id.clone())),
            Err(IngestError::Refused(refusal)) => ("rejected", refusal.code(), None),
            Err(IngestError::NotText) => ("rejected", "not_text", None),
            Err(IngestError::Quota(_)) => ("rejected", "quota_exceeded", None),
            Err(_) => ("failed", "internal", None),
        };
        self.metrics.source_request(outcome_name, reason);
        if outcome_name == "rejected" {
            self.budgets.count(&budgeted.address);
            self.budgets.count(&budgeted.source);
        }
        if matches!(outcome_name, "accepted" | "failed") {
            return;
        }
        let entry = RequestEntry {
            id: ids::new(Kind::SourceRequest),
            received_at: crate::time::now_rfc3339(),
            outcome: outcome_name.to_owned(),
            reason: match outcome {
                Err(e) => Some(format!("{reason}: {e}")),
                Ok(_) => None,
            },
            event_id,
            size: request.body.len(),
        };
        if let Err(e) = self.requests.record((&source.org_id, &source.id), &entry).await {
            tracing::warn!(error = %e, source_id = %source.id, "cannot list a source's request");
        }
    }

    /// The source's secrets, opened: the current one, then one rotated out and still accepted.
    fn secrets_of(&self, source: &SourceRecord) -> Result<Vec<String>, IngestError> {
        let key = self.secret_keys.get().map_err(|_| IngestError::Sealed)?;
        let context = context(&source.org_id, &source.id);
        let open = |sealed: &str| {
            crate::vault::open(&key, &context, sealed)
                .map(|plain| String::from_utf8_lossy(&plain).into_owned())
                .map_err(|_| IngestError::Sealed)
        };
        let mut secrets = vec![open(&source.secret)?];
        if let Some((previous, until)) = &source.previous_secret
            && *until > crate::time::now_millis()
        {
            secrets.push(open(previous)?);
        }
        Ok(secrets)
    }

    /// Verifies the request against its source and publishes it, with its duplicate id's
    /// mark and its listing entry in the same call.
    async fn attempt(&self, found: &Found, request: &Request<'_>) -> Result<Attempt, IngestError> {
        let source = &found.source;
        let kind = crate::sources::kind(&source.kind).ok_or(IngestError::Sealed)?;
        let scheme: Scheme = serde_json::from_str(&source.scheme).unwrap_or_default();
        let secrets = self.secrets_of(source)?;
        let url = format!("{}{}", self.public_url, request.path_and_query);
        let inbound = Inbound::new(request.headers, request.body, &url, crate::time::now_millis() / 1000);
        let named = kind.accept(&inbound, &Key { secrets: &secrets, scheme: &scheme }).map_err(IngestError::Refused)?;
        let body = std::str::from_utf8(request.body).map_err(|_| IngestError::NotText)?;
        let event_id = ids::new(Kind::Event);
        let created_at = crate::time::now_rfc3339();
        let digest = digest_of(&named.dedup_id);
        let entry = RequestEntry {
            id: ids::new(Kind::SourceRequest),
            received_at: created_at.clone(),
            outcome: "accepted".to_owned(),
            reason: None,
            event_id: Some(event_id.clone()),
            size: request.body.len(),
        };
        let intake = Intake {
            source_id: source.id.clone(),
            digest: digest.clone(),
            window_ms: source.dedup_window_ms,
            entry: entry.encode(),
        };
        let arrived = Arrived {
            event_id: &event_id,
            action: &named.action,
            created_at: &created_at,
            org_id: &source.org_id,
            source: (&source.id, &source.name),
            headers: request.headers,
            body,
        };
        let event = source_event(&arrived, request.trace.cloned(), intake);
        let rules = self.plans.rules(&found.plan).clone();
        let kept = found.kept_at.map_or(Kept::Not, |version| Kept::Source { version });
        match publish_counted(&self.publishing, &source.org_id, By { rules: &rules, kept }, &event).await {
            Ok(Published::New { .. }) => Ok(Attempt::Published { event_id }),
            // (An event id Weir just made is never one seen before.)
            Ok(Published::Duplicate) => Ok(Attempt::Duplicate { event_id }),
            Ok(Published::Seen) => {
                // A mark gone the moment after it was seen: its window ended; try again.
                Ok(match self.requests.first_event(&source.org_id, &source.id, &digest).await? {
                    Some(event_id) => Attempt::Duplicate { event_id },
                    None => Attempt::Stale,
                })
            }
            Ok(Published::Stale) => Ok(Attempt::Stale),
            Err(PublishError::Quota(quota)) => Err(IngestError::Quota(quota)),
            Err(PublishError::Unauthorized) => Err(IngestError::Sealed),
            Err(PublishError::Store(e)) => Err(IngestError::Store(e)),
        }
    }
}

/// The event a verified request is.
fn source_event(arrived: &Arrived<'_>, trace: Option<crate::trace::TraceContext>, intake: Intake) -> Event<'static> {
    let null = RawValue::from_string("null".to_owned()).unwrap_or_default();
    Event {
        id: arrived.event_id.to_owned(),
        fresh_id: false,
        action: arrived.action.to_owned(),
        created_at: arrived.created_at.to_owned(),
        creator_id: arrived.source.0.to_owned(),
        creator_name: arrived.source.1.to_owned(),
        subject_type: forward::SUBJECT_TYPE.to_owned(),
        subject_id: arrived.source.0.to_owned(),
        deleted: false,
        snapshot_key: "body",
        snapshot: Cow::Owned(null),
        trace,
        test: false,
        source: Some(FromSource { envelope: forward::envelope(arrived), intake }),
    }
}
