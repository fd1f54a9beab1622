//! Apache Kafka (`kafka`): each delivery one record on the webhook's topic — its value the
//! delivery body, its headers the ones an HTTP subscriber would receive, its key the event's
//! subject id (`"key": "subject"`, the default: one record's events stay on one partition, in
//! order), the event's id, or none — produced with `acks=all` by an idempotent producer; the
//! attempt succeeds when the broker has written it, and records `partition P offset O`.
//! SASL PLAIN or SCRAM (the password sealed) and TLS (the system's roots and
//! `WEIR_EXTRA_CA`) as the destination says.
//!
//! Weir speaks the protocol itself (`wire`, `sasl`, `producer`; the messages' encoding is the
//! `kafka-protocol` crate's), so that every connection — to a bootstrap server and to every
//! broker the cluster's metadata names — goes to an address the public-address rule vetted.
//! One producer per cluster and credentials, shared by the webhooks that name them and closed
//! after `pool::IDLE` unused.

mod producer;
mod record;
mod sasl;
mod wire;

use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::producer::{Cluster, Producer, Written};
use self::record::Outgoing;
use self::sasl::{Login, Mechanism};
use super::broker_url::MAX_CREDENTIAL;
use super::kind::{Credentials, Host, Kind, Parsed, SenderParts, To};
use super::message::{Answer, KeySource, Message, SendError, open_credentials};
use super::pool::{IdlePool, key_of};
use crate::kinds::{Field, Read, Refusal, Rule, Secret, Table};
use crate::netguard::UrlRule;

/// Kafka's usual port.
const PORT: u16 = 9092;
/// Most bootstrap servers named.
const MAX_SERVERS: usize = 16;
/// Kafka's limit on a topic's name.
const MAX_TOPIC: usize = 249;

/// The kind.
#[derive(Debug)]
pub(crate) struct Kafka;

/// What a record's key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RecordKey {
    /// The event's subject id.
    Subject,
    /// The event's id.
    Event,
    /// No key (the producer spreads records over the partitions in turn).
    None,
}

/// A destination's SASL sign-in, as shown (the password apart, sealed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SaslSpec {
    pub mechanism: Mechanism,
    pub username: String,
}

/// A Kafka destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KafkaSpec {
    /// `host:port[,host:port…]`, each with its port.
    pub bootstrap_servers: String,
    pub topic: String,
    pub key: RecordKey,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sasl: Option<SaslSpec>,
    #[serde(default)]
    pub tls: bool,
}

const SASL: &[Field] = &[
    Field::new("mechanism", "SASL mechanism", Rule::Choice { values: &["plain", "scram-sha-256", "scram-sha-512"] })
        .required()
        .example("scram-sha-512"),
    Field::new("username", "SASL user name", Rule::Text { max: MAX_CREDENTIAL, empty: false })
        .required()
        .example("weir"),
    Field::new("password", "SASL password", Rule::Text { max: MAX_CREDENTIAL, empty: false })
        .required()
        .secret(Secret::Whole)
        .help("Sealed, never shown again."),
];

impl Kind for Kafka {
    type Spec = KafkaSpec;
    type Sender = Sender;

