//! Standard Webhooks: `webhook-id`, `webhook-timestamp` (within 300 s) and
//! `webhook-signature` (space-separated `v1,<base64>` entries), each `v1` the HMAC-SHA256 of
//! `id.timestamp.body` under the secret's bytes (`whsec_<base64>`: the base64 part decoded).
//! Asymmetric `v1a` (ed25519) signatures are not supported yet. The delivery id is
//! `webhook-id`, the action `body.type`.

use super::inbound::{Algorithm, Inbound, Key, Refusal, any_secret, base64};
use super::provider::Provider;

#[derive(Debug)]
pub(crate) struct StandardWebhooks;

/// The key of a `whsec_<base64>` secret (the prefix may be left out).
pub(crate) fn key_of(secret: &str) -> Option<Vec<u8>> {
    base64(secret.strip_prefix("whsec_").unwrap_or(secret)).filter(|k| !k.is_empty())
}

impl Provider for StandardWebhooks {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let header = request.required("webhook-signature")?;
        let id = request.required("webhook-id")?;
        let timestamp = request.required("webhook-timestamp")?;
        let given: Vec<Vec<u8>> =
            header.split(' ').filter_map(|entry| entry.strip_prefix("v1,")).filter_map(base64).collect();
        if given.is_empty() {
            return Err(Refusal::Invalid("webhook-signature has no v1,<base64> entry"));
        }
        let parts: [&[u8]; 5] = [id.as_bytes(), b".", timestamp.as_bytes(), b".", request.body];
        if !any_secret(key, key_of, Algorithm::Sha256, (&parts, &given)) {
            return Err(Refusal::Invalid("no v1 entry is the HMAC-SHA256 of id.timestamp.body under the secret"));
        }
        request.fresh(timestamp)
    }

    fn delivery_id(&self, request: &Inbound<'_>) -> Option<String> {
        request.header("webhook-id").map(str::to_owned)
    }

    fn action(&self, request: &Inbound<'_>) -> Option<String> {
        request.json_text(&["type"])
    }

    fn secret_problem(&self, secret: &str) -> Option<&'static str> {
        key_of(secret).is_none().then_some("is not a Standard Webhooks secret (whsec_ and base64)")
    }
}
