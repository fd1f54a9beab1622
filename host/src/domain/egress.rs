//! A webhook's egress fields (contract §7): `headers` sent with every delivery and the
//! `client_certificate` for mutual TLS, validated here for the API and the settings pages,
//! the certificate's key sealed (`crate::vault`) before it is stored.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::Fields;
use crate::certs;
use crate::shared::SecretKeys;
use crate::store::tenants::webhooks::StoredCertificate;

/// Most extra headers per webhook.
pub(crate) const MAX_HEADERS: usize = 20;
/// Longest header value, in bytes.
pub(crate) const MAX_HEADER_VALUE: usize = 4096;
/// Most bytes of a webhook's headers together (names and values), as HTTP servers cap a
/// request's header block.
pub(crate) const MAX_HEADERS_BYTES: usize = 8 * 1024;
/// Longest header name.
const MAX_HEADER_NAME: usize = 256;
/// How much of a header name an error message repeats.
const NAME_SHOWN: usize = 64;

/// A header name as an error message shows it: at most [`NAME_SHOWN`] characters.
fn shown(name: &str) -> String {
    match name.char_indices().nth(NAME_SHOWN) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_owned(),
    }
}

/// Whether a character may not appear in a header value: the control characters
/// (Unicode category Cc, tab included) and the line and paragraph separators.
fn forbidden_in_value(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Why a header cannot be one of a webhook's, if it cannot.
pub(crate) fn header_problem(name: &str, value: &str) -> Option<String> {
    // An HTTP token, as hyper (which sends it) reads one.
    if name.len() > MAX_HEADER_NAME || hyper::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Some(format!(
            "`{}` is not an HTTP header name (at most {MAX_HEADER_NAME} of letters, digits and !#$%&'*+-.^_`|~)",
            shown(name)
        ));
    }
    let lower = name.to_ascii_lowercase();
    if crate::sign::is_hop_by_hop(&lower) {
        return Some(format!("`{name}` is a hop-by-hop header (RFC 9110 §7.6.1): it never reaches the endpoint"));
    }
    // Weir's own (`content-type`, `user-agent`, `x-webhook-*`, `webhook-*`, `traceparent`…)
    // and the HTTP layer's (`host`, `content-length`…).
    if crate::sign::is_reserved(&lower) {
        return Some(format!("`{name}` is set by Weir and cannot be replaced"));
    }
    if value.len() > MAX_HEADER_VALUE {
        return Some(format!("the value of `{name}` is longer than {MAX_HEADER_VALUE} bytes"));
    }
    if value.starts_with(' ') || value.ends_with(' ') {
        return Some(format!("the value of `{name}` must not start or end with spaces (HTTP drops them)"));
    }
    if value.chars().any(forbidden_in_value) || value.parse::<hyper::header::HeaderValue>().is_err() {
        return Some(format!(
            "the value of `{name}` must not hold control characters (CR, LF, NUL, tab, U+0085…) nor U+2028/U+2029"
        ));
    }
    None
}

/// `headers`: absent → `None`; `null` → no headers; else an object of at most
/// [`MAX_HEADERS`] names to string values (an error on `headers` otherwise).
pub(crate) fn headers(fields: &mut Fields) -> Option<BTreeMap<String, String>> {
    let value = fields.value("headers")?;
    let map = match value {
        Value::Null => return Some(BTreeMap::new()),
        Value::Object(map) => map,
        _ => {
            fields.error("headers", "must be an object of header names to string values, or null");
            return None;
        }
    };
    if map.len() > MAX_HEADERS {
        fields.error("headers", format!("at most {MAX_HEADERS} headers"));
        return None;
    }
    let mut out = BTreeMap::new();
    let mut seen = Vec::new();
    let mut total = 0;
    for (name, value) in map {
        let Value::String(value) = value else {
            fields.error("headers", format!("the value of `{name}` must be a string"));
            return None;
        };
        if let Some(problem) = header_problem(&name, &value) {
            fields.error("headers", problem);
            return None;
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            fields.error("headers", format!("`{name}` is given twice (names are case-insensitive)"));
            return None;
        }
        seen.push(lower);
        total += name.len() + value.len();
        if total > MAX_HEADERS_BYTES {
            fields.error("headers", format!("at most {MAX_HEADERS_BYTES} bytes of names and values together"));
            return None;
        }
        out.insert(name, value);
    }
    Some(out)
}

