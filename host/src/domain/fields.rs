//! Field-by-field validation of JSON request objects. Each accessor takes a field out of
//! the object and records a [`FieldError`] when it has the wrong type; `finish` adds one
//! for every field left over (unknown fields are refused) and returns them all.

use serde_json::{Map, Value};

use super::{FieldError, Invalid};

/// A request object being validated.
#[derive(Debug)]
pub(crate) struct Fields {
    map: Map<String, Value>,
    errors: Vec<FieldError>,
}

impl Fields {
    pub(crate) fn new(map: Map<String, Value>) -> Fields {
        Fields { map, errors: Vec::new() }
    }

    /// Records an error on `field`.
    pub(crate) fn error(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, message));
    }

    pub(crate) fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Takes a field of any type.
    pub(crate) fn value(&mut self, name: &str) -> Option<Value> {
        self.map.remove(name)
    }

    /// Takes a field that must be present.
    pub(crate) fn required(&mut self, name: &str) -> Option<Value> {
        let value = self.map.remove(name);
        if value.is_none() {
            self.error(name, "is required");
        }
        value
    }

    /// A string field (absent: `None`; not a string: error).
    pub(crate) fn string(&mut self, name: &str) -> Option<String> {
        let value = self.map.remove(name)?;
        self.as_string(name, value)
    }

    pub(crate) fn required_string(&mut self, name: &str) -> Option<String> {
        let value = self.required(name)?;
        self.as_string(name, value)
    }

    fn as_string(&mut self, name: &str, value: Value) -> Option<String> {
        match value {
            Value::String(s) => Some(s),
            _ => {
                self.error(name, "must be a string");
                None
            }
        }
    }

    pub(crate) fn bool(&mut self, name: &str) -> Option<bool> {
        match self.map.remove(name)? {
            Value::Bool(b) => Some(b),
            _ => {
                self.error(name, "must be true or false");
                None
            }
        }
    }

    /// An array of strings; each wrong element is reported as `name[i]`.
    pub(crate) fn string_array(&mut self, name: &str, required: bool) -> Option<Vec<String>> {
        let value = if required { self.required(name)? } else { self.map.remove(name)? };
        let Value::Array(items) = value else {
            self.error(name, "must be an array of strings");
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Value::String(s) => out.push(s),
                _ => self.error(format!("{name}[{i}]"), "must be a string"),
            }
        }
        Some(out)
    }

    /// An object field.
    pub(crate) fn object(&mut self, name: &str, required: bool) -> Option<Map<String, Value>> {
        let value = if required { self.required(name)? } else { self.map.remove(name)? };
        match value {
            Value::Object(m) => Some(m),
            _ => {
                self.error(name, "must be an object");
                None
            }
        }
    }

    /// The names of the fields not taken yet.
    pub(crate) fn remaining(&self) -> Vec<String> {
        self.map.keys().cloned().collect()
    }

    /// Refuses leftover (unknown) fields; every error found.
    pub(crate) fn finish(mut self) -> Result<(), Invalid> {
        let unknown: Vec<String> = self.map.keys().cloned().collect();
        for name in unknown {
            self.error(name, "unknown field");
        }
        if self.errors.is_empty() { Ok(()) } else { Err(Invalid(self.errors)) }
    }

    /// Errors so far without checking for unknown fields (for nested objects).
    pub(crate) fn into_errors(self) -> Vec<FieldError> {
        self.errors
    }
}

/// A display name ([`super::rules::name`]): trimmed, 1 to `max` characters, no control
/// characters; an error on `name` otherwise.
pub(crate) fn bounded_text(fields: &mut Fields, name: &str, value: String, max: usize) -> Option<String> {
    match super::rules::name(&value, max) {
        Ok(text) => Some(text),
        Err(why) => {
            fields.error(name, why);
            None
        }
    }
}

/// An id or short text ([`super::rules::short_text`]), kept as given; an error on `name`
/// otherwise.
pub(crate) fn short_text(fields: &mut Fields, name: &str, value: String) -> Option<String> {
    match super::rules::short_text(&value) {
        Ok(()) => Some(value),
        Err(why) => {
            fields.error(name, why);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        match v {
            Value::Object(m) => Fields::new(m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn reports_types_missing_and_unknown_fields() {
        let mut f = fields(json!({"name": 3, "tags": ["a", 1], "extra": true}));
        assert_eq!(f.string("name"), None);
        assert_eq!(f.string_array("tags", true), Some(vec!["a".to_string()]));
        assert_eq!(f.required_string("url"), None);
        let err = f.finish().unwrap_err();
        let fields: Vec<&str> = err.0.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(fields, vec!["name", "tags[1]", "url", "extra"]);
    }

    #[test]
    fn null_is_a_wrong_type_not_an_absence() {
        let mut f = fields(json!({"name": null}));
        assert_eq!(f.string("name"), None);
        assert!(f.has_errors());
    }

    #[test]
    fn bounded_text_trims_and_limits() {
        let mut f = fields(json!({}));
        assert_eq!(bounded_text(&mut f, "n", "  hi ".into(), 5), Some("hi".into()));
        assert_eq!(bounded_text(&mut f, "n", "   ".into(), 5), None);
        assert_eq!(bounded_text(&mut f, "n", "toolong".into(), 5), None);
        assert_eq!(bounded_text(&mut f, "n", "a\u{7}".into(), 5), None);
        assert_eq!(f.into_errors().len(), 3);
    }
}
