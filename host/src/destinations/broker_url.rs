//! A broker's URL as a destination names it (`nats://user:password@host:port`,
//! `amqp://user:password@host:port/vhost`): its form checked, its port from 1 to 65535, and
//! the credentials of its user-info taken out (bounded, to be sealed apart from the address
//! that is stored and shown).

use url::Url;

use super::kind::Credentials;

/// Longest user name or password of any kind (contract §10).
pub(super) const MAX_CREDENTIAL: usize = 4096;

/// A broker's URL read: the URL, its host, and the credentials its user-info held.
#[derive(Debug)]
pub(super) struct BrokerUrl {
    pub url: Url,
    pub host: String,
    pub credentials: Option<Credentials>,
}

impl BrokerUrl {
    /// Reads `text` as a URL of one of `schemes` (`form`: how one is written, for the
    /// messages).
    pub(super) fn read(text: &str, schemes: &[&str], form: &str) -> Result<BrokerUrl, String> {
        let url = Url::parse(text.trim()).map_err(|_| format!("must be a URL: {form}"))?;
        if !schemes.contains(&url.scheme()) {
            return Err(format!("must be a URL of the form {form}"));
        }
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or("must name a host")?.to_owned();
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!("must be nothing but {form}"));
        }
        if url.port() == Some(0) {
            return Err("must name a port from 1 to 65535".to_owned());
        }
        let user = Some(decoded(url.username())).filter(|u| !u.is_empty());
        let password = url.password().map(decoded);
        for (what, value) in [("user name", &user), ("password", &password)] {
            if value.as_ref().is_some_and(|v| v.len() > MAX_CREDENTIAL || v.chars().any(char::is_control)) {
                return Err(format!("{what} must be at most {MAX_CREDENTIAL} bytes, without control characters"));
            }
        }
        let credentials = Credentials::default().with("user", user).with("password", password);
        Ok(BrokerUrl { url, host, credentials: Some(credentials).filter(|c| !c.is_empty()) })
    }

    /// The bytes of the user name and password together.
    pub(super) fn credential_bytes(&self) -> usize {
        let c = self.credentials.as_ref();
        c.and_then(|c| c.get("user")).map_or(0, str::len) + c.and_then(|c| c.get("password")).map_or(0, str::len)
    }
}

/// A URL's percent-encoded part, decoded.
pub(super) fn decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// A host and port of a stored broker address (`scheme://host:port…`), or `default` for
/// the port when none is written.
pub(super) fn host_port(address: &str, default: u16) -> (String, u16) {
    Url::parse(address)
        .ok()
        .map(|u| (u.host_str().unwrap_or_default().to_owned(), u.port().unwrap_or(default)))
        .unwrap_or_default()
}
