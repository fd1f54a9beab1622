//! Sources (contract §10): inbound endpoints of an organisation that providers deliver to.
//! Creating, reading, changing, rotating and deleting them (`records`), and the ingest of a
//! provider's request (`ingest.rs`): verified by its kind's rule (`crate::sources`), folded
//! when it is a duplicate, published as an event through the one publishing path.

mod budget;
mod ingest;
mod input;
mod kept;
mod parts;
mod view;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub(crate) use self::ingest::{Ingest, IngestError, Ingested, Request as IngestRequest};
pub(crate) use self::parts::SourceParts;
use self::parts::context;
pub(crate) use self::view::{RequestView, SourceView};
use super::Invalid;
use super::fields::{Fields, bounded_text};
use crate::ids::{self, Kind};
use crate::shared::SecretKeys;
use crate::sources::SourceKind;
use crate::store::StoreError;
use crate::store::tenants::source_requests::SourceRequests;
use crate::store::tenants::sources::{SourceChange, SourceRecord, SourceRecords};

/// How long a rotated-out secret is still accepted (contract §10).
const ROTATION_GRACE: Duration = Duration::from_secs(86_400);
/// Longest source name.
const MAX_NAME: usize = 200;

/// Why a source change did not happen.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SourceError {
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error("source not found")]
    NotFound,
    #[error("the organisation has the most sources allowed")]
    Limit,
    #[error("the secret key cannot be read: {0}")]
    Sealing(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for SourceError {
    fn from(invalid: Invalid) -> SourceError {
        SourceError::Invalid(invalid)
    }
}

/// Sources, for the surfaces: each answer is the source as shown.
#[derive(Debug)]
pub(crate) struct Sources {
    records: SourceRecords,
    requests: SourceRequests,
    secret_keys: Arc<SecretKeys>,
    /// `WEIR_PUBLIC_URL`: ingest URLs are under it.
    public_url: String,
    telemetry: Arc<crate::telemetry::Telemetry>,
    ingest: Ingest,
}

impl Sources {
    pub(crate) fn new(parts: SourceParts) -> Sources {
        let ingest = Ingest::new(&parts);
        Sources {
            records: parts.records,
            requests: parts.requests,
            secret_keys: parts.secret_keys,
            public_url: parts.public_url,
            telemetry: parts.telemetry,
            ingest,
        }
    }

    /// The ingest of providers' requests.
    pub(crate) fn ingest(&self) -> &Ingest {
        &self.ingest
    }

    /// Records a provider's request's span (when spans are exported).
    pub(crate) fn traced(&self, span: crate::telemetry::PublishSpan<'_>) {
        self.telemetry.publish(span);
    }

    fn seal(&self, org_id: &str, id: &str, plain: &str) -> Result<String, SourceError> {
        let key = self.secret_keys.get().map_err(SourceError::Sealing)?;
        crate::vault::seal(&key, &context(org_id, id), plain.as_bytes())
            .map_err(|e| SourceError::Sealing(e.to_string()))
    }

    fn view(&self, record: &SourceRecord) -> Result<SourceView, SourceError> {
        let key = self.secret_keys.get().map_err(SourceError::Sealing)?;
        let token = crate::vault::open(&key, &context(&record.org_id, &record.id), &record.token)
            .map_err(|e| SourceError::Sealing(e.to_string()))?;
        let url = format!("{}/in/{}", self.public_url, String::from_utf8_lossy(&token));
        Ok(SourceView::of(record, url))
    }

    async fn record(&self, org_id: &str, id: &str) -> Result<SourceRecord, SourceError> {
        if !ids::is_valid(Kind::Source, id) {
            return Err(SourceError::NotFound);
        }
        self.records.get(org_id, id).await?.ok_or(SourceError::NotFound)
    }

    /// The organisation's source and its kind.
    async fn with_kind(&self, org_id: &str, id: &str) -> Result<(SourceRecord, &'static SourceKind), SourceError> {
        let record = self.record(org_id, id).await?;
        let kind = crate::sources::kind(&record.kind).ok_or(SourceError::NotFound)?;
        Ok((record, kind))
    }

    /// Validates a new source (`name`?, `type`, `secret` or the kind's settings,
    /// `dedup_window`?) and stores it.
    pub(crate) async fn create(
        &self,
        org_id: &str,
        body: serde_json::Map<String, Value>,
    ) -> Result<SourceView, SourceError> {
        let mut fields = Fields::new(body);
        let name = fields.string("name");
        let kind = input::kind_of(&mut fields);
        let window = input::window(&mut fields).unwrap_or(input::DEFAULT_WINDOW);
        let settings = match kind {
            Some(kind) => input::settings(&mut fields, kind, true),
            None => {
                // Without a kind its secret and settings are not judged: `type` is at fault.
                for name in ["secret", "hmac", "basic", "api_key"] {
                    fields.value(name);
                }
                None
            }
        };
        let name = name.and_then(|n| bounded_text(&mut fields, "name", n, MAX_NAME));
        fields.finish()?;
        let (Some(kind), Some(settings)) = (kind, settings) else {
            return Err(Invalid::field("source", "is not valid").into());
        };
        let id = ids::new(Kind::Source);
        let token = crate::auth::secrets::generate("");
        let now = crate::time::now_rfc3339();
        let record = SourceRecord {
            id: id.clone(),
            org_id: org_id.to_owned(),
            name: name.unwrap_or_else(|| kind.table.label.to_owned()),
            kind: kind.name.to_owned(),
            scheme: serde_json::to_string(&settings.scheme).unwrap_or_default(),
            secret: self.seal(org_id, &id, settings.secret.as_deref().unwrap_or_default())?,
            previous_secret: None,
            token: self.seal(org_id, &id, &token)?,
            token_hash: crate::auth::secrets::hash(&token),
            dedup_window_ms: window.as_millis() as u64,
            created_at: now.clone(),
            updated_at: now,
        };
        if !self.records.create(&record).await? {
            return Err(SourceError::Limit);
        }
        self.view(&record)
    }

    /// The organisation's source.
    pub(crate) async fn find(&self, org_id: &str, id: &str) -> Result<SourceView, SourceError> {
        self.view(&self.record(org_id, id).await?)
    }

    /// A page of the organisation's sources, newest first.
    pub(crate) async fn list(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<SourceView>, Option<String>), SourceError> {
        let (records, next) = self.records.list(org_id, cursor, limit).await?;
        let views = records.iter().map(|r| self.view(r)).collect::<Result<Vec<_>, _>>()?;
        Ok((views, next))
    }

    /// The organisation's sources by id and name, newest first (nothing opened: what a
    /// webhook's form offers).
    pub(crate) async fn names(&self, org_id: &str) -> Result<Vec<(String, String)>, SourceError> {
        let (records, _) = self.records.list(org_id, None, 100).await?;
        Ok(records.into_iter().map(|r| (r.id, r.name)).collect())
    }

    /// Changes a source's `name`, `dedup_window` or settings (a generic kind's; for `basic`
    /// and `api_key` a new password or key takes over at once). `type` cannot change, and the
    /// secret changes by rotation.
    pub(crate) async fn update(
        &self,
        org_id: &str,
        id: &str,
        body: serde_json::Map<String, Value>,
    ) -> Result<SourceView, SourceError> {
        let (current, kind) = self.with_kind(org_id, id).await?;
        let mut fields = Fields::new(body);
        if fields.string("type").is_some_and(|t| t != current.kind) {
            fields.error("type", "cannot be changed: make another source");
        }
        if fields.value("secret").is_some() {
            fields.error("secret", "changes by rotation: POST /api/v2/sources/{id}/rotate");
        }
        let mut change = SourceChange { name: fields.string("name"), ..SourceChange::default() };
        change.name = change.name.and_then(|n| bounded_text(&mut fields, "name", n, MAX_NAME));
        change.dedup_window_ms = input::window(&mut fields).map(|d| d.as_millis() as u64);
        let settings = if fields.has_errors() || kind.table.fields.is_empty() {
            None
        } else {
            input::settings(&mut fields, kind, false)
        };
        fields.finish()?;
        if let Some(settings) = settings.filter(|s| s.scheme != crate::sources::Scheme::Provider) {
            change.scheme = Some(serde_json::to_string(&settings.scheme).unwrap_or_default());
            if let Some(secret) = settings.secret {
                change.secret = Some((self.seal(org_id, id, &secret)?, None));
            }
        }
        if !self.records.update(org_id, id, &change).await? {
            return Err(SourceError::NotFound);
        }
        self.find(org_id, id).await
    }

    /// Gives the source a new secret (`{"secret": …}`); the old one is accepted for 24 h more.
    pub(crate) async fn rotate(
        &self,
        org_id: &str,
        id: &str,
        body: serde_json::Map<String, Value>,
    ) -> Result<SourceView, SourceError> {
        let (current, kind) = self.with_kind(org_id, id).await?;
        let mut fields = Fields::new(body);
        let secret = match kind.secret {
            crate::sources::SecretFrom::Nothing => {
                fields.error("secret", "a source of type none has no secret");
                None
            }
            _ => input::secret(&mut fields, kind, true),
        };
        fields.finish()?;
        let Some(secret) = secret else { return Err(Invalid::field("secret", "is required").into()) };
        let until = crate::time::now_millis() + ROTATION_GRACE.as_millis() as u64;
        let change = SourceChange {
            secret: Some((self.seal(org_id, id, &secret)?, Some((current.secret, until)))),
            ..SourceChange::default()
        };
        if !self.records.update(org_id, id, &change).await? {
            return Err(SourceError::NotFound);
        }
        self.find(org_id, id).await
    }

    /// Deletes the organisation's source: its URL answers `404` from now on.
    pub(crate) async fn delete(&self, org_id: &str, id: &str) -> Result<(), SourceError> {
        if !ids::is_valid(Kind::Source, id) || !self.records.delete(org_id, id).await? {
            return Err(SourceError::NotFound);
        }
        Ok(())
    }

    /// The source's latest requests, newest first, of `outcome` when given, after `cursor`.
    pub(crate) async fn requests(
        &self,
        org_id: &str,
        id: &str,
        (outcome, cursor): (Option<&str>, Option<&str>),
        limit: usize,
    ) -> Result<(Vec<RequestView>, Option<String>), SourceError> {
        self.record(org_id, id).await?;
        let kept = self.requests.latest(org_id, id).await?;
        let mut page: Vec<RequestView> = kept
            .into_iter()
            .filter(|r| outcome.is_none_or(|o| r.outcome == o))
            .filter(|r| cursor.is_none_or(|c| r.id.as_str() < c))
            .take(limit + 1)
            .map(RequestView::from)
            .collect();
        let next = (page.len() > limit).then(|| {
            page.truncate(limit);
            page.last().map(|r| r.id.clone())
        });
        Ok((page, next.flatten()))
    }
}
