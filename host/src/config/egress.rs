//! Settings that carry credentials: the egress proxy (`egress_proxy`) and the key that
//! protects secrets at rest (`secret_key`). Neither prints its secret part, in `Debug` or
//! anywhere else.

use std::fmt;
use std::path::Path;

use base64::Engine as _;

/// The HTTP proxy deliveries tunnel through: `http://[user:password@]host:port`.
#[derive(Clone, PartialEq, Eq)]
pub struct EgressProxy {
    /// `host:port`, as connected to and named in errors.
    pub address: String,
    /// The `Proxy-Authorization` value (`Basic …`), from the URL's credentials.
    pub authorization: Option<String>,
}

impl EgressProxy {
    pub fn parse(text: &str) -> Result<EgressProxy, String> {
        let shape = "must be http://[user:password@]host:port";
        let url = url::Url::parse(text).map_err(|_| shape.to_owned())?;
        if url.scheme() != "http" {
            return Err(format!("{shape} (a proxy is spoken to in plain HTTP; the tunnel carries TLS)"));
        }
        if url.path() != "/" && !url.path().is_empty() || url.query().is_some() || url.fragment().is_some() {
            return Err(format!("{shape}, without a path"));
        }
        let host = match url.host() {
            Some(url::Host::Ipv6(ip)) => format!("[{ip}]"),
            Some(host) => host.to_string(),
            None => return Err(shape.to_owned()),
        };
        let port = url.port_or_known_default().unwrap_or(80);
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        let authorization = (!url.username().is_empty()).then(|| {
            let pair = format!("{}:{}", decode(url.username()), decode(url.password().unwrap_or_default()));
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
        });
        Ok(EgressProxy { address: format!("{host}:{port}"), authorization })
    }
}

impl fmt::Debug for EgressProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EgressProxy")
            .field("address", &self.address)
            .field("credentials", &self.authorization.as_ref().map(|_| "(hidden)"))
            .finish()
    }
}

/// A 256-bit key derived from the operator's `secret_key` (or read from the data
/// directory's key file).
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey(pub [u8; 32]);

impl SecretKey {
    /// The key for `material` (HKDF-SHA256, Weir's own salt and label).
    pub fn derive(material: &[u8]) -> SecretKey {
        // HKDF-SHA256 with one output block: extract, then expand with the label.
        let prk = crate::sign::hmac(b"weir secret key v1", &[material]);
        let okm = crate::sign::hmac(&prk, &[b"weir: secrets at rest\x01"]);
        SecretKey(okm)
    }
}

impl SecretKey {
    /// The key of the data directory's key file (`secret.key`, 32 random bytes as hex, mode
    /// 0600), made on first use.
    pub fn of_data_dir(data_dir: &Path) -> Result<SecretKey, String> {
        let path = data_dir.join(KEY_FILE);
        let fail = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", path.display());
        match std::fs::read_to_string(&path) {
            Ok(text) => return Ok(SecretKey::derive(text.trim().as_bytes())),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail("read", e)),
            Err(_) => {}
        }
        std::fs::create_dir_all(data_dir).map_err(|e| fail("create the directory of", e))?;
        let mut bytes = [0u8; 32];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
            .map_err(|_| format!("no randomness to make {}", path.display()))?;
        let text = hex::encode(bytes);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(mut file) => {
                std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| fail("write", e))?;
                Ok(SecretKey::derive(text.as_bytes()))
            }
            // Another process made it first: use its key.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let text = std::fs::read_to_string(&path).map_err(|e| fail("read", e))?;
                Ok(SecretKey::derive(text.trim().as_bytes()))
            }
            Err(e) => Err(fail("create", e)),
        }
    }
}

/// The data directory's key file.
const KEY_FILE: &str = "secret.key";

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(hidden)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_url_gives_its_address_and_basic_credentials_never_shown() {
        let p = EgressProxy::parse("http://ann:s%40cret@127.0.0.1:3128").unwrap();
        assert_eq!(p.address, "127.0.0.1:3128");
        // base64("ann:s@cret")
        assert_eq!(p.authorization.as_deref(), Some("Basic YW5uOnNAY3JldA=="));
        assert!(!format!("{p:?}").contains("YW5u"), "{p:?}");
        assert_eq!(EgressProxy::parse("http://proxy.internal").unwrap().address, "proxy.internal:80");
        assert_eq!(EgressProxy::parse("http://[::1]:8888").unwrap().address, "[::1]:8888");
        assert_eq!(EgressProxy::parse("http://127.0.0.1:1").unwrap().authorization, None);
        for bad in ["https://127.0.0.1:3128", "socks5://h:1", "127.0.0.1:3128", "http://h:1/path", ""] {
            assert!(EgressProxy::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_differ_by_material_and_never_print() {
        let a = SecretKey::derive(b"0123456789abcdef");
        assert_eq!(a, SecretKey::derive(b"0123456789abcdef"));
        assert_ne!(a, SecretKey::derive(b"0123456789abcdeF"));
        assert_eq!(format!("{a:?}"), "SecretKey(hidden)");
    }
}
