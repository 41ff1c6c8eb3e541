//! HTTPS for `conform serve --tls`: a certificate made at start (a throw-away certificate
//! authority and a server certificate it signs, for `127.0.0.1` and `localhost`), or one the
//! user brings, served with rustls on the same router.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;

/// A certificate made at start: the authority a client trusts, and the server's chain and key.
#[derive(Debug, Clone)]
pub struct GeneratedCertificate {
    /// The certificate authority, PEM: the file a client trusts (`SSL_CERT_FILE`).
    pub ca_pem: String,
    /// The server certificate followed by the authority, PEM.
    pub chain_pem: String,
    /// The server's private key, PEM (PKCS#8).
    pub key_pem: String,
}

/// Makes a certificate authority and a server certificate for `127.0.0.1`, `::1` and
/// `localhost`, signed by it (rcgen's default validity; nothing is written to disk).
pub fn generate_certificate() -> Result<GeneratedCertificate, String> {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
        ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
    };
    let err = |e: rcgen::Error| format!("cannot make a certificate: {e}");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    let mut ca_name = DistinguishedName::new();
    ca_name.push(DnType::CommonName, "conform serve local authority");
    ca_params.distinguished_name = ca_name;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().map_err(err)?;
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).map_err(err)?;

    let names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    let mut params = CertificateParams::new(names).map_err(err)?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "localhost");
    params.distinguished_name = name;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().map_err(err)?;
    let leaf = params.signed_by(&key, &ca).map_err(err)?;
    let ca_pem = ca.pem();
    Ok(GeneratedCertificate {
        chain_pem: format!("{}{}", leaf.pem(), ca_pem),
        ca_pem,
        key_pem: key.serialize_pem(),
    })
}

/// The rustls server configuration for a PEM certificate chain and a PEM private key.
pub(crate) fn server_config(
    chain_pem: &str,
    key_pem: &str,
) -> Result<rustls::ServerConfig, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the certificate is not PEM: {e}"))?;
    if certs.is_empty() {
        return Err("the certificate file holds no certificate".into());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| format!("the key is not a PEM private key: {e}"))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not fit: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Serves `router` over TLS on `listener` until the process ends: each connection's handshake
/// has 10 seconds; a failed handshake closes that connection only.
pub(crate) async fn serve_tls(
    listener: TcpListener,
    router: Router,
    config: rustls::ServerConfig,
) -> io::Result<()> {
    let acceptor = TlsAcceptor::from(Arc::new(config));
    loop {
        let (tcp, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(_) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let router = router.clone();
        tokio::spawn(async move {
            let Ok(Ok(stream)) =
                tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
            else {
                return;
            };
            let service = TowerToHyperService::new(router);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
    }
}
