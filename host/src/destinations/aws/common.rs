//! What the AWS kinds share: the fields beside their own, reading them, the region's
//! endpoint, and one signed request through the HTTP sender with AWS's answer read.

use serde_json::Value;
use url::Url;

use super::sigv4::{self, Key, Request, Scope};
use crate::destinations::http::Http;
use crate::destinations::kind::{Credentials, Host, Sealed, SenderParts};
use crate::destinations::message::{KeySource, Message, SendError, open_credentials};
use crate::kinds::{Field, Read, Refusal, Rule, Secret};

/// Longest queue URL, topic ARN, bus name, source or key accepted.
pub(super) const MAX_NAME: usize = 1024;
/// AWS's limit on message attributes.
const MAX_ATTRIBUTES: usize = 10;

/// The fields every AWS kind has beside its own.
pub(super) const REGION: Field = Field::new("region", "Region", Rule::Text { max: 32, empty: false })
    .required()
    .example("us-east-1")
    .help("The AWS region, e.g. us-east-1.");
pub(super) const ENDPOINT_URL: Field = Field::new(
    "endpoint_url",
    "Endpoint URL",
    Rule::Url { schemes: &["https", "http"], max: MAX_NAME },
)
.example("https://sqs.eu-west-1.amazonaws.com")
.help(
    "A compatible service or an emulator instead of the region's endpoint: http(s)://host[:port]; empty: the region's.",
);
pub(super) const ACCESS_KEY_ID: Field =
    Field::new("access_key_id", "Access key id", Rule::Text { max: MAX_NAME, empty: false })
        .required()
        .secret(Secret::Whole)
        .help("Sealed at rest and never shown again; requests are signed with Signature Version 4.");
pub(super) const SECRET_ACCESS_KEY: Field =
    Field::new("secret_access_key", "Secret access key", Rule::Text { max: MAX_NAME, empty: false })
        .required()
        .secret(Secret::Whole)
        .help("Sealed at rest and never shown again.");

/// What every AWS destination names beside its own fields, as read.
pub(super) struct Common {
    pub region: String,
    pub endpoint_url: Option<String>,
    pub credentials: Credentials,
}

impl Common {
    pub(super) fn read(read: &Read<'_>) -> Result<Common, Refusal> {
        let region = read.text("region").unwrap_or_default().trim().to_owned();
        if !region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
            return Err(read.refuse("region", "must be an AWS region such as us-east-1"));
        }
        let endpoint_url =
            read.text("endpoint_url").map(endpoint).transpose().map_err(|why| read.refuse("endpoint_url", why))?;
        let key = |name: &str| read.text(name).map(|v| v.trim().to_owned());
        let credentials = Credentials::default()
            .with("access_key_id", key("access_key_id"))
            .with("secret_access_key", key("secret_access_key"));
        Ok(Common { region, endpoint_url, credentials })
    }
}

/// A text field of an AWS kind, trimmed (its table makes it required and bounded).
pub(super) fn text(read: &Read<'_>, name: &str) -> String {
    read.text(name).unwrap_or_default().trim().to_owned()
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

/// A service's endpoint: `endpoint_url`, else the region's.
pub(super) fn endpoint_of(service: &str, region: &str, endpoint_url: Option<&str>) -> String {
    endpoint_url.map_or_else(|| format!("https://{service}.{region}.amazonaws.com"), str::to_owned)
}

/// The host of a service's endpoint, and the field that names it.
pub(super) fn host_of(service: &str, region: &str, endpoint_url: Option<&str>) -> Host {
    let field = if endpoint_url.is_some() { "destination.endpoint_url" } else { "destination.region" };
    let (name, port) = Url::parse(&endpoint_of(service, region, endpoint_url))
        .ok()
        .map(|u| (u.host_str().unwrap_or_default().to_owned(), u.port_or_known_default().unwrap_or(443)))
        .unwrap_or_default();
    Host { name, port, field }
}

/// One signed request: the service, its region and endpoint, the extra headers
/// (`x-amz-target`, content type) and body.
pub(super) struct Call<'a> {
    pub service: &'static str,
    pub region: &'a str,
    pub endpoint: String,
    pub content_type: &'static str,
    pub target: Option<&'static str>,
    pub body: Vec<u8>,
}

/// AWS's answer to a call: its status and body (the first KiB the HTTP sender keeps).
pub(super) struct Answered {
    pub status: u16,
    pub body: String,
}

