//! Signing (contract §4). Every attempt carries two families of signature headers, made
//! when the attempt starts:
//! - `X-Webhook-Signature`: the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with
//!   the UTF-8 bytes of the webhook's `signing_secret` (the whole string, `whsec_` included);
//! - Standard Webhooks (standardwebhooks.com): `webhook-id` (the delivery id),
//!   `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`: `v1,` and the
//!   base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed with [`standard_key`] — one entry
//!   per live secret (the new one, then the previous one during a rotation's grace period).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// One HMAC-SHA256.
type Tag = [u8; 32];

pub(crate) fn hmac(key: &[u8], parts: &[&[u8]]) -> Tag {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// The `X-Webhook-Signature` value for `body`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    const_hex::encode(hmac(secret.as_bytes(), &[body]))
}

/// Checks an `X-Webhook-Signature` in constant time (what a receiver does; used by tests
/// and examples).
pub fn verify(secret: &str, body: &[u8], signature_hex: &str) -> bool {
    use subtle::ConstantTimeEq;
    let Ok(expected) = hex::decode(signature_hex.trim()) else { return false };
    bool::from(hmac(secret.as_bytes(), &[body]).as_slice().ct_eq(&expected))
}

/// The prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// A new signing secret in the Standard Webhooks format: `whsec_` and the standard
/// (padded) base64 of 32 random bytes.
pub fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The key of the Standard Webhooks signature for a signing secret: the base64-decoded part
/// after `whsec_`. Secrets Weir made before it spoke Standard Webhooks are URL-safe base64
/// without padding (43 characters): their part after `whsec_` is decoded with that alphabet
/// (`whsec_` + the standard base64 of the same bytes is the equivalent standard secret).
/// Anything else is used as it is (its UTF-8 bytes).
pub fn standard_key(secret: &str) -> Vec<u8> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD
        .decode(encoded)
        .or_else(|_| URL_SAFE_NO_PAD.decode(encoded))
        .ok()
        .filter(|key| !key.is_empty())
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

/// The secrets a webhook signs with now: its current one and, during a rotation's grace
/// period, the previous one.
#[derive(Debug, Clone, Copy)]
pub struct Secrets<'a> {
    pub current: &'a str,
    pub previous: Option<&'a str>,
}

/// The signatures of one attempt (the MACs, formatted into headers on demand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signatures {
    /// `X-Webhook-Signature`'s MAC (with the current secret).
    body_mac: Tag,
    /// `webhook-signature`'s MACs: the current secret's, then the previous one's. Empty for
    /// attempts recorded before Weir signed the Standard Webhooks way.
    standard: Vec<Tag>,
}

impl Signatures {
    /// Signs one attempt of `delivery_id` at `timestamp` (Unix seconds).
    pub fn sign(secrets: Secrets<'_>, delivery_id: &str, timestamp: u64, body: &[u8]) -> Signatures {
        let ts = timestamp.to_string();
        let standard =
            |secret: &str| hmac(&standard_key(secret), &[delivery_id.as_bytes(), b".", ts.as_bytes(), b".", body]);
        let mut tags = vec![standard(secrets.current)];
        tags.extend(secrets.previous.map(standard));
        Signatures { body_mac: hmac(secrets.current.as_bytes(), &[body]), standard: tags }
    }

    /// `X-Webhook-Signature`.
    pub fn x_webhook_signature(&self) -> String {
        const_hex::encode(self.body_mac)
    }

    /// `webhook-signature` (`None` for an attempt recorded before it existed).
    pub fn webhook_signature(&self) -> Option<String> {
        let entries: Vec<String> = self.standard.iter().map(|t| format!("v1,{}", STANDARD.encode(t))).collect();
        (!entries.is_empty()).then(|| entries.join(" "))
    }

    /// The stored form (a delivery row's `g`, `store::queue::row`): the MACs one after another (32 bytes
    /// each, raw), `X-Webhook-Signature`'s first.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(32 * (1 + self.standard.len()));
        bytes.extend_from_slice(&self.body_mac);
        for tag in &self.standard {
            bytes.extend_from_slice(tag);
        }
        bytes
    }

    /// Reads [`Signatures::encode`]'s form.
    pub fn decode(bytes: &[u8]) -> Option<Signatures> {
        let (tags, rest) = bytes.as_chunks::<32>();
        let (body_mac, standard) = tags.split_first().filter(|_| rest.is_empty())?;
        Some(Signatures { body_mac: *body_mac, standard: standard.to_vec() })
    }
}

