//! What every kind of thing a tenant names by its `type` shares — a destination's kind
//! (`crate::destinations`), and in time a source's provider: **one table of its fields**
//! (name, label, help, whether required or secret, the rule its value obeys). From that one
//! table its JSON object is read (an unknown field, a missing one, a value against its rule:
//! each refused naming the field), its form is drawn (Settings and the portal) and its
//! OpenAPI schema is made (`crate::api::schema`), so none of them is a copy to keep in step.
//!
//! Ground floor: imports nothing of Weir.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A kind's fields, as its module declares them.
#[derive(Debug)]
pub(crate) struct Table {
    /// What choosing it means, in a few words ("a NATS JetStream subject").
    pub label: &'static str,
    /// A sentence on what a delivery there is and when it succeeds.
    pub help: &'static str,
    pub fields: &'static [Field],
}

/// One field of a kind.
#[derive(Debug)]
pub(crate) struct Field {
    /// Its key in the object (`routing_key`).
    pub name: &'static str,
    /// Its label on a form.
    pub label: &'static str,
    /// What it is and how it is written, for the form and the API's documentation.
    pub help: &'static str,
    pub required: bool,
    pub secret: Secret,
    pub rule: Rule,
    /// A value as it would be written (a form's placeholder, the document's example).
    pub example: &'static str,
}

/// Whether a field holds a secret (sealed at rest, never shown again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Secret {
    No,
    /// The whole value.
    Whole,
    /// The user-info of a URL (`nats://user:password@host`): the rest is shown.
    UserInfo,
}

/// The rule a field's value obeys (a kind's own checks come after).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rule {
    /// A string of at most `max` bytes, empty only when `empty`.
    Text { max: usize, empty: bool },
    /// An absolute URL of one of `schemes`, at most `max` bytes.
    Url { schemes: &'static [&'static str], max: usize },
    /// One of `values` (the first: the default, when the field is optional).
    Choice { values: &'static [&'static str] },
    /// `true` or `false`.
    Flag,
    /// An object of these fields, read as the kind's own are (`sasl.password`).
    Object { fields: &'static [Field] },
}

impl Field {
    /// A field whose value obeys `rule`, optional, not secret, without help or example.
    pub(crate) const fn new(name: &'static str, label: &'static str, rule: Rule) -> Field {
        Field { name, label, help: "", required: false, secret: Secret::No, rule, example: "" }
    }

    pub(crate) const fn required(self) -> Field {
        Field { required: true, ..self }
    }

    pub(crate) const fn secret(self, secret: Secret) -> Field {
        Field { secret, ..self }
    }

    pub(crate) const fn help(self, help: &'static str) -> Field {
        Field { help, ..self }
    }

    pub(crate) const fn example(self, example: &'static str) -> Field {
        Field { example, ..self }
    }

    /// Whether the value, as given, obeys the rule; why not.
    fn check(&self, value: &Value) -> Result<(), String> {
        match (self.rule, value) {
            (Rule::Text { max, empty }, Value::String(text)) => {
                if text.trim().is_empty() && !empty {
                    Err("must not be empty".into())
                } else if text.len() > max {
                    Err(format!("must be at most {max} bytes"))
                } else {
                    Ok(())
                }
            }
            (Rule::Url { max, .. }, Value::String(text)) if text.len() > max => {
                Err(format!("must be at most {max} bytes"))
            }
            (Rule::Url { schemes, .. }, Value::String(text)) => {
                let scheme = text.trim().split_once("://").map(|(s, _)| s.to_ascii_lowercase());
                match scheme {
                    Some(s) if schemes.contains(&s.as_str()) => Ok(()),
                    _ => Err(format!("must be a {} URL", schemes.join(" or "))),
                }
            }
            (Rule::Choice { values }, Value::String(text)) if values.contains(&text.as_str()) => Ok(()),
            (Rule::Choice { values }, _) => Err(format!("must be {}", values.join(", "))),
            (Rule::Flag, Value::Bool(_)) => Ok(()),
            (Rule::Flag, _) => Err("must be true or false".into()),
            (Rule::Object { .. }, Value::Object(_)) => Ok(()),
            (Rule::Object { .. }, _) => Err("must be an object".into()),
            (_, _) => Err("must be a string".into()),
        }
    }
}

/// Why an object was refused: the field at fault (`destination.url`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub field: String,
    pub why: String,
}

impl Refusal {
    pub(crate) fn new(field: impl Into<String>, why: impl Into<String>) -> Refusal {
        Refusal { field: field.into(), why: why.into() }
    }
}

/// An object read against a table: every field it has is one of the table's and obeys its
/// rule, and every required one is there. `prefix` names its fields in refusals
/// (`destination`: `destination.url`).
#[derive(Debug)]
pub(crate) struct Read<'a> {
    prefix: String,
    fields: &'static [Field],
    values: BTreeMap<&'static str, &'a Value>,
}

