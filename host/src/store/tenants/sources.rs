//! Sources (contract §10; keys: `store::core::keys`): a hash per source in its organisation's
//! group, the organisation's index of them (ids sort by creation time), the index from an
//! ingest token's hash to its source (the token itself is kept sealed, to be shown again),
//! and (`store::tenants::source_requests`) the source's latest requests and the duplicates
//! seen within its window.
//!
//! Hash fields: `id`, `org_id`, `name`, `type`, `scheme` (JSON: how a generic kind's secret
//! is used), `secret` and `previous_secret` (sealed by `crate::vault`; the previous one until
//! `previous_until` ms), `token` (sealed) and `token_hash`, `dedup_window` (ms),
//! `created_at`, `updated_at`.

use std::collections::HashMap;

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::scripts::{SET_IF_EXISTS, SOURCE_CREATE, SOURCE_DELETE};
use crate::store::error::{Result, StoreError};
use crate::store::tenants::source_requests::SourceRequests;
use crate::store::versions::Versions;

/// Most sources one organisation may have.
pub const MAX_SOURCES_PER_ORG: u64 = 100;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct SourceRecords {
    base: Base,
}

/// A source as stored (its secrets and token sealed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRecord {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub kind: String,
    /// JSON (`crate::sources::Scheme`).
    pub scheme: String,
    pub secret: String,
    pub previous_secret: Option<(String, u64)>,
    pub token: String,
    pub token_hash: String,
    pub dedup_window_ms: u64,
    pub created_at: String,
    pub updated_at: String,
}

/// Fields a change may set (`None` leaves one as it is).
#[derive(Debug, Clone, Default)]
pub struct SourceChange {
    pub name: Option<String>,
    pub scheme: Option<String>,
    pub dedup_window_ms: Option<u64>,
    /// A new sealed secret, and the old one kept until the time given (ms).
    pub secret: Option<(String, Option<(String, u64)>)>,
}

impl SourceRecords {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> SourceRecords {
        SourceRecords { base: base.clone() }
    }

    /// Stores a new source: its token's index first (a source never exists without a working
    /// URL); `false` when the organisation has [`MAX_SOURCES_PER_ORG`] already.
    pub async fn create(&self, record: &SourceRecord) -> Result<bool> {
        let keys = self.base.keys();
        let token_key = keys.source_token(&record.token_hash);
        let owner = format!("{} {}", record.org_id, record.id);
        let _: () = self.base.conn().set(&token_key, &owner).await?;
        let key = keys.source(&record.org_id, &record.id);
        let mut call = SOURCE_CREATE.call();
        call.key(&key).key(&keys.sources(&record.org_id)).arg(MAX_SOURCES_PER_ORG).arg(&record.id);
        for (field, value) in fields_of(record) {
            call.arg(field).arg(value);
        }
        let created: i64 = call.run(&mut self.base.conn()).await?;
        if created == 0 {
            let _: () = self.base.conn().del(&token_key).await?;
            return Ok(false);
        }
        self.base.acknowledged(&key).await?;
        Ok(true)
    }

    /// The organisation's source.
    pub async fn get(&self, org_id: &str, id: &str) -> Result<Option<SourceRecord>> {
        let key = self.base.keys().source(org_id, id);
        let fields: HashMap<String, String> = self.base.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        record_of(&key, &fields).map(|r| Some(r).filter(|r| r.org_id == org_id))
    }

    /// The organisation and source of an ingest token's hash.
    pub async fn owner_of_token(&self, token_hash: &str) -> Result<Option<(String, String)>> {
        let owner: Option<String> = self.base.conn().get(self.base.keys().source_token(token_hash)).await?;
        Ok(owner.and_then(|o| o.split_once(' ').map(|(org, id)| (org.to_owned(), id.to_owned()))))
    }

    /// How many sources the organisation has.
    pub async fn count(&self, org_id: &str) -> Result<u64> {
        Ok(self.base.conn().zcard(self.base.keys().sources(org_id)).await?)
    }

