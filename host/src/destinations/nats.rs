//! NATS JetStream (`nats`): each delivery a message on the webhook's subject, its headers the
//! ones an HTTP subscriber would receive, the attempt succeeding when the stream holding the
//! subject acknowledges it (`PubAck`). No stream for the subject, or a stream that refuses,
//! is a failed attempt. `Nats-Msg-Id` is the delivery id, so a retried attempt of a message
//! the stream already holds is dropped by its duplicate window.
//!
//! One connection per server and credentials, shared by every webhook that names them and
//! closed after `pool::IDLE` unused. Before each connection the host is held to the
//! public-address rule and the connection made to the vetted address itself (a DNS answer
//! cannot change between check and connect).

use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::context::PublishErrorKind;
use serde::{Deserialize, Serialize};

use super::broker_url::{BrokerUrl, host_port};
use super::kind::{Host, Kind, Parsed, SenderParts, To};
use super::message::{Answer, KeySource, Message, SendError, open_credentials};
use super::pool::{IdlePool, key_of};
use crate::kinds::{Field, Read, Refusal, Rule, Secret, Table};
use crate::netguard::UrlRule;

/// NATS's default port.
const PORT: u16 = 4222;
/// Longest subject accepted.
const MAX_SUBJECT: usize = 255;
/// Most bytes of a user name and password together: both travel in the `CONNECT` line,
/// which a server refuses past its `max_control_line` (4 KiB by default).
const MAX_CREDENTIALS: usize = 3072;
/// How long a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const FORM: &str = "nats://[user:password@]host:port";

/// The kind.
#[derive(Debug)]
pub(crate) struct Nats;

/// A NATS destination: the server (`nats://host:port`) and the subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NatsSpec {
    pub url: String,
    pub subject: String,
}

impl Kind for Nats {
    type Spec = NatsSpec;
    type Sender = Sender;

    const TABLE: Table = Table {
        label: "a NATS JetStream subject",
        help: "Each delivery is published to the subject with the headers an HTTP endpoint gets; it succeeds when the stream holding the subject acknowledges it (create the stream first).",
        fields: &[
            Field::new("url", "Server", Rule::Url { schemes: &["nats"], max: 8192 })
                .required()
                .secret(Secret::UserInfo)
                .example("nats://user:password@nats.example.com:4222")
                .help("nats://[user:password@]host[:port] (port 4222 unless given); the user and password are sealed and never shown again."),
            Field::new("subject", "Subject", Rule::Text { max: MAX_SUBJECT, empty: false })
                .required()
                .example("orders.created")
                .help("Dot-separated tokens, no wildcards (* or >) or spaces; a stream must hold it."),
        ],
    };
    const SYSTEM: &'static str = "nats";

    fn parse(read: &Read<'_>) -> Result<Parsed<NatsSpec>, Refusal> {
        let (url, subject) = (read.text("url").unwrap_or_default(), read.text("subject").unwrap_or_default());
        let broker = BrokerUrl::read(url, &["nats"], FORM).map_err(|why| read.refuse("url", why))?;
        if !matches!(broker.url.path(), "" | "/") {
            return Err(read.refuse("url", format!("must be nothing but {FORM}")));
        }
        if broker.credential_bytes() > MAX_CREDENTIALS {
            let why = format!(
                "user and password must be at most {MAX_CREDENTIALS} bytes together (NATS sends them in one control line)"
            );
            return Err(read.refuse("url", why));
        }
        subject_rule(subject).map_err(|why| read.refuse("subject", why))?;
        let url = format!("nats://{}:{}", broker.host, broker.url.port().unwrap_or(PORT));
        Ok(Parsed { spec: NatsSpec { url, subject: subject.to_owned() }, credentials: broker.credentials })
    }

    fn address(spec: &NatsSpec) -> &str {
        &spec.url
    }

    fn target(spec: &NatsSpec) -> &str {
        &spec.subject
    }

    fn host(spec: &NatsSpec) -> Host {
        let (name, port) = host_port(&spec.url, PORT);
        Host { name, port, field: "destination.url" }
    }

    fn sender(parts: &SenderParts) -> Sender {
        Sender { rule: parts.rule.clone(), secret: parts.secret.clone(), pool: IdlePool::default() }
    }

    async fn send<'a>(sender: &'a Sender, to: To<'a, NatsSpec>, message: Message<'a>) -> Result<Answer, SendError> {
        sender.send(to, message).await.map(|ack| Answer::ack(ack.text()))
    }
}

/// A subject to publish to: dot-separated tokens, no wildcards, no spaces.
fn subject_rule(subject: &str) -> Result<(), String> {
    if subject.is_empty() || subject.len() > MAX_SUBJECT {
        return Err(format!("must be 1 to {MAX_SUBJECT} characters"));
    }
    for token in subject.split('.') {
        if token.is_empty() {
            return Err("must be tokens separated by single dots".to_owned());
        }
        if token == "*" || token == ">" || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("must not contain wildcards (* or >) or spaces".to_owned());
        }
    }
    Ok(())
}

/// What the stream answered.
#[derive(Debug, Clone)]
struct PubAck {
    stream: String,
    sequence: u64,
    duplicate: bool,
}

impl PubAck {
    /// The answer in words, as an attempt keeps it.
    fn text(&self) -> String {
        let duplicate = if self.duplicate { " (a duplicate: the stream had it)" } else { "" };
        format!("PubAck stream {} seq {}{duplicate}", self.stream, self.sequence)
    }
}

/// The NATS connections of a process.
#[derive(Clone)]
pub(crate) struct Sender {
    rule: UrlRule,
    secret: KeySource,
    pool: IdlePool<jetstream::Context>,
}

