//! Portal links (contract §9): an operator's backend asks for a short-lived link that opens
//! Settings > Webhooks for one of its organisations inside its own product, with no Weir
//! user. The token (`wpt_` + 256 random bits) travels in the URL's fragment (never sent to a
//! server, so never in a log), is kept only as a hash, and is exchanged once for a session
//! of that organisation (`manage` or `view`) that ends after [`IDLE`] without a request, 12
//! hours after it opened at the latest (`store::tenants::portal_sessions::MAX_SESSION`), or
//! when what granted it is taken back: `DELETE /api/v2/portal_sessions` (which also voids
//! the organisation's unused links), or the revocation of the client that made its link. An
//! organisation holds at most 100 unused links.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::fields::Fields;
use super::{Invalid, StoreError};
use crate::auth::secrets;
use crate::ids::{self, Kind};
use crate::store::tenants::portal::{PortalLink, PortalLinks as Links, Taken};
use crate::store::tenants::portal_sessions::PortalSessions;
pub(crate) use crate::store::tenants::users::{Portal, PortalLook};

/// A portal session ends after this long without a request.
pub(crate) const IDLE: Duration = Duration::from_secs(60 * 60);
/// A link's life, in seconds: at least, at most, and when not asked for.
const TTL: (u64, u64, u64) = (60, 900, 300);
/// Most origins one link may be framed by.
const MAX_ANCESTORS: usize = 16;
/// Most exchanges from one address in a minute.
const EXCHANGES_PER_MINUTE: u64 = 30;

/// A link just made.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct CreatedLink {
    /// `ptl_…`: portal actions are logged with it.
    pub id: String,
    /// `<public URL>/portal#token=…`: open it once, in a frame of a listed origin or a tab.
    pub url: String,
    pub expires_at: String,
}

/// Why a link opened nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExchangeRefused {
    /// Unknown, used before, or expired: the link (when still known) says where the page
    /// that says so may be framed.
    #[error("this link has expired or was already used")]
    Expired(Option<Portal>),
    #[error("too many links opened from this address; try again in a minute")]
    Throttled,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A session a link opened: its token (the cookie's value) and what it grants.
#[derive(Debug)]
pub(crate) struct Opened {
    pub token: String,
    pub portal: Portal,
}

/// Portal links and sessions, for the surfaces.
#[derive(Debug, Clone)]
pub(crate) struct PortalLinks {
    links: Links,
    sessions: PortalSessions,
    /// Where links point (`WEIR_PUBLIC_URL`).
    public_url: String,
}

impl PortalLinks {
    pub(crate) fn new(links: Links, sessions: PortalSessions, public_url: String) -> PortalLinks {
        PortalLinks { links, sessions, public_url }
    }

    /// Makes a link for the organisation from a request body (see the contract), on behalf
    /// of `client_id` (revoking that client voids it, and ends the sessions it opens).
    pub(crate) async fn create(
        &self,
        org_id: &str,
        client_id: &str,
        body: Map<String, Value>,
    ) -> Result<CreatedLink, LinkError> {
        let asked = Asked::read(body)?;
        let now = crate::time::now_millis();
        let token = secrets::generate("wpt_");
        let links = &self.links;
        let link = PortalLink {
            org_id: org_id.to_owned(),
            client_id: client_id.to_owned(),
            generation: links.portal_generation(org_id).await?,
            manage: asked.manage,
            portal: Portal {
                link_id: ids::new(Kind::PortalLink),
                frame_ancestors: asked.ancestors,
                accent: asked.accent,
                look: asked.look,
            },
            expires_ms: now + asked.ttl.as_millis() as u64,
        };
        if let Err(full) = links.create_portal_link(&secrets::hash(&token), &link, now).await? {
            return Err(LinkError::TooMany(full.wait));
        }
        tracing::info!(portal_link = %link.portal.link_id, org_id, manage = link.manage, "portal link made");
        Ok(CreatedLink {
            id: link.portal.link_id,
            url: format!("{}/portal#token={token}", self.public_url.trim_end_matches('/')),
            expires_at: crate::time::format_millis(link.expires_ms),
        })
    }

    /// Exchanges a link's token, once, for a session (`address`: the client's, for the
    /// exchange limit).
    pub(crate) async fn exchange(&self, token: &str, address: &str) -> Result<Opened, ExchangeRefused> {
        let (links, sessions) = (&self.links, &self.sessions);
        if sessions.portal_exchange(address).await? > EXCHANGES_PER_MINUTE {
            return Err(ExchangeRefused::Throttled);
        }
        // A token of another shape names no link (and is not looked up).
        if !token.starts_with("wpt_") || token.len() > 100 {
            return Err(ExchangeRefused::Expired(None));
        }
        let link = match links.take_portal_link(&secrets::hash(token), crate::time::now_millis()).await? {
            Taken::Fresh(link) => link,
            Taken::Used(link) | Taken::Expired(link) => {
                tracing::info!(portal_link = %link.portal.link_id, org_id = %link.org_id, "portal link refused: used or expired");
                return Err(ExchangeRefused::Expired(Some(link.portal)));
            }
            Taken::Unknown => return Err(ExchangeRefused::Expired(None)),
        };
        let session = secrets::generate("wps_");
        let csrf = secrets::generate("");
        if !sessions.create_portal_session(&secrets::hash(&session), (&link, &csrf), IDLE).await? {
            tracing::info!(portal_link = %link.portal.link_id, org_id = %link.org_id, "portal link refused: its sessions were ended or its client revoked");
            return Err(ExchangeRefused::Expired(Some(link.portal)));
        }
        tracing::info!(portal_link = %link.portal.link_id, org_id = %link.org_id, manage = link.manage, "portal link opened");
        Ok(Opened { token: session, portal: link.portal })
    }

    /// Ends every portal session of the organisation and voids its unused links; how many
    /// sessions there were.
    pub(crate) async fn end_sessions(&self, org_id: &str) -> Result<usize, StoreError> {
        let ended = self.sessions.end_portal_sessions(org_id).await?;
        tracing::info!(org_id, ended, "portal sessions ended");
        Ok(ended)
    }
}

/// A link request that cannot be served.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LinkError {
    #[error("invalid request")]
    Invalid(Invalid),
    /// The organisation holds as many unused links as it may: the next frees in this long.
    #[error(
        "the organisation holds {} unused portal links, the most it may: open or let some expire first",
        crate::store::tenants::portal::MAX_UNUSED_LINKS
    )]
    TooMany(Duration),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for LinkError {
    fn from(invalid: Invalid) -> LinkError {
        LinkError::Invalid(invalid)
    }
}

