//! The "Deliver to" part of a webhook's form: the URL over HTTP, or a broker — NATS JetStream,
//! AMQP (RabbitMQ), Amazon SQS, SNS, EventBridge or Kinesis, Apache Kafka — with the inputs
//! its kind's table draws: a text box, a select for a choice, a check box for a flag, a
//! fieldset for an object (the API's `destination`, contract §9). Credentials are never
//! shown: a server typed with a password, AWS keys or a SASL password replace the stored
//! ones; the destination left as shown keeps them.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::html::esc;
use super::session::Form;
use crate::kinds::{Field, Rule, Secret};

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

/// A form input's name past `destination_`: the field's path (`sasl_mechanism`).
fn path(within: &str, field: &Field) -> String {
    match within {
        "" => field.name.to_owned(),
        object => format!("{object}_{}", field.name),
    }
}

/// What a checked box sends.
const CHECKED: &str = "on";

/// What the part shows: the kind and each input's value (by its path).
#[derive(Debug, Default)]
pub(super) struct DestinationValues {
    kind: String,
    values: BTreeMap<String, String>,
}

impl DestinationValues {
    /// A webhook's destination as stored (no credentials: the spec shown on read).
    pub(super) fn of(spec: Option<&Value>) -> DestinationValues {
        let shown = spec.cloned().unwrap_or_default();
        let mut values = BTreeMap::new();
        for (field, _) in fields() {
            shown_values(field, "", &shown, &mut values);
        }
        let kind = shown.get("type").and_then(Value::as_str).unwrap_or("http").to_owned();
        DestinationValues { kind, values }
    }

