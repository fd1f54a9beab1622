//! Shopify: `X-Shopify-Hmac-Sha256: <base64>`, the HMAC-SHA256 of the body under the app's
//! secret. The delivery id is `X-Shopify-Webhook-Id`, the action `X-Shopify-Topic`
//! (`orders/create`).

use super::inbound::{Algorithm, Inbound, Key, Refusal, any_secret, base64};
use super::provider::Provider;

#[derive(Debug)]
pub(crate) struct Shopify;

impl Provider for Shopify {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let header = request.required("x-shopify-hmac-sha256")?;
        let Some(given) = base64(header) else { return Err(Refusal::Invalid("X-Shopify-Hmac-Sha256 is not base64")) };
        if !any_secret(key, |s| Some(s.as_bytes().to_vec()), Algorithm::Sha256, (&[request.body], &[given])) {
            return Err(Refusal::Invalid("it is not the HMAC-SHA256 of the body under the secret"));
        }
        Ok(())
    }

    fn delivery_id(&self, request: &Inbound<'_>) -> Option<String> {
        request.header("x-shopify-webhook-id").map(str::to_owned)
    }

    fn action(&self, request: &Inbound<'_>) -> Option<String> {
        request.header("x-shopify-topic").map(str::to_owned)
    }
}
