//! Script replies read as types, never by position. A Lua table with string keys does not
//! survive the trip to the client, so:
//! - a script that answers several values answers `{name, value, name, value, …}`, read back
//!   by name with [`Named`];
//! - a script that answers one of a few outcomes answers its name, read with [`name_of`]
//!   into the caller's enum;
//! - one item of a batch that failed inside the script answers `{'error', why}`
//!   ([`Named::error`]): the caller fails that item alone.
//!
//! A reply that is none of what the caller expects is [`StoreError::Reply`].

use std::collections::HashMap;

use redis::Value;

use crate::store::error::Result;
use crate::store::error::StoreError;

/// The error of a reply `what` (a script's name) that this version cannot read.
pub(crate) fn unexpected(what: &'static str, reason: impl Into<String>) -> StoreError {
    StoreError::Reply { what, reason: reason.into() }
}

/// A reply of named fields.
#[derive(Debug, Default)]
pub(crate) struct Named {
    fields: HashMap<String, Value>,
}

impl Named {
    /// Reads `{name, value, …}` (or a RESP3 map); `what` names the reply for errors.
    pub(crate) fn from_value(value: Value, what: &'static str) -> Result<Named> {
        match value {
            Value::Array(items) => Named::from_items(items, what),
            Value::Map(pairs) => Named::from_items(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(), what),
            _ => Err(unexpected(what, "expected named fields")),
        }
    }

    /// Reads the items of `{name, value, …}`.
    pub(crate) fn from_items(items: Vec<Value>, what: &'static str) -> Result<Named> {
        if !items.len().is_multiple_of(2) {
            return Err(unexpected(what, "named fields with an odd number of items"));
        }
        let mut fields = HashMap::with_capacity(items.len() / 2);
        let mut items = items.into_iter();
        while let (Some(name), Some(value)) = (items.next(), items.next()) {
            let name = text(name).ok_or_else(|| unexpected(what, "a field name that is not text"))?;
            fields.insert(name, value);
        }
        Ok(Named { fields })
    }

    /// A number field.
    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        int(self.fields.get(name)?)
    }

    /// A text field (`None` when absent, `false` or empty).
    pub(crate) fn text(&self, name: &str) -> Option<String> {
        self.fields.get(name).cloned().and_then(text).filter(|t| !t.is_empty())
    }

    /// An array field, as raw values.
    pub(crate) fn list(&mut self, name: &str) -> Vec<Value> {
        match self.fields.remove(name) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        }
    }

    /// Why an item failed inside the script, when this is `{'error', why}`.
    pub(crate) fn error(&self) -> Option<String> {
        self.fields.get("error").cloned().and_then(text)
    }
}

/// A reply value as text (bulk, simple or verbatim string, or an integer).
pub(crate) fn text(value: Value) -> Option<String> {
    match value {
        Value::BulkString(b) => String::from_utf8(b).ok(),
        Value::SimpleString(s) => Some(s),
        Value::VerbatimString { text, .. } => Some(text),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// A reply value as a number (an integer, or text that is one).
pub(crate) fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(i) => Some(*i),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        Value::SimpleString(s) => s.parse().ok(),
        _ => None,
    }
}

/// The outcome a script answered by name, read with `parse`; any other name is an error.
pub(crate) fn name_of<T>(what: &'static str, name: &str, parse: impl FnOnce(&str) -> Option<T>) -> Result<T> {
    parse(name).ok_or_else(|| unexpected(what, format!("an unknown outcome `{name}`")))
}

/// A `0`/`1` reply (a script that did something or found nothing to do it to).
pub(crate) fn done(what: &'static str, reply: i64) -> Result<bool> {
    match reply {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(unexpected(what, format!("{other} where 0 or 1 was expected"))),
    }
}

/// Reads a `0`/`1` hash field.
pub(crate) fn flag(value: Option<&String>) -> bool {
    value.map(|v| v == "1").unwrap_or(false)
}

/// Writes a boolean hash field.
pub(crate) fn flag_str(value: bool) -> &'static str {
    if value { "1" } else { "0" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> Value {
        Value::BulkString(t.as_bytes().to_vec())
    }

    #[test]
    fn fields_are_read_by_name() {
        let value =
            Value::Array(vec![s("status"), s("new"), s("count"), Value::Int(3), s("ids"), Value::Array(vec![s("a")])]);
        let mut r = Named::from_value(value, "test").unwrap();
        assert_eq!(r.int("count"), Some(3));
        assert_eq!(r.text("status").as_deref(), Some("new"));
        assert_eq!(r.list("ids").len(), 1);
        assert_eq!(r.int("missing"), None);
        assert_eq!(r.error(), None);
        assert!(Named::from_value(Value::Array(vec![s("odd")]), "test").is_err());
        assert!(Named::from_value(Value::Int(1), "test").is_err());
        let failed = Named::from_value(Value::Array(vec![s("error"), s("WRONGTYPE")]), "test").unwrap();
        assert_eq!(failed.error().as_deref(), Some("WRONGTYPE"));
    }

    #[test]
    fn a_resp3_map_is_read_by_name_too() {
        let verbatim = Value::VerbatimString { format: redis::VerbatimFormat::Text, text: "online".into() };
        let value = Value::Map(vec![(s("health"), verbatim), (s("port"), s("7000"))]);
        let r = Named::from_value(value, "test").unwrap();
        assert_eq!(r.text("health").as_deref(), Some("online"));
        assert_eq!(r.int("port"), Some(7000));
    }

    #[test]
    fn an_unknown_outcome_or_flag_is_an_error_not_a_guess() {
        let parse = |n: &str| (n == "queued").then_some(());
        assert!(name_of("retry", "queued", parse).is_ok());
        assert!(matches!(name_of("retry", "queud", parse), Err(StoreError::Reply { what: "retry", .. })));
        assert_eq!(done("x", 1).ok(), Some(true));
        assert_eq!(done("x", 0).ok(), Some(false));
        assert!(done("x", -1).is_err());
    }
}
