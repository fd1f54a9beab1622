//! Slack: `X-Slack-Signature: v0=<hex>`, the HMAC-SHA256 of
//! `v0:<X-Slack-Request-Timestamp>:body` under the app's signing secret, the timestamp within
//! 300 s. The delivery id is `body.event_id` (Events API) when there is one; the action is
//! `body.event.type`, else `body.type` (`url_verification`, `event_callback`).

use super::inbound::{Algorithm, Inbound, Key, Refusal, any_secret, unhex};
use super::provider::Provider;

#[derive(Debug)]
pub(crate) struct Slack;

impl Provider for Slack {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let header = request.required("x-slack-signature")?;
        let timestamp = request.required("x-slack-request-timestamp")?;
        let Some(given) = header.strip_prefix("v0=").and_then(unhex) else {
            return Err(Refusal::Invalid("X-Slack-Signature is not v0=<hex>"));
        };
        let parts: [&[u8]; 4] = [b"v0:", timestamp.as_bytes(), b":", request.body];
        if !any_secret(key, |s| Some(s.as_bytes().to_vec()), Algorithm::Sha256, (&parts, &[given])) {
            return Err(Refusal::Invalid("it is not the HMAC-SHA256 of v0:timestamp:body under the secret"));
        }
        request.fresh(timestamp)
    }

    fn delivery_id(&self, request: &Inbound<'_>) -> Option<String> {
        request.json_text(&["event_id"])
    }

    fn action(&self, request: &Inbound<'_>) -> Option<String> {
        request.json_text(&["event", "type"]).or_else(|| request.json_text(&["type"]))
    }
}
