//! Uploads to another origin: a target whose upload addresses are on another host than
//! `--target`'s is followed there (the spec lets it name any `{upload_url}`), and the run says
//! so once, on stderr and in the reports' warnings, naming that origin.

use crate::support::processes::{text, Served};
use crate::support::scratch::Scratch;

use std::process::Command;

/// The reference served on a loopback port whose absolute URLs (its upload addresses among
/// them) name `localhost`, while the run's `--target` names `127.0.0.1`: the same server, on
/// another origin.
fn uploads_on_another_origin_are_said_once_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
        .to_string();
    let public = format!("http://localhost:{port}");
    let served = Served::with_args(&[
        "--port",
        &port,
        "--public-url",
        &public,
        "--token",
        "elsewhere-user-token",
        "--admin-token",
        "elsewhere-admin-token",
    ]);
    let reports = Scratch::new("test", "elsewhere");
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &format!("http://127.0.0.1:{port}")])
        .args(["--token", "elsewhere-user-token"])
        .args(["--group", "configuration_versions"])
        .arg("--reports")
        .arg(&*reports)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .output()
        .expect("conform runs");
    let said = text(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warned: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("uploads go to another host"))
        .collect();
    assert_eq!(warned.len(), 1, "said once: {said}");
    assert!(
        warned[0].contains(&public),
        "names the origin: {}",
        warned[0]
    );
    assert!(
        said.lines().any(
            |l| l.starts_with("test configuration_versions::upload::upload ") && l.ends_with(" ok")
        ),
        "the upload went there: {said}"
    );
    for file in ["summary.md", "results.json"] {
        let report = std::fs::read_to_string(reports.join(file)).expect(file);
        assert!(
            report.contains("uploads go to another host") && report.contains(&public),
            "{file} lists the warning: {report}"
        );
    }
    drop(served);
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![uploads_on_another_origin_are_said_once_naming_it]
}
