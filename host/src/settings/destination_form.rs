//! The "Deliver to" part of a webhook's form: the URL over HTTP, or a broker — NATS JetStream,
//! AMQP (RabbitMQ), Amazon SQS, SNS or EventBridge — with the fields its kind takes (the API's
//! `destination`, contract §9). Credentials are never shown: a server typed with a password,
//! or AWS keys, replace the stored ones; left as shown, the stored ones stay.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::html::esc;
use super::session::Form;
use crate::destinations::Spec;

/// Each field: its form name (`destination_` + the API's key), label, and whether it is a
/// secret (never filled in).
const FIELDS: &[(&str, &str, bool)] = &[
    ("url", "Server (NATS, AMQP): nats://user:password@host:4222 or amqp[s]://user:password@host:5672/vhost", false),
    ("subject", "Subject (NATS)", false),
    ("exchange", "Exchange (AMQP; empty: the default exchange)", false),
    ("routing_key", "Routing key (AMQP; with the default exchange, the queue)", false),
    ("queue_url", "Queue URL (SQS)", false),
    ("topic_arn", "Topic ARN (SNS)", false),
    ("event_bus_name", "Event bus (EventBridge)", false),
    ("source", "Source (EventBridge)", false),
    ("region", "Region (AWS), e.g. us-east-1", false),
    ("endpoint_url", "Endpoint URL (AWS; empty: the region's)", false),
    ("access_key_id", "Access key id (AWS; stored encrypted, never shown; empty: keep the stored one)", true),
    ("secret_access_key", "Secret access key (AWS; stored encrypted, never shown; empty: keep it)", true),
];

/// The kinds offered, with their label and the fields they take.
const KINDS: &[(&str, &str, &[&str])] = &[
    ("http", "the URL above, over HTTP", &[]),
    ("nats", "a NATS JetStream subject", &["url", "subject"]),
    ("amqp", "an AMQP (RabbitMQ) exchange", &["url", "exchange", "routing_key"]),
    ("sqs", "an Amazon SQS queue", &["queue_url", "region", "endpoint_url", "access_key_id", "secret_access_key"]),
    ("sns", "an Amazon SNS topic", &["topic_arn", "region", "endpoint_url", "access_key_id", "secret_access_key"]),
    (
        "eventbridge",
        "an Amazon EventBridge bus",
        &["event_bus_name", "source", "region", "endpoint_url", "access_key_id", "secret_access_key"],
    ),
];

/// What the part shows: the kind and each field's value.
#[derive(Debug, Default)]
pub(super) struct DestinationValues {
    kind: String,
    values: BTreeMap<&'static str, String>,
}

impl DestinationValues {
    /// A webhook's destination as stored (no credentials).
    pub(super) fn of(spec: Option<&Spec>) -> DestinationValues {
        let shown = spec.and_then(|s| serde_json::to_value(s).ok()).unwrap_or_default();
        let values =
            FIELDS.iter().filter_map(|(key, _, _)| Some((*key, shown.get(*key)?.as_str()?.to_owned()))).collect();
        DestinationValues { kind: spec.map_or("http", Spec::kind).to_owned(), values }
    }

    /// What was sent (secrets are not echoed).
    pub(super) fn sent(form: &Form) -> DestinationValues {
        let values = FIELDS
            .iter()
            .filter(|(_, _, secret)| !secret)
            .map(|(key, _, _)| (*key, form.get(&format!("destination_{key}")).unwrap_or("").to_owned()))
            .collect();
        DestinationValues { kind: form.get("destination_type").unwrap_or("http").to_owned(), values }
    }

    /// The select and the broker's fields.
    pub(super) fn html(&self) -> String {
        let options: String = KINDS
            .iter()
            .map(|(kind, label, _)| {
                let on = if *kind == self.kind { " selected" } else { "" };
                format!(r#"<option value="{kind}"{on}>{label}</option>"#)
            })
            .collect();
        let inputs: String = FIELDS
            .iter()
            .map(|(key, label, secret)| {
                let (kind, value) = if *secret { ("password", String::new()) } else { ("text", esc(self.values.get(key).map_or("", String::as_str))) };
                format!(
                    r#"<label for="destination_{key}">{label}</label><input id="destination_{key}" name="destination_{key}" type="{kind}" value="{value}" autocomplete="off" spellcheck="false">"#,
                    label = esc(label),
                )
            })
            .collect();
        format!(
            r#"<label for="destination_type">Deliver to</label>
<select id="destination_type" name="destination_type" aria-describedby="destination-help">{options}</select>
<fieldset><legend>Broker</legend>
<p id="destination-help" class="muted">Each delivery is published with the same headers and signature an HTTP endpoint receives; it succeeds when the broker acknowledges it. Fill in the fields of the kind chosen. Passwords and keys are stored encrypted and never shown again: leave the server as shown, and the keys empty, to keep them.</p>
{inputs}
</fieldset>"#
        )
    }
}

/// The API's `destination` for what was sent: `null` for HTTP, else the kind's fields (a
/// field left empty is left out, but for an AMQP exchange, where empty means the default).
pub(super) fn destination_json(form: &Form) -> Value {
    let kind = form.get("destination_type").unwrap_or("http");
    let Some((_, _, keys)) = KINDS.iter().find(|(k, _, _)| *k == kind).filter(|(k, _, _)| *k != "http") else {
        return Value::Null;
    };
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    for key in *keys {
        let value = form.get(&format!("destination_{key}")).unwrap_or("").trim();
        if !value.is_empty() || *key == "exchange" {
            out.insert((*key).into(), json!(value));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Form {
        Form(pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
    }

    #[test]
    fn each_kind_sends_its_fields_and_keys_left_empty_are_left_out() {
        let sqs = form(&[
            ("destination_type", "sqs"),
            ("destination_queue_url", "https://q"),
            ("destination_region", "eu-west-1"),
            ("destination_access_key_id", ""),
            ("destination_subject", "ignored"),
        ]);
        assert_eq!(destination_json(&sqs), json!({"type": "sqs", "queue_url": "https://q", "region": "eu-west-1"}));
        let amqp =
            form(&[("destination_type", "amqp"), ("destination_url", "amqp://h"), ("destination_routing_key", "q")]);
        assert_eq!(
            destination_json(&amqp),
            json!({"type": "amqp", "url": "amqp://h", "exchange": "", "routing_key": "q"})
        );
        assert_eq!(destination_json(&form(&[("destination_type", "http")])), Value::Null);
        assert_eq!(destination_json(&form(&[])), Value::Null);
    }

    #[test]
    fn secrets_are_never_filled_in() {
        let sent = form(&[("destination_type", "sqs"), ("destination_secret_access_key", "s3cret")]);
        let html = DestinationValues::sent(&sent).html();
        assert!(!html.contains("s3cret"), "{html}");
        assert!(html.contains(r#"<option value="sqs" selected>"#), "{html}");
    }
}