/// What the headers of one attempt are made of.
#[derive(Debug, Clone, Copy)]
pub struct Attempt<'a> {
    pub delivery_id: &'a str,
    /// The attempt's number (`X-Webhook-Attempt`).
    pub number: usize,
    /// The event's `created_at` (`X-Webhook-Timestamp`).
    pub event_created_at: &'a str,
    /// When the attempt was signed, Unix seconds (`webhook-timestamp`).
    pub signed_at: u64,
}

/// The headers of a delivery request (contract §4), then a plugin's extra headers (those
/// the host sets — `X-Webhook-*`, `webhook-*` — or that HTTP owns are dropped).
pub fn request_headers(
    attempt: Attempt<'_>,
    signatures: &Signatures,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("user-agent".to_owned(), USER_AGENT.to_owned()),
        ("x-webhook-signature".to_owned(), signatures.x_webhook_signature()),
        ("x-webhook-timestamp".to_owned(), attempt.event_created_at.to_owned()),
        ("x-webhook-delivery".to_owned(), attempt.delivery_id.to_owned()),
        ("x-webhook-attempt".to_owned(), attempt.number.to_string()),
    ];
    if let Some(standard) = signatures.webhook_signature() {
        headers.push(("webhook-id".to_owned(), attempt.delivery_id.to_owned()));
        headers.push(("webhook-timestamp".to_owned(), attempt.signed_at.to_string()));
        headers.push(("webhook-signature".to_owned(), standard));
    }
    for (name, value) in extra {
        let lower = name.to_ascii_lowercase();
        if !is_reserved(&lower) {
            headers.push((lower, value.clone()));
        }
    }
    headers
}

/// Sets each of `names` found in `given` to its value there, in place of Weir's (a source's
/// forwarded request keeps the provider's `Content-Type` and `User-Agent`).
pub fn take_over(headers: &mut [(String, String)], given: &[(String, String)], names: &[&str]) {
    for (name, value) in headers.iter_mut() {
        if names.contains(&name.as_str())
            && let Some((_, theirs)) = given.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            value.clone_from(theirs);
        }
    }
}

/// `User-Agent` of every delivery.
pub const USER_AGENT: &str = concat!("Weir/", env!("CARGO_PKG_VERSION"));

/// Headers Weir or the HTTP layer sets: neither a plugin nor a webhook's `headers` may.
/// The hop-by-hop ones ([`is_hop_by_hop`]) among them.
pub fn is_reserved(lower_name: &str) -> bool {
    lower_name.starts_with("x-webhook-")
        || lower_name.starts_with("webhook-")
        || is_hop_by_hop(lower_name)
        || matches!(
            lower_name,
            "content-type" | "content-length" | "host" | "user-agent" | "traceparent" | "tracestate"
        )
}

