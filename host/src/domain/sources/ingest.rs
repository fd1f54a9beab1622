//! A provider's request to an ingest URL (`POST /in/<token>`): found by its token's hash,
//! verified by its source's kind, folded when its duplicate id was seen within the source's
//! window, else published as an event — counted among the organisation's events of the day —
//! and answered once it is as durable as a published event. Every request is counted and
//! listed by outcome; a rejected body is never kept.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::budget::{self, Budgets};
use super::parts::{SourceParts, context};
use crate::domain::events::{By, Event, PublishError, Published, Publishing, publish_counted};
use crate::domain::quota::QuotaExceeded;
use crate::ids::{self, Kind};
use crate::metrics::Metrics;
use crate::plans::Plans;
use crate::shared::SecretKeys;
use crate::sources::forward::{self, Arrived};
use crate::sources::{Inbound, Key, Refusal, Scheme};
use crate::store::StoreError;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::sources::{RequestEntry, SourceRecord, SourceRecords};

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
}

/// A request stored: the event it is, and whether it was one seen before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ingested {
    pub event_id: String,
    pub duplicate: bool,
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
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The ingest of providers' requests.
#[derive(Debug)]
pub(crate) struct Ingest {
    records: SourceRecords,
    secret_keys: Arc<SecretKeys>,
    public_url: String,
    publishing: Publishing,
    orgs: Orgs,
    plans: Arc<Plans>,
    metrics: Arc<Metrics>,
    budgets: Budgets,
}

impl Ingest {
    pub(super) fn new(parts: &SourceParts) -> Ingest {
        Ingest {
            records: parts.records.clone(),
            secret_keys: parts.secret_keys.clone(),
            public_url: parts.public_url.clone(),
            publishing: parts.publishing.clone(),
            orgs: parts.orgs.clone(),
            plans: parts.plans.clone(),
            metrics: parts.metrics.clone(),
            budgets: Budgets::default(),
        }
    }

    /// Takes in one request: the event it is, or why not.
    pub(crate) async fn receive(&self, request: Request<'_>) -> Result<Ingested, IngestError> {
        let address_key = format!("address {}", request.address);
        if let Some(wait) = self.budgets.spent(&address_key, budget::PER_ADDRESS) {
            self.metrics.source_request("rejected", "throttled");
            return Err(IngestError::Throttled(wait));
        }
        let token_hash = crate::auth::secrets::hash(request.token);
        let source_key = format!("source {token_hash}");
        if let Some(wait) = self.budgets.spent(&source_key, budget::PER_SOURCE) {
            self.metrics.source_request("rejected", "throttled");
            return Err(IngestError::Throttled(wait));
        }
        let Some(source) = self.source_of(&token_hash).await? else {
            self.budgets.count(&address_key);
            self.metrics.source_request("rejected", "unknown_source");
            return Err(IngestError::UnknownToken);
        };
        let outcome = self.verified(&source, &request).await;
        let (outcome_name, reason, event_id) = match &outcome {
            Ok(ingested) if ingested.duplicate => ("duplicate", "", Some(ingested.event_id.clone())),
            Ok(ingested) => ("accepted", "", Some(ingested.event_id.clone())),
            Err(IngestError::Refused(refusal)) => ("rejected", refusal.code(), None),
            Err(IngestError::NotText) => ("rejected", "not_text", None),
            Err(IngestError::Quota(_)) => ("rejected", "quota_exceeded", None),
            Err(_) => ("failed", "internal", None),
        };
        if outcome_name == "rejected" {
            self.budgets.count(&address_key);
            self.budgets.count(&source_key);
        }
        self.metrics.source_request(outcome_name, reason);
        let entry = RequestEntry {
            id: ids::new(Kind::SourceRequest),
            received_at: crate::time::now_rfc3339(),
            outcome: outcome_name.to_owned(),
            reason: match &outcome {
                Err(e) if outcome_name == "rejected" => Some(format!("{reason}: {e}")),
                _ => None,
            },
            event_id,
            size: request.body.len(),
        };
        if outcome_name != "failed"
            && let Err(e) = self.records.record_request((&source.org_id, &source.id), &entry).await
        {
            tracing::warn!(error = %e, source_id = %source.id, "cannot list a source's request");
        }
        outcome
    }

    /// The source of a token's hash (compared in constant time with the one kept).
    async fn source_of(&self, token_hash: &str) -> Result<Option<SourceRecord>, IngestError> {
        let Some((org_id, id)) = self.records.owner_of_token(token_hash).await? else { return Ok(None) };
        let record = self.records.get(&org_id, &id).await?;
        Ok(record.filter(|r| crate::auth::secrets::equal(token_hash.as_bytes(), r.token_hash.as_bytes())))
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

    /// Verifies the request against its source and stores it.
    async fn verified(&self, source: &SourceRecord, request: &Request<'_>) -> Result<Ingested, IngestError> {
        let kind = crate::sources::kind(&source.kind).ok_or(IngestError::Sealed)?;
        let scheme: Scheme = serde_json::from_str(&source.scheme).unwrap_or_default();
        let secrets = self.secrets_of(source)?;
        let url = format!("{}{}", self.public_url, request.path_and_query);
        let inbound = Inbound::new(request.headers, request.body, &url, crate::time::now_millis() / 1000);
        let named = kind.accept(&inbound, &Key { secrets: &secrets, scheme: &scheme }).map_err(IngestError::Refused)?;
        let body = std::str::from_utf8(request.body).map_err(|_| IngestError::NotText)?;
        let fresh = ids::new(Kind::Event);
        let first =
            self.records.seen((&source.org_id, &source.id), &named.dedup_id, &fresh, source.dedup_window_ms).await?;
        let seen_before = first.is_some();
        let event_id = first.unwrap_or(fresh);
        let created_at = crate::time::now_rfc3339();
        let arrived = Arrived {
            event_id: &event_id,
            action: &named.action,
            created_at: &created_at,
            org_id: &source.org_id,
            source: (&source.id, &source.name),
            headers: request.headers,
            body,
        };
        let event = source_event(&arrived, request.headers);
        let plan = self.orgs.org_plan_name(&source.org_id).await?;
        let rules = self.plans.rules(&plan).clone();
        let published =
            publish_counted(&self.publishing, &source.org_id, By { rules: &rules, token: None }, &event).await;
        match published {
            Ok(Published::New { .. }) => Ok(Ingested { event_id, duplicate: false }),
            Ok(Published::Duplicate) => Ok(Ingested { event_id, duplicate: true }),
            // Not kept by a token: publishing reads what is stale again itself.
            Ok(Published::Stale) => Ok(Ingested { event_id, duplicate: seen_before }),
            Err(PublishError::Quota(quota)) => Err(IngestError::Quota(quota)),
            Err(PublishError::Unauthorized) => Err(IngestError::Sealed),
            Err(PublishError::Store(e)) => Err(IngestError::Store(e)),
        }
    }
}

/// The event a verified request is.
fn source_event(arrived: &Arrived<'_>, headers: &http::HeaderMap) -> Event<'static> {
    let traceparent = headers.get("traceparent").and_then(|v| v.to_str().ok());
    let tracestate = headers.get("tracestate").and_then(|v| v.to_str().ok());
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
        trace: traceparent.and_then(|t| crate::trace::TraceContext::parse(t, tracestate)),
        test: false,
        source_envelope: Some(forward::envelope(arrived)),
    }
}
