//! What a client trusts when the user names certificates (`--ca-cert FILE`): the
//! authorities in the file, and each certificate in it as itself. The second is what makes a
//! self-signed server certificate work (`openssl req -x509` makes one that is its own CA, as
//! a real server's test certificate is), which webpki refuses as an end entity (`CaUsedAsEndEntity`)
//! although curl, Go and Python take it: a server whose certificate is exactly one the user
//! named is trusted, as that user asked.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;

/// A client builder that trusts the certificates of `pem` (authorities, and each one exactly
/// as a server certificate), in place of the system's.
pub fn trusting(
    builder: reqwest::ClientBuilder,
    pem: &[u8],
) -> Result<reqwest::ClientBuilder, String> {
    let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("not a PEM certificate: {e}"))?;
    if certificates.is_empty() {
        return Err("no PEM certificate in it".into());
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = RootCertStore::empty();
    let (_, unusable) = roots.add_parsable_certificates(certificates.iter().cloned());
    if unusable == certificates.len() {
        return Err("none of its certificates can be parsed".into());
    }
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| format!("cannot trust it: {e}"))?;
    let verifier = Arc::new(Named {
        inner,
        named: certificates,
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(builder.tls_backend_preconfigured(config))
}

/// webpki's verification, with the certificates the user named trusted as themselves.
#[derive(Debug)]
struct Named {
    inner: Arc<WebPkiServerVerifier>,
    named: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for Named {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if self.named.iter().any(|c| c.as_ref() == end_entity.as_ref()) {
            return Ok(ServerCertVerified::assertion());
        }
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
