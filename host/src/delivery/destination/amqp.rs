//! AMQP 0-9-1 destinations (RabbitMQ): each delivery a persistent, mandatory message to the
//! webhook's exchange and routing key, its headers the ones an HTTP subscriber would receive
//! (as AMQP headers) and its message id the delivery id; the attempt succeeds when the broker
//! confirms it (publisher confirms). A message no queue takes (returned as unroutable) or
//! negatively confirmed is a failed attempt.
//!
//! One connection and confirm channel per broker, virtual host and credentials, shared by the
//! webhooks that name them, made again when the broker closed them and closed after [`IDLE`]
//! unused (`pool`). Before each connection the host is held to the public-address rule and the
//! connection made to the vetted addresses themselves; `amqps` speaks TLS over that connection
//! with the host's name (system roots plus `WEIR_EXTRA_CA`, as for `https`).

use std::sync::Arc;

use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::tcp::{AsyncTcpStream, RustlsConnector};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::uri::{AMQPScheme, AMQPUri};
use lapin::{BasicProperties, Channel, Confirmation, Connection, ConnectionProperties};

use super::message::{KeySource, Message, SendError, open_credentials};
use super::pool::{IdlePool, key_of};
use crate::destinations::Credentials;
use crate::netguard::UrlRule;

/// Where one attempt goes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AmqpTarget<'a> {
    /// `amqp://host:port/vhost`.
    pub url: &'a str,
    /// The destination (its host and port are vetted before each connection).
    pub spec: &'a crate::destinations::Spec,
    pub exchange: &'a str,
    pub routing_key: &'a str,
    /// The credentials, sealed (`crate::vault`), and what they are bound to.
    pub sealed: Option<(&'a str, &'a str)>,
}

/// The broker's confirmation, in words for the attempt's record.
#[derive(Debug, Clone)]
pub(crate) struct Confirmed {
    pub exchange: String,
}

impl Confirmed {
    pub(crate) fn text(&self) -> String {
        let exchange = if self.exchange.is_empty() { "the default exchange" } else { &self.exchange };
        format!("confirmed by the broker ({exchange})")
    }
}

/// The AMQP connections of a process.
#[derive(Clone)]
pub(crate) struct Amqp {
    rule: UrlRule,
    secret: KeySource,
    /// For `amqps`.
    tls: RustlsConnector,
    /// A connection with its confirm channel.
    pool: IdlePool<(Arc<Connection>, Channel)>,
}

impl std::fmt::Debug for Amqp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Amqp").finish_non_exhaustive()
    }
}

impl Amqp {
    pub(crate) fn new(rule: UrlRule, secret: KeySource, tls: Arc<rustls::ClientConfig>) -> Amqp {
        Amqp { rule, secret, tls: RustlsConnector::from(tls), pool: IdlePool::default() }
    }

    /// Publishes `message` and waits for the broker's confirmation.
    pub(crate) async fn send(&self, to: AmqpTarget<'_>, message: Message<'_>) -> Result<Confirmed, SendError> {
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
        let confirm = channel
            .basic_publish(to.exchange.into(), to.routing_key.into(), options, &message.body, properties)
            .await
            .map_err(refused)?;
        match confirm.await.map_err(refused)? {
            Confirmation::Ack(None) => Ok(Confirmed { exchange: to.exchange.to_owned() }),
            Confirmation::Ack(Some(returned)) => Err(SendError::Refused(format!(
                "unroutable: no queue is bound to routing key {} ({} {})",
                to.routing_key, returned.reply_code, returned.reply_text
            ))),
            Confirmation::Nack(_) => Err(SendError::Refused("the broker did not take the message (nack)".to_owned())),
            Confirmation::NotRequested => Err(SendError::Refused("the broker did not confirm the message".to_owned())),
        }
    }

    /// The pooled confirm channel for `to`'s broker, virtual host and credentials, made again
    /// when the broker closed it.
    async fn channel(&self, to: AmqpTarget<'_>) -> Result<Channel, SendError> {
        let key = key_of(to.url, to.sealed);
        let alive = |(connection, channel): &(Arc<Connection>, Channel)| {
            connection.status().connected() && channel.status().connected()
        };
        if let Some((_, channel)) = self.pool.get(&key, alive) {
            return Ok(channel);
        }
        let (connection, channel) = self.connect(to).await?;
        Ok(self.pool.put(key, (Arc::new(connection), channel)).1)
    }

    async fn connect(&self, to: AmqpTarget<'_>) -> Result<(Connection, Channel), SendError> {
        let url = url::Url::parse(to.url).map_err(|_| SendError::Request("the destination's URL is damaged".into()))?;
        let (host, port) = to.spec.host_port();
        let addrs = self.rule.vet_host(&host, port).await.map_err(SendError::Blocked)?;
        let credentials = match to.sealed {
            Some((sealed, context)) => open_credentials(&self.secret, sealed, context)?,
            None => Credentials::default(),
        };
        let encode = |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
        let userinfo = match (&credentials.user, &credentials.password) {
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
