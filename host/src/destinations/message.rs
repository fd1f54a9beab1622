//! What every kind of destination is handed, what it answers, and what it may fail with.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;

use crate::netguard::UrlError;

/// Where a process's secret key comes from (read when a client certificate or a
/// destination's credentials are first used).
pub(crate) type KeySource = std::sync::Arc<dyn Fn() -> Result<crate::config::SecretKey, String> + Send + Sync>;

/// What an attempt sends: the body and the headers a subscriber receives (for a broker,
/// the message's headers or attributes).
#[derive(Debug)]
pub(crate) struct Message<'a> {
    pub headers: &'a [(String, String)],
    pub body: Bytes,
}

/// What a destination answered: an HTTP endpoint its status (and `Retry-After`), a broker
/// an acknowledgement; and what it said, in words for the attempt's record (at most
/// [`super::http::KEPT_RESPONSE_BYTES`] of an HTTP body).
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// The HTTP status; `None` for a broker's acknowledgement.
    pub status: Option<u16>,
    pub said: String,
    /// How long the destination asked to be left alone (`Retry-After`), as it said it.
    pub retry_after: Option<String>,
}

impl Answer {
    /// A broker's acknowledgement, in its words.
    pub(crate) fn ack(said: String) -> Answer {
        Answer { status: None, said, retry_after: None }
    }

    /// The status the retry policy reads: HTTP's own; an acknowledgement reads as 200.
    pub(crate) fn status(&self) -> u16 {
        self.status.unwrap_or(200)
    }

    /// The status code an attempt records (an acknowledgement has none: its words are the
    /// attempt's response).
    pub(crate) fn status_code(&self) -> Option<u16> {
        self.status
    }

    /// Whether the destination took the message.
    pub(crate) fn succeeded(&self) -> bool {
        (200..300).contains(&self.status())
    }

    pub(crate) fn retry_after(&self) -> Option<&str> {
        self.retry_after.as_deref()
    }

    /// What the destination said, as the attempt keeps it.
    pub(crate) fn body(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.said)
    }

    /// Whether it is a broker's acknowledgement (metrics class `ack`).
    pub(crate) fn is_ack(&self) -> bool {
        self.status.is_none()
    }
}

/// Why a message got no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    #[error("blocked by the URL rule: {0}")]
    Blocked(UrlError),
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("TLS handshake failed: {0}")]
    Tls(String),
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("request failed: {0}")]
    Request(String),
    /// The egress proxy failed: not the destination's fault (its message names the proxy).
    #[error("{0}")]
    Proxy(String),
    /// A broker took the connection but not the message (no stream, a negative
    /// acknowledgement, no acknowledgement in time).
    #[error("{0}")]
    Refused(String),
}

/// A destination's credentials, opened from their sealed form (`crate::vault`) with the
/// process's secret key.
pub(crate) fn open_credentials(secret: &KeySource, sealed: Sealed<'_>) -> Result<Credentials, SendError> {
    let unusable = |why: String| SendError::Request(format!("the destination's credentials cannot be used: {why}"));
    let key = secret().map_err(unusable)?;
    let plain = crate::vault::open(&key, sealed.context, sealed.credentials).map_err(|e| unusable(e.to_string()))?;
    serde_json::from_slice(&plain).map_err(|e| unusable(e.to_string()))
}

/// What a destination signs in with, by name (`user`, `password`, `access_key_id`,
/// `secret_access_key`…); sealed at rest, never shown, never in a delivery, log or trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct Credentials(pub BTreeMap<String, String>);

impl Credentials {
    /// The credential called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// With `name` set to `value` (when there is one).
    pub(crate) fn with(mut self, name: &str, value: Option<String>) -> Credentials {
        if let Some(value) = value {
            self.0.insert(name.to_owned(), value);
        }
        self
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Credentials as stored: sealed (`crate::vault`), and what they are bound to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sealed<'a> {
    pub credentials: &'a str,
    pub context: &'a str,
}
