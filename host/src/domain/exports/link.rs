//! Signed download links: `{public_url}/exports/{id}/download?expires={unix}&sig={hex}`,
//! where `sig` is HMAC-SHA256 of `{id}.{expires}` under a key Weir creates once and keeps
//! in Redis, so every process can check every link. No bearer token is needed.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Why a link is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkError {
    /// The signature does not match: the link was altered (403).
    Altered,
    /// The link is genuine but its time is up (410).
    Expired,
}

fn mac(key: &[u8], export_id: &str, expires: u64) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(export_id.as_bytes());
    mac.update(b".");
    mac.update(expires.to_string().as_bytes());
    mac
}

/// The signature of a link.
pub(crate) fn sign(key: &[u8], export_id: &str, expires: u64) -> String {
    hex::encode(mac(key, export_id, expires).finalize().into_bytes())
}

/// The download URL of an export, valid until `expires` (Unix seconds).
pub(crate) fn url(public_url: &str, key: &[u8], export_id: &str, expires: u64) -> String {
    format!("{public_url}/exports/{export_id}/download?expires={expires}&sig={}", sign(key, export_id, expires))
}

/// Checks a link (signature first, in constant time; then its expiry).
pub(crate) fn verify(key: &[u8], export_id: &str, expires: &str, sig: &str, now: u64) -> Result<(), LinkError> {
    let expires_at: u64 = expires.parse().map_err(|_| LinkError::Altered)?;
    if expires_at.to_string() != expires {
        return Err(LinkError::Altered);
    }
    let given = hex::decode(sig).map_err(|_| LinkError::Altered)?;
    mac(key, export_id, expires_at).verify_slice(&given).map_err(|_| LinkError::Altered)?;
    if now >= expires_at {
        return Err(LinkError::Expired);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_verify_until_they_expire() {
        let key = b"0123456789abcdef0123456789abcdef";
        let sig = sign(key, "rex_1", 1000);
        assert_eq!(verify(key, "rex_1", "1000", &sig, 999), Ok(()));
        assert_eq!(verify(key, "rex_1", "1000", &sig, 1000), Err(LinkError::Expired));
    }

    #[test]
    fn any_change_is_an_alteration() {
        let key = b"0123456789abcdef0123456789abcdef";
        let sig = sign(key, "rex_1", 1000);
        assert_eq!(verify(key, "rex_2", "1000", &sig, 1), Err(LinkError::Altered));
        assert_eq!(verify(key, "rex_1", "1001", &sig, 1), Err(LinkError::Altered));
        assert_eq!(verify(key, "rex_1", "01000", &sig, 1), Err(LinkError::Altered));
        assert_eq!(verify(key, "rex_1", "1000", &sig[1..], 1), Err(LinkError::Altered));
        assert_eq!(verify(b"another key", "rex_1", "1000", &sig, 1), Err(LinkError::Altered));
        assert_eq!(verify(key, "rex_1", "soon", &sig, 1), Err(LinkError::Altered));
        assert!(
            url("https://w.example", key, "rex_1", 1000)
                .starts_with("https://w.example/exports/rex_1/download?expires=1000&sig=")
        );
    }
}
