//! Portal links (contract §9, §10; keys: `store::core::keys`).
//!
//! A link is a hash under the hash of its token: `link_id`, `org_id`, `client_id` (the API
//! client that made it), `generation` (its organisation's portal generation when made),
//! `manage`, `frame_ancestors` (JSON), `accent`, the look (`brand_name`, `logo_url`, `return_url`,
//! `refresh_url`, `theme`), `expires_ms`, `used`; it is kept a day past
//! its expiry, so a late use is told the link expired inside the frames it was made for. It
//! is taken once, atomically (`portal_take.lua`). An organisation's unused links are listed
//! by expiry in `portal-links` (`client token-hash`), at most [`MAX_UNUSED_LINKS`] at once,
//! so that ending its sessions, or revoking the client, can void them. The sessions links
//! open: `portal_sessions.rs`.

use std::collections::HashMap;
use std::time::Duration;

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::reply::Named;
use crate::store::core::reply::flag;
use crate::store::core::reply::flag_str;
use crate::store::core::room::{self, Bounded, Entry, Full};
use crate::store::core::scripts::{PORTAL_TAKE, SET_IF_EXISTS};
use crate::store::error::Result;
use crate::store::tenants::users::{Portal, PortalLook};

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct PortalLinks {
    base: Base,
}

impl PortalLinks {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> PortalLinks {
        PortalLinks { base: base.clone() }
    }
}

/// How long a link's record stays after its expiry (to say it expired, framed as it was).
pub const LINK_KEPT_AFTER_EXPIRY: Duration = Duration::from_secs(24 * 3600);
/// Most unused links an organisation holds at once (contract §10).
pub const MAX_UNUSED_LINKS: u64 = 100;

/// A portal link as made.
#[derive(Debug, Clone)]
pub struct PortalLink {
    pub org_id: String,
    /// The API client that made it (empty for a link made before links named theirs).
    pub client_id: String,
    /// The organisation's portal generation when it was made.
    pub generation: u64,
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
    /// Taken before, or voided.
    Used(PortalLink),
    /// Past its expiry.
    Expired(PortalLink),
    /// Taken now, for its one use.
    Fresh(PortalLink),
}

/// The fields of a link (and of the sessions it opens) besides its expiry and use.
pub(super) const LINK_FIELDS: [&str; 12] = [
    "link_id",
    "org_id",
    "client_id",
    "generation",
    "manage",
    "frame_ancestors",
    "accent",
    "brand_name",
    "logo_url",
    "return_url",
    "refresh_url",
    "theme",
];

impl PortalLink {
    pub(super) fn of_fields(f: &HashMap<String, String>) -> PortalLink {
        let text = |n: &str| f.get(n).cloned().unwrap_or_default();
        let set = |n: &str| f.get(n).filter(|v| !v.is_empty()).cloned();
        PortalLink {
            org_id: text("org_id"),
            client_id: text("client_id"),
            generation: text("generation").parse().unwrap_or(0),
            manage: flag(f.get("manage")),
            portal: Portal {
                link_id: text("link_id"),
                frame_ancestors: serde_json::from_str(&text("frame_ancestors")).unwrap_or_default(),
                accent: set("accent"),
                look: PortalLook {
                    brand_name: set("brand_name"),
                    logo_url: set("logo_url"),
                    return_url: set("return_url"),
                    refresh_url: set("refresh_url"),
                    theme: set("theme"),
                },
            },
            expires_ms: text("expires_ms").parse().unwrap_or(0),
        }
    }

    pub(super) fn fields(&self) -> Vec<(&'static str, String)> {
        let look = &self.portal.look;
        vec![
            ("link_id", self.portal.link_id.clone()),
            ("org_id", self.org_id.clone()),
            ("client_id", self.client_id.clone()),
            ("generation", self.generation.to_string()),
            ("manage", flag_str(self.manage).to_owned()),
            ("frame_ancestors", serde_json::to_string(&self.portal.frame_ancestors).unwrap_or_else(|_| "[]".into())),
            ("accent", self.portal.accent.clone().unwrap_or_default()),
            ("brand_name", look.brand_name.clone().unwrap_or_default()),
            ("logo_url", look.logo_url.clone().unwrap_or_default()),
            ("return_url", look.return_url.clone().unwrap_or_default()),
            ("refresh_url", look.refresh_url.clone().unwrap_or_default()),
            ("theme", look.theme.clone().unwrap_or_default()),
        ]
    }

