//! Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=…]`, each `v1` the HMAC-SHA256
//! of `t.body` under the endpoint secret (`whsec_…`, used as it is written); any `v1` may
//! match (Stripe sends one per secret while a secret is being rolled); `t` within 300 s.
//! The delivery id is `body.id`, the action `body.type` (`invoice.paid`).

use super::inbound::{Algorithm, Inbound, Key, Refusal, any_secret, unhex};
use super::provider::Provider;

#[derive(Debug)]
pub(crate) struct Stripe;

impl Provider for Stripe {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let header = request.required("stripe-signature")?;
        let mut timestamp = None;
        let mut given = Vec::new();
        for item in header.split(',') {
            match item.trim().split_once('=') {
                Some(("t", t)) => timestamp = Some(t),
                Some(("v1", v)) => given.extend(unhex(v)),
                _ => {}
            }
        }
        let Some(timestamp) = timestamp else { return Err(Refusal::Invalid("Stripe-Signature has no t=")) };
        if given.is_empty() {
            return Err(Refusal::Invalid("Stripe-Signature has no v1= signature"));
        }
        let parts: [&[u8]; 3] = [timestamp.as_bytes(), b".", request.body];
        if !any_secret(key, |s| Some(s.as_bytes().to_vec()), Algorithm::Sha256, (&parts, &given)) {
            return Err(Refusal::Invalid("no v1= is the HMAC-SHA256 of t.body under the secret"));
        }
        request.fresh(timestamp)
    }

    fn delivery_id(&self, request: &Inbound<'_>) -> Option<String> {
        request.json_text(&["id"])
    }

    fn action(&self, request: &Inbound<'_>) -> Option<String> {
        request.json_text(&["type"])
    }
}
