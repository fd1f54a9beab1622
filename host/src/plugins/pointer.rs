//! RFC 6901 JSON pointers over JSON text, without building a value tree: each level is
//! scanned for the one member (or element) on the path, skipping the rest without
//! allocating, and only that raw value is descended into. A per-call [`Cache`] remembers
//! the spans of prefixes already found, so `/a/b/c` after `/a/b/d` scans only `b`.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::Deserializer as _;
use serde::de::{self, Deserialize, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The reference tokens of a pointer (`/a~1b/0` → `["a/b", "0"]`); `None` if malformed.
pub fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(rest.split('/').map(|t| t.replace("~1", "/").replace("~0", "~")).collect())
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Finds one member of an object, or one element of an array, as raw JSON.
struct Find<'t> {
    token: &'t str,
}

impl<'de> Visitor<'de> for Find<'_> {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object or an array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if found.is_none() && key.0 == self.token {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let index =
            if self.token.len() > 1 && self.token.starts_with('0') { None } else { self.token.parse::<usize>().ok() };
        let mut found = None;
        let mut i = 0;
        loop {
            if Some(i) == index {
                match seq.next_element::<&'de RawValue>()? {
                    Some(v) => found = Some(v),
                    None => break,
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            i += 1;
        }
        Ok(found)
    }
}

/// The raw child of `text` at one reference token.
fn child<'a>(text: &'a str, token: &str) -> Option<&'a str> {
    let mut de = serde_json::Deserializer::from_str(text);
    let found = match text.as_bytes().first()? {
        b'{' => de.deserialize_map(Find { token }).ok()?,
        b'[' => de.deserialize_seq(Find { token }).ok()?,
        _ => return None,
    };
    Some(found?.get().trim())
}

/// Spans of pointer prefixes already found in one body.
#[derive(Debug, Default)]
pub struct Cache {
    spans: Vec<(String, Range<usize>)>,
}

/// The JSON text of the value at `pointer` in `text`, if there is one.
pub fn lookup<'a>(text: &'a str, pointer: &str) -> Option<&'a str> {
    lookup_cached(text, pointer, &mut Cache::default())
}

/// [`lookup`], starting from the longest prefix of `pointer` found before.
pub fn lookup_cached<'a>(text: &'a str, pointer: &str, cache: &mut Cache) -> Option<&'a str> {
    if pointer.is_empty() {
        return Some(text);
    }
    if !pointer.starts_with('/') {
        return None;
    }
    // Where each token of the raw pointer ends: its prefixes are cache keys.
    let ends: Vec<usize> = pointer.match_indices('/').map(|(i, _)| i).skip(1).chain([pointer.len()]).collect();
    let (mut current, mut done) = (text.trim(), 0);
    for (n, end) in ends.iter().enumerate().rev() {
        if let Some((_, span)) = cache.spans.iter().find(|(p, _)| p == &pointer[..*end]) {
            current = text.get(span.clone())?;
            done = n + 1;
            break;
        }
    }
    let base = text.as_ptr() as usize;
    let mut start = if done == 0 { 0 } else { ends[done - 1] };
    for end in &ends[done..] {
        let raw = &pointer[start + 1..*end];
        let token: Cow<'_, str> =
            if raw.contains('~') { Cow::Owned(raw.replace("~1", "/").replace("~0", "~")) } else { Cow::Borrowed(raw) };
        current = child(current, &token)?;
        if cache.spans.len() < 32 {
            let at = current.as_ptr() as usize - base;
            cache.spans.push((pointer[..*end].to_owned(), at..at + current.len()));
        }
        start = *end;
    }
    Some(current)
}

/// The string at `pointer`, if the value there is a string.
pub fn string_of(raw: &str) -> Option<String> {
    if !raw.starts_with('"') {
        return None;
    }
    serde_json::from_str(raw).ok()
}

/// The string at `pointer` in `text`, if the value there is a string.
pub fn lookup_string(text: &str, pointer: &str) -> Option<String> {
    string_of(lookup(text, pointer)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"action":"report_export_completed","report_export":{"id":"rex_1","exportable":{"type":"Form","id":"frm_1"},"tags":["a","b"]},"a/b":{"m~n":7},"n":null,"esc\"aped":1}"#;

    #[test]
    fn finds_nested_values_as_json_text() {
        assert_eq!(lookup(DOC, "/report_export/exportable"), Some(r#"{"type":"Form","id":"frm_1"}"#));
        assert_eq!(lookup(DOC, "/report_export/exportable/id"), Some(r#""frm_1""#));
        assert_eq!(lookup(DOC, "/report_export/tags/1"), Some(r#""b""#));
        assert_eq!(lookup(DOC, "/a~1b/m~0n"), Some("7"));
        assert_eq!(lookup(DOC, "/n"), Some("null"));
        assert_eq!(lookup(DOC, "/esc\"aped"), Some("1"));
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
        assert_eq!(lookup("{\"a\":1", "/a"), None);
    }

    #[test]
    fn strings_are_unescaped() {
        assert_eq!(lookup_string(DOC, "/report_export/exportable/type").as_deref(), Some("Form"));
        assert_eq!(lookup_string(r#"{"s":"a\"b\u00e9"}"#, "/s").as_deref(), Some("a\"bé"));
        assert_eq!(lookup_string(DOC, "/a~1b/m~0n"), None);
        assert_eq!(lookup_string(DOC, "/n"), None);
    }

    #[test]
    fn the_cache_gives_the_same_answers() {
        let mut cache = Cache::default();
        let pointers = [
            "/report_export/exportable/type",
            "/report_export/exportable/id",
            "/report_export/id",
            "/a~1b/m~0n",
            "/report_export/tags/0",
            "/report_export/exportable/nope",
        ];
        for _ in 0..2 {
            for p in pointers {
                assert_eq!(lookup_cached(DOC, p, &mut cache), lookup(DOC, p), "{p}");
            }
        }
        assert!(cache.spans.iter().any(|(p, _)| p == "/report_export/exportable"));
        assert!(cache.spans.iter().any(|(p, _)| p == "/a~1b"));
    }
}
