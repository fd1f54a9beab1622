//! AMQP 0-9-1 (`amqp`, RabbitMQ): each delivery a persistent, mandatory message to the
//! webhook's exchange and routing key, its headers the ones an HTTP subscriber would receive
//! (as AMQP headers) and its message id the delivery id; the attempt succeeds when the broker
//! confirms it (publisher confirms). A message no queue takes (returned as unroutable) or
//! negatively confirmed is a failed attempt. Every short string the protocol bounds (the
//! virtual host, user, password, exchange, routing key: 255 bytes) is checked when saved.
//!
//! One connection and confirm channel per broker, virtual host and credentials, shared by the
//! webhooks that name them, made again when the broker closed them and closed after
//! `pool::IDLE` unused. Before each connection the host is held to the public-address rule and
//! the connection made to the vetted addresses themselves; `amqps` speaks TLS over that
//! connection with the host's name (system roots plus `WEIR_EXTRA_CA`, as for `https`).

use std::sync::Arc;

use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::tcp::{AsyncTcpStream, RustlsConnector};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::uri::{AMQPScheme, AMQPUri};
use lapin::{BasicProperties, Channel, Confirmation, Connection, ConnectionProperties};
use serde::{Deserialize, Serialize};

use super::broker_url::{BrokerUrl, decoded, host_port};
use super::kind::{Host, Kind, Parsed, SenderParts, To};
use super::message::{Answer, KeySource, Message, SendError, open_credentials};
use super::pool::{IdlePool, key_of};
use crate::kinds::{Field, Read, Refusal, Rule, Secret, Table};
use crate::netguard::UrlRule;

/// AMQP's default port, and over TLS (`amqps`).
const PORT: u16 = 5672;
const TLS_PORT: u16 = 5671;
/// Longest short string (its length is one byte on the wire).
const MAX_SHORT: usize = 255;

/// The kind.
#[derive(Debug)]
pub(crate) struct Amqp;

/// An AMQP destination: the broker and virtual host (`amqp[s]://host:port/vhost`, the vhost
/// as the URL encodes it), the exchange (`""`: the default exchange) and routing key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AmqpSpec {
    pub url: String,
    pub exchange: String,
    pub routing_key: String,
}

impl Kind for Amqp {
    type Spec = AmqpSpec;
    type Sender = Sender;

    const TABLE: Table = Table {
        label: "an AMQP (RabbitMQ) exchange",
        help: "Each delivery is a persistent message with the headers an HTTP endpoint gets; it succeeds when the broker confirms it, and a message no queue takes is a failed attempt.",
        fields: &[
            Field::new("url", "Server", Rule::Url { schemes: &["amqp", "amqps"], max: 2048 })
                .required()
                .secret(Secret::UserInfo)
                .example("amqps://user:password@rabbit.example.com:5671/vhost")
                .help("amqp[s]://[user:password@]host[:port][/vhost] (5672, amqps 5671 over TLS; the vhost / unless given, a / in it written %2f); the user and password are sealed and never shown again."),
            Field::new("exchange", "Exchange", Rule::Text { max: MAX_SHORT, empty: true })
                .required()
                .example("webhooks")
                .help("The exchange to publish to; empty: the default exchange, which routes to the queue the routing key names."),
            Field::new("routing_key", "Routing key", Rule::Text { max: MAX_SHORT, empty: true })
                .example("work_orders")
                .help("With the default exchange: the queue's name."),
        ],
    };
    const SYSTEM: &'static str = "rabbitmq";

