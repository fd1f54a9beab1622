//! What a webhook's `destination` names (contract §9): where its deliveries go when that is
//! not an HTTP endpoint. A destination is kept in two parts: its [`Spec`] (the kind and the
//! address, no credentials: stored as JSON, shown on read) and its [`Credentials`] (sealed by
//! `crate::vault` for the webhook, never shown, never in a delivery, attempt, log or trace).
//! The delivery workers' senders are in `crate::delivery::destination`.
//!
//! Kinds: `http` (the webhook's `url`, as before), `nats` (JetStream), `amqp` (AMQP 0-9-1:
//! RabbitMQ), and AWS's `sqs`, `sns` and `eventbridge` (signed with Signature Version 4; an
//! `endpoint_url` for a compatible service or an emulator).

mod aws;
mod spec;

use serde_json::Value;
use url::Url;

use self::spec::{AMQP_PORT, AMQPS_PORT, NATS_PORT};
pub use self::spec::{Credentials, Parsed, Refusal, Spec, credentials_context};

/// Longest exchange name, routing key, virtual host, user or password (an AMQP short
/// string: its length is one byte on the wire).
const MAX_SHORT: usize = 255;
/// Longest subject accepted.
const MAX_SUBJECT: usize = 255;
/// Longest user name or password of any kind (contract §10).
const MAX_CREDENTIAL: usize = 4096;
/// Most bytes of a NATS user name and password together: both travel in the `CONNECT`
/// line, which a server refuses past its `max_control_line` (4 KiB by default).
const MAX_NATS_CREDENTIALS: usize = 3072;

/// Reads a `destination` value: `None` for HTTP (`null`, or `{"type": "http"}`).
pub fn parse(value: &Value) -> Result<Option<Parsed>, Refusal> {
    let refuse = |field: &str, why: &str| Err((format!("destination{field}"), why.to_owned()));
    let object = match value {
        Value::Null => return Ok(None),
        Value::Object(object) => object,
        _ => return refuse("", "must be an object with a `type`, or null"),
    };
    let text = |name: &str| object.get(name).and_then(Value::as_str);
    match text("type") {
        Some("http") => {
            if object.len() > 1 {
                return refuse("", "an http destination has nothing but its type: the webhook's url says where");
            }
            Ok(None)
        }
        Some("nats") => {
            for name in object.keys() {
                if !matches!(name.as_str(), "type" | "url" | "subject") {
                    return refuse(&format!(".{name}"), "is not a field of a nats destination (type, url, subject)");
                }
            }
            let Some(url) = text("url") else { return refuse(".url", "is required: nats://[user:password@]host:port") };
            let Some(subject) = text("subject") else { return refuse(".subject", "is required") };
            let (url, credentials) = nats_url(url).map_err(|why| (String::from("destination.url"), why))?;
            let together = credentials
                .as_ref()
                .map_or(0, |c| c.user.as_deref().map_or(0, str::len) + c.password.as_deref().map_or(0, str::len));
            if together > MAX_NATS_CREDENTIALS {
                return refuse(
                    ".url",
                    &format!(
                        "user and password must be at most {MAX_NATS_CREDENTIALS} bytes together (NATS sends them in one control line)"
                    ),
                );
            }
            subject_rule(subject).map_err(|why| (String::from("destination.subject"), why))?;
            Ok(Some(Parsed { spec: Spec::Nats { url, subject: subject.to_owned() }, credentials }))
        }
        Some("amqp") => {
            for name in object.keys() {
                if !matches!(name.as_str(), "type" | "url" | "exchange" | "routing_key") {
                    return refuse(
                        &format!(".{name}"),
                        "is not a field of an amqp destination (type, url, exchange, routing_key)",
                    );
                }
            }
            let Some(url) = text("url") else {
                return refuse(".url", "is required: amqp[s]://[user:password@]host:port/vhost");
            };
            let Some(exchange) = text("exchange") else {
                return refuse(".exchange", "is required (\"\" names the default exchange)");
            };
            let routing_key = text("routing_key").unwrap_or("");
            let (url, credentials) = amqp_url(url).map_err(|why| (String::from("destination.url"), why))?;
            short_string(exchange).map_err(|why| (String::from("destination.exchange"), why))?;
            short_string(routing_key).map_err(|why| (String::from("destination.routing_key"), why))?;
            if exchange.is_empty() && routing_key.is_empty() {
                return refuse(".routing_key", "is required with the default exchange (it names the queue)");
            }
            let spec = Spec::Amqp { url, exchange: exchange.to_owned(), routing_key: routing_key.to_owned() };
            Ok(Some(Parsed { spec, credentials }))
        }
        Some(kind @ ("sqs" | "sns" | "eventbridge")) => aws::parse(kind, object),
        Some(_) => refuse(".type", "must be http, nats, amqp, sqs, sns or eventbridge"),
        None => refuse(".type", "is required"),
    }
}

