//! Destinations: where a webhook's deliveries go, and how they are sent there (contract §9,
//! §10). A webhook without one delivers to its `url` over HTTP; with one, to a broker or a
//! cloud service. Each kind is one module — its field table, how an object of it is read
//! (every refusal naming its field), its host, its sender — and one line of the registry:
//!
//! - [`kind`]: the [`Kind`](kind::Kind) trait and what kinds share (credentials, a host, what
//!   a sender is handed); `crate::kinds` holds the field tables' language.
//! - the registry (below, one line per kind; its machinery in `registry`): from it the
//!   [`Spec`] enum, [`KINDS`] (the forms and the OpenAPI document read the tables from it) and
//!   each attempt's dispatch ([`Senders`]). **A new kind** is a module implementing
//!   [`Kind`](kind::Kind) and its two lines here: `mod` and its registry line.
//! - `http` (the webhook's `url`; also the sender of every kind that speaks HTTP), `nats`
//!   (JetStream), `amqp` (RabbitMQ), `aws` (`sqs`, `sns`, `eventbridge`, `kinesis`, signed with
//!   Signature Version 4), `kafka` (Weir's own idempotent producer).
//! - `send`: [`Destinations`](send::Destinations) — every kind's sender in one process, one
//!   timeout and one slow mark for all — and what came back; `message`: what a kind is
//!   handed, its [`Answer`](message::Answer), [`SendError`](message::SendError); `pool`:
//!   brokers' idle connections; `broker_url`: a broker's URL read, credentials taken out.
//!
//! A destination is kept in two parts: its [`Spec`] (the kind and the address, no
//! credentials: stored as JSON, shown on read) and its [`Credentials`](kind::Credentials)
//! (sealed by `crate::vault` for the webhook, never shown, never in a delivery, attempt, log
//! or trace). The host of every kind obeys the public-address rule when saved and before
//! every connection.

mod broker_url;
pub(crate) mod http;
pub(crate) mod kind;
pub(crate) mod message;
mod pool;
mod registry;
pub(crate) mod send;

// The kinds: one module each, and one line each in the registry below.
mod amqp;
mod aws;
mod kafka;
mod nats;

registry::registry! {
    Nats = "nats" => nats::Nats,
    Amqp = "amqp" => amqp::Amqp,
    Sqs = "sqs" => aws::Sqs,
    Sns = "sns" => aws::Sns,
    EventBridge = "eventbridge" => aws::EventBridge,
    Kinesis = "kinesis" => aws::Kinesis,
    Kafka = "kafka" => kafka::Kafka,
}

use serde_json::Value;

use crate::kinds::{Refusal, Table};

impl std::fmt::Debug for Senders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Senders").finish_non_exhaustive()
    }
}

/// A destination as read: its spec, its credentials apart.
pub(crate) type Parsed = kind::Parsed<Spec>;

/// Reads a `destination` value: `None` for HTTP (`null`, or `{"type": "http"}`).
pub(crate) fn parse(value: &Value) -> Result<Option<Parsed>, Refusal> {
    let refuse = |field: &str, why: &str| Err(Refusal::new(format!("destination{field}"), why));
    let object = match value {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        _ => return refuse("", "must be an object with a `type`, or null"),
    };
    match object.get("type").and_then(Value::as_str) {
        Some("http") => {
            if object.len() > 1 {
                return refuse("", "an http destination has nothing but its type: the webhook's url says where");
            }
            Ok(None)
        }
        Some(name) => match Spec::read(name, object) {
            Some(read) => read.map(Some),
            None => refuse(".type", &format!("must be {}", names().join(", "))),
        },
        None => refuse(".type", "is required"),
    }
}

/// Every kind's name and table, HTTP's first: what the forms offer and the document shows.
pub(crate) fn tables() -> impl Iterator<Item = (&'static str, &'static Table)> {
    std::iter::once(("http", &http::TABLE)).chain(KINDS.iter().copied())
}

/// Every kind's name, HTTP's first.
pub(crate) fn names() -> Vec<&'static str> {
    tables().map(|(name, _)| name).collect()
}

/// What a webhook's sealed destination credentials are bound to.
pub(crate) fn credentials_context(org_id: &str, webhook_id: &str) -> String {
    format!("destination {org_id} {webhook_id}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn http_is_no_destination_and_anything_else_names_its_field() {
        assert_eq!(parse(&Value::Null), Ok(None));
        assert_eq!(parse(&json!({"type": "http"})), Ok(None));
        let field = |v: Value| parse(&v).unwrap_err().field;
        assert_eq!(field(json!("nats://x")), "destination");
        assert_eq!(field(json!({"url": "nats://x"})), "destination.type");
        assert_eq!(field(json!({"type": "carrier-pigeon"})), "destination.type");
        assert_eq!(field(json!({"type": "http", "url": "https://x"})), "destination");
        let why = parse(&json!({"type": "pigeon"})).unwrap_err().why;
        assert_eq!(why, "must be http, nats, amqp, sqs, sns, eventbridge, kinesis, kafka");
    }

    #[test]
    fn every_kind_has_a_table_and_its_spec_reads_back_as_written() {
        for (name, table) in tables() {
            assert!(!table.label.is_empty() && !table.help.is_empty(), "{name}");
            for field in table.fields {
                assert!(!field.label.is_empty() && !field.help.is_empty(), "{name}.{}", field.name);
            }
        }
        let spec = parse(&json!({"type": "nats", "url": "nats://h", "subject": "s"})).unwrap().unwrap().spec;
        let stored = serde_json::to_string(&spec).unwrap();
        assert_eq!(stored, r#"{"type":"nats","url":"nats://h:4222","subject":"s"}"#, "the stored form as before");
        assert_eq!(serde_json::from_str::<Spec>(&stored).unwrap(), spec);
    }
}
