//! NATS JetStream destinations: a message published to the webhook's subject, its headers
//! the ones an HTTP subscriber would receive, the attempt succeeding when the stream holding
//! the subject acknowledges it (`PubAck`). No stream for the subject, or a stream that refuses,
//! is a failed attempt. `Nats-Msg-Id` is the delivery id, so a retried attempt of a message
//! the stream already holds is dropped by its duplicate window.
//!
//! One connection per server and credentials, shared by every webhook that names them and
//! closed after [`IDLE`] unused. Before each connection the host is held to the
//! public-address rule and the connection made to the vetted address itself (a DNS answer
//! cannot change between check and connect).

use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::context::PublishErrorKind;

use super::message::{KeySource, Message, SendError, open_credentials};
use super::pool::{IdlePool, key_of};
use crate::netguard::UrlRule;

/// How long a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where one attempt goes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NatsTarget<'a> {
    /// `nats://host:port`.
    pub url: &'a str,
    /// The destination (its host and port are vetted before each connection).
    pub spec: &'a crate::destinations::Spec,
    pub subject: &'a str,
    /// The credentials, sealed (`crate::vault`), and what they are bound to.
    pub sealed: Option<(&'a str, &'a str)>,
}

/// What the stream answered.
#[derive(Debug, Clone)]
pub(crate) struct PubAck {
    pub stream: String,
    pub sequence: u64,
    pub duplicate: bool,
}

impl PubAck {
    /// The answer in words, as an attempt keeps it.
    pub(crate) fn text(&self) -> String {
        let duplicate = if self.duplicate { " (a duplicate: the stream had it)" } else { "" };
        format!("PubAck stream {} seq {}{duplicate}", self.stream, self.sequence)
    }
}

/// The NATS connections of a process.
#[derive(Clone)]
pub(crate) struct Nats {
    rule: UrlRule,
    secret: KeySource,
    pool: IdlePool<jetstream::Context>,
}

impl std::fmt::Debug for Nats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nats").finish_non_exhaustive()
    }
}

impl Nats {
    pub(crate) fn new(rule: UrlRule, secret: KeySource) -> Nats {
        Nats { rule, secret, pool: IdlePool::default() }
    }

    /// Publishes `message` to `to`'s subject and waits for the stream's acknowledgement.
    pub(crate) async fn send(&self, to: NatsTarget<'_>, message: Message<'_>) -> Result<PubAck, SendError> {
        let context = self.context(to).await?;
        let mut headers = async_nats::HeaderMap::new();
        for (name, value) in message.headers {
            headers.insert(name.as_str(), value.as_str());
        }
        if let Some((_, id)) = message.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("webhook-id")) {
            headers.insert("Nats-Msg-Id", id.as_str());
        }
        let subject = to.subject.to_owned();
        let refused = |e: jetstream::context::PublishError| match e.kind() {
            PublishErrorKind::StreamNotFound => SendError::Refused(format!("no stream holds subject {subject}")),
            PublishErrorKind::TimedOut => SendError::Refused("the stream did not acknowledge in time".to_owned()),
            _ => SendError::Refused(format!("the stream refused the message: {e}")),
        };
        let pending =
            context.publish_with_headers(to.subject.to_owned(), headers, message.body).await.map_err(refused)?;
        let ack = pending.await.map_err(refused)?;
        Ok(PubAck { stream: ack.stream, sequence: ack.sequence, duplicate: ack.duplicate })
    }

    /// The pooled connection for `to`'s server and credentials, made when there is none
    /// (async-nats reconnects a connection that dropped by itself).
    async fn context(&self, to: NatsTarget<'_>) -> Result<jetstream::Context, SendError> {
        let key = key_of(to.url, to.sealed);
        if let Some(context) = self.pool.get(&key, |_| true) {
            return Ok(context);
        }
        let context = self.connect(to).await?;
        Ok(self.pool.put(key, context))
    }

    async fn connect(&self, to: NatsTarget<'_>) -> Result<jetstream::Context, SendError> {
        let (host, port) = to.spec.host_port();
        let host = host.as_str();
        let addrs = self.rule.vet_host(host, port).await.map_err(SendError::Blocked)?;
        let mut options = async_nats::ConnectOptions::new()
            .connection_timeout(CONNECT_TIMEOUT)
            .name("weir")
            .ignore_discovered_servers();
        if let Some((sealed, context)) = to.sealed {
            let credentials = open_credentials(&self.secret, sealed, context)?;
            options = options
                .user_and_password(credentials.user.unwrap_or_default(), credentials.password.unwrap_or_default());
        }
        let servers: Vec<String> = addrs.iter().map(|a| format!("nats://{a}")).collect();
        let client =
            options.connect(servers.as_slice()).await.map_err(|e| SendError::Connect(format!("{host}:{port}: {e}")))?;
        Ok(jetstream::new(client))
    }
}
