//! `conform serve --tls` (issue 12): HTTPS with a certificate made at start whose authority
//! is printed, or the user's own PEM files; absolute URLs use the scheme and host the client
//! used. Each test starts its own `conform serve` child on loopback and kills it at the end.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::processes::Served;

/// Starts `conform serve ARGS --port 0` with a token of the tests'.
fn serve(args: &[&str]) -> Served {
    Served::with_args(&[args, &["--token", "tls-test-token"]].concat())
}

fn client(ca_pem: &[u8]) -> reqwest::Client {
    reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem).expect("PEM"))
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client")
}

async fn get(client: &reqwest::Client, url: &str, headers: &[(&str, &str)]) -> Value {
    let mut req = client.get(url).bearer_auth("tls-test-token");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send()
        .await
        .expect("answer")
        .json()
        .await
        .expect("JSON")
}

async fn a_certificate_made_at_start_is_trusted_through_the_printed_file() {
    let service = serve(&["--tls"]);
    let ca = std::fs::read(service.trust_file().expect("trust this file")).expect("the file");
    let client = client(&ca);
    let root = format!("https://localhost:{}", service.port());
    let created = client
        .post(format!("{root}/api/v2/organizations"))
        .bearer_auth("tls-test-token")
        .header("content-type", "application/vnd.api+json")
        .body(json!({"data":{"type":"organizations","attributes":{"name":"tls","email":"t@example.test"}}}).to_string())
        .send()
        .await
        .expect("answer");
    assert_eq!(created.status(), 201);
    let list = get(&client, &format!("{root}/api/v2/organizations"), &[]).await;
    let link = list["links"]["self"].as_str().unwrap_or_default();
    assert!(
        link.starts_with(&format!("{root}/api/v2/organizations?")),
        "{link}"
    );
    // Behind a proxy the forwarded scheme and host win.
    let proxied = get(
        &client,
        &format!("{root}/api/v2/organizations"),
        &[("forwarded", "proto=https;host=tfe.example.test")],
    )
    .await;
    let link = proxied["links"]["self"].as_str().unwrap_or_default();
    assert!(
        link.starts_with("https://tfe.example.test/api/v2/"),
        "{link}"
    );
    // 127.0.0.1 is in the certificate too.
    let by_ip = format!("https://127.0.0.1:{}/api/v2/ping", service.port());
    let ping = client.get(by_ip).bearer_auth("tls-test-token").send().await;
    assert!(ping.is_ok_and(|r| r.status().is_success()));
}

fn stopped_by_sigterm_it_removes_the_authority_it_made() {
    let mut service = serve(&["--tls"]);
    let file = service.trust_file().expect("trust this file").to_path_buf();
    assert!(file.is_file());
    assert_eq!(service.terminate(), Some(143));
    assert!(
        !file.parent().expect("its folder").exists(),
        "{file:?} left"
    );
}

async fn a_users_own_certificate_is_served() {
    let made = conform_reference::generate_certificate().expect("a certificate");
    let dir = std::env::temp_dir().join(format!("conform-tls-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (cert, key) = (dir.join("chain.pem"), dir.join("key.pem"));
    std::fs::write(&cert, &made.chain_pem).expect("write");
    std::fs::write(&key, &made.key_pem).expect("write");
    let service = serve(&[
        "--tls-cert",
        cert.to_str().unwrap_or_default(),
        "--tls-key",
        key.to_str().unwrap_or_default(),
        "--public-url",
        "https://tfe.example.test",
    ]);
    assert!(
        service.trust_file().is_none(),
        "no file to trust is made for the user's own"
    );
    let client = client(made.ca_pem.as_bytes());
    let list = get(
        &client,
        &format!("https://localhost:{}/api/v2/organizations", service.port()),
        &[],
    )
    .await;
    let link = list["links"]["self"].as_str().unwrap_or_default();
    assert!(
        link.starts_with("https://tfe.example.test/api/v2/"),
        "--public-url: {link}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server certificate that is its own authority, as `openssl req -x509` makes by default
/// (and a real server's test certificate is): named with `--ca-cert`, it is trusted by a run, by diff
/// and by sweep, as curl, Go and Python trust it.
fn a_self_signed_certificate_named_with_ca_cert_is_trusted_by_every_command() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let mut params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".into()]).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("a self-signed certificate");
    let dir = std::env::temp_dir().join(format!("conform-self-signed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (cert_file, key_file) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_file, cert.pem()).expect("write");
    std::fs::write(&key_file, key.serialize_pem()).expect("write");
    let service = serve(&[
        "--tls-cert",
        cert_file.to_str().unwrap_or_default(),
        "--tls-key",
        key_file.to_str().unwrap_or_default(),
    ]);
    let root = format!("https://127.0.0.1:{}", service.port());
    let ca = cert_file.to_str().unwrap_or_default();
    let conform = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
            .args(args)
            .env("CONFORM_TOKEN", "tls-test-token")
            .output()
            .expect("conform runs")
    };
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let reports = dir.join("reports");
    let reports = reports.to_str().unwrap_or_default();
    let run = conform(&[
        "--target",
        &root,
        "--ca-cert",
        ca,
        "--reports",
        reports,
        "account::details",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let without = conform(&["--target", &root, "--reports", reports, "account::details"]);
    assert_eq!(without.status.code(), Some(2), "not trusted unless named");
    let diff = conform(&[
        "diff",
        "--target",
        &root,
        "--target",
        &root,
        "--ca-cert",
        ca,
        "--reports",
        reports,
        "--group",
        "account",
    ]);
    assert_eq!(diff.status.code(), Some(0), "{}", text(&diff));
    let sweep = conform(&[
        "sweep",
        "--target",
        &root,
        "--ca-cert",
        ca,
        "--prefix",
        "nothing-",
        "--dry-run",
    ]);
    assert_eq!(sweep.status.code(), Some(0), "{}", text(&sweep));
    let _ = std::fs::remove_dir_all(&dir);
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    let mut tests = crate::harness::tests![
        stopped_by_sigterm_it_removes_the_authority_it_made,
        a_self_signed_certificate_named_with_ca_cert_is_trusted_by_every_command
    ];
    tests.extend([
        crate::harness::test(
            "a_certificate_made_at_start_is_trusted_through_the_printed_file",
            || {
                crate::harness::block_on(
                    a_certificate_made_at_start_is_trusted_through_the_printed_file(),
                )
            },
        ),
        crate::harness::test("a_users_own_certificate_is_served", || {
            crate::harness::block_on(a_users_own_certificate_is_served())
        }),
    ]);
    tests
}