    fn parse(read: &Read<'_>) -> Result<Parsed<AmqpSpec>, Refusal> {
        let exchange = read.text("exchange").unwrap_or_default();
        let routing_key = read.text("routing_key").unwrap_or_default();
        let (url, credentials) =
            amqp_url(read.text("url").unwrap_or_default()).map_err(|why| read.refuse("url", why))?;
        for (name, value) in [("exchange", exchange), ("routing_key", routing_key)] {
            if value.chars().any(char::is_control) {
                return Err(read.refuse(name, "must be without control characters"));
            }
        }
        if exchange.is_empty() && routing_key.is_empty() {
            return Err(read.refuse("routing_key", "is required with the default exchange (it names the queue)"));
        }
        let spec = AmqpSpec { url, exchange: exchange.to_owned(), routing_key: routing_key.to_owned() };
        Ok(Parsed { spec, credentials })
    }

    fn address(spec: &AmqpSpec) -> &str {
        &spec.url
    }

    fn target(spec: &AmqpSpec) -> &str {
        &spec.exchange
    }

    fn host(spec: &AmqpSpec) -> Host {
        let default = if spec.url.starts_with("amqps:") { TLS_PORT } else { PORT };
        let (name, port) = host_port(&spec.url, default);
        Host { name, port, field: "destination.url" }
    }

    fn sender(parts: &SenderParts) -> Sender {
        Sender {
            rule: parts.rule.clone(),
            secret: parts.secret.clone(),
            tls: RustlsConnector::from(parts.tls.clone()),
            pool: IdlePool::default(),
        }
    }

    async fn send<'a>(sender: &'a Sender, to: To<'a, AmqpSpec>, message: Message<'a>) -> Result<Answer, SendError> {
        sender.send(to, message).await
    }
}

/// An AMQP broker's URL: `amqp[s]://host[:port][/vhost]`, credentials taken out; the stored
/// address names the virtual host as the URL encodes it (`/%2f` for `/`, the default).
fn amqp_url(text: &str) -> Result<(String, Option<super::kind::Credentials>), String> {
    let broker = BrokerUrl::read(text, &["amqp", "amqps"], "amqp[s]://[user:password@]host:port/vhost")?;
    let vhost = match broker.url.path() {
        "" | "/" => "%2f",
        path => path.trim_start_matches('/'),
    };
    if vhost.contains('/') {
        return Err("names one virtual host (encode a / in it as %2f)".to_owned());
    }
    if decoded(vhost).len() > MAX_SHORT {
        return Err(format!("its virtual host must be at most {MAX_SHORT} bytes"));
    }
    let credentials = broker.credentials.as_ref();
    for (what, name) in [("user name", "user"), ("password", "password")] {
        if credentials.and_then(|c| c.get(name)).is_some_and(|v| v.len() > MAX_SHORT) {
            return Err(format!("its {what} must be at most {MAX_SHORT} bytes"));
        }
    }
    let (scheme, default_port) = if broker.url.scheme() == "amqps" { ("amqps", TLS_PORT) } else { ("amqp", PORT) };
    let address = format!("{scheme}://{}:{}/{vhost}", broker.host, broker.url.port().unwrap_or(default_port));
    Ok((address, broker.credentials))
}

/// The AMQP connections of a process.
#[derive(Clone)]
pub(crate) struct Sender {
    rule: UrlRule,
    secret: KeySource,
    /// For `amqps`.
    tls: RustlsConnector,
    /// A connection with its confirm channel.
    pool: IdlePool<(Arc<Connection>, Channel)>,
}

