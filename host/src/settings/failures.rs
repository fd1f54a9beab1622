//! A failed attempt in words a customer can act on: what happened, in one sentence, and what
//! to try next — one rule per class of failure (the endpoint's HTTP answer by its class, a
//! refused connection, a name that does not resolve, a private address, TLS, a timeout, a
//! broken connection, Weir's egress proxy, a broker's missing stream or queue, refused
//! credentials, a refused message, a failure inside Weir). The attempt's own words stay
//! beside it (`health::attempt_words`).

use serde_json::Value;

/// A failure explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Explained {
    /// What happened.
    pub(super) what: String,
    /// What to try.
    pub(super) next: &'static str,
}

impl Explained {
    fn new(what: impl Into<String>, next: &'static str) -> Explained {
        Explained { what: what.into(), next }
    }
}

/// The failure of an attempt (`deliveries::attempt_json`); `None` for one that succeeded.
pub(super) fn explain(attempt: &Value) -> Option<Explained> {
    match (attempt["status_code"].as_u64(), attempt["error"].as_str()) {
        (Some(code), _) if (200..300).contains(&code) => None,
        (Some(code), _) => Some(http_answer(code)),
        (None, Some(error)) => Some(error_words(error)),
        (None, None) => None,
    }
}

/// An endpoint's HTTP answer outside 2xx.
fn http_answer(code: u64) -> Explained {
    match code {
        401 | 403 => Explained::new(
            format!("The endpoint refused the request as not authorised (HTTP {code})."),
            "Check that the endpoint verifies Weir's signature with this webhook's current secret, and that it does not expect other credentials.",
        ),
        404 | 405 => Explained::new(
            format!("The endpoint's address was not found (HTTP {code})."),
            "Check the webhook's URL: the path or method the endpoint takes may have changed.",
        ),
        408 | 429 => Explained::new(
            format!("The endpoint asked Weir to slow down (HTTP {code})."),
            "Weir waits and tries again on its schedule; raise the endpoint's rate limit if this keeps happening.",
        ),
        413 => Explained::new(
            "The endpoint refused the request as too large (HTTP 413).",
            "Raise the endpoint's request size limit, or trim the payload with a filter or plugin.",
        ),
        300..=399 => Explained::new(
            format!("The endpoint answered with a redirect (HTTP {code}), which Weir does not follow."),
            "Set the webhook's URL to the address the endpoint redirects to.",
        ),
        400..=499 => Explained::new(
            format!("The endpoint rejected the request (HTTP {code})."),
            "Read the endpoint's response below: it may not accept this event or its payload.",
        ),
        _ => Explained::new(
            format!("The endpoint failed while handling the request (HTTP {code})."),
            "The problem is on the endpoint's side: check its logs. Weir tries again on its schedule.",
        ),
    }
}

/// What an error's words mean, tried in order: the first rule one of whose words the error
/// holds explains it — the network first (DNS, a private address, a refused connection, TLS,
/// a timeout), then a broker's refusals, then what is not the destination's doing.
const RULES: &[(&[&str], &str, &str)] = &[
    (
        &["does not resolve"],
        "The endpoint's host name does not resolve (DNS).",
        "Check the host name in the URL for typos, and that its DNS record exists.",
    ),
    (
        &["not a public address", "blocked by the URL rule"],
        "The endpoint's address is private or reserved, so Weir does not send to it.",
        "Use the endpoint's public address (a host name that resolves to a public IP).",
    ),
    (
        &["Connection refused", "connection refused"],
        "Nothing accepted the connection at the endpoint's address.",
        "Check that the server is running and listening on that port, and that no firewall blocks it.",
    ),
    (
        &["TLS handshake failed", "certificate", "tls"],
        "The secure connection (TLS) to the endpoint failed.",
        "Check that the endpoint's certificate is valid, not expired, issued by a trusted authority and names the host in the URL.",
    ),
    (
        &["timed out", "did not acknowledge in time", "did not confirm"],
        "The destination did not answer in time.",
        "Answer webhooks quickly: acknowledge with a 2xx first and do the work after. Weir tries again on its schedule.",
    ),
    (
        &["no stream holds subject"],
        "No JetStream stream holds the webhook's subject, so NATS had nowhere to keep the message.",
        "Create a stream whose subjects include it (nats stream add --subjects …), then retry the delivery.",
    ),
    (
        &["unroutable"],
        "The exchange has no queue bound to the webhook's routing key, so RabbitMQ dropped the message.",
        "Bind a queue to the exchange with this routing key, then retry the delivery.",
    ),
    (
        &[
            "ACCESS_REFUSED",
            "uthorization",
            "uthentication",
            "credentials",
            "InvalidClientTokenId",
            "AccessDenied",
            "SignatureDoesNotMatch",
        ],
        "The destination refused the credentials saved with this webhook.",
        "Check the user, password or keys on the webhook's settings, and that they may send to this destination.",
    ),
    (
        &["NonExistentQueue", "NotFound", "does not exist", "NOT_FOUND"],
        "The queue, topic or exchange the webhook names does not exist.",
        "Create it (or correct its name in the webhook's settings), then retry the delivery.",
    ),
    (
        &["nack", "refused the message", "refused the entry", "AWS answered"],
        "The destination took the connection but refused the message.",
        "Read its words below: check the destination's limits and permissions for this webhook.",
    ),
    (
        &["internal error"],
        "The attempt failed inside the webhook service, not at the destination.",
        "Nothing to change on your side: it is tried again on its schedule. Tell the service you use if it keeps happening.",
    ),
    (
        &["proxy", "CONNECT"],
        "The service's outgoing proxy failed, not the destination.",
        "Nothing to change on your side: it is tried again on its schedule. Tell the service you use if it keeps happening.",
    ),
    (
        &["connection lost", "reset", "closed", "broken pipe"],
        "The connection broke before the destination answered.",
        "Check the endpoint's server logs for a crash or restart. Weir tries again on its schedule.",
    ),
];

