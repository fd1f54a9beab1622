//! TLS material from PEM files, and the two rustls configurations Weir makes of it: the
//! listener's (`WEIR_TLS_CERT`, `WEIR_TLS_KEY`) and the delivery client's (the system's roots
//! plus `WEIR_EXTRA_CA`). Both offer HTTP/2 and HTTP/1.1 by ALPN.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A certificate or key that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read certificate chain {path}: {reason}")]
    Cert { path: String, reason: String },
    #[error("cannot read private key {path}: {reason}")]
    Key { path: String, reason: String },
    #[error("certificate and key do not make a TLS configuration: {0}")]
    Config(rustls::Error),
    #[error("{path} holds a certificate that cannot be trusted as a root: {reason}")]
    Root { path: String, reason: rustls::Error },
}

/// Every certificate in a PEM file (at least one).
pub(crate) fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let cert_error = |reason: String| TlsError::Cert { path: path.display().to_string(), reason };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| cert_error(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_error(e.to_string()))?;
    if certs.is_empty() {
        return Err(cert_error("no certificate found".into()));
    }
    Ok(certs)
}

/// The listener's acceptor: the certificate chain in `cert` and the private key in `key`.
pub(crate) fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    let certs = load_certs(cert)?;
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| TlsError::Key { path: key.display().to_string(), reason: e.to_string() })?;
    let mut config =
        rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(certs, key).map_err(TlsError::Config)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The delivery client's configuration: the system's roots, plus those of the PEM file
/// `extra_ca`.
pub(crate) fn client_config(extra_ca: Option<&Path>) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for cert in native.certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = extra_ca {
        for cert in load_certs(path)? {
            roots.add(cert).map_err(|reason| TlsError::Root { path: path.display().to_string(), reason })?;
        }
    }
    let mut config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// A rustls error in words. rustls shows some certificate problems by their Rust names
/// (`invalid peer certificate: Other(OtherError(UnsupportedCertVersion))`); those read as
/// text here (`invalid peer certificate: unsupported cert version`).
pub(crate) fn describe(error: &rustls::Error) -> String {
    humanize(&error.to_string())
}

/// An I/O error of a TLS stream in words ([`describe`] when it carries a rustls error).
pub(crate) fn describe_io(error: &std::io::Error) -> String {
    match error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        Some(tls) => describe(tls),
        None => humanize(&error.to_string()),
    }
}

/// Rust debug names in a message turned into words: `Other(OtherError(X))` wrappers
/// dropped, `CamelCase` names lower-cased and spaced.
pub(crate) fn humanize(text: &str) -> String {
    let mut text = text.replace("Other(OtherError(", "").replace("OtherError(", "");
    let opened = text.matches('(').count();
    while text.ends_with(')') && text.matches(')').count() > opened {
        text.pop();
    }
    text.split(' ')
        .map(|token| {
            let camel = token.chars().all(|c| c.is_ascii_alphanumeric())
                && token.chars().skip(1).any(|c| c.is_ascii_uppercase())
                && token.chars().any(|c| c.is_ascii_lowercase());
            if !camel {
                return token.to_owned();
            }
            let mut words = String::new();
            for (i, c) in token.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    words.push(' ');
                }
                words.push(c.to_ascii_lowercase());
            }
            words
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_errors_read_as_words_not_rust_names() {
        assert_eq!(
            humanize("invalid peer certificate: Other(OtherError(UnsupportedCertVersion))"),
            "invalid peer certificate: unsupported cert version"
        );
        assert_eq!(humanize("invalid peer certificate: UnknownIssuer"), "invalid peer certificate: unknown issuer");
        assert_eq!(humanize("received fatal alert: HandshakeFailure"), "received fatal alert: handshake failure");
        assert_eq!(humanize("connection reset (os error 104)"), "connection reset (os error 104)");
        assert_eq!(humanize("HTTP 503"), "HTTP 503");
    }
}
