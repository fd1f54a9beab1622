//! GitHub: `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the body under the
//! webhook's secret. The delivery id is `X-GitHub-Delivery`; the action is `X-GitHub-Event`,
//! then `.` and `body.action` when the body has one (`issues.opened`).

use super::inbound::{Algorithm, Inbound, Key, Refusal, any_secret, unhex};
use super::provider::Provider;

#[derive(Debug)]
pub(crate) struct GitHub;

impl Provider for GitHub {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let header = request.required("x-hub-signature-256")?;
        let Some(given) = header.strip_prefix("sha256=").and_then(unhex) else {
            return Err(Refusal::Invalid("X-Hub-Signature-256 is not sha256=<hex>"));
        };
        if !any_secret(key, |s| Some(s.as_bytes().to_vec()), Algorithm::Sha256, (&[request.body], &[given])) {
            return Err(Refusal::Invalid("it is not the HMAC-SHA256 of the body under the secret"));
        }
        Ok(())
    }

    fn delivery_id(&self, request: &Inbound<'_>) -> Option<String> {
        request.header("x-github-delivery").map(str::to_owned)
    }

    fn action(&self, request: &Inbound<'_>) -> Option<String> {
        let event = request.header("x-github-event")?;
        Some(match request.json_text(&["action"]) {
            Some(action) => format!("{event}.{action}"),
            None => event.to_owned(),
        })
    }
}