    /// Its entry among its organisation's unused links.
    fn listed(&self, token_hash: &str) -> String {
        format!("{} {token_hash}", self.client_id)
    }
}

impl PortalLinks {
    /// The organisation's portal generation now (links and sessions of an older one open
    /// nothing).
    pub async fn portal_generation(&self, org_id: &str) -> Result<u64> {
        let n: Option<u64> = self.base.conn().get(self.base.keys().portal_generation(org_id)).await?;
        Ok(n.unwrap_or(0))
    }

    /// Stores a new link under the hash of its token, if its organisation holds fewer than
    /// [`MAX_UNUSED_LINKS`] unused links (else how long until one expires).
    pub async fn create_portal_link(
        &self,
        token_hash: &str,
        link: &PortalLink,
        now_ms: u64,
    ) -> Result<std::result::Result<(), Full>> {
        let list = self.base.keys().portal_links(&link.org_id);
        let listed = link.listed(token_hash);
        let bounded = [Bounded { key: &list, limit: MAX_UNUSED_LINKS }];
        let entry = Entry { member: &listed, until_ms: link.expires_ms };
        if let Err(full) = room::take(&mut self.base.conn(), &bounded, entry, now_ms).await? {
            return Ok(Err(full));
        }
        let key = self.base.keys().portal_link(token_hash);
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
            .query_async::<()>(&mut self.base.conn())
            .await?;
        Ok(Ok(()))
    }

    /// Takes a link for its one use (see [`Taken`]); a link taken now leaves its
    /// organisation's unused links.
    pub async fn take_portal_link(&self, token_hash: &str, now_ms: u64) -> Result<Taken> {
        let mut call = PORTAL_TAKE.call();
        call.key(&self.base.keys().portal_link(token_hash)).arg(now_ms);
        let reply = Named::from_value(call.run(&mut self.base.conn()).await?, "portal_take")?;
        let state = reply.text("state").unwrap_or_default();
        let fields: HashMap<String, String> = LINK_FIELDS
            .into_iter()
            .chain(["expires_ms"])
            .filter_map(|n| reply.text(n).map(|v| (n.to_owned(), v)))
            .collect();
        let link = PortalLink::of_fields(&fields);
        Ok(match state.as_str() {
            "fresh" => {
                let _: i64 =
                    self.base.conn().zrem(self.base.keys().portal_links(&link.org_id), link.listed(token_hash)).await?;
                Taken::Fresh(link)
            }
            "used" => Taken::Used(link),
            "expired" => Taken::Expired(link),
            _ => Taken::Unknown,
        })
    }

    /// Voids the organisation's unused links — every one, or (`client`) those the client
    /// made: each is marked used, so it opens nothing. How many there were.
    pub async fn void_portal_links(&self, org_id: &str, client: Option<&str>) -> Result<usize> {
        let list = self.base.keys().portal_links(org_id);
        let entries: Vec<String> = self.base.conn().zrange(&list, 0, -1).await?;
        let mut voided = 0;
        for entry in &entries {
            let Some((made_by, token_hash)) = entry.split_once(' ') else { continue };
            if client.is_some_and(|c| c != made_by) {
                continue;
            }
            let _: i64 = SET_IF_EXISTS
                .call()
                .key(&self.base.keys().portal_link(token_hash))
                .arg("used")
                .arg("1")
                .run(&mut self.base.conn())
                .await?;
            let _: i64 = self.base.conn().zrem(&list, entry).await?;
            voided += 1;
        }
        Ok(voided)
    }
}
