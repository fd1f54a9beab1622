//! The AWS kinds of destination (`sqs`, `sns`, `eventbridge`): their fields and rules. Each
//! names a region and an access key (sealed with the other credentials), and may name an
//! `endpoint_url` (a compatible service or an emulator; else the region's AWS endpoint).

use serde_json::{Map, Value};
use url::Url;

use super::spec::{Credentials, Parsed, Refusal, Spec};

/// Longest queue URL, topic ARN, bus name or source accepted.
const MAX_NAME: usize = 1024;

fn refused(field: &str, why: impl Into<String>) -> Refusal {
    (format!("destination.{field}"), why.into())
}

/// Reads an AWS destination of `kind` from its object.
pub(super) fn parse(kind: &str, object: &Map<String, Value>) -> Result<Option<Parsed>, Refusal> {
    let allowed: &[&str] = match kind {
        "sqs" => &["queue_url"],
        "sns" => &["topic_arn"],
        _ => &["event_bus_name", "source"],
    };
    for name in object.keys() {
        let common = ["type", "region", "access_key_id", "secret_access_key", "endpoint_url"];
        if !common.contains(&name.as_str()) && !allowed.contains(&name.as_str()) {
            return Err(refused(name, format!("is not a field of an {kind} destination")));
        }
    }
    let text = |name: &str| -> Result<String, Refusal> {
        match object.get(name) {
            Some(Value::String(v)) if !v.trim().is_empty() && v.len() <= MAX_NAME => Ok(v.trim().to_owned()),
            Some(Value::String(_)) => Err(refused(name, format!("must be 1 to {MAX_NAME} characters"))),
            Some(_) => Err(refused(name, "must be a string")),
            None => Err(refused(name, "is required")),
        }
    };
    let region = text("region")?;
    if region.len() > 32 || !region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        return Err(refused("region", "must be an AWS region such as us-east-1"));
    }
    let endpoint_url = match object.get("endpoint_url") {
        None | Some(Value::Null) => None,
        Some(Value::String(url)) => Some(endpoint(url).map_err(|why| refused("endpoint_url", why))?),
        Some(_) => return Err(refused("endpoint_url", "must be a URL or null")),
    };
    let credentials = Credentials {
        access_key_id: Some(text("access_key_id")?),
        secret_access_key: Some(text("secret_access_key")?),
        ..Credentials::default()
    };
    let spec = match kind {
        "sqs" => {
            let queue_url = text("queue_url")?;
            match Url::parse(&queue_url) {
                Ok(u) if matches!(u.scheme(), "https" | "http") && u.host_str().is_some() && u.port() != Some(0) => {}
                _ => {
                    return Err(refused(
                        "queue_url",
                        "must be the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>)",
                    ));
                }
            }
            Spec::Sqs { queue_url, region, endpoint_url }
        }
        "sns" => {
            let topic_arn = text("topic_arn")?;
            if !topic_arn.starts_with("arn:") || topic_arn.split(':').count() < 6 {
                return Err(refused("topic_arn", "must be the topic's ARN (arn:aws:sns:<region>:<account>:<name>)"));
            }
            Spec::Sns { topic_arn, region, endpoint_url }
        }
        _ => {
            let event_bus_name = text("event_bus_name")?;
            let source = text("source")?;
            if source.chars().any(char::is_control) {
                return Err(refused("source", "must not contain control characters"));
            }
            Spec::EventBridge { event_bus_name, source, region, endpoint_url }
        }
    };
    Ok(Some(Parsed { spec, credentials: Some(credentials) }))
}

/// An endpoint: `http(s)://host[:port]`, nothing after.
fn endpoint(text: &str) -> Result<String, String> {
    let url = Url::parse(text.trim()).map_err(|_| "must be a URL: https://host[:port]".to_owned())?;
    if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none_or(str::is_empty) {
        return Err("must be an http or https URL with a host".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not contain a user name or password (give access_key_id and secret_access_key)".to_owned());
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() {
        return Err("must be nothing but scheme, host and port".to_owned());
    }
    if url.port() == Some(0) {
        return Err("must name a port from 1 to 65535".to_owned());
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::parse as parse_destination;
    use super::*;
    use serde_json::json;

    #[test]
    fn each_aws_kind_keeps_its_key_apart_and_names_its_endpoint() {
        let parsed = parse_destination(&json!({"type": "sqs", "queue_url": "http://127.0.0.1:5000/123456789012/orders.fifo",
            "region": "eu-west-1", "access_key_id": "AKID", "secret_access_key": "SECRET", "endpoint_url": "http://127.0.0.1:5000/"}))
        .unwrap()
        .unwrap();
        assert_eq!(parsed.spec.aws_endpoint(), "http://127.0.0.1:5000");
        assert_eq!(parsed.spec.host_port(), ("127.0.0.1".to_owned(), 5000));
        assert_eq!(parsed.credentials.unwrap().secret_access_key.as_deref(), Some("SECRET"));
        let shown = serde_json::to_value(&parsed.spec).unwrap();
        assert!(!shown.to_string().contains("SECRET") && !shown.to_string().contains("AKID"), "{shown}");
        let bus = parse_destination(&json!({"type": "eventbridge", "event_bus_name": "default", "source": "acme.weir",
            "region": "us-east-1", "access_key_id": "A", "secret_access_key": "S"}))
        .unwrap()
        .unwrap();
        assert_eq!(bus.spec.aws_endpoint(), "https://events.us-east-1.amazonaws.com");
        assert_eq!(bus.spec.host_port(), ("events.us-east-1.amazonaws.com".to_owned(), 443));
    }

    #[test]
    fn a_malformed_aws_destination_names_its_field() {
        let base = json!({"type": "sns", "topic_arn": "arn:aws:sns:us-east-1:123456789012:t", "region": "us-east-1",
            "access_key_id": "A", "secret_access_key": "S"});
        let with = |name: &str, value: Value| {
            let mut v = base.clone();
            v[name] = value;
            parse_destination(&v).unwrap_err().0
        };
        assert_eq!(with("topic_arn", json!("topic")), "destination.topic_arn");
        assert_eq!(with("region", json!("US East")), "destination.region");
        assert_eq!(with("endpoint_url", json!("ftp://x")), "destination.endpoint_url");
        assert_eq!(with("endpoint_url", json!("http://k:s@x")), "destination.endpoint_url");
        assert_eq!(with("endpoint_url", json!("http://x:0")), "destination.endpoint_url");
        assert_eq!(with("secret_access_key", json!("")), "destination.secret_access_key");
        assert_eq!(with("queue_url", json!("http://x")), "destination.queue_url", "not a field of sns");
    }
}