    /// What was sent (secrets are not echoed).
    pub(super) fn sent(form: &Form) -> DestinationValues {
        let mut values = BTreeMap::new();
        for (field, _) in fields() {
            sent_values(field, "", form, &mut values);
        }
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
                let classes: String = kinds.iter().map(|k| format!(" kind-{k}")).collect();
                let label = format!("{} ({})", field.label, kinds.join(", "));
                self.input(field, "", &label, &format!("dest-field{classes}"))
            })
            .collect();
        format!(
            r#"<label for="destination_type">Deliver to</label>
<select id="destination_type" name="destination_type" aria-describedby="destination-help">{options}</select>
<fieldset class="broker"><legend>Broker</legend>
<p id="destination-help" class="muted">Each delivery is published with the same headers and signature an HTTP endpoint receives; it succeeds when the broker acknowledges it. Fill in the fields of the kind chosen. Passwords and keys are stored encrypted and never shown again: leave every field as shown, and the keys and passwords empty, to keep them.</p>
{inputs}
</fieldset>"#
        )
    }

    /// One field's input (a text box, a select, a check box, or an object's fieldset of
    /// inputs), in a block of class `class`.
    fn input(&self, field: &Field, within: &str, label: &str, class: &str) -> String {
        let key = format!("destination_{}", path(within, field));
        let value = self.values.get(&key["destination_".len()..]).map_or("", String::as_str);
        let help = match field.help {
            "" => String::new(),
            help => format!(r#"<p id="{key}-help" class="muted">{}</p>"#, esc(help)),
        };
        let described =
            if field.help.is_empty() { String::new() } else { format!(r#" aria-describedby="{key}-help""#) };
        let control = match field.rule {
            Rule::Object { fields } => {
                let inner: String = fields.iter().map(|f| self.input(f, field.name, f.label, "dest-inner")).collect();
                return format!(r#"<fieldset class="{class}"><legend>{}</legend>{help}{inner}</fieldset>"#, esc(label));
            }
            Rule::Flag => {
                let on = if value == CHECKED { " checked" } else { "" };
                return format!(
                    r#"<div class="{class}"><label class="check"><input id="{key}" name="{key}" type="checkbox" value="{CHECKED}"{on}{described}> {}</label>{help}</div>"#,
                    esc(label)
                );
            }
            Rule::Choice { values } => {
                // A choice inside an object may be left unmade (no object is sent).
                let none = match (within, value) {
                    ("", _) => "",
                    (_, "") => r#"<option value="" selected>none</option>"#,
                    _ => r#"<option value="">none</option>"#,
                };
                let chosen =
                    if value.is_empty() && within.is_empty() { values.first().copied().unwrap_or("") } else { value };
                let options: String = values
                    .iter()
                    .map(|v| {
                        let on = if *v == chosen { " selected" } else { "" };
                        format!(r#"<option value="{v}"{on}>{v}</option>"#, v = esc(v))
                    })
                    .collect();
                format!(r#"<select id="{key}" name="{key}"{described}>{none}{options}</select>"#)
            }
            Rule::Text { .. } | Rule::Url { .. } => {
                let (kind, value) =
                    if never_filled(field) { ("password", String::new()) } else { ("text", esc(value)) };
                format!(
                    r#"<input id="{key}" name="{key}" type="{kind}" value="{value}" autocomplete="off" spellcheck="false"{described}>"#
                )
            }
        };
        format!(r#"<div class="{class}"><label for="{key}">{}</label>{control}{help}</div>"#, esc(label))
    }
}

/// A field's value as a page shows it (`yes` or `no` for a flag, an object's fields each
/// labelled); `None` for a value of no such form.
pub(super) fn shown_text(field: &Field, value: &Value) -> Option<String> {
    match (field.rule, value) {
        (_, Value::String(text)) => Some(text.clone()),
        (_, Value::Bool(on)) => Some(if *on { "yes" } else { "no" }.to_owned()),
        (Rule::Object { fields }, Value::Object(_)) => {
            let each =
                fields.iter().filter_map(|f| Some(format!("{}: {}", f.label, shown_text(f, value.get(f.name)?)?)));
            Some(each.collect::<Vec<_>>().join(", "))
        }
        _ => None,
    }
}

/// A field's values as a stored spec shows them, under their paths.
fn shown_values(field: &Field, within: &str, shown: &Value, out: &mut BTreeMap<String, String>) {
    let Some(value) = shown.get(field.name) else { return };
    match (field.rule, value) {
        (Rule::Object { fields }, Value::Object(_)) => {
            for inner in fields {
                shown_values(inner, field.name, value, out);
            }
        }
        (_, Value::Bool(true)) => drop(out.insert(path(within, field), CHECKED.to_owned())),
        (_, Value::String(text)) => drop(out.insert(path(within, field), text.clone())),
        _ => {}
    }
}

/// A field's values as sent (secrets left out), under their paths.
fn sent_values(field: &Field, within: &str, form: &Form, out: &mut BTreeMap<String, String>) {
    if let Rule::Object { fields } = field.rule {
        for inner in fields {
            sent_values(inner, field.name, form, out);
        }
    } else if !never_filled(field) {
        let key = path(within, field);
        let value = form.get(&format!("destination_{key}")).unwrap_or("").to_owned();
        out.insert(key, value);
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
/// where empty means the default; a flag is always sent, an object when any of its fields
/// was filled in). A destination left as shown reads back as the stored spec does.
pub(super) fn destination_json(form: &Form) -> Value {
    let kind = form.get("destination_type").unwrap_or("http");
    let Some((_, table)) = crate::destinations::tables().find(|(k, _)| *k == kind).filter(|(k, _)| *k != "http") else {
        return Value::Null;
    };
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    out.extend(fields_json(table.fields, "", form));
    Value::Object(out)
}

/// The values sent for `fields` (those of an object, when `within` names it).
fn fields_json(fields: &[Field], within: &str, form: &Form) -> Map<String, Value> {
    let mut out = Map::new();
    for field in fields {
        let sent = form.get(&format!("destination_{}", path(within, field))).unwrap_or("").trim();
        let value = match field.rule {
            Rule::Flag => Some(json!(sent == CHECKED)),
            Rule::Object { fields } => {
                Some(fields_json(fields, field.name, form)).filter(|m| !m.is_empty()).map(Value::Object)
            }
            Rule::Text { empty: true, .. } if field.required => Some(json!(sent)),
            _ => Some(json!(sent)).filter(|_| !sent.is_empty()),
        };
        if let Some(value) = value {
            out.insert(field.name.into(), value);
        }
    }
    out
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

    /// The form's fields as a browser sends them for the part `values` draws (a select's
    /// chosen option, a checked box, each text box's value).
    fn submitted(values: &DestinationValues) -> Form {
        let html = values.html();
        let mut pairs = vec![("destination_type".to_owned(), values.kind.clone())];
        for (key, value) in &values.values {
            let name = format!("destination_{key}");
            let checkbox = html.contains(&format!(r#"name="{name}" type="checkbox""#));
            if !checkbox || value == CHECKED {
                pairs.push((name, value.clone()));
            }
        }
        Form(pairs)
    }

    #[test]
    fn a_kafka_destination_left_as_shown_reads_back_as_stored() {
        let shown = json!({
            "type": "kafka", "bootstrap_servers": "k1:9092,k2:9093", "topic": "orders", "key": "event",
            "sasl": {"mechanism": "scram-sha-512", "username": "weir"}, "tls": true,
        });
        let values = DestinationValues::of(Some(&shown));
        let html = values.html();
        assert!(html.contains(r#"<option value="event" selected>"#), "{html}");
        assert!(html.contains(r#"<option value="scram-sha-512" selected>"#), "{html}");
        assert!(html.contains(r#"name="destination_tls" type="checkbox" value="on" checked"#), "{html}");
        assert!(html.contains(r#"name="destination_sasl_password" type="password" value="""#), "{html}");
        assert_eq!(destination_json(&submitted(&values)), shown);
        let mut plain = shown.clone();
        plain["tls"] = json!(false);
        plain.as_object_mut().map(|o| o.remove("sasl"));
        let values = DestinationValues::of(Some(&plain));
        assert!(values.html().contains(r#"<option value="" selected>none</option>"#), "{}", values.html());
        assert_eq!(destination_json(&submitted(&values)), plain);
    }

    #[test]
    fn a_sasl_password_typed_is_sent_in_its_object_and_never_echoed() {
        let sent = form(&[
            ("destination_type", "kafka"),
            ("destination_bootstrap_servers", "k:9092"),
            ("destination_topic", "t"),
            ("destination_key", "subject"),
            ("destination_sasl_mechanism", "plain"),
            ("destination_sasl_username", "u"),
            ("destination_sasl_password", "pw-typed"),
        ]);
        let expected = json!({
            "type": "kafka", "bootstrap_servers": "k:9092", "topic": "t", "key": "subject", "tls": false,
            "sasl": {"mechanism": "plain", "username": "u", "password": "pw-typed"},
        });
        assert_eq!(destination_json(&sent), expected);
        let html = DestinationValues::sent(&sent).html();
        assert!(!html.contains("pw-typed"), "{html}");
        assert!(html.contains(r#"<option value="plain" selected>"#), "{html}");
    }
}