impl<'a> Read<'a> {
    /// Reads `object` (but its `type`) against `table`; `kind` names it in words.
    pub(crate) fn of(
        table: &'static Table,
        kind: &str,
        prefix: &str,
        object: &'a Map<String, Value>,
    ) -> Result<Read<'a>, Refusal> {
        Read::fields(table.fields, &["type"], kind, prefix, object)
    }

    /// Reads `object` against `fields`; `skip`: keys that are not fields (`type`).
    fn fields(
        fields: &'static [Field],
        skip: &[&str],
        kind: &str,
        prefix: &str,
        object: &'a Map<String, Value>,
    ) -> Result<Read<'a>, Refusal> {
        let mut values = BTreeMap::new();
        for (name, value) in object {
            if skip.contains(&name.as_str()) {
                continue;
            }
            let Some(field) = fields.iter().find(|f| f.name == name) else {
                let known: Vec<&str> = skip.iter().copied().chain(fields.iter().map(|f| f.name)).collect();
                let why = format!("is not a field of {kind} ({})", known.join(", "));
                return Err(Refusal::new(format!("{prefix}.{name}"), why));
            };
            // An optional field given as `null` is left out.
            if value.is_null() && !field.required {
                continue;
            }
            field.check(value).map_err(|why| Refusal::new(format!("{prefix}.{name}"), why))?;
            if let (Rule::Object { fields }, Value::Object(inner)) = (field.rule, value) {
                Read::fields(fields, &[], &format!("{name} of {kind}"), &format!("{prefix}.{name}"), inner)?;
            }
            values.insert(field.name, value);
        }
        if let Some(missing) = fields.iter().find(|f| f.required && !values.contains_key(f.name)) {
            let why = match missing.example {
                "" => "is required".to_owned(),
                example => format!("is required: {example}"),
            };
            return Err(Refusal::new(format!("{prefix}.{}", missing.name), why));
        }
        Ok(Read { prefix: prefix.to_owned(), fields, values })
    }

    /// A text field's value, as given (`None`: absent).
    pub(crate) fn text(&self, name: &str) -> Option<&'a str> {
        self.values.get(name).and_then(|v| v.as_str())
    }

    /// A flag's value (`false`: absent).
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.values.get(name).and_then(|v| v.as_bool()).unwrap_or(false)
    }

    /// A choice's value: as given, or its first (the default) when absent.
    pub(crate) fn choice(&self, field: &Field) -> &'a str {
        match (self.text(field.name), field.rule) {
            (Some(value), _) => value,
            (None, Rule::Choice { values }) => values.first().copied().unwrap_or_default(),
            (None, _) => "",
        }
    }

    /// An object field's values, as read (`None`: absent); its refusals name
    /// `prefix.name.field`.
    pub(crate) fn object(&self, name: &str) -> Option<Read<'a>> {
        let field = self.fields.iter().find(|f| f.name == name)?;
        let (Some(Value::Object(inner)), Rule::Object { fields }) = (self.values.get(name), field.rule) else {
            return None;
        };
        Read::fields(fields, &[], name, &format!("{}.{name}", self.prefix), inner).ok()
    }

    /// A refusal of field `name` of this object.
    pub(crate) fn refuse(&self, name: &str, why: impl Into<String>) -> Refusal {
        Refusal::new(format!("{}.{name}", self.prefix), why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TABLE: Table = Table {
        label: "a test kind",
        help: "",
        fields: &[
            Field::new("url", "Server", Rule::Url { schemes: &["nats"], max: 64 })
                .required()
                .example("nats://host:4222"),
            Field::new("subject", "Subject", Rule::Text { max: 8, empty: false }).required(),
            Field::new("key", "Key", Rule::Text { max: 8, empty: true }),
        ],
    };

    fn read(value: Value) -> Result<(), Refusal> {
        let object = value.as_object().cloned().unwrap_or_default();
        Read::of(&TABLE, "a test destination", "destination", &object).map(|_| ())
    }

    #[test]
    fn an_object_is_read_against_its_table_and_each_refusal_names_its_field() {
        assert_eq!(read(json!({"type": "t", "url": "nats://h", "subject": "s", "key": ""})), Ok(()));
        let field = |v: Value| read(v).unwrap_err().field;
        assert_eq!(field(json!({"subject": "s"})), "destination.url");
        assert_eq!(read(json!({"subject": "s"})).unwrap_err().why, "is required: nats://host:4222");
        assert_eq!(field(json!({"url": "http://h", "subject": "s"})), "destination.url");
        assert_eq!(field(json!({"url": "nats://h", "subject": "123456789"})), "destination.subject");
        assert_eq!(field(json!({"url": "nats://h", "subject": " "})), "destination.subject");
        assert_eq!(field(json!({"url": "nats://h", "subject": 3})), "destination.subject");
        assert_eq!(read(json!({"url": "nats://h", "subject": "s", "key": null})), Ok(()), "null: left out");
        assert_eq!(field(json!({"url": "nats://h", "subject": "s", "key": true})), "destination.key");
        let unknown = read(json!({"url": "nats://h", "subject": "s", "stream": "S"})).unwrap_err();
        assert_eq!(unknown.field, "destination.stream");
        assert_eq!(unknown.why, "is not a field of a test destination (type, url, subject, key)");
    }

    #[test]
    fn values_are_read_as_given() {
        let object = json!({"url": "nats://h", "subject": "s"}).as_object().cloned().unwrap();
        let read = Read::of(&TABLE, "t", "destination", &object).unwrap();
        assert_eq!((read.text("url"), read.text("subject")), (Some("nats://h"), Some("s")));
        assert_eq!(read.text("key"), None);
        assert_eq!(read.refuse("subject", "no").field, "destination.subject");
    }
}