impl Answered {
    /// An error answer in AWS's words; `None` for a `2xx`.
    pub(super) fn refusal(&self) -> Option<SendError> {
        if (200..300).contains(&self.status) {
            return None;
        }
        let json: Value = serde_json::from_str(&self.body).unwrap_or_default();
        let code = json["__type"]
            .as_str()
            .map(|t| t.rsplit('#').next().unwrap_or(t).to_owned())
            .or_else(|| xml(&self.body, "Code"));
        let text = json["message"]
            .as_str()
            .or(json["Message"].as_str())
            .map(str::to_owned)
            .or_else(|| xml(&self.body, "Message"));
        Some(SendError::Refused(format!(
            "AWS answered {}: {}: {}",
            self.status,
            code.unwrap_or_else(|| "error".into()),
            text.unwrap_or_default()
        )))
    }

    /// A `2xx` that names nothing AWS made of the message (a proxy or an emulator answering
    /// for AWS): a failed attempt.
    pub(super) fn unnamed(&self, what: &str) -> SendError {
        let start: String = self.body.chars().take(200).collect();
        SendError::Refused(format!(
            "AWS answered {} without {what}: the message may not have been taken ({start})",
            self.status
        ))
    }
}

/// The text of the first `<tag>…</tag>` of an XML answer.
pub(super) fn xml(body: &str, tag: &str) -> Option<String> {
    let start = body.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = body[start..].find(&format!("</{tag}>"))? + start;
    Some(body[start..end].to_owned())
}

/// An id AWS named, if it named one.
pub(super) fn named(id: Option<String>) -> Option<String> {
    id.filter(|id| !id.trim().is_empty())
}

/// The headers that travel as attributes, at most ten, the signature's first.
pub(super) fn attributes<'m>(message: &'m Message<'_>) -> Vec<(&'m str, &'m str)> {
    let mut out: Vec<(&str, &str)> = message
        .headers
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "content-type" | "user-agent"))
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    out.truncate(MAX_ATTRIBUTES);
    out
}

/// The event's subject id (a FIFO message group) and the delivery id (its deduplication id).
pub(super) fn fifo_ids(message: &Message<'_>) -> (String, String) {
    let body: Value = serde_json::from_slice(&message.body).unwrap_or_default();
    let group = body["subject"]["id"].as_str().unwrap_or("weir").to_owned();
    (group, delivery_id(message).unwrap_or_default().to_owned())
}

/// The delivery's id, as its `webhook-id` header carries it.
pub(super) fn delivery_id<'m>(message: &'m Message<'_>) -> Option<&'m str> {
    message.headers.iter().find(|(n, _)| n == "webhook-id").map(|(_, v)| v.as_str())
}

/// The AWS requests of a process (every AWS kind's sender).
#[derive(Clone)]
pub(crate) struct Sender {
    http: Http,
    secret: KeySource,
}

impl Sender {
    pub(super) fn of(parts: &SenderParts) -> Sender {
        Sender { http: parts.http.clone(), secret: parts.secret.clone() }
    }

    /// Signs `call` with the destination's access key and sends it; what AWS answered.
    pub(super) async fn call(&self, call: Call<'_>, sealed: Option<Sealed<'_>>) -> Result<Answered, SendError> {
        let sealed = sealed.ok_or_else(|| SendError::Request("the destination has no access key".into()))?;
        let credentials = open_credentials(&self.secret, sealed)?;
        let (Some(id), Some(secret)) = (credentials.get("access_key_id"), credentials.get("secret_access_key")) else {
            return Err(SendError::Request("the destination has no access key".into()));
        };
        let url = Url::parse(&call.endpoint).map_err(|_| SendError::Request("the endpoint is damaged".into()))?;
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        let amz_date = sigv4::amz_date(crate::time::now_millis());
        let mut signed: Vec<(&str, &str)> =
            vec![("content-type", call.content_type), ("host", &host), ("x-amz-date", &amz_date)];
        if let Some(target) = call.target {
            signed.push(("x-amz-target", target));
        }
        let request = Request { method: "POST", path: "/", query: "", headers: &signed, body: &call.body };
        let scope = Scope { region: call.region, service: call.service, amz_date: &amz_date };
        let authorization = sigv4::authorization(Key { id, secret }, scope, &request);
        let mut headers: Vec<(String, String)> =
            signed.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        headers.push(("authorization".to_owned(), authorization));
        let sent = Message { headers: &headers, body: call.body.into() };
        let response = self.http.send(&format!("{}/", call.endpoint), None, sent).await?;
        Ok(Answered { status: response.status, body: response.body })
    }
}
