//! Script replies as named records. A Lua table with string keys does not survive the trip
//! to the client, so scripts return `{name, value, name, value, …}`; [`Record`] reads that
//! back by name, and callers turn it into their own types.

use std::collections::HashMap;

use redis::Value;

use super::{Result, StoreError};

/// A reply of named fields.
#[derive(Debug, Default)]
pub(crate) struct Record {
    fields: HashMap<String, Value>,
}

impl Record {
    /// Reads `{name, value, …}`; `what` names the script for errors.
    pub(crate) fn from_value(value: Value, what: &str) -> Result<Record> {
        let Value::Array(items) = value else {
            return Err(StoreError::Corrupt { key: what.into(), reason: "expected a record".into() });
        };
        if items.len() % 2 != 0 {
            return Err(StoreError::Corrupt { key: what.into(), reason: "a record has an odd number of items".into() });
        }
        let mut fields = HashMap::with_capacity(items.len() / 2);
        let mut items = items.into_iter();
        while let (Some(name), Some(value)) = (items.next(), items.next()) {
            if let Some(name) = text(name) {
                fields.insert(name, value);
            }
        }
        Ok(Record { fields })
    }

    /// A number field.
    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        match self.fields.get(name)? {
            Value::Int(i) => Some(*i),
            Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
            Value::SimpleString(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// An array field, as raw values.
    pub(crate) fn list(&mut self, name: &str) -> Vec<Value> {
        match self.fields.remove(name) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        }
    }
}

/// A reply value as text (bulk or simple string, or an integer).
pub(crate) fn text(value: Value) -> Option<String> {
    match value {
        Value::BulkString(b) => String::from_utf8(b).ok(),
        Value::SimpleString(s) => Some(s),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
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
        let mut r = Record::from_value(value, "test").unwrap();
        assert_eq!(r.int("count"), Some(3));
        assert_eq!(r.list("ids").len(), 1);
        assert_eq!(r.int("missing"), None);
        assert!(Record::from_value(Value::Array(vec![s("odd")]), "test").is_err());
        assert!(Record::from_value(Value::Int(1), "test").is_err());
    }
}