/// An attempt that got no HTTP answer, by its error's words ([`RULES`]).
fn error_words(error: &str) -> Explained {
    let rule = RULES.iter().find(|(words, _, _)| words.iter().any(|w| error.contains(w)));
    match rule {
        Some((_, what, next)) => Explained::new(*what, next),
        None => Explained::new(
            "The attempt failed before the destination answered.",
            "Read its words below. Weir tries again on its schedule.",
        ),
    }
}

/// The explanation as a page shows it.
pub(super) fn explained_html(e: &Explained) -> String {
    format!(
        r#"<div class="why"><p><strong>{}</strong></p><p>{}</p></div>"#,
        super::html::esc(&e.what),
        super::html::esc(e.next)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn what(attempt: Value) -> String {
        explain(&attempt).map(|e| e.what).unwrap_or_default()
    }

    #[test]
    fn each_class_of_failure_has_its_own_words() {
        assert_eq!(explain(&json!({"status_code": 204})), None);
        let cases = [
            (json!({"status_code": 500}), "failed while handling"),
            (json!({"status_code": 503}), "failed while handling"),
            (json!({"status_code": 401}), "not authorised"),
            (json!({"status_code": 404}), "not found"),
            (json!({"status_code": 429}), "slow down"),
            (json!({"status_code": 422}), "rejected the request (HTTP 422)"),
            (json!({"status_code": 302}), "redirect"),
            (json!({"error": "connection failed: Connection refused (os error 111)"}), "Nothing accepted"),
            (json!({"error": "blocked by the URL rule: host `nowhere.invalid` does not resolve"}), "does not resolve"),
            (
                json!({"error": "blocked by the URL rule: resolves to 10.0.0.1, which is not a public address"}),
                "private",
            ),
            (json!({"error": "TLS handshake failed: invalid peer certificate: UnknownIssuer"}), "TLS"),
            (json!({"error": "timed out after 10s"}), "in time"),
            (json!({"error": "no stream holds subject billing.orders"}), "No JetStream stream"),
            (json!({"error": "unroutable: no queue is bound to routing key o (312 NO_ROUTE)"}), "no queue bound"),
            (json!({"error": "connection failed: 127.0.0.1:5672: ACCESS_REFUSED - Login was refused"}), "credentials"),
            (json!({"error": "the broker did not take the message (nack)"}), "refused the message"),
            (json!({"error": "internal error"}), "inside the webhook service"),
            (json!({"error": "connection lost: Connection reset by peer (os error 104)"}), "connection broke"),
            (json!({"error": "something new"}), "before the destination answered"),
        ];
        for (attempt, words) in cases {
            let said = what(attempt.clone());
            assert!(said.contains(words), "{attempt}: {said}");
        }
        let html = explained_html(&explain(&json!({"status_code": 500})).unwrap());
        assert!(html.contains("check its logs"), "{html}");
    }
}