/// A broker's URL of one of `schemes` (`form`: how one is written, for the messages): the parsed URL,
/// its host, and the credentials of its user-info (taken out of what is stored).
fn broker_url(text: &str, schemes: &[&str], form: &str) -> Result<(Url, String, Option<Credentials>), String> {
    let url = Url::parse(text.trim()).map_err(|_| format!("must be a URL: {form}"))?;
    if !schemes.contains(&url.scheme()) {
        return Err(format!("must be a URL of the form {form}"));
    }
    let host = url.host_str().filter(|h| !h.is_empty()).ok_or("must name a host")?.to_owned();
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("must be nothing but {form}"));
    }
    if url.port() == Some(0) {
        return Err("must name a port from 1 to 65535".to_owned());
    }
    let credentials = Credentials {
        user: Some(decoded(url.username())).filter(|u| !u.is_empty()),
        password: url.password().map(decoded),
        ..Credentials::default()
    };
    for (what, value) in [("user name", &credentials.user), ("password", &credentials.password)] {
        if value.as_ref().is_some_and(|v| v.len() > MAX_CREDENTIAL || v.chars().any(char::is_control)) {
            return Err(format!("{what} must be at most {MAX_CREDENTIAL} bytes, without control characters"));
        }
    }
    Ok((url, host, Some(credentials).filter(|c| !c.is_empty())))
}

/// A URL's percent-encoded part, decoded.
fn decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// A NATS server's URL: `nats://host[:port]`, credentials taken out.
fn nats_url(text: &str) -> Result<(String, Option<Credentials>), String> {
    const FORM: &str = "nats://[user:password@]host:port";
    let (url, host, credentials) = broker_url(text, &["nats"], FORM)?;
    if !matches!(url.path(), "" | "/") {
        return Err(format!("must be nothing but {FORM}"));
    }
    Ok((format!("nats://{host}:{}", url.port().unwrap_or(NATS_PORT)), credentials))
}

/// An AMQP broker's URL: `amqp[s]://host[:port][/vhost]` (`amqps`: TLS, port 5671 unless
/// given), credentials taken out; the stored address names the virtual host as the URL
/// encodes it (`/%2f` for `/`, the default).
fn amqp_url(text: &str) -> Result<(String, Option<Credentials>), String> {
    let (url, host, credentials) = broker_url(text, &["amqp", "amqps"], "amqp[s]://[user:password@]host:port/vhost")?;
    let vhost = match url.path() {
        "" | "/" => "%2f",
        path => path.trim_start_matches('/'),
    };
    if vhost.contains('/') {
        return Err("names one virtual host (encode a / in it as %2f)".to_owned());
    }
    if decoded(vhost).len() > MAX_SHORT {
        return Err(format!("its virtual host must be at most {MAX_SHORT} bytes"));
    }
    if let Some(credentials) = &credentials {
        for (what, value) in [("user name", &credentials.user), ("password", &credentials.password)] {
            if value.as_ref().is_some_and(|v| v.len() > MAX_SHORT) {
                return Err(format!("its {what} must be at most {MAX_SHORT} bytes"));
            }
        }
    }
    let (scheme, default_port) = if url.scheme() == "amqps" { ("amqps", AMQPS_PORT) } else { ("amqp", AMQP_PORT) };
    Ok((format!("{scheme}://{host}:{}/{vhost}", url.port().unwrap_or(default_port)), credentials))
}