impl Sender {
    /// Publishes `message` and waits for the broker's confirmation.
    async fn send(&self, to: To<'_, AmqpSpec>, message: Message<'_>) -> Result<Answer, SendError> {
        let channel = self.channel(to).await?;
        let mut headers = FieldTable::default();
        let mut id = None;
        for (name, value) in message.headers {
            headers.insert(ShortString::from(name.as_str()), AMQPValue::LongString(value.as_str().into()));
            if name.eq_ignore_ascii_case("webhook-id") {
                id = Some(value.as_str());
            }
        }
        let mut properties = BasicProperties::default()
            .with_delivery_mode(2)
            .with_content_type(ShortString::from("application/json"))
            .with_headers(headers);
        if let Some(id) = id {
            properties = properties.with_message_id(ShortString::from(id));
        }
        let options = BasicPublishOptions { mandatory: true, ..BasicPublishOptions::default() };
        let refused = |e: lapin::Error| SendError::Refused(format!("the broker refused the message: {e}"));
        let (exchange, routing_key) = (to.spec.exchange.as_str(), to.spec.routing_key.as_str());
        let confirm = channel
            .basic_publish(exchange.into(), routing_key.into(), options, &message.body, properties)
            .await
            .map_err(refused)?;
        match confirm.await.map_err(refused)? {
            Confirmation::Ack(None) => {
                let exchange = if exchange.is_empty() { "the default exchange" } else { exchange };
                Ok(Answer::ack(format!("confirmed by the broker ({exchange})")))
            }
            Confirmation::Ack(Some(returned)) => Err(SendError::Refused(format!(
                "unroutable: no queue is bound to routing key {routing_key} ({} {})",
                returned.reply_code, returned.reply_text
            ))),
            Confirmation::Nack(_) => Err(SendError::Refused("the broker did not take the message (nack)".to_owned())),
            Confirmation::NotRequested => Err(SendError::Refused("the broker did not confirm the message".to_owned())),
        }
    }

    /// The pooled confirm channel for `to`'s broker, virtual host and credentials, made again
    /// when the broker closed it.
    async fn channel(&self, to: To<'_, AmqpSpec>) -> Result<Channel, SendError> {
        let key = key_of(&to.spec.url, to.sealed);
        let alive = |(connection, channel): &(Arc<Connection>, Channel)| {
            connection.status().connected() && channel.status().connected()
        };
        if let Some((_, channel)) = self.pool.get(&key, alive) {
            return Ok(channel);
        }
        let (connection, channel) = self.connect(to).await?;
        Ok(self.pool.put(key, (Arc::new(connection), channel)).1)
    }

