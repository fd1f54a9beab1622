//! Secrets at rest: what Weir must keep but never show (a client certificate's private
//! key) is sealed with AES-256-GCM under the process's secret key (`WEIR_SECRET_KEY`, or the
//! data directory's key file) before it reaches Redis, bound to what it belongs to (the
//! associated data), so a sealed value copied to another webhook does not open.

use base64::Engine as _;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::config::SecretKey;

/// The tag of the sealed form (its version).
const TAG: &str = "v1.";

/// Why a sealed value does not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    #[error("the sealed value is damaged")]
    Damaged,
    #[error(
        "the sealed value does not open with this process's secret key (is WEIR_SECRET_KEY the same on every process?)"
    )]
    WrongKey,
    #[error("no randomness for a nonce")]
    NoRandom,
}

fn key(secret: &SecretKey) -> LessSafeKey {
    // 32 bytes is AES-256's key length: this cannot fail.
    LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &secret.0).unwrap_or_else(|_| unreachable!("a 32-byte key")))
}

/// `plain` sealed for `context`: `v1.` and base64 of nonce, ciphertext and tag.
pub fn seal(secret: &SecretKey, context: &str, plain: &[u8]) -> Result<String, VaultError> {
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new().fill(&mut nonce).map_err(|_| VaultError::NoRandom)?;
    let mut data = plain.to_vec();
    key(secret)
        .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(context.as_bytes()), &mut data)
        .map_err(|_| VaultError::NoRandom)?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&data);
    Ok(format!("{TAG}{}", base64::engine::general_purpose::STANDARD_NO_PAD.encode(out)))
}

/// Opens what [`seal`] sealed for the same `context` with the same key.
pub fn open(secret: &SecretKey, context: &str, sealed: &str) -> Result<Vec<u8>, VaultError> {
    let text = sealed.strip_prefix(TAG).ok_or(VaultError::Damaged)?;
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(text).map_err(|_| VaultError::Damaged)?;
    let (nonce, rest) = bytes.split_at_checked(NONCE_LEN).ok_or(VaultError::Damaged)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| VaultError::Damaged)?;
    let mut data = rest.to_vec();
    let plain =
        key(secret).open_in_place(nonce, Aad::from(context.as_bytes()), &mut data).map_err(|_| VaultError::WrongKey)?;
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
        assert_eq!(open(&k, "org_1/wh_2", &sealed), Err(VaultError::WrongKey));
        assert_eq!(open(&SecretKey::derive(b"another secret!!"), "org_1/wh_1", &sealed), Err(VaultError::WrongKey));
        assert_eq!(open(&k, "org_1/wh_1", "v1.!!"), Err(VaultError::Damaged));
        assert_eq!(open(&k, "org_1/wh_1", "plain"), Err(VaultError::Damaged));
    }
}