/// What a link request asks for, checked.
struct Asked {
    manage: bool,
    ttl: Duration,
    ancestors: Vec<String>,
    accent: Option<String>,
    look: PortalLook,
}

impl Asked {
    fn read(body: Map<String, Value>) -> Result<Asked, Invalid> {
        let mut fields = Fields::new(body);
        let manage = match fields.string("permissions").as_deref() {
            None | Some("manage") => true,
            Some("view") => false,
            Some(_) => {
                fields.error("permissions", "must be \"manage\" or \"view\"");
                true
            }
        };
        let ttl = match fields.value("ttl_seconds") {
            None => TTL.2,
            Some(Value::Number(n)) if n.as_u64().is_some_and(|s| (TTL.0..=TTL.1).contains(&s)) => {
                n.as_u64().unwrap_or(TTL.2)
            }
            Some(_) => {
                fields.error("ttl_seconds", format!("must be a whole number of seconds from {} to {}", TTL.0, TTL.1));
                TTL.2
            }
        };
        let mut ancestors = Vec::new();
        if let Some(list) = fields.string_array("frame_ancestors", false) {
            if list.len() > MAX_ANCESTORS {
                fields.error("frame_ancestors", format!("at most {MAX_ANCESTORS} origins"));
            }
            for (i, origin) in list.iter().enumerate() {
                match origin_of(origin) {
                    Some(origin) => ancestors.push(origin),
                    None => fields.error(
                        format!("frame_ancestors[{i}]"),
                        "must be an origin: http(s)://host[:port] (a port from 1 to 65535), no path; a host may start with *. over a name below a public suffix (*.example.com, not *.com or *.co.uk)",
                    ),
                }
            }
        }
        let accent = fields.string("accent_color");
        if accent.as_deref().is_some_and(|a| !is_colour(a)) {
            fields.error("accent_color", "must be a colour #RRGGBB");
        }
        let look = super::portal_look::read(&mut fields);
        fields.finish()?;
        let accent = accent.map(|a| a.to_ascii_lowercase());
        Ok(Asked { manage, ttl: Duration::from_secs(ttl), ancestors, accent, look })
    }
}

