//! Destinations: where a delivery goes, and how it is sent there. An attempt hands its
//! signed message to [`Destinations::send`] with the webhook's [`Destination`] and gets
//! back what the destination answered ([`Answer`]) or why it did not ([`SendError`]),
//! within the delivery timeout, marked slow past [`Destinations::send`]'s `slow_after`.
//!
//! HTTP (`http`, with `connect`: the URL rule at connect time, the egress proxy, rustls,
//! pooled connections, client certificates), NATS JetStream (`nats`), AMQP 0-9-1 (`amqp`) and
//! AWS's SQS, SNS and EventBridge (`aws`, signed by `sigv4`, sent by the HTTP sender). **A new kind** — a
//! broker — is one file beside `http.rs` that sends a [`Message`] and says what came back,
//! a variant of [`Destination`] (what a webhook names) and of [`Answer`] (what it answered),
//! and its arm in [`Destinations::send`]; the attempt, the retry policy, recording and
//! tracing read the answer through [`Answer`]'s methods and need nothing else.

pub(crate) mod amqp;
pub(crate) mod aws;
mod connect;
pub(crate) mod http;
mod message;
pub(crate) mod nats;
mod pool;
mod sigv4;

use std::time::{Duration, Instant};

use self::amqp::AmqpTarget;
pub(crate) use self::http::Presented;
pub(crate) use self::message::{Message, SendError};
use self::nats::NatsTarget;
use crate::destinations::Spec;
use crate::store::queue::targets::WebhookTarget;

/// Where one attempt goes: the kind and its address.
#[derive(Debug, Clone)]
pub(crate) enum Destination<'a> {
    /// An HTTP endpoint: `POST` to `url`, presenting the webhook's client certificate if
    /// it has one.
    Http { url: &'a str, presented: Option<Presented<'a>> },
    /// A broker (NATS JetStream, AMQP); its credentials sealed, bound to `context`.
    Broker { spec: Spec, sealed: Option<&'a str>, context: String },
    /// A destination whose stored form cannot be read (every attempt fails, saying so).
    Unreadable { address: &'a str, why: String },
}

impl<'a> Destination<'a> {
    /// A webhook's destination (`context`: what its client certificate's key is bound to;
    /// `destination_context`: what its destination's credentials are).
    pub(crate) fn of(webhook: &'a WebhookTarget, context: &'a str, destination_context: String) -> Destination<'a> {
        let Some(target) = &webhook.destination else {
            let presented = webhook.client_certificate.as_ref().map(|certificate| Presented { certificate, context });
            return Destination::Http { url: &webhook.url, presented };
        };
        match serde_json::from_str::<Spec>(&target.spec) {
            Ok(spec) => {
                Destination::Broker { spec, sealed: target.sealed_credentials.as_deref(), context: destination_context }
            }
            Err(e) => Destination::Unreadable { address: &webhook.url, why: e.to_string() },
        }
    }

    /// Its address as spans and logs show it.
    pub(crate) fn address(&self) -> &str {
        match self {
            Destination::Http { url, .. } => url,
            Destination::Broker { spec, .. } => spec.address(),
            Destination::Unreadable { address, .. } => address,
        }
    }

    /// Its kind (`http`, `nats`, `amqp`, `sqs`…), as metrics label it.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Destination::Http { .. } | Destination::Unreadable { .. } => "http",
            Destination::Broker { spec, .. } => spec.kind(),
        }
    }

    /// A broker's `messaging.system` and `messaging.destination.name` (spans); `None` for HTTP.
    pub(crate) fn messaging(&self) -> Option<(&'static str, &str)> {
        let Destination::Broker { spec, .. } = self else { return None };
        let system = match spec {
            Spec::Nats { .. } => "nats",
            Spec::Amqp { .. } => "rabbitmq",
            Spec::Sqs { .. } => "aws_sqs",
            Spec::Sns { .. } => "aws_sns",
            Spec::EventBridge { .. } => "aws_eventbridge",
        };
        Some((system, spec.target()))
    }
}

/// What a destination answered.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    Http(http::Response),
    /// A NATS stream's acknowledgement.
    Nats(nats::PubAck),
    /// An AMQP broker's confirmation.
    Amqp(amqp::Confirmed),
    /// AWS's acceptance (SQS, SNS, EventBridge).
    Aws(aws::Accepted),
}

impl Answer {
    /// The status the retry policy reads: HTTP's own; a broker's acknowledgement reads as 200.
    pub(crate) fn status(&self) -> u16 {
        match self {
            Answer::Http(response) => response.status,
            Answer::Nats(_) | Answer::Amqp(_) | Answer::Aws(_) => 200,
        }
    }

    /// The status code an attempt records (a broker's answer has none: its words are the
    /// attempt's response).
    pub(crate) fn status_code(&self) -> Option<u16> {
        match self {
            Answer::Http(response) => Some(response.status),
            Answer::Nats(_) | Answer::Amqp(_) | Answer::Aws(_) => None,
        }
    }

    /// Whether the destination took the message.
    pub(crate) fn succeeded(&self) -> bool {
        (200..300).contains(&self.status())
    }

