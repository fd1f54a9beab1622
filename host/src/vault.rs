//! Secrets at rest: what Weir must keep but never show (a client certificate's private
//! key) is sealed with AES-256-GCM under the process's secret key (`WEIR_SECRET_KEY`, or the
//! data directory's key file) before it reaches Redis, bound to what it belongs to (the
//! associated data), so a sealed value copied to another webhook does not open.

use base64::Engine as _;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::config::SecretKey;

/// The tag of the sealed form (its version): `v2.` names what the value is bound to (a
/// digest of the context) before the nonce, so a value copied elsewhere is told apart from
/// one sealed under another key; `v1.` (without it) still opens.
const TAG: &str = "v2.";
const TAG_V1: &str = "v1.";
/// Bytes of the context's digest a `v2` value carries.
const BINDING_LEN: usize = 8;

/// Why a sealed value does not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum VaultError {
    #[error("the sealed value is damaged")]
    Damaged,
    #[error(
        "the sealed value does not open with this process's secret key (is WEIR_SECRET_KEY the same on every process?)"
    )]
    WrongKey,
    #[error("the sealed value belongs to something else (it was copied from another webhook): set it again here")]
    WrongBinding,
    #[error(
        "the sealed value does not open: sealed under another secret key (is WEIR_SECRET_KEY the same on every process?) or for another webhook"
    )]
    WrongKeyOrBinding,
    #[error("no randomness for a nonce")]
    NoRandom,
}

fn key(secret: &SecretKey) -> LessSafeKey {
    // 32 bytes is AES-256's key length: this cannot fail.
    LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &secret.0).unwrap_or_else(|_| unreachable!("a 32-byte key")))
}

fn binding(context: &str) -> [u8; BINDING_LEN] {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(context.as_bytes());
    let mut out = [0u8; BINDING_LEN];
    out.copy_from_slice(&digest[..BINDING_LEN]);
    out
}

/// `plain` sealed for `context`: `v2.` and base64 of the context's digest, nonce,
/// ciphertext and tag.
pub(crate) fn seal(secret: &SecretKey, context: &str, plain: &[u8]) -> Result<String, VaultError> {
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new().fill(&mut nonce).map_err(|_| VaultError::NoRandom)?;
    let mut data = plain.to_vec();
    key(secret)
        .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(context.as_bytes()), &mut data)
        .map_err(|_| VaultError::NoRandom)?;
    let mut out = binding(context).to_vec();
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&data);
    Ok(format!("{TAG}{}", base64::engine::general_purpose::STANDARD_NO_PAD.encode(out)))
}

/// Opens what [`seal`] sealed for the same `context` with the same key.
pub(crate) fn open(secret: &SecretKey, context: &str, sealed: &str) -> Result<Vec<u8>, VaultError> {
    let decode = |text: &str| base64::engine::general_purpose::STANDARD_NO_PAD.decode(text).ok();
    let (bytes, refused) = if let Some(text) = sealed.strip_prefix(TAG) {
        let bytes = decode(text).ok_or(VaultError::Damaged)?;
        let (bound, rest) = bytes.split_at_checked(BINDING_LEN).ok_or(VaultError::Damaged)?;
        if bound != binding(context) {
            return Err(VaultError::WrongBinding);
        }
        (rest.to_vec(), VaultError::WrongKey)
    } else if let Some(text) = sealed.strip_prefix(TAG_V1) {
        (decode(text).ok_or(VaultError::Damaged)?, VaultError::WrongKeyOrBinding)
    } else {
        return Err(VaultError::Damaged);
    };
    let (nonce, rest) = bytes.split_at_checked(NONCE_LEN).ok_or(VaultError::Damaged)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| VaultError::Damaged)?;
    let mut data = rest.to_vec();
    let plain = key(secret).open_in_place(nonce, Aad::from(context.as_bytes()), &mut data).map_err(|_| refused)?;
    Ok(plain.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_with_their_key_and_context() {
        let k = SecretKey::derive(b"an operator's secret");
        let sealed = seal(&k, "org_1/wh_1", b"-----BEGIN PRIVATE KEY-----").unwrap();
        assert!(!sealed.contains("BEGIN"), "{sealed}");
        assert_ne!(sealed, seal(&k, "org_1/wh_1", b"-----BEGIN PRIVATE KEY-----").unwrap(), "a fresh nonce each time");
        assert_eq!(open(&k, "org_1/wh_1", &sealed).unwrap(), b"-----BEGIN PRIVATE KEY-----");
        // A value copied to another webhook is named as such, not blamed on the key.
        assert_eq!(open(&k, "org_1/wh_2", &sealed), Err(VaultError::WrongBinding));
        assert_eq!(open(&SecretKey::derive(b"another secret!!"), "org_1/wh_1", &sealed), Err(VaultError::WrongKey));
        assert_eq!(open(&k, "org_1/wh_1", "v2.!!"), Err(VaultError::Damaged));
        assert_eq!(open(&k, "org_1/wh_1", "plain"), Err(VaultError::Damaged));
    }

    #[test]
    fn values_sealed_before_the_binding_was_named_still_open() {
        let k = SecretKey::derive(b"an operator's secret");
        let v2 = seal(&k, "ctx", b"key").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(&v2[3..]).unwrap();
        let v1 = format!("v1.{}", base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes[BINDING_LEN..]));
        assert_eq!(open(&k, "ctx", &v1).unwrap(), b"key");
        assert_eq!(open(&k, "other", &v1), Err(VaultError::WrongKeyOrBinding));
    }
}
