//! The sources this process keeps, by their ingest tokens' hashes: a source's record and
//! its organisation's plan, with the organisation's version read before both. The publish
//! of a request taken in from what was kept is held to that version (`store::versions`: a
//! source's change, deletion or plan change raises it), so a request reads nothing from
//! Redis before its publish, and none is taken in under a source as it was before a change
//! that returned.

use crate::recent::Recent;
use crate::store::StoreError;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::sources::{SourceRecord, SourceRecords};
use crate::store::versions::{KEPT_AT_MOST, Versions};

/// Most sources kept per process.
const KEPT_SOURCES: usize = 4096;

/// A token's source, and its organisation's plan.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub source: SourceRecord,
    pub plan: String,
    /// The organisation's version both were read at, when they were kept (`None`: read now).
    pub kept_at: Option<u64>,
}

/// The sources kept, and where they are read from.
#[derive(Debug)]
pub(super) struct KeptSources {
    records: SourceRecords,
    orgs: Orgs,
    versions: Versions,
    kept: Recent<String, Found>,
}

impl KeptSources {
    pub(super) fn new(records: SourceRecords, orgs: Orgs, versions: Versions) -> KeptSources {
        KeptSources { records, orgs, versions, kept: Recent::new(KEPT_SOURCES, KEPT_AT_MOST) }
    }

    /// The source of a token's hash, as kept unless `now` (`None`: no source has it). Not
    /// kept, it is read — the version first — and kept.
    pub(super) async fn find(&self, token_hash: &str, now: bool) -> Result<Option<Found>, StoreError> {
        if !now && let Some(found) = self.kept.get(token_hash) {
            return Ok(Some(found));
        }
        self.kept.forget(&token_hash.to_owned());
        let Some((org_id, id)) = self.records.owner_of_token(token_hash).await? else { return Ok(None) };
        let version = self.versions.current(&org_id).await?;
        let record = self.records.get(&org_id, &id).await?;
        // The index names it; the record's own hash must be the token's too.
        let same = |r: &SourceRecord| crate::auth::secrets::equal(token_hash.as_bytes(), r.token_hash.as_bytes());
        let Some(source) = record.filter(same) else { return Ok(None) };
        let plan = self.orgs.org_plan_name(&org_id).await?;
        let found = Found { source, plan, kept_at: None };
        self.kept.put(token_hash.to_owned(), Found { kept_at: Some(version), ..found.clone() }, None, 1);
        Ok(Some(found))
    }
}
