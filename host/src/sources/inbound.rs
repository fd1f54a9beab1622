//! What a provider's request is checked against: the request as it arrived ([`Inbound`]),
//! the source's key ([`Key`]), why a request is refused ([`Refusal`]), and the MAC and
//! comparison helpers every provider's rule is written with.

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256, Sha512};

/// How far a provider's signed timestamp may be from now (contract §10: 300 s).
pub(crate) const TOLERANCE_SECS: u64 = 300;

/// A request to a source's ingest URL, as it arrived.
#[derive(Debug)]
pub(crate) struct Inbound<'a> {
    pub headers: &'a http::HeaderMap,
    pub body: &'a [u8],
    /// The URL the provider called (`WEIR_PUBLIC_URL`, the path and the query): Twilio signs it.
    pub url: &'a str,
    /// Now, in Unix seconds.
    pub now_secs: u64,
    /// The body read as JSON, once, when a rule first asks (`None`: not JSON).
    json: std::cell::OnceCell<Option<serde_json::Value>>,
}

impl<'a> Inbound<'a> {
    /// The request to `url` with `headers` and `body`, checked at `now_secs`.
    pub(crate) fn new(headers: &'a http::HeaderMap, body: &'a [u8], url: &'a str, now_secs: u64) -> Inbound<'a> {
        Inbound { headers, body, url, now_secs, json: std::cell::OnceCell::new() }
    }

    /// A header's value as text (`None`: absent, or not visible ASCII).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
    }

    /// The header, or the refusal that it is missing.
    pub(crate) fn required(&self, name: &'static str) -> Result<&str, Refusal> {
        self.header(name).ok_or(Refusal::Missing(name))
    }

    /// A string at `path` in the body read as JSON (`None`: not JSON, or no string there).
    pub(crate) fn json_text(&self, path: &[&str]) -> Option<String> {
        let value = self.json.get_or_init(|| serde_json::from_slice(self.body).ok()).as_ref()?;
        let mut at = value;
        for key in path {
            at = at.get(key)?;
        }
        at.as_str().map(str::to_owned)
    }

    /// Whether a signed timestamp (Unix seconds, as text) is within [`TOLERANCE_SECS`] of now.
    pub(crate) fn fresh(&self, timestamp: &str) -> Result<(), Refusal> {
        let at: u64 = timestamp.trim().parse().map_err(|_| Refusal::Invalid("the timestamp is not a number"))?;
        if at.abs_diff(self.now_secs) > TOLERANCE_SECS { Err(Refusal::Stale) } else { Ok(()) }
    }
}

/// What a source verifies with: its secrets (the current one first, then one rotated out
/// less than 24 hours ago) and, for the generic kinds, how they are used.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key<'a> {
    pub secrets: &'a [String],
    pub scheme: &'a Scheme,
}

/// How a generic source's secret is used (the providers' kinds need no settings).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "scheme", rename_all = "snake_case")]
pub(crate) enum Scheme {
    #[default]
    Provider,
    Hmac {
        header: String,
        algorithm: Algorithm,
        encoding: Encoding,
        prefix: String,
    },
    Basic {
        username: String,
    },
    ApiKey {
        header: String,
    },
}

/// How a generic MAC is written in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Encoding {
    Hex,
    Base64,
}

/// Why a request was refused (contract §10): its code and what the log says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The header that carries the signature (or the credential) is not there.
    Missing(&'static str),
    /// A signature is there and does not match (or cannot be read).
    Invalid(&'static str),
    /// The signed timestamp is more than 300 s from now.
    Stale,
}

impl Refusal {
    /// The error code of the answer.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Refusal::Missing(_) => "missing_signature",
            Refusal::Invalid(_) => "invalid_signature",
            Refusal::Stale => "timestamp_out_of_tolerance",
        }
    }

    /// The answer's message, and the reason a request listing shows.
    pub(crate) fn message(&self) -> String {
        match self {
            Refusal::Missing(header) => format!("the request has no {header} header"),
            Refusal::Invalid(why) => format!("the signature does not match: {why}"),
            Refusal::Stale => format!("the signed timestamp is more than {TOLERANCE_SECS} s from now"),
        }
    }
}

/// The MAC algorithms a rule signs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Algorithm {
    Sha1,
    Sha256,
    Sha512,
}

/// The MAC of `parts` (one after the other) under `key`.
pub(crate) fn mac(algorithm: Algorithm, key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    fn run<M: Mac + KeyInit>(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        // HMAC takes keys of any length.
        let Ok(mut mac) = <M as KeyInit>::new_from_slice(key) else { return Vec::new() };
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().to_vec()
    }
    match algorithm {
        Algorithm::Sha1 => run::<Hmac<sha1::Sha1>>(key, parts),
        Algorithm::Sha256 => run::<Hmac<Sha256>>(key, parts),
        Algorithm::Sha512 => run::<Hmac<Sha512>>(key, parts),
    }
}

/// Whether `given` (decoded) equals `expected`, in constant time.
pub(crate) fn same(given: &[u8], expected: &[u8]) -> bool {
    !expected.is_empty() && crate::auth::secrets::equal(given, expected)
}

/// Standard base64 decoding (`None`: not base64).
pub(crate) fn base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text.trim()).ok()
}

/// Hex decoding (`None`: not hex).
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    hex::decode(text.trim()).ok()
}

/// The SHA-256 of a body, as the duplicate rule names bodies without a delivery id.
pub(crate) fn body_digest(body: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(body)))
}

/// Whether any of the source's secrets, made into a key by `key_of`, gives `given` as the
/// MAC of `parts`.
pub(crate) fn any_secret(
    key: &Key<'_>,
    key_of: impl Fn(&str) -> Option<Vec<u8>>,
    algorithm: Algorithm,
    (parts, given): (&[&[u8]], &[Vec<u8>]),
) -> bool {
    let mut matched = false;
    for secret in key.secrets {
        let Some(bytes) = key_of(secret) else { continue };
        let expected = mac(algorithm, &bytes, parts);
        for candidate in given {
            // Every comparison is made: how many match says nothing about where.
            matched |= same(candidate, &expected);
        }
    }
    matched
}
