//! Organisation versions: what lets a process publish from its cache in one round trip and
//! still never publish from a stale one.
//!
//! An organisation's version (`P:{o}:version`) is raised after every change a publish's
//! cache depends on — its webhooks' subscriptions, ordering and filters, its plan, a client
//! or token revoked — and copied into every partition (`P:{q}:versions`) before the change
//! returns. A process caches subscribers and token owners with the version read *before*
//! them, and `publish.lua` refuses ("stale") an event whose cache is older than its
//! partition's copy: a change that returned before a publish started is always seen by it.
//!
//! A copy may lag its organisation's version (a change whose process died between the two
//! writes, or a partition whose master was away: the change is not refused for that): a
//! cache newer than the copy is then taken, as it is at least as new. What is kept is used
//! for [`KEPT_AT_MOST`] at most (`crate::shared::Tokens`, `store::events::publisher`), which
//! bounds what such a lost copy — or one a Redis failover lost with the change itself — can
//! leave stale.

use std::time::Duration;

use crate::store::core::base::Base;
use crate::store::core::scripts::VERSION_RAISE;
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Versions {
    base: Base,
}

impl Versions {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Versions {
        Versions { base: base.clone() }
    }
}

/// Longest a process uses what it kept of an organisation (subscribers, a token) before it
/// reads it again, whatever the versions say.
pub const KEPT_AT_MOST: Duration = Duration::from_secs(30);

impl Versions {
    /// The organisation's version now (0 before its first change).
    pub async fn current(&self, org_id: &str) -> Result<u64> {
        let v: Option<u64> =
            redis::cmd("GET").arg(self.base.keys().org_version(org_id)).query_async(&mut self.base.conn()).await?;
        Ok(v.unwrap_or(0))
    }

    /// Raises the organisation's version and copies it into every partition: call after
    /// the change is stored, before it is acknowledged.
    pub async fn raise(&self, org_id: &str) -> Result<u64> {
        let v: u64 =
            redis::cmd("INCR").arg(self.base.keys().org_version(org_id)).query_async(&mut self.base.conn()).await?;
        let copies = self.base.keys().partitions().map(|p| async move {
            let mut call = VERSION_RAISE.call();
            call.key(&self.base.keys().versions(p)).arg(org_id).arg(v);
            (p, call.run::<i64>(&mut self.base.conn()).await)
        });
        for (p, copied) in futures_util::future::join_all(copies).await {
            match copied {
                Ok(_) => {}
                // A partition whose master is away (a failover: its events go to a standby,
                // whose copy was written) keeps an older copy: the change stands, and a kept
                // cache may serve that partition until it expires.
                Err(e) if e.is_unavailable() => {
                    let kept_at_most_s = KEPT_AT_MOST.as_secs();
                    tracing::warn!(error = %e, org_id, partition = p.0, kept_at_most_s, "an organisation's version was not copied into a partition that is away; publishes there may use what was kept until it expires");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(v)
    }
}