    /// How long the destination asked to be left alone (`Retry-After`), as it said it.
    pub(crate) fn retry_after(&self) -> Option<&str> {
        match self {
            Answer::Http(response) => response.retry_after.as_deref(),
            Answer::Nats(_) | Answer::Amqp(_) | Answer::Aws(_) => None,
        }
    }

    /// What the destination said, as the attempt keeps it (at most
    /// [`http::KEPT_RESPONSE_BYTES`]).
    pub(crate) fn body(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Answer::Http(response) => std::borrow::Cow::Borrowed(&response.body),
            Answer::Nats(ack) => std::borrow::Cow::Owned(ack.text()),
            Answer::Amqp(confirmed) => std::borrow::Cow::Owned(confirmed.text()),
            Answer::Aws(accepted) => std::borrow::Cow::Borrowed(&accepted.0),
        }
    }
}

/// The outcome of one attempt's send, with its duration.
#[derive(Debug)]
pub(crate) struct Sent {
    pub result: Result<Answer, SendError>,
    pub duration: Duration,
    /// The destination's kind (metrics).
    pub kind: &'static str,
}

impl Sent {
    /// What the attempt got, as a metrics label: the status class (`2xx`…`5xx`), or why
    /// there was no answer (`timeout`, `connect`, `tls`, `blocked`, `request`, `proxy`).
    pub(crate) fn class(&self) -> &'static str {
        match &self.result {
            Ok(Answer::Nats(_) | Answer::Amqp(_) | Answer::Aws(_)) => "ack",
            Ok(answer) => match answer.status() {
                200..=299 => "2xx",
                300..=399 => "3xx",
                400..=499 => "4xx",
                500..=599 => "5xx",
                _ => "1xx",
            },
            Err(SendError::Timeout(_)) => "timeout",
            Err(SendError::Connect(_)) => "connect",
            Err(SendError::Tls(_)) => "tls",
            Err(SendError::Blocked(_)) => "blocked",
            Err(SendError::Request(_)) => "request",
            Err(SendError::Proxy(_)) => "proxy",
            Err(SendError::Refused(_)) => "refused",
        }
    }
}

/// The senders of every kind, shared by a process's attempts (cloning shares their pools),
/// and the delivery timeout.
#[derive(Debug, Clone)]
pub(crate) struct Destinations {
    http: http::Http,
    nats: nats::Nats,
    amqp: amqp::Amqp,
    aws: aws::Aws,
    timeout: Duration,
}

impl Destinations {
    pub(crate) fn new(
        http: http::Http,
        brokers: (nats::Nats, amqp::Amqp, aws::Aws),
        timeout: Duration,
    ) -> Destinations {
        let (nats, amqp, aws) = brokers;
        Destinations { http, nats, amqp, aws, timeout }
    }

    /// Sends `message` to `to` within the delivery timeout; `slow` is called once when no
    /// answer came within `slow_after`. One timer serves both: it is set for the slow mark,
    /// then moved to the timeout (each timer an attempt registers can wake the runtime's
    /// driver).
    pub(crate) async fn send(
        &self,
        to: &Destination<'_>,
        message: Message<'_>,
        slow_after: Duration,
        slow: impl FnOnce(),
    ) -> Sent {
        let started = Instant::now();
        // The brokers' futures are boxed: inline they made every HTTP attempt's task ~10 KB
        // (3.5 KB boxed), copied into its task at spawn and again as it ends (issue 58).
        let exchange = async {
            match to {
                Destination::Http { url, presented } => {
                    self.http.send(url, *presented, message).await.map(Answer::Http)
                }
                Destination::Broker { spec, sealed, context } => {
                    let sealed = sealed.map(|s| (s, context.as_str()));
                    match spec {
                        Spec::Nats { url, subject } => {
                            let target = NatsTarget { url, spec, subject, sealed };
                            Box::pin(self.nats.send(target, message)).await.map(Answer::Nats)
                        }
                        Spec::Amqp { url, exchange, routing_key } => {
                            let target = AmqpTarget { url, spec, exchange, routing_key, sealed };
                            Box::pin(self.amqp.send(target, message)).await.map(Answer::Amqp)
                        }
                        Spec::Sqs { .. } | Spec::Sns { .. } | Spec::EventBridge { .. } => {
                            Box::pin(self.aws.send(spec, sealed, message)).await.map(Answer::Aws)
                        }
                    }
                }
                Destination::Unreadable { why, .. } => {
                    Err(SendError::Request(format!("the webhook's destination cannot be read: {why}")))
                }
            }
        };
        let timeout = started + self.timeout;
        let mut slow = (slow_after < self.timeout).then_some(slow);
        let timer = tokio::time::sleep_until(if slow.is_some() { started + slow_after } else { timeout }.into());
        tokio::pin!(timer, exchange);
        let result = loop {
            tokio::select! {
                biased;
                result = &mut exchange => break result,
                () = &mut timer => match slow.take() {
                    Some(mark) => {
                        mark();
                        timer.as_mut().reset(timeout.into());
                    }
                    None => break Err(SendError::Timeout(self.timeout)),
                },
            }
        };
        Sent { result, duration: started.elapsed(), kind: to.kind() }
    }
}