    const TABLE: Table = Table {
        label: "an Apache Kafka topic",
        help: "Each delivery is one record with the headers an HTTP endpoint gets, keyed by the event's subject; it succeeds when every in-sync replica has it (acks=all, an idempotent producer). Optional `sasl`: {\"mechanism\": \"plain\" | \"scram-sha-256\" | \"scram-sha-512\", \"username\", \"password\"} (the password sealed).",
        fields: &[
            Field::new("bootstrap_servers", "Bootstrap servers", Rule::Text { max: 2048, empty: false })
                .required()
                .example("kafka-1.example.com:9092,kafka-2.example.com:9092")
                .help("host:port, comma-separated (port 9092 unless given). Every broker the cluster names must have a public address."),
            Field::new("topic", "Topic", Rule::Text { max: MAX_TOPIC, empty: false })
                .required()
                .example("orders")
                .help("Letters, digits, '.', '_' and '-'; it must exist."),
            Field::new("key", "Record key", Rule::Choice { values: &["subject", "event", "none"] })
                .example("subject")
                .help("subject (the default: a record's events stay on one partition, in order), event (the event's id) or none."),
            Field::new("sasl", "SASL", Rule::Object { fields: SASL })
                .help("Sign in with SASL: a mechanism, a user name and a password (sealed, never shown again). None: no sign-in."),
            Field::new("tls", "TLS", Rule::Flag).help("Connect over TLS (the system's roots and the server's extra CA)."),
        ],
    };
    const SYSTEM: &'static str = "kafka";

    fn parse(read: &Read<'_>) -> Result<Parsed<KafkaSpec>, Refusal> {
        let servers = servers(read.text("bootstrap_servers").unwrap_or_default())
            .map_err(|why| read.refuse("bootstrap_servers", why))?;
        let topic = read.text("topic").unwrap_or_default();
        if !topic.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) || matches!(topic, "." | "..") {
            return Err(read.refuse("topic", "must be letters, digits, '.', '_' or '-' (not . or ..)"));
        }
        let key = match read.choice(&Kafka::TABLE.fields[2]) {
            "event" => RecordKey::Event,
            "none" => RecordKey::None,
            _ => RecordKey::Subject,
        };
        let (sasl, credentials) = match read.object("sasl") {
            None => (None, None),
            Some(sasl) => {
                let mechanism = Mechanism::read(sasl.choice(&SASL[0])).unwrap_or(Mechanism::Plain);
                let (username, password) = (sasl.text("username").unwrap_or_default(), sasl.text("password"));
                for (name, value) in [("username", Some(username)), ("password", password)] {
                    if value.is_some_and(|v| v.chars().any(char::is_control)) {
                        return Err(sasl.refuse(name, "must be without control characters"));
                    }
                }
                let credentials = Credentials::default().with("password", password.map(str::to_owned));
                (Some(SaslSpec { mechanism, username: username.to_owned() }), Some(credentials))
            }
        };
        let bootstrap_servers = servers.iter().map(|(h, p)| format!("{h}:{p}")).collect::<Vec<_>>().join(",");
        let spec = KafkaSpec { bootstrap_servers, topic: topic.to_owned(), key, sasl, tls: read.flag("tls") };
        Ok(Parsed { spec, credentials })
    }

    fn address(spec: &KafkaSpec) -> &str {
        &spec.bootstrap_servers
    }

    fn target(spec: &KafkaSpec) -> &str {
        &spec.topic
    }

    fn host(spec: &KafkaSpec) -> Host {
        Kafka::hosts(spec).into_iter().next().unwrap_or(Host { name: String::new(), port: PORT, field: FIELD })
    }

    fn hosts(spec: &KafkaSpec) -> Vec<Host> {
        let servers = servers(&spec.bootstrap_servers).unwrap_or_default();
        servers.into_iter().map(|(name, port)| Host { name, port, field: FIELD }).collect()
    }

    fn sender(parts: &SenderParts) -> Sender {
        Sender {
            rule: parts.rule.clone(),
            secret: parts.secret.clone(),
            tls: parts.tls.clone(),
            pool: IdlePool::default(),
        }
    }

    async fn send<'a>(sender: &'a Sender, to: To<'a, KafkaSpec>, message: Message<'a>) -> Result<Answer, SendError> {
        let producer = sender.producer(to)?;
        let record = Outgoing {
            topic: &to.spec.topic,
            key: record_key(to.spec.key, &message.body),
            value: message.body.clone(),
            headers: message.headers,
        };
        let Written { partition, offset, duplicate } = producer.produce(record).await?;
        let duplicate = if duplicate { " (a duplicate: the broker had it)" } else { "" };
        Ok(Answer::ack(format!("partition {partition} offset {offset}{duplicate}")))
    }
}

