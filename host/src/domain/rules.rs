//! The rules for values, written once: every door — publish, the webhook API, the settings
//! pages, exports, plugin uploads — checks a value of a kind with the same function, so
//! what one door accepts every later stage can read.
//!
//! - [`name`]: a display name (a webhook's, a plugin's): trimmed, not empty, at most `max`
//!   characters, no control characters.
//! - [`short_text`]: an id or a short text an event carries (a subject's type and id, a
//!   creator's id and name, an exportable's id): kept as given, not only white space, at
//!   most 200 characters, no control characters.
//! - [`readable_json`]: JSON any later reader can read back — the export renderer, a plugin,
//!   a subscriber with a strict parser: nested no deeper than [`MAX_SNAPSHOT_DEPTH`], every
//!   number a finite float, every string valid Unicode (no unpaired surrogate escape).
//! - [`flag`]: a form's boolean: `true` or `false`, nothing else.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// The longest short text (ids and names an event carries), in characters.
pub(crate) const MAX_SHORT_TEXT: usize = 200;

/// How deep an event's snapshot may nest: the envelope around it adds one level, and the
/// whole must stay within the 127 levels serde_json (the export renderer, Rust plugins)
/// reads; other common parsers read as deep or deeper.
pub(crate) const MAX_SNAPSHOT_DEPTH: usize = 126;

/// A display name: trimmed, 1 to `max` characters, no control characters. The trimmed
/// name, or what is wrong with it.
pub(crate) fn name(value: &str, max: usize) -> Result<String, String> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err("must not be empty".into());
    }
    if trimmed.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    if trimmed.chars().count() > max {
        return Err(format!("must be at most {max} characters"));
    }
    Ok(trimmed.to_owned())
}

/// An id or short text an event carries, kept as given: not only white space, at most
/// [`MAX_SHORT_TEXT`] characters, no control characters.
pub(crate) fn short_text(value: &str) -> Result<(), String> {
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    if value.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if value.chars().count() > MAX_SHORT_TEXT {
        return Err(format!("must be at most {MAX_SHORT_TEXT} characters"));
    }
    Ok(())
}

/// A form's boolean: `true` or `false`.
pub(crate) fn flag(value: &str) -> Option<bool> {
    match value {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Checks that `text` is JSON every later reader can read back (see the module's rules),
/// nesting at most `max_depth` levels; what is wrong with it otherwise.
pub(crate) fn readable_json(text: &str, max_depth: usize) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let checked = Check { depth: max_depth }.deserialize(&mut de).and_then(|()| de.end());
    checked.map_err(|e| match e.to_string() {
        m if m.starts_with(TOO_DEEP) => format!("must not nest deeper than {max_depth} levels"),
        m if m.starts_with("number out of range") => "holds a number too large for a 64-bit float".to_owned(),
        m if m.contains("hex escape") || m.contains("surrogate") => {
            "holds a \\u escape that is not Unicode (an unpaired surrogate)".to_owned()
        }
        m => format!("is not JSON every reader can read: {m}"),
    })
}

/// The message of the depth check (recognised above).
const TOO_DEEP: &str = "nested too deeply";

/// Walks a JSON value without keeping it: serde_json checks numbers and string escapes as
/// it decodes them; this counts the depth.
struct Check {
    /// Levels of arrays and objects still allowed.
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Check {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Check {
    fn inner<E: de::Error>(&self) -> Result<Check, E> {
        match self.depth {
            0 => Err(E::custom(TOO_DEEP)),
            depth => Ok(Check { depth: depth - 1 }),
        }
    }
}

impl<'de> Visitor<'de> for Check {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        if v.is_finite() { Ok(()) } else { Err(E::custom("number out of range")) }
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while seq.next_element_seed(Check { depth: inner.depth })?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while map.next_key_seed(Check { depth: inner.depth })?.is_some() {
            map.next_value_seed(Check { depth: inner.depth })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn json_a_reader_cannot_read_back_is_refused_with_what_is_wrong() {
        assert_eq!(readable_json(r#"{"a": [1, 2.5, "é\u00e9\ud83d\ude00", null, true]}"#, 10), Ok(()));
        assert_eq!(readable_json(&nested(3), 3), Ok(()));
        assert_eq!(readable_json(&nested(4), 3), Err("must not nest deeper than 3 levels".into()));
        assert!(readable_json(&nested(100_000), MAX_SNAPSHOT_DEPTH).is_err(), "no stack overflow either");
        let number = Err("holds a number too large for a 64-bit float".into());
        assert_eq!(readable_json(r#"{"n": 1e400}"#, 10), number);
        assert_eq!(readable_json(&format!(r#"{{"n": {}}}"#, "9".repeat(100_000)), 10), number);
        let surrogate = Err("holds a \\u escape that is not Unicode (an unpaired surrogate)".into());
        assert_eq!(readable_json(r#"{"s": "\ud800"}"#, 10), surrogate);
        assert_eq!(readable_json(r#"{"s": "\ud800x"}"#, 10), surrogate);
        assert_eq!(readable_json(r#"{"\udc00": 1}"#, 10), surrogate);
    }

    #[test]
    fn the_depth_allowed_is_what_serde_json_reads_inside_an_envelope() {
        let envelope = |depth| format!(r#"{{"id":"evt_1","work_order":{}}}"#, nested(depth));
        assert!(serde_json::from_str::<serde_json::Value>(&envelope(MAX_SNAPSHOT_DEPTH)).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&envelope(MAX_SNAPSHOT_DEPTH + 1)).is_err());
    }

    #[test]
    fn names_and_short_texts_have_one_rule_each() {
        assert_eq!(name("  Billing  ", 10), Ok("Billing".into()));
        assert_eq!(name(" ", 10), Err("must not be empty".into()));
        assert_eq!(name("a\r\nX", 100), Err("must not contain control characters".into()));
        assert_eq!(name("abcdefghijk", 10), Err("must be at most 10 characters".into()));
        assert_eq!(short_text(" wo 1 "), Ok(()), "kept as given");
        assert_eq!(short_text("wo_tab\tx"), Err("must not contain control characters".into()));
        assert_eq!(short_text(&"x".repeat(201)), Err("must be at most 200 characters".into()));
        assert_eq!(flag("maybe"), None);
        assert_eq!(flag("false"), Some(false));
    }
}