    /// A page of the organisation's sources, newest first, after `cursor`.
    pub async fn list(
        &self,
        org_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<SourceRecord>, Option<String>)> {
        let (ids, next) = self.base.page_ids(&self.base.keys().sources(org_id), cursor, limit).await?;
        if ids.is_empty() {
            return Ok((Vec::new(), next));
        }
        // One round trip for the page, as webhooks are listed.
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(self.base.keys().source(org_id, id));
        }
        let rows: Vec<HashMap<String, String>> = self.base.conn().query_reads(&pipe).await?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, fields) in ids.iter().zip(rows) {
            if !fields.is_empty() {
                out.push(record_of(&self.base.keys().source(org_id, id), &fields)?);
            }
        }
        Ok((out, next))
    }

    /// The ids of every source of the organisation.
    pub async fn ids(&self, org_id: &str) -> Result<Vec<String>> {
        Ok(self.base.conn().zrange(self.base.keys().sources(org_id), 0, -1).await?)
    }

    /// Applies a change; `false` if there is no such source.
    pub async fn update(&self, org_id: &str, id: &str, change: &SourceChange) -> Result<bool> {
        let mut fields: Vec<(&str, String)> = vec![("updated_at", crate::time::now_rfc3339())];
        if let Some(name) = &change.name {
            fields.push(("name", name.clone()));
        }
        if let Some(scheme) = &change.scheme {
            fields.push(("scheme", scheme.clone()));
        }
        if let Some(window) = change.dedup_window_ms {
            fields.push(("dedup_window", window.to_string()));
        }
        if let Some((secret, previous)) = &change.secret {
            fields.push(("secret", secret.clone()));
            let (old, until) = previous.clone().map_or((String::new(), String::new()), |(s, t)| (s, t.to_string()));
            fields.push(("previous_secret", old));
            fields.push(("previous_until", until));
        }
        let key = self.base.keys().source(org_id, id);
        let mut call = SET_IF_EXISTS.call();
        call.key(&key);
        for (field, value) in fields {
            call.arg(field).arg(value);
        }
        let done: i64 = call.run(&mut self.base.conn()).await?;
        if done == 1 {
            self.base.acknowledged(&key).await?;
            // A process's kept copy is held to the version (`domain::sources::ingest`).
            Versions::of(&self.base).raise(org_id).await?;
        }
        Ok(done == 1)
    }

    /// Deletes the organisation's source; `false` if there is none.
    pub async fn delete(&self, org_id: &str, id: &str) -> Result<bool> {
        let keys = self.base.keys();
        let mut call = SOURCE_DELETE.call();
        call.key(&keys.source(org_id, id)).key(&keys.sources(org_id)).arg(id);
        let token: Option<String> = call.run(&mut self.base.conn()).await?;
        let Some(token) = token else { return Ok(false) };
        let _: () = self.base.conn().del(keys.source_token(&token)).await?;
        // A process's kept copy is held to the version: its URL ends with this.
        Versions::of(&self.base).raise(org_id).await?;
        SourceRequests::of(&self.base).forget(org_id, id).await?;
        Ok(true)
    }
}

fn fields_of(r: &SourceRecord) -> Vec<(&'static str, String)> {
    let (previous, until) =
        r.previous_secret.clone().map_or((String::new(), String::new()), |(s, t)| (s, t.to_string()));
    vec![
        ("id", r.id.clone()),
        ("org_id", r.org_id.clone()),
        ("name", r.name.clone()),
        ("type", r.kind.clone()),
        ("scheme", r.scheme.clone()),
        ("secret", r.secret.clone()),
        ("previous_secret", previous),
        ("previous_until", until),
        ("token", r.token.clone()),
        ("token_hash", r.token_hash.clone()),
        ("dedup_window", r.dedup_window_ms.to_string()),
        ("created_at", r.created_at.clone()),
        ("updated_at", r.updated_at.clone()),
    ]
}

fn record_of(key: &str, f: &HashMap<String, String>) -> Result<SourceRecord> {
    let text = |name: &str| f.get(name).cloned().unwrap_or_default();
    let corrupt = |what: &str| StoreError::Corrupt { key: key.to_owned(), reason: format!("{what} is not valid") };
    let dedup_window_ms = text("dedup_window").parse().map_err(|_| corrupt("dedup_window"))?;
    let previous = text("previous_secret");
    let previous_secret = match (previous.is_empty(), text("previous_until").parse::<u64>()) {
        (false, Ok(until)) => Some((previous, until)),
        _ => None,
    };
    Ok(SourceRecord {
        id: text("id"),
        org_id: text("org_id"),
        name: text("name"),
        kind: text("type"),
        scheme: text("scheme"),
        secret: text("secret"),
        previous_secret,
        token: text("token"),
        token_hash: text("token_hash"),
        dedup_window_ms,
        created_at: text("created_at"),
        updated_at: text("updated_at"),
    })
}