/// The field a refusal of the servers names.
const FIELD: &str = "destination.bootstrap_servers";

/// `host:port[,host:port…]` read: each host with its port (9092 when none is written).
fn servers(text: &str) -> Result<Vec<(String, u16)>, String> {
    let form = "must be host:port, comma-separated";
    let mut out = Vec::new();
    for server in text.split(',').map(str::trim) {
        if server.is_empty() || server.contains(['/', '@', ' ']) || server.chars().any(char::is_control) {
            return Err(form.to_owned());
        }
        let url = url::Url::parse(&format!("kafka://{server}")).map_err(|_| form.to_owned())?;
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| form.to_owned())?;
        if url.port() == Some(0) {
            return Err("each port must be from 1 to 65535".to_owned());
        }
        out.push((host.to_owned(), url.port().unwrap_or(PORT)));
    }
    if out.len() > MAX_SERVERS {
        return Err(format!("must name at most {MAX_SERVERS} servers"));
    }
    Ok(out)
}

/// A record's key: the envelope's subject id or event id (none for a body without it).
fn record_key(key: RecordKey, body: &Bytes) -> Option<Bytes> {
    let field = match key {
        RecordKey::None => return None,
        RecordKey::Subject => "/subject/id",
        RecordKey::Event => "/id",
    };
    let body: Value = serde_json::from_slice(body).ok()?;
    let named = body.pointer(field)?.as_str().filter(|k| !k.is_empty())?;
    Some(Bytes::copy_from_slice(named.as_bytes()))
}

/// The Kafka producers of a process.
#[derive(Clone)]
pub(crate) struct Sender {
    rule: UrlRule,
    secret: KeySource,
    tls: Arc<rustls::ClientConfig>,
    pool: IdlePool<Arc<Producer>>,
}