impl Sender {
    /// Publishes `message` to `to`'s subject and waits for the stream's acknowledgement.
    async fn send(&self, to: To<'_, NatsSpec>, message: Message<'_>) -> Result<PubAck, SendError> {
        let context = self.context(to).await?;
        let mut headers = async_nats::HeaderMap::new();
        for (name, value) in message.headers {
            headers.insert(name.as_str(), value.as_str());
        }
        if let Some((_, id)) = message.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("webhook-id")) {
            headers.insert("Nats-Msg-Id", id.as_str());
        }
        let subject = to.spec.subject.clone();
        let refused = |e: jetstream::context::PublishError| match e.kind() {
            PublishErrorKind::StreamNotFound => SendError::Refused(format!("no stream holds subject {subject}")),
            PublishErrorKind::TimedOut => SendError::Refused("the stream did not acknowledge in time".to_owned()),
            _ => SendError::Refused(format!("the stream refused the message: {e}")),
        };
        let pending =
            context.publish_with_headers(to.spec.subject.clone(), headers, message.body).await.map_err(refused)?;
        let ack = pending.await.map_err(refused)?;
        Ok(PubAck { stream: ack.stream, sequence: ack.sequence, duplicate: ack.duplicate })
    }

    /// The pooled connection for `to`'s server and credentials, made when there is none
    /// (async-nats reconnects a connection that dropped by itself).
    async fn context(&self, to: To<'_, NatsSpec>) -> Result<jetstream::Context, SendError> {
        let key = key_of(&to.spec.url, to.sealed);
        if let Some(context) = self.pool.get(&key, |_| true) {
            return Ok(context);
        }
        let context = self.connect(to).await?;
        Ok(self.pool.put(key, context))
    }

    async fn connect(&self, to: To<'_, NatsSpec>) -> Result<jetstream::Context, SendError> {
        let Host { name: host, port, .. } = Nats::host(to.spec);
        let addrs = self.rule.vet_host(&host, port).await.map_err(SendError::Blocked)?;
        let mut options = async_nats::ConnectOptions::new()
            .connection_timeout(CONNECT_TIMEOUT)
            .name("weir")
            .ignore_discovered_servers();
        if let Some(sealed) = to.sealed {
            let credentials = open_credentials(&self.secret, sealed)?;
            let (user, password) = (credentials.get("user"), credentials.get("password"));
            options =
                options.user_and_password(user.unwrap_or_default().to_owned(), password.unwrap_or_default().to_owned());
        }
        let servers: Vec<String> = addrs.iter().map(|a| format!("nats://{a}")).collect();
        let client =
            options.connect(servers.as_slice()).await.map_err(|e| SendError::Connect(format!("{host}:{port}: {e}")))?;
        Ok(jetstream::new(client))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::destinations::{Spec, parse};

    fn field(v: Value) -> String {
        parse(&v).unwrap_err().field
    }

    #[test]
    fn a_nats_destination_keeps_its_credentials_apart() {
        let parsed =
            parse(&json!({"type": "nats", "url": "nats://weir:s%40cret@127.0.0.1:4333", "subject": "orders.created"}))
                .unwrap()
                .unwrap();
        let Spec::Nats(spec) = &parsed.spec else { panic!("{:?}", parsed.spec) };
        assert_eq!((spec.url.as_str(), spec.subject.as_str()), ("nats://127.0.0.1:4333", "orders.created"));
        let credentials = parsed.credentials.unwrap();
        assert_eq!((credentials.get("user"), credentials.get("password")), (Some("weir"), Some("s@cret")));
        let plain = parse(&json!({"type": "nats", "url": "nats://broker.internal", "subject": "x"})).unwrap().unwrap();
        assert_eq!(plain.spec.address(), "nats://broker.internal:4222");
        assert_eq!(plain.credentials, None);
        assert_eq!((plain.spec.host().name.as_str(), plain.spec.host().port), ("broker.internal", 4222));
    }

    #[test]
    fn a_malformed_nats_destination_names_its_field() {
        assert_eq!(field(json!({"type": "nats", "subject": "a"})), "destination.url");
        assert_eq!(field(json!({"type": "nats", "url": "http://x", "subject": "a"})), "destination.url");
        assert_eq!(field(json!({"type": "nats", "url": "tls://x", "subject": "q"})), "destination.url");
        assert_eq!(field(json!({"type": "nats", "url": "nats://x/path", "subject": "a"})), "destination.url");
        for subject in ["", "a..b", "orders.*", "orders.>", "a b", ".a"] {
            assert_eq!(field(json!({"type": "nats", "url": "nats://x", "subject": subject})), "destination.subject");
        }
        let stream = json!({"type": "nats", "url": "nats://x", "subject": "a", "stream": "S"});
        assert_eq!(field(stream), "destination.stream");
    }

    #[test]
    fn ports_and_credentials_are_bounded() {
        let nats = |url: String| parse(&json!({"type": "nats", "url": url, "subject": "s"})).map(|_| ());
        assert_eq!(nats("nats://x:1".into()), Ok(()));
        assert_eq!(nats("nats://x:0".into()).unwrap_err().field, "destination.url");
        assert!(nats("nats://x:65536".into()).is_err(), "not a port at all");
        assert_eq!(nats(format!("nats://{}:{}@x", "u".repeat(1500), "p".repeat(1500))), Ok(()));
        assert_eq!(nats(format!("nats://{}@x", "u".repeat(70_000))).unwrap_err().field, "destination.url");
        let together = format!("nats://{}:{}@x", "u".repeat(2000), "p".repeat(2000));
        assert_eq!(nats(together).unwrap_err().field, "destination.url");
        assert_eq!(nats("nats://u%0a:p@x".into()).unwrap_err().field, "destination.url", "no control characters");
    }
}
