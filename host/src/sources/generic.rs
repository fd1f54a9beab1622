//! The kinds that are not one provider's: `hmac` (a header holding an HMAC of the body, as
//! the source's settings say), `basic` (HTTP Basic credentials), `api_key` (a header holding
//! a key) and `none` (anyone who knows the URL). Every comparison is in constant time.

use super::inbound::{Algorithm, Encoding, Inbound, Key, Refusal, Scheme, any_secret, base64, same, unhex};
use super::provider::Provider;

/// `hmac`: `header` holds `prefix` and the body's HMAC under the secret, in `encoding`.
#[derive(Debug)]
pub(crate) struct GenericHmac;

impl Provider for GenericHmac {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let Scheme::Hmac { header, algorithm, encoding, prefix } = key.scheme else {
            return Err(Refusal::Invalid("the source has no hmac settings"));
        };
        let Some(value) = request.header(header) else { return Err(Refusal::Missing("signature")) };
        let Some(given) = value.strip_prefix(prefix.as_str()).and_then(|v| match encoding {
            Encoding::Hex => unhex(v),
            Encoding::Base64 => base64(v),
        }) else {
            return Err(Refusal::Invalid("the header is not the prefix and an encoded MAC"));
        };
        let algorithm: Algorithm = *algorithm;
        if !any_secret(key, |s| Some(s.as_bytes().to_vec()), algorithm, (&[request.body], &[given])) {
            return Err(Refusal::Invalid("it is not the HMAC of the body under the secret"));
        }
        Ok(())
    }
}

/// `basic`: `Authorization: Basic base64(username:password)`; the secret is the password.
#[derive(Debug)]
pub(crate) struct Basic;

impl Provider for Basic {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let Scheme::Basic { username } = key.scheme else {
            return Err(Refusal::Invalid("the source has no basic settings"));
        };
        let header = request.required("authorization")?;
        let given = header
            .strip_prefix("Basic ")
            .or_else(|| header.strip_prefix("basic "))
            .and_then(base64)
            .ok_or(Refusal::Invalid("Authorization is not Basic credentials"))?;
        let mut matched = false;
        for password in key.secrets {
            let expected = format!("{username}:{password}");
            matched |= same(&given, expected.as_bytes());
        }
        if matched { Ok(()) } else { Err(Refusal::Invalid("the user name or password is wrong")) }
    }
}

/// `api_key`: `header` holds the key; the secret is the key.
#[derive(Debug)]
pub(crate) struct ApiKey;

impl Provider for ApiKey {
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal> {
        let Scheme::ApiKey { header } = key.scheme else {
            return Err(Refusal::Invalid("the source has no api_key settings"));
        };
        let Some(given) = request.header(header) else { return Err(Refusal::Missing("API key")) };
        let mut matched = false;
        for secret in key.secrets {
            matched |= same(given.as_bytes(), secret.as_bytes());
        }
        if matched { Ok(()) } else { Err(Refusal::Invalid("the API key is wrong")) }
    }
}

/// `none`: every request to the URL is accepted (the URL is the credential).
#[derive(Debug)]
pub(crate) struct Open;

impl Provider for Open {
    fn verify(&self, _request: &Inbound<'_>, _key: &Key<'_>) -> Result<(), Refusal> {
        Ok(())
    }
}
