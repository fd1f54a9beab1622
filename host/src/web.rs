//! HTTP helpers both surfaces share — the API (`crate::api`) and the settings pages
//! (`crate::settings`): reading a request body within a limit (and ahead of the request's
//! slot, at a minimum rate), the peer a request came from, telling a JSON media type, and
//! query strings read strictly. Each surface answers their failures in its own shape
//! (JSON errors for the API, pages for the settings).

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::header::HeaderValue;
use axum::http::request::Parts;
use http_body_util::BodyExt;

/// How long a request body may go without a byte before the request is given up as a
/// client's fault (`408`, and the connection closes).
pub(crate) const BODY_STALL: Duration = Duration::from_secs(10);
/// The slowest a request body may arrive, on average, once [`BODY_GRACE`] has passed: by
/// `t` after its headers, `(t − BODY_GRACE) × BODY_MIN_RATE` bytes must have come.
pub(crate) const BODY_MIN_RATE: u64 = 4 * 1024;
/// How long a request body may take before [`BODY_MIN_RATE`] counts.
pub(crate) const BODY_GRACE: Duration = Duration::from_secs(10);

/// Why a request body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BodyError {
    #[error("the request body is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the request body could not be read")]
    Unreadable,
    /// The client stopped sending it, or sent it too slowly.
    #[error(
        "the request body arrived too slowly (nothing for {}s, or under {} KiB/s after the first {}s)",
        BODY_STALL.as_secs(),
        BODY_MIN_RATE / 1024,
        BODY_GRACE.as_secs()
    )]
    Stalled,
}

/// A body read ahead by [`prefetch`] that arrived too slowly: reading it again fails with
/// this, which [`read_body`] reports as [`BodyError::Stalled`].
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the request body arrived too slowly")]
pub(crate) struct TooSlow;

/// Reads a request body up to `limit` bytes; one that stops arriving for [`BODY_STALL`]
/// is given up.
pub(crate) async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, BodyError> {
    let mut body = http_body_util::Limited::new(body, limit);
    let mut out = bytes::BytesMut::new();
    loop {
        match tokio::time::timeout(BODY_STALL, body.frame()).await {
            Err(_) => return Err(BodyError::Stalled),
            Ok(None) => return Ok(out.freeze()),
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    out.extend_from_slice(&data);
                }
            }
            Ok(Some(Err(e))) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(BodyError::TooLarge { limit });
            }
            Ok(Some(Err(e))) if caused_by_too_slow(&*e) => return Err(BodyError::Stalled),
            Ok(Some(Err(_))) => return Err(BodyError::Unreadable),
        }
    }
}

fn caused_by_too_slow(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.is::<TooSlow>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Reads a request body ahead, before the request takes one of the API's slots, so that a
/// client sending it slowly holds nothing but its connection: up to `limit` bytes (a body
/// past them keeps its first `limit + 1`, so the handler's own limit refuses it in its own
/// words), at least [`BODY_MIN_RATE`] on average after [`BODY_GRACE`] and never silent for
/// [`BODY_STALL`]. The body given back holds what was read; one that arrived too slowly
/// fails with [`TooSlow`] when read.
pub(crate) async fn prefetch(body: Body, limit: usize) -> Body {
    let mut out = bytes::BytesMut::new();
    let failed = read_ahead(body, limit, |data| out.extend_from_slice(data)).await;
    let data = out.freeze();
    match failed {
        None => Body::from(data),
        Some(error) => {
            let frames: Vec<Result<bytes::Bytes, axum::BoxError>> = vec![Ok(data), Err(error)];
            Body::from_stream(futures_util::stream::iter(frames))
        }
    }
}

/// Reads a request body that will not be used and drops it, under [`prefetch`]'s rules:
/// whether all of it came (then the connection can answer and carry on; a client that is
/// still sending when its request is answered and closed sees a broken pipe, not the answer).
pub(crate) async fn discard(body: Body, limit: usize) -> bool {
    let mut read = 0;
    let failed = read_ahead(body, limit, |data| read += data.len()).await;
    failed.is_none() && read <= limit
}

/// Reads `body` at least at [`BODY_MIN_RATE`] after [`BODY_GRACE`], never silent for
/// [`BODY_STALL`], handing each piece to `keep`, until its end or past `limit` bytes: why
/// it stopped early, if it did.
async fn read_ahead(mut body: Body, limit: usize, mut keep: impl FnMut(&[u8])) -> Option<axum::BoxError> {
    let started = tokio::time::Instant::now();
    let mut read = 0usize;
    loop {
        let by_rate = started + BODY_GRACE + Duration::from_millis(read as u64 * 1000 / BODY_MIN_RATE);
        let deadline = by_rate.min(tokio::time::Instant::now() + BODY_STALL);
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Some(Box::new(TooSlow)),
            Ok(None) => return None,
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    read += data.len();
                    keep(&data);
                    if read > limit {
                        return None;
                    }
                }
            }
            Ok(Some(Err(e))) => return Some(e.into()),
        }
    }
}