impl Sender {
    /// The pooled producer of `to`'s cluster and credentials, made when there is none.
    fn producer(&self, to: To<'_, KafkaSpec>) -> Result<Arc<Producer>, SendError> {
        let spec = to.spec;
        let sasl = spec.sasl.as_ref().map(|s| format!("{:?} {}", s.mechanism, s.username)).unwrap_or_default();
        let key = key_of(&format!("{} tls={} {sasl}", spec.bootstrap_servers, spec.tls), to.sealed);
        if let Some(producer) = self.pool.get(&key, |_| true) {
            return Ok(producer);
        }
        let login = match &spec.sasl {
            None => None,
            Some(sasl) => {
                let credentials = match to.sealed {
                    Some(sealed) => open_credentials(&self.secret, sealed)?,
                    None => Credentials::default(),
                };
                let password = credentials.get("password").unwrap_or_default().to_owned();
                Some(Login { mechanism: sasl.mechanism, username: sasl.username.clone(), password })
            }
        };
        let cluster = Cluster {
            bootstrap: servers(&spec.bootstrap_servers).unwrap_or_default(),
            tls: spec.tls.then(|| self.tls.clone()),
            login,
            rule: self.rule.clone(),
        };
        Ok(self.pool.put(key, Arc::new(Producer::new(cluster))))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::destinations::{Spec, parse};

    fn field(v: Value) -> String {
        parse(&v).unwrap_err().field
    }

    #[test]
    fn a_kafka_destination_reads_its_servers_key_and_sasl_the_password_apart() {
        let parsed = parse(&json!({"type": "kafka", "bootstrap_servers": "b1.example.com, b2.example.com:9093",
            "topic": "orders", "sasl": {"mechanism": "scram-sha-512", "username": "weir", "password": "pw"},
            "tls": true}))
        .unwrap()
        .unwrap();
        let Spec::Kafka(spec) = &parsed.spec else { panic!("{:?}", parsed.spec) };
        assert_eq!(spec.bootstrap_servers, "b1.example.com:9092,b2.example.com:9093");
        assert_eq!((spec.key, spec.tls), (RecordKey::Subject, true), "subject by default");
        assert_eq!(spec.sasl, Some(SaslSpec { mechanism: Mechanism::ScramSha512, username: "weir".into() }));
        assert_eq!(parsed.credentials.unwrap().get("password"), Some("pw"));
        let shown = serde_json::to_value(&parsed.spec).unwrap();
        assert_eq!(shown["sasl"], json!({"mechanism": "scram-sha-512", "username": "weir"}), "no password shown");
        let hosts = Kafka::hosts(spec);
        assert_eq!(
            hosts.iter().map(|h| (h.name.as_str(), h.port)).collect::<Vec<_>>(),
            [("b1.example.com", 9092), ("b2.example.com", 9093)]
        );
        let plain = parse(&json!({"type": "kafka", "bootstrap_servers": "[::1]:9092", "topic": "t", "key": "none"}))
            .unwrap()
            .unwrap();
        let Spec::Kafka(plain) = &plain.spec else { panic!() };
        assert_eq!((plain.key, plain.tls, plain.sasl.is_none()), (RecordKey::None, false, true));
    }

    #[test]
    fn a_malformed_kafka_destination_names_its_field() {
        let base = json!({"type": "kafka", "bootstrap_servers": "b:9092", "topic": "t"});
        let with = |name: &str, value: Value| {
            let mut v = base.clone();
            v[name] = value;
            field(v)
        };
        for servers in ["", "b:0", "b:70000", "b/x", "u@b", "a,,b", "kafka://b"] {
            assert_eq!(with("bootstrap_servers", json!(servers)), "destination.bootstrap_servers", "{servers}");
        }
        let many = (0..17).map(|i| format!("b{i}:9092")).collect::<Vec<_>>().join(",");
        assert_eq!(with("bootstrap_servers", json!(many)), "destination.bootstrap_servers");
        assert_eq!(with("topic", json!("a topic")), "destination.topic");
        assert_eq!(with("topic", json!("..")), "destination.topic");
        assert_eq!(with("topic", json!("t".repeat(250))), "destination.topic");
        assert_eq!(with("key", json!("random")), "destination.key");
        assert_eq!(with("tls", json!("yes")), "destination.tls");
        assert_eq!(with("sasl", json!("plain")), "destination.sasl");
        assert_eq!(
            with("sasl", json!({"mechanism": "gssapi", "username": "u", "password": "p"})),
            "destination.sasl.mechanism"
        );
        assert_eq!(with("sasl", json!({"mechanism": "plain", "username": "u"})), "destination.sasl.password");
        assert_eq!(
            with("sasl", json!({"mechanism": "plain", "username": "u\n", "password": "p"})),
            "destination.sasl.username"
        );
        let long = "p".repeat(MAX_CREDENTIAL + 1);
        assert_eq!(
            with("sasl", json!({"mechanism": "plain", "username": "u", "password": long})),
            "destination.sasl.password"
        );
        assert_eq!(
            with("sasl", json!({"mechanism": "plain", "username": "u", "password": "p", "x": 1})),
            "destination.sasl.x"
        );
    }

    #[test]
    fn a_records_key_is_its_subject_or_its_event_or_none() {
        let envelope = Bytes::from_static(br#"{"id":"evt_1","subject":{"type":"WorkOrder","id":"wo_7"}}"#);
        assert_eq!(record_key(RecordKey::Subject, &envelope).as_deref(), Some(&b"wo_7"[..]));
        assert_eq!(record_key(RecordKey::Event, &envelope).as_deref(), Some(&b"evt_1"[..]));
        assert_eq!(record_key(RecordKey::None, &envelope), None);
        assert_eq!(record_key(RecordKey::Subject, &Bytes::from_static(b"text from a plugin")), None);
    }
}
