//! Twilio: `X-Twilio-Signature: <base64>`, the HMAC-SHA1 under the account's auth token of
//! the URL Twilio called (the ingest URL, query included) followed by the form parameters
//! sorted by name, each name then its value. Twilio's own libraries also accept the URL with
//! its default port written out or left out; so does this. The delivery id is
//! `I-Twilio-Idempotency-Token`; the action is always `twilio.request`. A JSON body (signed
//! through a `bodySHA256` query parameter) is not supported yet.

use super::inbound::{Algorithm, Inbound, Key, Refusal, any_secret, base64};
use super::provider::Provider;

#[derive(Debug)]
pub(crate) struct Twilio;

/// The text Twilio signs: `url`, then each parameter's name and value, sorted by name.
pub(crate) fn signed_text(url: &str, body: &[u8]) -> String {
    let mut params: Vec<(String, String)> = url::form_urlencoded::parse(body).into_owned().collect();
    // Twilio's libraries sign each distinct name and value once.
    params.sort();
    params.dedup();
    let mut text = url.to_owned();
    for (name, value) in params {
        text.push_str(&name);
        text.push_str(&value);
    }
    text
}

/// The URL as called, and the same URL with its default port written out or left out.
fn variants(url: &str) -> Vec<String> {
    let mut out = vec![url.to_owned()];
    if let Ok(mut parsed) = url::Url::parse(url) {
        match parsed.port() {
            Some(_) => {
                let _ = parsed.set_port(None);
            }
            None => {
                let _ = parsed.set_port(parsed.port_or_known_default());
            }
        }
        let other = parsed.to_string();
        // `Url` writes an explicit default port back out; make it by hand then.
        let other = match (parsed.port(), url.find("://")) {
            (None, Some(at)) if other == url => {
                let host_end = url[at + 3..].find('/').map_or(url.len(), |i| at + 3 + i);
                let port = if url.starts_with("https") { 443 } else { 80 };
                format!("{}:{port}{}", &url[..host_end], &url[host_end..])
            }
            _ => other,
        };
        if other != url {
            out.push(other);
        }
    }
    out
}

impl Provider for Twilio {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let header = request.required("x-twilio-signature")?;
        let Some(given) = base64(header) else { return Err(Refusal::Invalid("X-Twilio-Signature is not base64")) };
        let given = [given];
        for url in variants(request.url) {
            let text = signed_text(&url, request.body);
            if any_secret(key, |s| Some(s.as_bytes().to_vec()), Algorithm::Sha1, (&[text.as_bytes()], &given)) {
                return Ok(());
            }
        }
        Err(Refusal::Invalid("it is not the HMAC-SHA1 of the URL and sorted parameters under the auth token"))
    }

    fn delivery_id(&self, request: &Inbound<'_>) -> Option<String> {
        request.header("i-twilio-idempotency-token").map(str::to_owned)
    }

    fn action(&self, _request: &Inbound<'_>) -> Option<String> {
        Some("twilio.request".to_owned())
    }
}
