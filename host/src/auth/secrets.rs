//! Random secrets, their at-rest hashes, and constant-time comparison.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A new secret: `prefix` followed by 32 random bytes in unpadded base64url (43 chars).
pub fn generate(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// The hex SHA-256 of a secret, as stored.
pub fn hash(secret: &str) -> String {
    const_hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Whether `presented` hashes to `stored_hash`, compared in constant time.
pub fn verify(presented: &str, stored_hash: &str) -> bool {
    let computed = hash(presented);
    computed.as_bytes().ct_eq(stored_hash.as_bytes()).into()
}

/// Constant-time equality of two byte strings (length may leak, content does not).
pub fn equal(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_long_random_and_prefixed() {
        let a = generate("wcs_");
        let b = generate("wcs_");
        assert!(a.starts_with("wcs_"));
        assert_eq!(a.len(), 4 + 43);
        assert_ne!(a, b);
    }

    #[test]
    fn verify_accepts_only_the_secret() {
        let secret = generate("x_");
        let stored = hash(&secret);
        assert_eq!(stored.len(), 64);
        assert!(verify(&secret, &stored));
        assert!(!verify(&format!("{secret}a"), &stored));
        assert!(!verify("", &stored));
        assert!(equal(b"abc", b"abc"));
        assert!(!equal(b"abc", b"abd"));
        assert!(!equal(b"abc", b"ab"));
    }
}