/// Hop-by-hop headers (RFC 9110 §7.6.1, with RFC 2616's `Trailers` and the unofficial
/// `Proxy-Connection`): they concern one connection, never the endpoint.
pub fn is_hop_by_hop(lower_name: &str) -> bool {
    matches!(
        lower_name,
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "trailers"
            | "transfer-encoding"
            | "upgrade"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectors both clients' `verify` pass (`clients/signature-vectors.json`, made with the
    /// Standard Webhooks library): Weir's signer makes exactly those headers.
    #[test]
    fn the_signer_makes_the_shared_vectors_headers() {
        let file: serde_json::Value =
            serde_json::from_str(include_str!("../../clients/signature-vectors.json")).expect("the vectors");
        let vectors = file["vectors"].as_array().expect("vectors");
        let mut signed = 0;
        for vector in vectors.iter().filter(|v| v["signing"].is_object()) {
            let headers = &vector["headers"];
            let text = |v: &serde_json::Value| v.as_str().expect("a string").to_owned();
            let previous = vector["signing"]["previous"].as_str();
            let secrets = Secrets { current: vector["signing"]["current"].as_str().expect("current"), previous };
            let timestamp: u64 = text(&headers["webhook-timestamp"]).parse().expect("a timestamp");
            let body = text(&vector["body"]);
            let made = Signatures::sign(secrets, &text(&headers["webhook-id"]), timestamp, body.as_bytes());
            assert_eq!(made.webhook_signature(), Some(text(&headers["webhook-signature"])), "{}", vector["name"]);
            assert_eq!(made.x_webhook_signature(), text(&headers["x-webhook-signature"]), "{}", vector["name"]);
            signed += 1;
        }
        assert!(signed >= 7, "{signed} vectors signed");
    }

    #[test]
    fn matches_a_known_hmac_sha256_vector() {
        // RFC 4231 test case 2.
        let sig = signature("Jefe", b"what do ya want for nothing?");
        assert_eq!(sig, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn verify_accepts_only_the_exact_body_and_secret() {
        let sig = signature("whsec_abc", b"{\"a\":1}");
        assert!(verify("whsec_abc", b"{\"a\":1}", &sig));
        assert!(!verify("whsec_abc", b"{\"a\": 1}", &sig));
        assert!(!verify("whsec_abd", b"{\"a\":1}", &sig));
        assert!(!verify("whsec_abc", b"{\"a\":1}", "zz"));
    }

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // The example of the Standard Webhooks specification (and its libraries' tests).
        let secrets = Secrets { current: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", previous: None };
        let body = br#"{"test": 2432232314}"#;
        let sigs = Signatures::sign(secrets, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(sigs.webhook_signature().as_deref(), Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
        assert_eq!(sigs.x_webhook_signature(), signature(secrets.current, body));
    }

    #[test]
    fn new_secrets_are_standard_and_old_ones_decode_url_safe() {
        let secret = new_secret();
        let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or_default();
        assert_eq!(STANDARD.decode(encoded).map(|k| k.len()).ok(), Some(32));
        assert_eq!(standard_key(&secret).len(), 32);
        let bytes: [u8; 32] = [0xfb; 32];
        let old = format!("whsec_{}", URL_SAFE_NO_PAD.encode(bytes));
        assert_eq!(standard_key(&old), bytes.to_vec());
        assert_eq!(standard_key("not-base64!"), b"not-base64!".to_vec());
    }

    #[test]
    fn a_grace_period_signs_with_both_secrets_new_first() {
        let both = Secrets { current: "whsec_AAAA", previous: Some("whsec_BBBB") };
        let sigs = Signatures::sign(both, "dlv_1", 1, b"{}");
        let alone = |s| Signatures::sign(Secrets { current: s, previous: None }, "dlv_1", 1, b"{}");
        let header = sigs.webhook_signature().unwrap_or_default();
        let expected = format!(
            "{} {}",
            alone("whsec_AAAA").webhook_signature().unwrap_or_default(),
            alone("whsec_BBBB").webhook_signature().unwrap_or_default()
        );
        assert_eq!(header, expected);
        assert_eq!(
            sigs.x_webhook_signature(),
            signature("whsec_AAAA", b"{}"),
            "X-Webhook-Signature uses the new secret"
        );
    }

    #[test]
    fn stored_signatures_read_back() {
        let sigs = Signatures::sign(Secrets { current: "whsec_AAAA", previous: Some("whsec_BB") }, "d", 7, b"x");
        assert_eq!(sigs.encode().len(), 96, "the body MAC, then one standard MAC per secret");
        assert_eq!(Signatures::decode(&sigs.encode()), Some(sigs.clone()));
        assert_eq!(Signatures::decode(&[1u8; 31]), None);
        assert_eq!(Signatures::decode(&[]), None);
    }

    #[test]
    fn contract_headers_then_allowed_extras() {
        let extra = vec![
            ("X-Webhook-Signature".to_owned(), "forged".to_owned()),
            ("Webhook-Timestamp".to_owned(), "1".to_owned()),
            ("Content-Length".to_owned(), "1".to_owned()),
            ("X-Team".to_owned(), "ops".to_owned()),
        ];
        let sigs = Signatures::sign(Secrets { current: "whsec_k", previous: None }, "dlv_1", 1_700_000_000, b"{}");
        let attempt = Attempt {
            delivery_id: "dlv_1",
            number: 3,
            event_created_at: "2026-11-22T11:00:38.123Z",
            signed_at: 1_700_000_000,
        };
        let headers = request_headers(attempt, &sigs, &extra);
        let get = |n: &str| headers.iter().filter(|(k, _)| k == n).map(|(_, v)| v.as_str()).collect::<Vec<_>>();
        assert_eq!(get("x-webhook-signature"), vec![signature("whsec_k", b"{}").as_str()]);
        assert_eq!(get("x-webhook-attempt"), vec!["3"]);
        assert_eq!(get("x-webhook-delivery"), vec!["dlv_1"]);
        assert_eq!(get("x-webhook-timestamp"), vec!["2026-11-22T11:00:38.123Z"]);
        assert_eq!(get("webhook-id"), vec!["dlv_1"]);
        assert_eq!(get("webhook-timestamp"), vec!["1700000000"]);
        assert_eq!(get("webhook-signature").len(), 1);
        assert_eq!(get("content-type"), vec!["application/json"]);
        assert!(get("user-agent")[0].starts_with("Weir/"));
        assert_eq!(get("content-length"), Vec::<&str>::new());
        assert_eq!(get("x-team"), vec!["ops"]);
    }
}