/// A webhook URL as a reader who may not see its credentials is shown it: the values of
/// its query and its password replaced by `…` (`?api_key=…`), the rest as it is.
pub(crate) fn masked_url(text: &str) -> String {
    let Ok(mut url) = url::Url::parse(text) else { return text.to_owned() };
    if url.password().is_some() {
        let _ = url.set_password(Some("…"));
    }
    if url.query().is_some() {
        let keys: Vec<String> = url.query_pairs().map(|(k, _)| format!("{k}=…")).collect();
        url.set_query(Some(&keys.join("&")));
    }
    // The URL's own encoding of `…` read back as the character.
    percent_encoding::percent_decode_str(url.as_str()).decode_utf8_lossy().into_owned()
}

/// The address a request came from (the listener puts it in the request's extensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peer(pub std::net::SocketAddr);

#[cfg(test)]
#[test]
fn a_masked_url_keeps_its_query_keys_and_hides_their_values() {
    assert_eq!(masked_url("https://h.test/p?api_key=s3cret&x=1"), "https://h.test/p?api_key=…&x=…");
    assert_eq!(masked_url("https://u:pw@h.test/p"), "https://u:…@h.test/p");
    assert_eq!(masked_url("https://h.test/p"), "https://h.test/p");
}

/// Reads an `application/x-www-form-urlencoded` body strictly: the pairs in order, or the
/// name of the first field whose name or value is not UTF-8 once decoded (a lossy decoding
/// would store replacement characters where the API refuses the text).
pub(crate) fn parse_form(body: &[u8]) -> Result<Vec<(String, String)>, String> {
    let decode = |part: &[u8]| {
        let spaced: Vec<u8> = part.iter().map(|b| if *b == b'+' { b' ' } else { *b }).collect();
        String::from_utf8(percent_encoding::percent_decode(&spaced).collect())
    };
    let mut pairs = Vec::new();
    for pair in body.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
        let (name, value) = match pair.iter().position(|b| *b == b'=') {
            Some(at) => (&pair[..at], &pair[at + 1..]),
            None => (pair, &pair[pair.len()..]),
        };
        let name = decode(name).map_err(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())?;
        let value = decode(value).map_err(|_| name.clone())?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// Whether a `Content-Type` is JSON (`application/json` or `application/…+json`).
pub(crate) fn is_json(content_type: Option<&HeaderValue>) -> bool {
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
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Parses a raw query string (without the `?`).
    pub(crate) fn parse(raw: &str) -> Query {
        Query { pairs: serde_urlencoded::from_str(raw).unwrap_or_default() }
    }

    /// The value of `name` (the last one when repeated).
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The names of the parameters not in `known`, in order.
    pub(crate) fn unknown<'a>(&'a self, known: &[&str]) -> Vec<&'a str> {
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
    fn a_form_is_read_strictly() {
        let pairs = parse_form(b"name=Bill%C3%A9+%26+Co&x=&flag&a%20b=1").unwrap();
        assert_eq!(
            pairs,
            [("name", "Billé & Co"), ("x", ""), ("flag", ""), ("a b", "1")].map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        assert_eq!(parse_form(b"url=x&name=%FF%FE"), Err("name".to_owned()), "not UTF-8: refused, naming the field");
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