/// An origin as `frame-ancestors` takes it (`scheme://host[:port]`, lower case), or `None`
/// when `text` is not one. Nothing but letters, digits, `.`, `-`, `:`, `[]` and a leading
/// `*.` gets through: a link's list goes into a header.
pub(crate) fn origin_of(text: &str) -> Option<String> {
    let text = text.strip_suffix('/').unwrap_or(text).to_ascii_lowercase();
    let (scheme, rest) = text.split_once("://")?;
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let (host, port) = match rest.strip_prefix('[').and_then(|r| r.find(']')) {
        // [v6]:port
        Some(end) => {
            let (host, after) = rest.split_at(end + 2);
            match after {
                "" => (host, None),
                _ => (host, Some(after.strip_prefix(':')?)),
            }
        }
        None => match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        },
    };
    // A port from 1 to 65535, written without leading zeros.
    if port.is_some_and(|p| p.starts_with('0') || p.parse::<u16>().is_err()) {
        return None;
    }
    let wildcard = host.strip_prefix("*.");
    let bare = wildcard.unwrap_or(host);
    // A wildcard only over a name below a public suffix: `*.example.com`, not `*.com`,
    // `*.co.uk` or `*.github.io`, whose names anyone may register.
    if wildcard.is_some() && crate::netguard::suffixes::is_public_suffix(bare) {
        return None;
    }
    let valid = if let Some(v6) = bare.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        !host.starts_with("*.") && !v6.is_empty() && v6.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
    } else {
        !bare.is_empty()
            && bare.len() <= 253
            && bare.split('.').all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    valid.then(|| format!("{scheme}://{host}{}", port.map(|p| format!(":{p}")).unwrap_or_default()))
}

/// `#RRGGBB`.
fn is_colour(text: &str) -> bool {
    text.len() == 7 && text.starts_with('#') && text[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        assert_eq!(origin_of("https://App.Example.com").as_deref(), Some("https://app.example.com"));
        assert_eq!(origin_of("https://app.example.com/").as_deref(), Some("https://app.example.com"));
        assert_eq!(origin_of("http://127.0.0.2:8080").as_deref(), Some("http://127.0.0.2:8080"));
        assert_eq!(origin_of("https://*.example.com").as_deref(), Some("https://*.example.com"));
        assert_eq!(origin_of("http://[::1]:3000").as_deref(), Some("http://[::1]:3000"));
        assert_eq!(origin_of("http://[::1]").as_deref(), Some("http://[::1]"));
        assert_eq!(origin_of("https://a.example:65535").as_deref(), Some("https://a.example:65535"));
        assert_eq!(origin_of("https://a.example:1").as_deref(), Some("https://a.example:1"));
        assert_eq!(origin_of("https://*.example.co.uk").as_deref(), Some("https://*.example.co.uk"));
        for bad in [
            "example.com",
            "ftp://example.com",
            "https://example.com/path",
            "https://example.com; script-src *",
            "https://exa mple.com",
            "https://user@example.com",
            "https://example.com:99999x",
            "https://example.com:0",
            "https://example.com:99999",
            "https://example.com:65536",
            "https://example.com:08080",
            "https://*.com",
            "https://*.co.uk",
            "https://*.github.io",
            "https://*.localhost",
            "https://",
            "https://a..b",
            "'self'",
            "*",
        ] {
            assert_eq!(origin_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_link_request_is_read_field_by_field() {
        let read = |v: Value| Asked::read(v.as_object().cloned().unwrap_or_default());
        let asked = read(serde_json::json!({})).unwrap();
        assert!(asked.manage);
        assert_eq!(asked.ttl, Duration::from_secs(300));
        assert!(asked.ancestors.is_empty() && asked.accent.is_none());
        let asked = read(serde_json::json!({"permissions": "view", "ttl_seconds": 60,
            "frame_ancestors": ["https://a.example"], "accent_color": "#A1B2C3"}))
        .unwrap();
        assert!(!asked.manage);
        assert_eq!(asked.ancestors, ["https://a.example"]);
        assert_eq!(asked.accent.as_deref(), Some("#a1b2c3"));
        let refused = read(serde_json::json!({"permissions": "all", "ttl_seconds": 901,
            "frame_ancestors": ["https://ok.example", "javascript:x"], "accent_color": "red", "other": 1}))
        .err()
        .unwrap();
        let fields: Vec<&str> = refused.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["permissions", "ttl_seconds", "frame_ancestors[1]", "accent_color", "other"]);
        assert!(read(serde_json::json!({"ttl_seconds": 59})).is_err());
        assert!(read(serde_json::json!({"ttl_seconds": 300.5})).is_err());
    }
}
