//! What a webhook's `destination` names (contract §9): where its deliveries go when that is
//! not an HTTP endpoint. A destination is kept in two parts: its [`Spec`] (the kind and the
//! address, no credentials: stored as JSON, shown on read) and its [`Credentials`] (sealed by
//! `crate::vault` for the webhook, never shown, never in a delivery, attempt, log or trace).
//! The delivery workers' senders are in `crate::delivery::destination`.
//!
//! Kinds so far: `http` (the webhook's `url`, as before) and `nats` (JetStream).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

/// NATS's default port.
const NATS_PORT: u16 = 4222;
/// Longest subject accepted.
const MAX_SUBJECT: usize = 255;

/// A destination other than HTTP, without its credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Spec {
    /// NATS JetStream: publish to `subject` on the server at `url` (`nats://host:port`), the
    /// attempt succeeding on the stream's acknowledgement.
    Nats { url: String, subject: String },
}

/// What a destination signs in with; sealed at rest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

impl Credentials {
    fn is_empty(&self) -> bool {
        self.user.is_none() && self.password.is_none()
    }
}

/// What a webhook's sealed destination credentials are bound to.
pub fn credentials_context(org_id: &str, webhook_id: &str) -> String {
    format!("destination {org_id} {webhook_id}")
}

/// A `destination` as sent: its spec and its credentials (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub spec: Spec,
    pub credentials: Option<Credentials>,
}

/// A refused `destination`: the field (`destination.url`…) and why.
pub type Refusal = (String, String);

impl Spec {
    /// The kind, as `type` names it and metrics label it.
    pub fn kind(&self) -> &'static str {
        match self {
            Spec::Nats { .. } => "nats",
        }
    }

    /// The address the webhook's `url` shows (no credentials).
    pub fn address(&self) -> &str {
        match self {
            Spec::Nats { url, .. } => url,
        }
    }

    /// Where it is sent to inside the broker (spans' `messaging.destination.name`).
    pub fn target(&self) -> &str {
        match self {
            Spec::Nats { subject, .. } => subject,
        }
    }

    /// The broker's host and port (checked by the public-address rule before each connection).
    pub fn host_port(&self) -> (String, u16) {
        match self {
            Spec::Nats { url, .. } => Url::parse(url)
                .ok()
                .map(|u| (u.host_str().unwrap_or_default().to_owned(), u.port().unwrap_or(NATS_PORT)))
                .unwrap_or_default(),
        }
    }
}

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
            subject_rule(subject).map_err(|why| (String::from("destination.subject"), why))?;
            Ok(Some(Parsed { spec: Spec::Nats { url, subject: subject.to_owned() }, credentials }))
        }
        Some("amqp" | "sqs" | "sns" | "eventbridge") => {
            refuse(".type", "is not delivered by this version of Weir yet (http and nats are)")
        }
        Some(_) => refuse(".type", "must be http or nats"),
        None => refuse(".type", "is required"),
    }
}

/// A NATS server's URL: `nats://host[:port]`, credentials taken out.
fn nats_url(text: &str) -> Result<(String, Option<Credentials>), String> {
    let url = Url::parse(text.trim()).map_err(|_| "must be a URL: nats://[user:password@]host:port".to_owned())?;
    if url.scheme() != "nats" {
        return Err("must use the nats scheme (TLS to brokers is not offered yet)".to_owned());
    }
    let host = url.host_str().filter(|h| !h.is_empty()).ok_or("must name a host")?;
    if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
        return Err("must be nothing but nats://[user:password@]host:port".to_owned());
    }
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let credentials = Credentials {
        user: Some(decode(url.username())).filter(|u| !u.is_empty()),
        password: url.password().map(decode),
    };
    let address = format!("nats://{host}:{}", url.port().unwrap_or(NATS_PORT));
    Ok((address, Some(credentials).filter(|c| !c.is_empty())))
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
    fn a_malformed_destination_names_its_field() {
        let field = |v: Value| parse(&v).unwrap_err().0;
        assert_eq!(field(json!("nats://x")), "destination");
        assert_eq!(field(json!({"url": "nats://x"})), "destination.type");
        assert_eq!(field(json!({"type": "kafka"})), "destination.type");
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
}
