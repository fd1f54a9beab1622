//! A destination's spec (what the API takes and shows, no credentials) and its credentials.

use serde::{Deserialize, Serialize};
use url::Url;

/// NATS's default port.
pub(super) const NATS_PORT: u16 = 4222;
/// AMQP's default port.
pub(super) const AMQP_PORT: u16 = 5672;
/// AMQP over TLS (`amqps`).
pub(super) const AMQPS_PORT: u16 = 5671;

/// A destination other than HTTP, without its credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Spec {
    /// NATS JetStream: publish to `subject` on the server at `url` (`nats://host:port`), the
    /// attempt succeeding on the stream's acknowledgement.
    Nats { url: String, subject: String },
    /// AMQP 0-9-1: a persistent, mandatory message to `exchange` (`""`: the default
    /// exchange) with `routing_key`, on the broker and virtual host at `url`
    /// (`amqp://host:port/vhost`), the attempt succeeding when the broker confirms it.
    Amqp { url: String, exchange: String, routing_key: String },
    /// Amazon SQS `SendMessage` to `queue_url` (a FIFO queue: the subject id as message group,
    /// the delivery id as deduplication id).
    Sqs {
        queue_url: String,
        region: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint_url: Option<String>,
    },
    /// Amazon SNS `Publish` to `topic_arn` (FIFO topics as FIFO queues).
    Sns {
        topic_arn: String,
        region: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint_url: Option<String>,
    },
    /// Amazon EventBridge `PutEvents` to `event_bus_name`: `Detail` the body, `DetailType`
    /// the action, `Source` as given.
    #[serde(rename = "eventbridge")]
    EventBridge {
        event_bus_name: String,
        source: String,
        region: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint_url: Option<String>,
    },
}

/// What a destination signs in with; sealed at rest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// AWS: the access key's id and secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_key_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_access_key: Option<String>,
}

impl Credentials {
    pub(super) fn is_empty(&self) -> bool {
        self.user.is_none() && self.password.is_none() && self.access_key_id.is_none()
    }
}

/// What a webhook's sealed destination credentials are bound to.
pub fn credentials_context(org_id: &str, webhook_id: &str) -> String {
    format!("destination {org_id} {webhook_id}")
}

/// A `destination` as sent: its spec and its credentials (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub spec: Spec,
    pub credentials: Option<Credentials>,
}

/// A refused `destination`: the field (`destination.url`…) and why.
pub type Refusal = (String, String);

impl Spec {
    /// The kind, as `type` names it and metrics label it.
    pub fn kind(&self) -> &'static str {
        match self {
            Spec::Nats { .. } => "nats",
            Spec::Amqp { .. } => "amqp",
            Spec::Sqs { .. } => "sqs",
            Spec::Sns { .. } => "sns",
            Spec::EventBridge { .. } => "eventbridge",
        }
    }

    /// The address the webhook's `url` shows (no credentials).
    pub fn address(&self) -> &str {
        match self {
            Spec::Nats { url, .. } | Spec::Amqp { url, .. } => url,
            Spec::Sqs { queue_url, .. } => queue_url,
            Spec::Sns { topic_arn, .. } => topic_arn,
            Spec::EventBridge { event_bus_name, .. } => event_bus_name,
        }
    }

    /// Where it is sent to inside the broker (spans' `messaging.destination.name`).
    pub fn target(&self) -> &str {
        match self {
            Spec::Nats { subject, .. } => subject,
            Spec::Amqp { exchange, .. } => exchange,
            Spec::Sqs { .. } | Spec::Sns { .. } | Spec::EventBridge { .. } => self.address(),
        }
    }

    /// The broker's host and port (checked by the public-address rule before each connection).
    pub fn host_port(&self) -> (String, u16) {
        match self {
            Spec::Nats { url, .. } | Spec::Amqp { url, .. } => {
                let default = match self {
                    Spec::Nats { .. } => NATS_PORT,
                    _ if url.starts_with("amqps:") => AMQPS_PORT,
                    _ => AMQP_PORT,
                };
                Url::parse(url)
                    .ok()
                    .map(|u| (u.host_str().unwrap_or_default().to_owned(), u.port().unwrap_or(default)))
                    .unwrap_or_default()
            }
            Spec::Sqs { .. } | Spec::Sns { .. } | Spec::EventBridge { .. } => Url::parse(&self.aws_endpoint())
                .ok()
                .map(|u| (u.host_str().unwrap_or_default().to_owned(), u.port_or_known_default().unwrap_or(443)))
                .unwrap_or_default(),
        }
    }

    /// The field that names the host [`Spec::host_port`] reads: `destination.url` for a
    /// broker, `destination.endpoint_url` or (the region's endpoint) `destination.region`
    /// for AWS.
    pub fn host_field(&self) -> &'static str {
        match self {
            Spec::Nats { .. } | Spec::Amqp { .. } => "destination.url",
            Spec::Sqs { endpoint_url: Some(_), .. }
            | Spec::Sns { endpoint_url: Some(_), .. }
            | Spec::EventBridge { endpoint_url: Some(_), .. } => "destination.endpoint_url",
            Spec::Sqs { .. } | Spec::Sns { .. } | Spec::EventBridge { .. } => "destination.region",
        }
    }

    /// An AWS destination's service endpoint: `endpoint_url`, else the region's.
    pub fn aws_endpoint(&self) -> String {
        let (service, region, endpoint) = match self {
            Spec::Sqs { region, endpoint_url, .. } => ("sqs", region, endpoint_url),
            Spec::Sns { region, endpoint_url, .. } => ("sns", region, endpoint_url),
            Spec::EventBridge { region, endpoint_url, .. } => ("events", region, endpoint_url),
            Spec::Nats { .. } | Spec::Amqp { .. } => return String::new(),
        };
        endpoint.clone().unwrap_or_else(|| format!("https://{service}.{region}.amazonaws.com"))
    }
}
