//! Certificates for mutual TLS made with `openssl`: a CA, a server certificate for
//! 127.0.0.1 and `localhost`, a client certificate (`clientAuth`), an expired one, and a
//! key that matches neither; and an HTTPS server that requires a client certificate from
//! the CA (rustls, serving through the test receiver).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::temp_dir;

pub struct MutualTls {
    pub dir: PathBuf,
    pub ca_pem: PathBuf,
    pub client_cert: String,
    pub client_key: String,
    pub expired_cert: String,
    pub other_key: String,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

impl MutualTls {
    pub fn new() -> MutualTls {
        let dir = temp_dir("mtls");
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        let req = |key: &str, out: &str, subject: &str| {
            let mut args = vec!["req"];
            args.extend(ec);
            args.extend(["-keyout", key, "-out", out, "-subj", subject]);
            openssl(&dir, &args);
        };
        let mut ca = vec!["req", "-x509"];
        ca.extend(ec);
        ca.extend(["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Weir mTLS test CA"]);
        openssl(&dir, &ca);
        std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
        std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
        let sign = |csr: &str, out: &str, ext: &str, days: &str| {
            openssl(
                &dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    csr,
                    "-CA",
                    "ca.pem",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-out",
                    out,
                    "-days",
                    days,
                    "-extfile",
                    ext,
                ],
            );
        };
        req("server.key", "server.csr", "/CN=localhost");
        sign("server.csr", "server.pem", "server.ext", "2");
        req("client.key", "client.csr", "/CN=weir-client/O=Acme Deliveries");
        sign("client.csr", "client.pem", "client.ext", "2");
        sign("client.csr", "expired.pem", "client.ext", "-1");
        req("other.key", "other.csr", "/CN=other");
        MutualTls {
            ca_pem: dir.join("ca.pem"),
            client_cert: read(&dir, "client.pem"),
            client_key: read(&dir, "client.key"),
            expired_cert: read(&dir, "expired.pem"),
            other_key: read(&dir, "other.key"),
            dir,
        }
    }

    /// SHA-256 of the client certificate, lowercase hex without colons (as `openssl` says).
    pub fn client_fingerprint(&self) -> String {
        let out = Command::new("openssl")
            .args(["x509", "-in", "client.pem", "-noout", "-fingerprint", "-sha256"])
            .current_dir(&self.dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.trim().split('=').nth(1).unwrap().replace(':', "").to_ascii_lowercase()
    }

    /// A TLS server configuration that requires a client certificate issued by the CA.
    pub fn server_config(&self) -> Arc<rustls::ServerConfig> {
        weir::install_crypto_provider();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from_pem_file(&self.ca_pem).unwrap()).unwrap();
        let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots)).build().unwrap();
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(self.dir.join("server.pem")).unwrap().collect::<Result<_, _>>().unwrap();
        let key = PrivateKeyDer::from_pem_file(self.dir.join("server.key")).unwrap();
        let mut config =
            rustls::ServerConfig::builder().with_client_cert_verifier(verifier).with_single_cert(chain, key).unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

impl Drop for MutualTls {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
