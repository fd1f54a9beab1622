//! Portal sessions (contract §9, §10; keys: `store::core::keys`): what a portal link opens.
//!
//! A session is a hash under the hash of its token: its link's fields (`portal.rs`), `csrf`
//! and `opened_ms`. It lives while used — each request pushes its idle expiry on — but never
//! past [`MAX_SESSION`] after it opened, and only while what granted it stands: its
//! organisation's portal generation is still its link's (`DELETE /api/v2/portal_sessions`
//! raises it) and the client that made its link is not revoked. Its hash is in its
//! organisation's set so they can all be ended at once.

use std::collections::HashMap;
use std::time::Duration;

use redis::AsyncCommands;

use super::portal::PortalLink;
use crate::store::core::base::Base;
use crate::store::error::Result;
use crate::store::tenants::portal::PortalLinks;
use crate::store::tenants::users::Session;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct PortalSessions {
    base: Base,
}

impl PortalSessions {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> PortalSessions {
        PortalSessions { base: base.clone() }
    }
}

/// The longest a portal session lives, however often it is used: a customer who keeps a
/// page open all day is asked to open it again through the operator's product the next.
pub const MAX_SESSION: Duration = Duration::from_secs(12 * 3600);

impl PortalSessions {
    /// Stores a portal session under the hash of its token, living `idle` unless used;
    /// `false` (and nothing kept) when its link no longer grants one — its organisation's
    /// sessions were ended, or its client revoked, since it was made. (Checked after the
    /// session is listed: an end that comes between finds it and ends it.)
    pub async fn create_portal_session(
        &self,
        token_hash: &str,
        (link, csrf): (&PortalLink, &str),
        idle: Duration,
    ) -> Result<bool> {
        let key = self.base.keys().portal_session(token_hash);
        let set = self.base.keys().portal_sessions(&link.org_id);
        let mut fields = link.fields();
        fields.push(("csrf", csrf.to_owned()));
        fields.push(("opened_ms", crate::time::now_millis().to_string()));
        // Listed first: a session that exists is always found by the organisation's end.
        redis::pipe()
            .sadd(&set, token_hash)
            .ignore()
            .pexpire(&set, MAX_SESSION.as_millis() as i64)
            .ignore()
            .query_async::<()>(&mut self.base.conn())
            .await?;
        redis::pipe()
            .atomic()
            .hset_multiple(&key, &fields)
            .ignore()
            .pexpire(&key, idle.as_millis() as i64)
            .ignore()
            .query_async::<()>(&mut self.base.conn())
            .await?;
        if self.still_granted(link).await? {
            return Ok(true);
        }
        self.forget_portal_session(&link.org_id, token_hash).await?;
        Ok(false)
    }

    /// Whether what granted a link's sessions stands: the organisation's portal generation
    /// is the link's, and the client that made it is not revoked.
    async fn still_granted(&self, link: &PortalLink) -> Result<bool> {
        let links = PortalLinks::of(&self.base);
        let generation = links.portal_generation(&link.org_id);
        let revoked = async {
            if link.client_id.is_empty() {
                return Ok(false);
            }
            let revoked: Option<String> =
                self.base.conn().hget(self.base.keys().client(&link.client_id), "revoked").await?;
            Ok::<bool, crate::store::error::StoreError>(revoked.is_none_or(|r| r == "1"))
        };
        let (generation, revoked) = futures_util::join!(generation, revoked);
        Ok(generation? <= link.generation && !revoked?)
    }

    /// The portal session of a token's hash, its idle expiry pushed on (`None`: ended, idle
    /// too long, past [`MAX_SESSION`], or no longer granted).
    pub async fn portal_session(&self, token_hash: &str, idle: Duration) -> Result<Option<Session>> {
        let key = self.base.keys().portal_session(token_hash);
        let f: HashMap<String, String> = self.base.conn().hgetall(&key).await?;
        if f.is_empty() {
            return Ok(None);
        }
        let link = PortalLink::of_fields(&f);
        let opened_ms: u64 = f.get("opened_ms").and_then(|v| v.parse().ok()).unwrap_or(0);
        let left = (opened_ms + MAX_SESSION.as_millis() as u64).saturating_sub(crate::time::now_millis());
        if left == 0 || !self.still_granted(&link).await? {
            self.forget_portal_session(&link.org_id, token_hash).await?;
            return Ok(None);
        }
        let set = self.base.keys().portal_sessions(&link.org_id);
        let ttl = (idle.as_millis() as u64).min(left) as i64;
        // Two calls: the session and its organisation's set are in different slots.
        let (mut a, mut b) = (self.base.conn(), self.base.conn());
        let (session, listed): (redis::RedisResult<i64>, redis::RedisResult<i64>) =
            futures_util::join!(a.pexpire(&key, ttl), b.pexpire(&set, MAX_SESSION.as_millis() as i64));
        session?;
        listed?;
        Ok(Some(Session {
            user_id: String::new(),
            org_id: link.org_id,
            email: String::new(),
            admin: link.manage,
            csrf: f.get("csrf").cloned().unwrap_or_default(),
            portal: Some(link.portal),
        }))
    }

    async fn forget_portal_session(&self, org_id: &str, token_hash: &str) -> Result<()> {
        let _: i64 = self.base.conn().del(self.base.keys().portal_session(token_hash)).await?;
        let _: i64 = self.base.conn().srem(self.base.keys().portal_sessions(org_id), token_hash).await?;
        Ok(())
    }

    /// Ends every portal session of the organisation and voids its unused links: its portal
    /// generation is raised first, so a link made or a session opened meanwhile opens
    /// nothing either. How many sessions there were.
    pub async fn end_portal_sessions(&self, org_id: &str) -> Result<usize> {
        let _: u64 = self.base.conn().incr(self.base.keys().portal_generation(org_id), 1).await?;
        PortalLinks::of(&self.base).void_portal_links(org_id, None).await?;
        let set = self.base.keys().portal_sessions(org_id);
        let hashes: Vec<String> = self.base.conn().smembers(&set).await?;
        let mut ended = 0;
        for hash in &hashes {
            let n: i64 = self.base.conn().del(self.base.keys().portal_session(hash)).await?;
            ended += n as usize;
        }
        let _: i64 = self.base.conn().del(&set).await?;
        Ok(ended)
    }

    /// Ends the portal sessions the client's links opened and voids its unused links (the
    /// client is revoked: `still_granted` refuses them from then on, this forgets them).
    /// How many sessions there were.
    pub async fn end_portal_access_of_client(&self, org_id: &str, client_id: &str) -> Result<usize> {
        PortalLinks::of(&self.base).void_portal_links(org_id, Some(client_id)).await?;
        let set = self.base.keys().portal_sessions(org_id);
        let hashes: Vec<String> = self.base.conn().smembers(&set).await?;
        let mut ended = 0;
        for hash in &hashes {
            let key = self.base.keys().portal_session(hash);
            let made_by: Option<String> = self.base.conn().hget(&key, "client_id").await?;
            if made_by.as_deref() == Some(client_id) {
                self.forget_portal_session(org_id, hash).await?;
                ended += 1;
            }
        }
        Ok(ended)
    }

    /// Counts a link exchange from `address` in the current minute; its number.
    pub async fn portal_exchange(&self, address: &str) -> Result<u64> {
        let key = self.base.keys().portal_exchanges(address);
        let (n, _): (u64, i64) = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .cmd("EXPIRE")
            .arg(&key)
            .arg(60)
            .arg("NX")
            .query_async(&mut self.base.conn())
            .await?;
        Ok(n)
    }
}