    async fn connect(&self, to: To<'_, AmqpSpec>) -> Result<(Connection, Channel), SendError> {
        let url =
            url::Url::parse(&to.spec.url).map_err(|_| SendError::Request("the destination's URL is damaged".into()))?;
        let Host { name: host, port, .. } = Amqp::host(to.spec);
        let addrs = self.rule.vet_host(&host, port).await.map_err(SendError::Blocked)?;
        let credentials = match to.sealed {
            Some(sealed) => open_credentials(&self.secret, sealed)?,
            None => Default::default(),
        };
        let encode = |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
        let userinfo = match (credentials.get("user"), credentials.get("password")) {
            (Some(user), Some(password)) => format!("{}:{}@", encode(user), encode(password)),
            (Some(user), None) => format!("{}@", encode(user)),
            _ => String::new(),
        };
        // The URI names the broker's host (lapin's connection string and TLS name); the
        // transport below connects only to the addresses vetted for it.
        let uri = format!("{}://{userinfo}{host}:{port}{}", url.scheme(), url.path());
        let failed = |e: lapin::Error| SendError::Connect(format!("{host}:{port}: {e}"));
        let uri: AMQPUri =
            uri.parse().map_err(|e: String| SendError::Request(format!("the destination's URL: {e}")))?;
        let runtime = lapin::runtime::default_runtime().map_err(failed)?;
        let tls = self.tls.clone();
        // TCP to the first vetted address that answers, then TLS with the host's name for
        // `amqps` (lapin calls this again when it reconnects).
        let connect = async move |uri: AMQPUri, runtime| {
            let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
            for addr in &addrs {
                match AsyncTcpStream::connect(&runtime, *addr).await {
                    Ok(stream) if uri.scheme == AMQPScheme::AMQPS => {
                        return Ok(stream.into_rustls(&tls, &uri.authority.host).await?);
                    }
                    Ok(stream) => return Ok(stream),
                    Err(e) => last = e,
                }
            }
            Err(last.into())
        };
        let connection =
            Connection::connector(uri, runtime, connect, ConnectionProperties::default()).await.map_err(failed)?;
        let channel = connection.create_channel().await.map_err(failed)?;
        channel.confirm_select(ConfirmSelectOptions::default()).await.map_err(failed)?;
        Ok((connection, channel))
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
    fn amqp_keeps_its_virtual_host_and_its_credentials_apart() {
        let parsed = parse(&json!({"type": "amqp", "url": "amqp://weir:pw@127.0.0.1:5673/orders", "exchange": "x",
            "routing_key": "k"}))
        .unwrap()
        .unwrap();
        let Spec::Amqp(spec) = &parsed.spec else { panic!("{:?}", parsed.spec) };
        assert_eq!(
            (spec.url.as_str(), spec.exchange.as_str(), spec.routing_key.as_str()),
            ("amqp://127.0.0.1:5673/orders", "x", "k")
        );
        assert_eq!(parsed.credentials.unwrap().get("password"), Some("pw"));
        let default = parse(&json!({"type": "amqp", "url": "amqp://broker", "exchange": "", "routing_key": "jobs"}))
            .unwrap()
            .unwrap();
        assert_eq!(default.spec.address(), "amqp://broker:5672/%2f", "the default virtual host");
        assert_eq!(default.spec.host().port, 5672);
        let tls = parse(&json!({"type": "amqp", "url": "amqps://broker/v", "exchange": "", "routing_key": "jobs"}))
            .unwrap()
            .unwrap();
        assert_eq!(tls.spec.address(), "amqps://broker:5671/v", "TLS, on its own default port");
        assert_eq!(tls.spec.host().port, 5671);
    }

    #[test]
    fn a_malformed_amqp_destination_names_its_field() {
        assert_eq!(field(json!({"type": "amqp", "url": "amqp://x", "exchange": ""})), "destination.routing_key");
        assert_eq!(field(json!({"type": "amqp", "url": "amqp://x", "routing_key": "q"})), "destination.exchange");
        let http = json!({"type": "amqp", "url": "http://x", "exchange": "", "routing_key": "q"});
        assert_eq!(field(http), "destination.url");
        let two = json!({"type": "amqp", "url": "amqp://x/a/b", "exchange": "", "routing_key": "q"});
        assert_eq!(field(two), "destination.url");
        let long = json!({"type": "amqp", "url": "amqp://x", "exchange": "", "routing_key": "q".repeat(256)});
        assert_eq!(field(long), "destination.routing_key");
    }

    #[test]
    fn every_short_string_is_bounded_when_saved() {
        let amqp = |url: String, exchange: &str| {
            parse(&json!({"type": "amqp", "url": url, "exchange": exchange, "routing_key": "q"})).map(|_| ())
        };
        let field = |r: Result<(), crate::kinds::Refusal>| r.unwrap_err().field;
        // Each within its 255 bytes, then one over (the vhost as decoded).
        assert_eq!(amqp(format!("amqp://x/{}", "v".repeat(255)), "x"), Ok(()));
        assert_eq!(field(amqp(format!("amqp://x/{}", "v".repeat(256)), "x")), "destination.url");
        assert_eq!(field(amqp(format!("amqp://x/{}", "%41".repeat(256)), "x")), "destination.url");
        assert_eq!(amqp(format!("amqp://{}:{}@x/v", "u".repeat(255), "p".repeat(255)), "x"), Ok(()));
        assert_eq!(field(amqp(format!("amqp://{}@x/v", "u".repeat(256)), "x")), "destination.url");
        assert_eq!(field(amqp(format!("amqp://u:{}@x/v", "p".repeat(256)), "x")), "destination.url");
        assert_eq!(amqp("amqp://x/v".into(), &"e".repeat(255)), Ok(()));
        assert_eq!(field(amqp("amqp://x/v".into(), &"e".repeat(256))), "destination.exchange");
        assert_eq!(field(amqp("amqp://x:0/v".into(), "x")), "destination.url");
    }
}
