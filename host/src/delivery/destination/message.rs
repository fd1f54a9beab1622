//! What every kind of destination is handed and what it may fail with.

use std::time::Duration;

use bytes::Bytes;

use crate::netguard::UrlError;

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
