//! Client certificates for mutual TLS (contract §7 `client_certificate`): a PEM chain and
//! its private key, checked to parse and to match, and the view the API shows of them
//! (fingerprint, subject, expiry) — never the key.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Largest PEM certificate chain accepted.
pub(crate) const MAX_CHAIN_PEM: usize = 64 * 1024;
/// Largest PEM private key accepted.
pub(crate) const MAX_KEY_PEM: usize = 16 * 1024;
/// Most certificates in a chain.
const MAX_CHAIN: usize = 10;

/// What reads show of a webhook's client certificate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CertificateView {
    /// SHA-256 of the leaf certificate's DER, lowercase hex.
    pub fingerprint_sha256: String,
    /// The leaf's subject, as RFC 4514 text (`CN=…, O=…`).
    pub subject: String,
    /// When the leaf expires (RFC 3339).
    pub not_after: String,
}

/// Why a certificate and key cannot be used (the message goes to the client as is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CertError {
    #[error("certificate: {0}")]
    Certificate(String),
    #[error("private_key: {0}")]
    Key(String),
}

/// A parsed certificate chain and key, ready for a TLS client.
#[derive(Debug)]
pub(crate) struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

/// Parses and checks a chain and key: both PEM, the key the leaf's. The view to show and
/// the leaf's expiry (ms).
pub(crate) fn check(chain_pem: &str, key_pem: &str) -> Result<(CertificateView, u64), CertError> {
    if chain_pem.len() > MAX_CHAIN_PEM {
        return Err(CertError::Certificate(format!("must be at most {} KiB of PEM", MAX_CHAIN_PEM / 1024)));
    }
    if key_pem.len() > MAX_KEY_PEM {
        return Err(CertError::Key(format!("must be at most {} KiB of PEM", MAX_KEY_PEM / 1024)));
    }
    let identity = identity(chain_pem, key_pem)?;
    let provider = rustls::crypto::ring::default_provider();
    let key = identity.key.clone_key();
    match rustls::sign::CertifiedKey::from_der(identity.chain.clone(), key, &provider) {
        Ok(certified) => match certified.keys_match() {
            Ok(()) => {}
            Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
                return Err(CertError::Key("does not match the certificate".into()));
            }
            Err(_) => {}
        },
        Err(rustls::Error::InconsistentKeys(_)) => return Err(CertError::Key("does not match the certificate".into())),
        Err(e) => return Err(CertError::Key(format!("cannot be used for TLS: {}", crate::tls::describe(&e)))),
    }
    view(&identity.chain[0])
}

/// The chain and key of PEM text (no checks beyond parsing).
pub(crate) fn identity(chain_pem: &str, key_pem: &str) -> Result<Identity, CertError> {
    let chain = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .take(MAX_CHAIN + 1)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CertError::Certificate(format!("is not PEM certificates: {e}")))?;
    if chain.is_empty() {
        return Err(CertError::Certificate("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into()));
    }
    if chain.len() > MAX_CHAIN {
        return Err(CertError::Certificate(format!("a chain of at most {MAX_CHAIN} certificates")));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| CertError::Key(format!("is not a PEM private key (PKCS#8, PKCS#1 or SEC1): {e}")))?;
    Ok(Identity { chain, key })
}

/// The view of a leaf certificate, and its expiry (ms).
fn view(leaf: &CertificateDer<'_>) -> Result<(CertificateView, u64), CertError> {
    let (_, cert) = x509_parser::parse_x509_certificate(leaf.as_ref()).map_err(|e| {
        CertError::Certificate(format!("is not an X.509 certificate: {}", crate::tls::humanize(&e.to_string())))
    })?;
    let not_after_s = cert.validity().not_after.timestamp();
    let not_after_ms = u64::try_from(not_after_s).unwrap_or(0).saturating_mul(1000);
    let view = CertificateView {
        fingerprint_sha256: hex::encode(Sha256::digest(leaf.as_ref())),
        subject: cert.subject().to_string(),
        not_after: crate::time::format_millis(not_after_ms),
    };
    Ok((view, not_after_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_empty_input_are_refused_by_field() {
        assert!(matches!(check("", "").unwrap_err(), CertError::Certificate(_)));
        assert!(matches!(check("hello", "").unwrap_err(), CertError::Certificate(_)));
        let big = "x".repeat(MAX_CHAIN_PEM + 1);
        assert!(matches!(check(&big, "").unwrap_err(), CertError::Certificate(_)));
        let cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(matches!(check(cert, "nope").unwrap_err(), CertError::Key(_)));
    }
}