/// An exchange name or routing key: at most 255 bytes, no control characters.
fn short_string(text: &str) -> Result<(), String> {
    if text.len() > MAX_SHORT || text.chars().any(char::is_control) {
        return Err(format!("must be at most {MAX_SHORT} bytes, without control characters"));
    }
    Ok(())
}

/// A subject to publish to: dot-separated tokens, no wildcards, no spaces.
fn subject_rule(subject: &str) -> Result<(), String> {
    if subject.is_empty() || subject.len() > MAX_SUBJECT {
        return Err(format!("must be 1 to {MAX_SUBJECT} characters"));
    }
    for token in subject.split('.') {
        if token.is_empty() {
            return Err("must be tokens separated by single dots".to_owned());
        }
        if token == "*" || token == ">" || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("must not contain wildcards (* or >) or spaces".to_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn http_is_no_destination_and_nats_keeps_its_credentials_apart() {
        assert_eq!(parse(&Value::Null), Ok(None));
        assert_eq!(parse(&json!({"type": "http"})), Ok(None));
        let parsed =
            parse(&json!({"type": "nats", "url": "nats://weir:s%40cret@127.0.0.1:4333", "subject": "orders.created"}))
                .unwrap()
                .unwrap();
        assert_eq!(parsed.spec, Spec::Nats { url: "nats://127.0.0.1:4333".into(), subject: "orders.created".into() });
        let credentials = parsed.credentials.unwrap();
        assert_eq!((credentials.user.as_deref(), credentials.password.as_deref()), (Some("weir"), Some("s@cret")));
        let plain = parse(&json!({"type": "nats", "url": "nats://broker.internal", "subject": "x"})).unwrap().unwrap();
        assert_eq!(plain.spec.address(), "nats://broker.internal:4222");
        assert_eq!(plain.credentials, None);
        assert_eq!(plain.spec.host_port(), ("broker.internal".to_owned(), 4222));
    }

    #[test]
    fn amqp_keeps_its_virtual_host_and_its_credentials_apart() {
        let parsed =
            parse(&json!({"type": "amqp", "url": "amqp://weir:pw@127.0.0.1:5673/orders", "exchange": "x", "routing_key": "k"}))
                .unwrap()
                .unwrap();
        assert_eq!(
            parsed.spec,
            Spec::Amqp { url: "amqp://127.0.0.1:5673/orders".into(), exchange: "x".into(), routing_key: "k".into() }
        );
        assert_eq!(parsed.credentials.unwrap().password.as_deref(), Some("pw"));
        let default = parse(&json!({"type": "amqp", "url": "amqp://broker", "exchange": "", "routing_key": "jobs"}))
            .unwrap()
            .unwrap();
        assert_eq!(default.spec.address(), "amqp://broker:5672/%2f", "the default virtual host");
        assert_eq!(default.spec.host_port(), ("broker".to_owned(), 5672));
        let tls = parse(&json!({"type": "amqp", "url": "amqps://broker/v", "exchange": "", "routing_key": "jobs"}))
            .unwrap()
            .unwrap();
        assert_eq!(tls.spec.address(), "amqps://broker:5671/v", "TLS, on its own default port");
        assert_eq!(tls.spec.host_port(), ("broker".to_owned(), 5671));
    }

    #[test]
    fn a_malformed_destination_names_its_field() {
        let field = |v: Value| parse(&v).unwrap_err().0;
        assert_eq!(field(json!("nats://x")), "destination");
        assert_eq!(field(json!({"url": "nats://x"})), "destination.type");
        assert_eq!(field(json!({"type": "kafka"})), "destination.type");
        let sqs = json!({"type": "sqs", "region": "us-east-1", "access_key_id": "a", "secret_access_key": "s"});
        assert_eq!(field(sqs), "destination.queue_url");
        assert_eq!(field(json!({"type": "amqp", "url": "amqp://x", "exchange": ""})), "destination.routing_key");
        assert_eq!(field(json!({"type": "amqp", "url": "amqp://x", "routing_key": "q"})), "destination.exchange");
        assert_eq!(
            field(json!({"type": "amqp", "url": "http://x", "exchange": "", "routing_key": "q"})),
            "destination.url"
        );
        assert_eq!(field(json!({"type": "nats", "url": "tls://x", "subject": "q"})), "destination.url");
        assert_eq!(
            field(json!({"type": "amqp", "url": "amqp://x/a/b", "exchange": "", "routing_key": "q"})),
            "destination.url"
        );
        let long = "q".repeat(256);
        assert_eq!(
            field(json!({"type": "amqp", "url": "amqp://x", "exchange": "", "routing_key": long})),
            "destination.routing_key"
        );
        assert_eq!(field(json!({"type": "nats", "subject": "a"})), "destination.url");
        assert_eq!(field(json!({"type": "nats", "url": "http://x", "subject": "a"})), "destination.url");
        assert_eq!(field(json!({"type": "nats", "url": "nats://x/path", "subject": "a"})), "destination.url");
        for subject in ["", "a..b", "orders.*", "orders.>", "a b", ".a"] {
            assert_eq!(field(json!({"type": "nats", "url": "nats://x", "subject": subject})), "destination.subject");
        }
        assert_eq!(
            field(json!({"type": "nats", "url": "nats://x", "subject": "a", "stream": "S"})),
            "destination.stream"
        );
        assert_eq!(field(json!({"type": "http", "url": "https://x"})), "destination");
    }

    #[test]
    fn every_value_the_protocols_bound_is_bounded_when_saved() {
        let amqp = |url: String, exchange: &str| {
            parse(&json!({"type": "amqp", "url": url, "exchange": exchange, "routing_key": "q"})).map(|_| ())
        };
        let field = |r: Result<(), Refusal>| r.unwrap_err().0;
        // Each short string within its 255 bytes, then one over (the vhost as decoded).
        assert_eq!(amqp(format!("amqp://x/{}", "v".repeat(255)), "x"), Ok(()));
        assert_eq!(field(amqp(format!("amqp://x/{}", "v".repeat(256)), "x")), "destination.url");
        assert_eq!(field(amqp(format!("amqp://x/{}", "%41".repeat(256)), "x")), "destination.url");
        assert_eq!(amqp(format!("amqp://{}:{}@x/v", "u".repeat(255), "p".repeat(255)), "x"), Ok(()));
        assert_eq!(field(amqp(format!("amqp://{}@x/v", "u".repeat(256)), "x")), "destination.url");
        assert_eq!(field(amqp(format!("amqp://u:{}@x/v", "p".repeat(256)), "x")), "destination.url");
        assert_eq!(amqp("amqp://x/v".into(), &"e".repeat(255)), Ok(()));
        assert_eq!(field(amqp("amqp://x/v".into(), &"e".repeat(256))), "destination.exchange");
        // Ports 1-65535.
        assert_eq!(field(amqp("amqp://x:0/v".into(), "x")), "destination.url");
        let nats = |url: String| parse(&json!({"type": "nats", "url": url, "subject": "s"})).map(|_| ());
        assert_eq!(nats("nats://x:1".into()), Ok(()));
        assert_eq!(field(nats("nats://x:0".into())), "destination.url");
        assert!(nats("nats://x:65536".into()).is_err(), "not a port at all");
        // Credentials: 4 KiB each, and NATS's control line.
        assert_eq!(nats(format!("nats://{}:{}@x", "u".repeat(1500), "p".repeat(1500))), Ok(()));
        assert_eq!(field(nats(format!("nats://{}@x", "u".repeat(70_000)))), "destination.url");
        assert_eq!(field(nats(format!("nats://{}:{}@x", "u".repeat(2000), "p".repeat(2000)))), "destination.url");
        assert_eq!(field(nats("nats://u%0a:p@x".into())), "destination.url", "no control characters");
    }
}
