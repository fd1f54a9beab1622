//! A test certificate authority and HTTPS clients that trust it.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use super::temp_dir;

/// A CA and one server certificate for `localhost` / 127.0.0.1 / ::1, written as PEM files.
pub struct TestCa {
    pub dir: PathBuf,
    pub ca_pem: PathBuf,
    pub cert_pem: PathBuf,
    pub key_pem: PathBuf,
}

impl TestCa {
    pub fn new() -> TestCa {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "Weir test CA");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();

        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.subject_alt_names.push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
        params.subject_alt_names.push(SanType::IpAddress("::1".parse().unwrap()));
        params.distinguished_name.push(DnType::CommonName, "localhost");
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca).unwrap();

        let dir = temp_dir("tls");
        let ca_pem = dir.join("ca.pem");
        let cert_pem = dir.join("cert.pem");
        let key_pem = dir.join("key.pem");
        std::fs::write(&ca_pem, ca.pem()).unwrap();
        std::fs::write(&cert_pem, cert.pem()).unwrap();
        std::fs::write(&key_pem, key.serialize_pem()).unwrap();
        TestCa { dir, ca_pem, cert_pem, key_pem }
    }

    /// A rustls server configuration with the test certificate (for HTTPS receivers).
    pub fn server_config(&self, alpn: &[&[u8]]) -> Arc<rustls::ServerConfig> {
        weir::install_crypto_provider();
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(&self.cert_pem).unwrap().collect::<Result<_, _>>().unwrap();
        let key = rustls::pki_types::PrivateKeyDer::from_pem_file(&self.key_pem).unwrap();
        let mut config = rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(certs, key).unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }

    /// A rustls client configuration trusting only this CA.
    pub fn client_config(&self, alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
        weir::install_crypto_provider();
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&self.ca_pem).unwrap() {
            roots.add(cert.unwrap()).unwrap();
        }
        let mut config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }
}

impl Drop for TestCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// GETs `path` over HTTPS from `addr`, negotiating `alpn`; returns (negotiated protocol, status, body).
pub async fn https_get(
    config: Arc<rustls::ClientConfig>,
    addr: std::net::SocketAddr,
    path: &str,
) -> Result<(Option<Vec<u8>>, u16, String), String> {
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(config);
    let server_name = ServerName::try_from("localhost").unwrap();
    let tls = connector.connect(server_name, tcp).await.map_err(|e| e.to_string())?;
    let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    let io = TokioIo::new(tls);
    let request = hyper::Request::get(format!("https://localhost{path}")).body(Empty::<Bytes>::new()).unwrap();
    let response = if alpn.as_deref() == Some(b"h2") {
        let (mut sender, conn) = hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io)
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        sender.send_request(request).await.map_err(|e| e.to_string())?
    } else {
        let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        sender.send_request(request).await.map_err(|e| e.to_string())?
    };
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((alpn, status, String::from_utf8_lossy(&body).into_owned()))
}

/// The `Set-Cookie` headers of an HTTPS GET (HTTP/1.1).
pub async fn https_headers(config: Arc<rustls::ClientConfig>, addr: std::net::SocketAddr, path: &str) -> Vec<String> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(config)
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.unwrap();
    tokio::spawn(conn);
    let request = hyper::Request::get(format!("https://localhost{path}"))
        .header("host", "localhost")
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    response.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).map(str::to_owned).collect()
}
