//! The "Deliver to" part of a webhook's form: the URL over HTTP, or a broker — NATS JetStream,
//! AMQP (RabbitMQ), Amazon SQS, SNS or EventBridge — with the fields its kind takes (the API's
//! `destination`, contract §9). Credentials are never shown: a server typed with a password,
//! or AWS keys, replace the stored ones; left as shown, the stored ones stay.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::html::esc;
use super::session::Form;
use crate::kinds::{Field, Secret};

/// Every field some kind has (the first kind's, where kinds share a name), each with the
/// kinds that have it: the inputs of the broker part, from the kinds' tables.
fn fields() -> Vec<(&'static Field, Vec<&'static str>)> {
    let mut out: Vec<(&'static Field, Vec<&'static str>)> = Vec::new();
    for (kind, table) in crate::destinations::tables() {
        for field in table.fields {
            match out.iter_mut().find(|(f, _)| f.name == field.name) {
                Some((_, kinds)) => kinds.push(kind),
                None => out.push((field, vec![kind])),
            }
        }
    }
    out
}

/// A field never filled in (a secret, or a URL whose user-info is one, shown without it).
fn never_filled(field: &Field) -> bool {
    field.secret == Secret::Whole
}

/// What the part shows: the kind and each field's value.
#[derive(Debug, Default)]
pub(super) struct DestinationValues {
    kind: String,
    values: BTreeMap<&'static str, String>,
}

impl DestinationValues {
    /// A webhook's destination as stored (no credentials: the spec shown on read).
    pub(super) fn of(spec: Option<&Value>) -> DestinationValues {
        let shown = spec.cloned().unwrap_or_default();
        let values = fields()
            .into_iter()
            .filter_map(|(field, _)| Some((field.name, shown.get(field.name)?.as_str()?.to_owned())))
            .collect();
        let kind = shown.get("type").and_then(Value::as_str).unwrap_or("http").to_owned();
        DestinationValues { kind, values }
    }

    /// What was sent (secrets are not echoed).
    pub(super) fn sent(form: &Form) -> DestinationValues {
        let values = fields()
            .into_iter()
            .filter(|(field, _)| !never_filled(field))
            .map(|(field, _)| (field.name, form.get(&format!("destination_{}", field.name)).unwrap_or("").to_owned()))
            .collect();
        DestinationValues { kind: form.get("destination_type").unwrap_or("http").to_owned(), values }
    }

    /// The select and the broker's fields.
    pub(super) fn html(&self) -> String {
        let options: String = crate::destinations::tables()
            .map(|(kind, table)| {
                let on = if kind == self.kind { " selected" } else { "" };
                format!(r#"<option value="{kind}"{on}>{}</option>"#, esc(table.label))
            })
            .collect();
        let inputs: String = fields()
            .into_iter()
            .map(|(field, kinds)| {
                let key = field.name;
                let (kind, value) = if never_filled(field) {
                    ("password", String::new())
                } else {
                    ("text", esc(self.values.get(key).map_or("", String::as_str)))
                };
                let label = format!("{} ({}): {}", field.label, kinds.join(", "), field.help);
                let classes: String = kinds.iter().map(|k| format!(" kind-{k}")).collect();
                format!(
                    r#"<div class="dest-field{classes}"><label for="destination_{key}">{label}</label><input id="destination_{key}" name="destination_{key}" type="{kind}" value="{value}" autocomplete="off" spellcheck="false"></div>"#,
                    label = esc(&label),
                )
            })
            .collect();
        format!(
            r#"<label for="destination_type">Deliver to</label>
<select id="destination_type" name="destination_type" aria-describedby="destination-help">{options}</select>
<fieldset class="broker"><legend>Broker</legend>
<p id="destination-help" class="muted">Each delivery is published with the same headers and signature an HTTP endpoint receives; it succeeds when the broker acknowledges it. Fill in the fields of the kind chosen. Passwords and keys are stored encrypted and never shown again: leave the server as shown, and the keys empty, to keep them.</p>
{inputs}
</fieldset>"#
        )
    }
}

/// `/settings/kinds.css`: with a kind chosen, only its fields show (from the kinds' tables;
/// a browser without `:has()` shows every field, as before). The HTTP kind's field is the URL
/// above the broker's fieldset.
pub(super) fn kinds_css() -> String {
    let mut css = String::new();
    for (kind, _) in crate::destinations::tables() {
        let chosen = format!(r#"form:has(#destination_type option[value="{kind}"]:checked)"#);
        if kind == "http" {
            css.push_str(&format!("{chosen} fieldset.broker {{ display: none; }}\n"));
        } else {
            css.push_str(&format!("{chosen} .http-url {{ display: none; }}\n"));
            css.push_str(&format!("{chosen} .dest-field:not(.kind-{kind}) {{ display: none; }}\n"));
        }
    }
    css
}

/// The API's `destination` for what was sent: `null` for HTTP, else the kind's fields (a
/// field left empty is left out, but a required one that may be empty — an AMQP exchange,
/// where empty means the default).
pub(super) fn destination_json(form: &Form) -> Value {
    let kind = form.get("destination_type").unwrap_or("http");
    let Some((_, table)) = crate::destinations::tables().find(|(k, _)| *k == kind).filter(|(k, _)| *k != "http") else {
        return Value::Null;
    };
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    for field in table.fields {
        let value = form.get(&format!("destination_{}", field.name)).unwrap_or("").trim();
        let may_be_empty = field.required && matches!(field.rule, crate::kinds::Rule::Text { empty: true, .. });
        if !value.is_empty() || may_be_empty {
            out.insert(field.name.into(), json!(value));
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
