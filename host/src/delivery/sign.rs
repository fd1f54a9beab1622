//! Signing (contract §4): `X-Webhook-Signature` is the lowercase hex HMAC-SHA256 of the exact
//! body bytes sent, keyed with the UTF-8 bytes of the webhook's `signing_secret` (the whole
//! string, `whsec_` prefix included).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The signature header value for `body`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Checks a signature in constant time (what a receiver does; used by tests and examples).
pub fn verify(secret: &str, body: &[u8], signature_hex: &str) -> bool {
    let Ok(expected) = hex::decode(signature_hex.trim()) else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

/// The headers of a delivery request (contract §4), then a plugin's extra headers (those
/// named `X-Webhook-*` or that HTTP owns are dropped: the host sets them).
pub fn request_headers(
    body: &[u8],
    secret: &str,
    delivery_id: &str,
    attempt: usize,
    event_created_at: &str,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    headers_with_signature(signature(secret, body), delivery_id, attempt, event_created_at, extra)
}

/// The headers of a request whose signature is known: what [`request_headers`] sent, as
/// the delivery record shows it.
pub fn headers_with_signature(
    signature: String,
    delivery_id: &str,
    attempt: usize,
    event_created_at: &str,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("user-agent".to_owned(), USER_AGENT.to_owned()),
        ("x-webhook-signature".to_owned(), signature),
        ("x-webhook-timestamp".to_owned(), event_created_at.to_owned()),
        ("x-webhook-delivery".to_owned(), delivery_id.to_owned()),
        ("x-webhook-attempt".to_owned(), attempt.to_string()),
    ];
    for (name, value) in extra {
        let lower = name.to_ascii_lowercase();
        if !is_reserved(&lower) {
            headers.push((lower, value.clone()));
        }
    }
    headers
}

/// `User-Agent` of every delivery.
pub const USER_AGENT: &str = concat!("Weir/", env!("CARGO_PKG_VERSION"));

/// Headers a plugin may not set.
pub fn is_reserved(lower_name: &str) -> bool {
    lower_name.starts_with("x-webhook-")
        || matches!(
            lower_name,
            "content-type"
                | "content-length"
                | "host"
                | "user-agent"
                | "transfer-encoding"
                | "connection"
                | "keep-alive"
                | "upgrade"
                | "te"
                | "trailer"
                | "proxy-authorization"
                | "proxy-connection"
        )
}

#[cfg(test)]
mod header_tests {
    use super::*;

    #[test]
    fn contract_headers_then_allowed_extras() {
        let extra = vec![
            ("X-Webhook-Signature".to_owned(), "forged".to_owned()),
            ("Content-Length".to_owned(), "1".to_owned()),
            ("X-Team".to_owned(), "ops".to_owned()),
        ];
        let headers = request_headers(b"{}", "whsec_k", "dlv_1", 3, "2026-11-22T11:00:38.123Z", &extra);
        let get = |n: &str| headers.iter().filter(|(k, _)| k == n).map(|(_, v)| v.as_str()).collect::<Vec<_>>();
        assert_eq!(get("x-webhook-signature"), vec![signature("whsec_k", b"{}").as_str()]);
        assert_eq!(get("x-webhook-attempt"), vec!["3"]);
        assert_eq!(get("x-webhook-delivery"), vec!["dlv_1"]);
        assert_eq!(get("x-webhook-timestamp"), vec!["2026-11-22T11:00:38.123Z"]);
        assert_eq!(get("content-type"), vec!["application/json"]);
        assert!(get("user-agent")[0].starts_with("Weir/"));
        assert_eq!(get("content-length"), Vec::<&str>::new());
        assert_eq!(get("x-team"), vec!["ops"]);
    }
}
