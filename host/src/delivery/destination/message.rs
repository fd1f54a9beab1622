//! What every kind of destination is handed and what it may fail with.

use std::time::Duration;

use bytes::Bytes;

use crate::netguard::UrlError;

/// Where a process's secret key comes from (read when a client certificate or a broker's
/// credentials are first used).
pub(crate) type KeySource = std::sync::Arc<dyn Fn() -> Result<crate::config::SecretKey, String> + Send + Sync>;

/// What an attempt sends: the body and the headers a subscriber receives (for a broker,
/// the message's headers or attributes).
#[derive(Debug)]
pub(crate) struct Message<'a> {
    pub headers: &'a [(String, String)],
    pub body: Bytes,
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
pub(crate) fn open_credentials(
    secret: &KeySource,
    sealed: &str,
    context: &str,
) -> Result<crate::destinations::Credentials, SendError> {
    let unusable = |why: String| SendError::Request(format!("the destination's credentials cannot be used: {why}"));
    let key = secret().map_err(unusable)?;
    let plain = crate::vault::open(&key, context, sealed).map_err(|e| unusable(e.to_string()))?;
    serde_json::from_slice(&plain).map_err(|e| unusable(e.to_string()))
}
