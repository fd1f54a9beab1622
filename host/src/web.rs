//! HTTP helpers both surfaces share — the API (`crate::api`) and the settings pages
//! (`crate::settings`): reading a request body within a limit, telling a JSON media type,
//! and query strings read strictly. Each surface answers their failures in its own shape
//! (JSON errors for the API, pages for the settings).

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::header::HeaderValue;
use axum::http::request::Parts;
use http_body_util::BodyExt;

/// Why a request body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("the request body is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the request body could not be read")]
    Unreadable,
}

/// Reads a request body up to `limit` bytes.
pub async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, BodyError> {
    let limited = http_body_util::Limited::new(body, limit);
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge { limit }),
        Err(_) => Err(BodyError::Unreadable),
    }
}

/// Whether a `Content-Type` is JSON (`application/json` or `application/…+json`).
pub fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// A request's query string, as `name=value` pairs in order. Reading one never fails: the
/// form encoding takes any text (a broken percent-escape stays as it is, bytes that are not
/// UTF-8 become U+FFFD), so each surface judges the values it reads.
#[derive(Debug, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Parses a raw query string (without the `?`).
    pub fn parse(raw: &str) -> Query {
        Query { pairs: serde_urlencoded::from_str(raw).unwrap_or_default() }
    }

    /// The value of `name` (the last one when repeated).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The names of the parameters not in `known`, in order.
    pub fn unknown<'a>(&'a self, known: &[&str]) -> Vec<&'a str> {
        self.pairs.iter().map(|(k, _)| k.as_str()).filter(|k| !known.contains(k)).collect()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        Ok(Query::parse(parts.uri.query().unwrap_or("")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_keeps_its_pairs_in_order_and_reads_any_text() {
        let q = Query::parse("a=1&b=2&a=3&c%20d=x+y");
        assert_eq!(q.get("a"), Some("3"), "the last of a repeated name");
        assert_eq!(q.get("c d"), Some("x y"));
        assert_eq!(q.unknown(&["a"]), ["b", "c d"]);
        let odd = Query::parse("a=%ZZ&b=%FF&flag");
        assert_eq!((odd.get("a"), odd.get("b"), odd.get("flag")), (Some("%ZZ"), Some("\u{FFFD}"), Some("")));
    }

    #[test]
    fn json_media_types() {
        let json = |v: &'static str| is_json(Some(&HeaderValue::from_static(v)));
        assert!(json("application/json; charset=utf-8"));
        assert!(json("application/merge-patch+json"));
        assert!(!json("text/plain"));
        assert!(!is_json(None));
    }
}