/// `client_certificate`: absent → `None`; `null` → `Some(None)` (remove); else
/// `{"certificate": PEM, "private_key": PEM}`, checked and its key sealed for this webhook.
pub(crate) fn client_certificate(
    keys: &SecretKeys,
    org_id: &str,
    webhook_id: &str,
    fields: &mut Fields,
) -> Option<Option<StoredCertificate>> {
    let object = match fields.value("client_certificate")? {
        Value::Null => return Some(None),
        Value::Object(object) => object,
        _ => {
            fields.error("client_certificate", "must be {\"certificate\": PEM, \"private_key\": PEM} or null");
            return None;
        }
    };
    let mut inner = Fields::new(object);
    let certificate = inner.required_string("certificate");
    let key = inner.required_string("private_key");
    let problems = match inner.finish() {
        Ok(()) => Vec::new(),
        Err(invalid) => invalid.0,
    };
    if let Some(problem) = problems.first() {
        fields.error("client_certificate", format!("{}: {}", problem.field, problem.message));
        return None;
    }
    let (Some(certificate), Some(key)) = (certificate, key) else { return None };
    let view = match certs::check(&certificate, &key) {
        Ok((view, _)) => view,
        Err(e) => {
            fields.error("client_certificate", e.to_string());
            return None;
        }
    };
    match seal(keys, &key_context(org_id, webhook_id), key.as_bytes()) {
        Ok(sealed_key) => Some(Some(StoredCertificate { chain_pem: certificate, sealed_key, view })),
        Err(e) => {
            tracing::error!(error = %e, "cannot seal a client certificate's key");
            fields.error("client_certificate", "the key cannot be stored now (the server's secret key is unavailable)");
            None
        }
    }
}

/// `plain` sealed (`crate::vault`) for `context` with the process's secret key; why not, in
/// words for the log.
pub(crate) fn seal(keys: &SecretKeys, context: &str, plain: &[u8]) -> Result<String, String> {
    let secret = keys.get().map_err(|e| e.to_string())?;
    crate::vault::seal(&secret, context, plain).map_err(|e| e.to_string())
}

/// What a webhook's sealed key is bound to.
pub(crate) fn key_context(org_id: &str, webhook_id: &str) -> String {
    format!("client_key {org_id} {webhook_id}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers_of(v: Value) -> Result<Option<BTreeMap<String, String>>, String> {
        let Value::Object(map) = json!({ "headers": v }) else { unreachable!() };
        let mut fields = Fields::new(map);
        let out = headers(&mut fields);
        match fields.finish() {
            Ok(()) => Ok(out),
            Err(e) => Err(e.0.iter().map(|f| format!("{}: {}", f.field, f.message)).collect::<Vec<_>>().join("; ")),
        }
    }

    #[test]
    fn headers_follow_the_contracts_rule() {
        let ok = headers_of(json!({"Authorization": "Bearer abc", "X-Api-Key": "k  e y"})).unwrap().unwrap();
        assert_eq!(ok["Authorization"], "Bearer abc");
        assert_eq!(headers_of(json!(null)).unwrap(), Some(BTreeMap::new()));
        for bad in [
            json!({"Content-Type": "text/plain"}),
            json!({"x-webhook-signature": "x"}),
            json!({"Webhook-Id": "x"}),
            json!({"traceparent": "x"}),
            json!({"TraceState": "x"}),
            json!({"Host": "x"}),
            json!({"User-Agent": "x"}),
            json!({"Content-Length": "1"}),
            json!({"Bad Name": "x"}),
            json!({"": "x"}),
            json!({"X-A": "a\r\nX-B: b"}),
            json!({"X-A": "nul\u{0}"}),
            json!({"X-A": " leading"}),
            json!({"X-A": "trailing\t"}),
            json!({"X-A": "tab\tinside"}),
            json!({"X-A": "next\u{85}line"}),
            json!({"X-A": "line\u{2028}sep"}),
            json!({"X-A": "para\u{2029}sep"}),
            json!({"X-A": "del\u{7f}"}),
            json!({"Proxy-Authenticate": "x"}),
            json!({"Trailers": "x"}),
            json!({"Trailer": "x"}),
            json!({"TE": "x"}),
            json!({"Keep-Alive": "x"}),
            json!({"Proxy-Connection": "x"}),
            json!({"Upgrade": "x"}),
            json!({"X-A": "x".repeat(MAX_HEADER_VALUE + 1)}),
            json!({"X-A": 1}),
            json!({"X-A": "1", "x-a": "2"}),
            json!(["X-A"]),
            json!("X-A: 1"),
        ] {
            let err = headers_of(bad.clone()).unwrap_err();
            assert!(err.starts_with("headers:"), "{bad}: {err}");
        }
        let many: serde_json::Map<String, Value> = (0..=MAX_HEADERS).map(|i| (format!("X-{i}"), json!("v"))).collect();
        assert!(headers_of(Value::Object(many)).is_err());
        let value = "v".repeat(MAX_HEADER_VALUE);
        assert!(headers_of(json!({"X-Long": value})).is_ok());
        // 8 KiB of names and values together, not 20 × 4 KiB.
        let big: serde_json::Map<String, Value> = (0..3).map(|i| (format!("X-{i}"), json!(value.clone()))).collect();
        let err = headers_of(Value::Object(big)).unwrap_err();
        assert!(err.contains("8192 bytes"), "{err}");
        assert!(headers_of(json!({"X-A": "é ünïcode ok"})).is_ok(), "text beyond ASCII that is not control");
    }

    #[test]
    fn a_long_header_name_is_not_echoed_whole() {
        let name = "x".repeat(100_000);
        let err = headers_of(json!({ name: "v" })).unwrap_err();
        assert!(err.len() < 300, "{} bytes", err.len());
        assert!(err.contains(&format!("`{}…`", "x".repeat(64))), "{err}");
        let hop = headers_of(json!({"Proxy-Authenticate": "x"})).unwrap_err();
        assert!(hop.contains("hop-by-hop"), "{hop}");
    }
}
