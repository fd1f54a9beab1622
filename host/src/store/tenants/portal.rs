//! Portal links and the sessions they open (contract §9; keys: `store::core::keys`).
//!
//! A link is a hash under the hash of its token: `link_id`, `org_id`, `manage`,
//! `frame_ancestors` (JSON), `accent`, `expires_ms`, `used`; it is kept a day past its expiry,
//! so a late use is told the link expired inside the frames it was made for. It is taken
//! once, atomically (`portal_take.lua`). A session is a hash under the hash of its token:
//! `org_id`, `csrf` and the link's grant; it lives while used (each request pushes its idle
//! expiry on), and its hash is in its organisation's set so they can all be ended at once.

use std::collections::HashMap;
use std::time::Duration;

use redis::AsyncCommands;

use crate::store::concerns::Tenants;
use crate::store::core::reply::Named;
use crate::store::core::scripts::PORTAL_TAKE;
use crate::store::tenants::users::{Portal, Session};
use crate::store::{Result, flag, flag_str};

/// How long a link's record stays after its expiry (to say it expired, framed as it was).
pub const LINK_KEPT_AFTER_EXPIRY: Duration = Duration::from_secs(24 * 3600);

/// A portal link as made.
#[derive(Debug, Clone)]
pub struct PortalLink {
    pub org_id: String,
    /// `manage` (else `view`).
    pub manage: bool,
    pub portal: Portal,
    pub expires_ms: u64,
}

/// What taking a link found.
#[derive(Debug, Clone)]
pub enum Taken {
    /// No such link (never made, or expired more than a day ago).
    Unknown,
    /// Taken before.
    Used(PortalLink),
    /// Past its expiry.
    Expired(PortalLink),
    /// Taken now, for its one use.
    Fresh(PortalLink),
}

impl PortalLink {
    fn of_fields(f: &HashMap<String, String>) -> PortalLink {
        let text = |n: &str| f.get(n).cloned().unwrap_or_default();
        PortalLink {
            org_id: text("org_id"),
            manage: flag(f.get("manage")),
            portal: Portal {
                link_id: text("link_id"),
                frame_ancestors: serde_json::from_str(&text("frame_ancestors")).unwrap_or_default(),
                accent: f.get("accent").filter(|a| !a.is_empty()).cloned(),
            },
            expires_ms: text("expires_ms").parse().unwrap_or(0),
        }
    }

    fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("link_id", self.portal.link_id.clone()),
            ("org_id", self.org_id.clone()),
            ("manage", flag_str(self.manage).to_owned()),
            ("frame_ancestors", serde_json::to_string(&self.portal.frame_ancestors).unwrap_or_else(|_| "[]".into())),
            ("accent", self.portal.accent.clone().unwrap_or_default()),
        ]
    }
}

impl Tenants<'_> {
    /// Stores a new link under the hash of its token.
    pub async fn create_portal_link(self, token_hash: &str, link: &PortalLink, now_ms: u64) -> Result<()> {
        let key = self.keys().portal_link(token_hash);
        let mut fields = link.fields();
        fields.push(("expires_ms", link.expires_ms.to_string()));
        fields.push(("used", "0".to_owned()));
        let keep = link.expires_ms.saturating_sub(now_ms) + LINK_KEPT_AFTER_EXPIRY.as_millis() as u64;
        redis::pipe()
            .atomic()
            .hset_multiple(&key, &fields)
            .ignore()
            .pexpire(&key, keep as i64)
            .ignore()
            .query_async::<()>(&mut self.conn())
            .await?;
        Ok(())
    }

    /// Takes a link for its one use (see [`Taken`]).
    pub async fn take_portal_link(self, token_hash: &str, now_ms: u64) -> Result<Taken> {
        let mut call = PORTAL_TAKE.call();
        call.key(&self.keys().portal_link(token_hash)).arg(now_ms);
        let reply = Named::from_value(call.run(&mut self.conn()).await?, "portal_take")?;
        let state = reply.text("state").unwrap_or_default();
        let fields: HashMap<String, String> =
            ["link_id", "org_id", "manage", "frame_ancestors", "accent", "expires_ms"]
                .into_iter()
                .filter_map(|n| reply.text(n).map(|v| (n.to_owned(), v)))
                .collect();
        let link = PortalLink::of_fields(&fields);
        Ok(match state.as_str() {
            "fresh" => Taken::Fresh(link),
            "used" => Taken::Used(link),
            "expired" => Taken::Expired(link),
            _ => Taken::Unknown,
        })
    }

    /// Stores a portal session under the hash of its token, living `idle` unless used.
    pub async fn create_portal_session(
        self,
        token_hash: &str,
        (link, csrf): (&PortalLink, &str),
        idle: Duration,
    ) -> Result<()> {
        let key = self.keys().portal_session(token_hash);
        let set = self.keys().portal_sessions(&link.org_id);
        let mut fields = link.fields();
        fields.push(("csrf", csrf.to_owned()));
        // Listed first: a session that exists is always found by the organisation's end.
        redis::pipe()
            .sadd(&set, token_hash)
            .ignore()
            .pexpire(&set, idle.as_millis() as i64)
            .ignore()
            .query_async::<()>(&mut self.conn())
            .await?;
        redis::pipe()
            .atomic()
            .hset_multiple(&key, &fields)
            .ignore()
            .pexpire(&key, idle.as_millis() as i64)
            .ignore()
            .query_async::<()>(&mut self.conn())
            .await?;
        Ok(())
    }

    /// The portal session of a token's hash, its idle expiry pushed on (`None`: ended or
    /// idle too long).
    pub async fn portal_session(self, token_hash: &str, idle: Duration) -> Result<Option<Session>> {
        let key = self.keys().portal_session(token_hash);
        let f: HashMap<String, String> = self.conn().hgetall(&key).await?;
        if f.is_empty() {
            return Ok(None);
        }
        let link = PortalLink::of_fields(&f);
        let set = self.keys().portal_sessions(&link.org_id);
        let ttl = idle.as_millis() as i64;
        // Two calls: the session and its organisation's set are in different slots.
        let (mut a, mut b) = (self.conn(), self.conn());
        let (session, listed): (redis::RedisResult<i64>, redis::RedisResult<i64>) =
            futures_util::join!(a.pexpire(&key, ttl), b.pexpire(&set, ttl));
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

    /// Ends every portal session of the organisation; how many there were.
    pub async fn end_portal_sessions(self, org_id: &str) -> Result<usize> {
        let set = self.keys().portal_sessions(org_id);
        let hashes: Vec<String> = self.conn().smembers(&set).await?;
        let mut ended = 0;
        for hash in &hashes {
            let n: i64 = self.conn().del(self.keys().portal_session(hash)).await?;
            ended += n as usize;
        }
        let _: i64 = self.conn().del(&set).await?;
        Ok(ended)
    }

    /// Counts a link exchange from `address` in the current minute; its number.
    pub async fn portal_exchange(self, address: &str) -> Result<u64> {
        let key = self.keys().portal_exchanges(address);
        let (n, _): (u64, i64) = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .cmd("EXPIRE")
            .arg(&key)
            .arg(60)
            .arg("NX")
            .query_async(&mut self.conn())
            .await?;
        Ok(n)
    }
}
