//! A source's requests (contract §10; keys: `store::core::keys`): its latest ones as its
//! listing shows them, and the marks its duplicate ids leave for the source's window. Both
//! live in the partition of the source's events, so that the publish of the event a request
//! becomes writes them in its own call (`lua/publish.lua`): taking a request in is one round
//! trip, as publishing is. A request that becomes no event (rejected, or a duplicate) is
//! listed in its source's own partition; through a failover, an event's request is listed in
//! the standby it went to, so a listing reads every partition's.

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::error::Result;

/// How many of a source's requests are kept for its listing (per partition; `publish.lua`
/// is given it).
pub const KEPT_REQUESTS: isize = 1000;
/// How long a listing stays after its last request (ms; `publish.lua` is given it).
pub const LISTING_KEPT_MS: u64 = 30 * 24 * 3600 * 1000;
/// The subject type of a source's events (its id is the source's): their partition is the
/// source's.
pub const SUBJECT_TYPE: &str = "source";

/// One request as a source's listing shows it (never its body).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RequestEntry {
    pub id: String,
    pub received_at: String,
    pub outcome: String,
    pub reason: Option<String>,
    pub event_id: Option<String>,
    pub size: usize,
}

impl RequestEntry {
    /// As it is stored.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The name a duplicate id's mark is kept under.
pub fn digest_of(dedup_id: &str) -> String {
    crate::store::core::keys::name_of_digest(&crate::ids::digest_128(&[dedup_id]))
}

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct SourceRequests {
    base: Base,
}

impl SourceRequests {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> SourceRequests {
        SourceRequests { base: base.clone() }
    }

    /// The partition of the source's events (unless a failover sends them to a standby).
    fn home(&self, org_id: &str, id: &str) -> Partition {
        self.base.keys().partition_of_subject(org_id, SUBJECT_TYPE, id)
    }

    /// Lists a request that became no event (the publish lists those that did).
    pub async fn record(&self, (org_id, id): (&str, &str), entry: &RequestEntry) -> Result<()> {
        let key = self.base.keys().source_requests(self.home(org_id, id), org_id, id);
        let mut pipe = redis::pipe();
        pipe.lpush(&key, entry.encode()).ignore().ltrim(&key, 0, KEPT_REQUESTS - 1).ignore();
        pipe.pexpire(&key, LISTING_KEPT_MS as i64).ignore();
        let _: () = pipe.query_async(&mut self.base.conn()).await?;
        Ok(())
    }

    /// The source's latest requests, newest first (ids sort by time).
    pub async fn latest(&self, org_id: &str, id: &str) -> Result<Vec<RequestEntry>> {
        let keys = self.base.keys();
        let mut pipe = redis::pipe();
        for p in keys.partitions() {
            pipe.lrange(keys.source_requests(p, org_id, id), 0, KEPT_REQUESTS - 1);
        }
        let lists: Vec<Vec<String>> = self.base.conn().query_reads(&pipe).await?;
        let mut all: Vec<RequestEntry> =
            lists.iter().flatten().filter_map(|row| serde_json::from_str(row).ok()).collect();
        all.sort_by(|a, b| b.id.cmp(&a.id));
        all.truncate(KEPT_REQUESTS as usize);
        Ok(all)
    }

    /// The event a duplicate id's request became, while its mark stays.
    pub async fn first_event(&self, org_id: &str, id: &str, digest: &str) -> Result<Option<String>> {
        let keys = self.base.keys();
        let home = self.home(org_id, id);
        let found: Option<String> = self.base.conn().get(keys.source_seen(home, org_id, id, digest)).await?;
        if found.is_some() {
            return Ok(found);
        }
        // Through a failover, the mark is in the standby its event went to.
        let mut pipe = redis::pipe();
        for p in keys.partitions().filter(|p| *p != home) {
            pipe.get(keys.source_seen(p, org_id, id, digest));
        }
        if pipe.is_empty() {
            return Ok(None);
        }
        let marks: Vec<Option<String>> = self.base.conn().query_reads(&pipe).await?;
        Ok(marks.into_iter().flatten().next())
    }

    /// Forgets a deleted source's listings (its marks expire with its window).
    pub async fn forget(&self, org_id: &str, id: &str) -> Result<()> {
        let keys = self.base.keys();
        let mut pipe = redis::pipe();
        for p in keys.partitions() {
            pipe.del(keys.source_requests(p, org_id, id));
        }
        for done in self.base.conn().query_each(std::slice::from_ref(&pipe)).await? {
            done?;
        }
        Ok(())
    }
}
