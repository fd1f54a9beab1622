//! RFC 6901 JSON pointers over JSON text, without building a value tree: each level is
//! read as a map (or list) of raw, unparsed values, and only the one on the path is
//! descended into. This is how the host answers a plugin's `event.get` cheaply.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::value::RawValue;

/// The reference tokens of a pointer (`/a~1b/0` → `["a/b", "0"]`); `None` if malformed.
pub fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(rest.split('/').map(|t| t.replace("~1", "/").replace("~0", "~")).collect())
}

/// The JSON text of the value at `pointer` in `text`, if there is one.
pub fn lookup<'a>(text: &'a str, pointer: &str) -> Option<&'a str> {
    let tokens = tokens(pointer)?;
    let mut current = text.trim();
    for token in &tokens {
        current = match current.as_bytes().first()? {
            b'{' => {
                let map: BTreeMap<Cow<'a, str>, &'a RawValue> = serde_json::from_str(current).ok()?;
                map.get(token.as_str())?.get()
            }
            b'[' => {
                if token.len() > 1 && token.starts_with('0') {
                    return None;
                }
                let index: usize = token.parse().ok()?;
                let items: Vec<&'a RawValue> = serde_json::from_str(current).ok()?;
                items.get(index)?.get()
            }
            _ => return None,
        }
        .trim();
    }
    Some(current)
}

/// The string at `pointer`, if the value there is a string.
pub fn lookup_string(text: &str, pointer: &str) -> Option<String> {
    let raw = lookup(text, pointer)?;
    if !raw.starts_with('"') {
        return None;
    }
    serde_json::from_str(raw).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"action":"report_export_completed","report_export":{"id":"rex_1","exportable":{"type":"Form","id":"frm_1"},"tags":["a","b"]},"a/b":{"m~n":7},"n":null}"#;

    #[test]
    fn finds_nested_values_as_json_text() {
        assert_eq!(lookup(DOC, "/report_export/exportable"), Some(r#"{"type":"Form","id":"frm_1"}"#));
        assert_eq!(lookup(DOC, "/report_export/exportable/id"), Some(r#""frm_1""#));
        assert_eq!(lookup(DOC, "/report_export/tags/1"), Some(r#""b""#));
        assert_eq!(lookup(DOC, "/a~1b/m~0n"), Some("7"));
        assert_eq!(lookup(DOC, "/n"), Some("null"));
        assert_eq!(lookup(DOC, ""), Some(DOC));
    }

    #[test]
    fn missing_and_malformed_pointers_find_nothing() {
        assert_eq!(lookup(DOC, "/nope"), None);
        assert_eq!(lookup(DOC, "/report_export/tags/2"), None);
        assert_eq!(lookup(DOC, "/report_export/tags/01"), None);
        assert_eq!(lookup(DOC, "/report_export/tags/x"), None);
        assert_eq!(lookup(DOC, "/action/x"), None);
        assert_eq!(lookup(DOC, "report_export"), None);
        assert_eq!(lookup("not json", "/a"), None);
    }

    #[test]
    fn strings_are_unescaped() {
        assert_eq!(lookup_string(DOC, "/report_export/exportable/type").as_deref(), Some("Form"));
        assert_eq!(lookup_string(r#"{"s":"a\"b\u00e9"}"#, "/s").as_deref(), Some("a\"bé"));
        assert_eq!(lookup_string(DOC, "/a~1b/m~0n"), None);
        assert_eq!(lookup_string(DOC, "/n"), None);
    }
}
