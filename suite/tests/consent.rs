//! Actions whose effect reaches beyond what the run made need consent: a `--target` run with
//! an administrator token and no `--allow-instance-changes` never sends the SAML certificate
//! revocation, the twilio verify, a two-factor disable, an impersonation or a settings
//! update, and without `--notification-url` points no notification configuration anywhere
//! (the notifications sequence family included). Seen by a recording proxy (`conform proxy`
//! in front of `conform serve`), whose report lists every request that passed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use crate::support::processes::{self, start_proxy, stop_proxy, Served};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_conform");

/// The endpoints (catalog test names without the path form) that reach beyond the run.
const BEYOND_THE_RUN: [&str; 9] = [
    "admin_settings::revoke_old_certificate",
    "admin_settings::verify_twilio",
    "admin_settings::update_saml",
    "admin_settings::update_general",
    "admin_users::disable_two_factor",
    "admin_users::impersonate",
    "admin_users::unimpersonate",
    "account::update",
    "notification_configurations::verify",
];

fn scratch(name: &str) -> PathBuf {
    processes::scratch("consent", name)
}

/// Stops the proxy; answers its report.
fn report_of(proxy: Child, reports: &Path) -> Value {
    let said = stop_proxy(proxy);
    let text = std::fs::read_to_string(reports.join("results.json"))
        .unwrap_or_else(|_| panic!("the proxy wrote no results.json: {said}"));
    serde_json::from_str(&text).expect("results.json parses")
}

/// The catalog tests whose requests passed the proxy.
fn seen(report: &Value) -> Vec<String> {
    report["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["test"].as_str().map(str::to_string))
        .collect()
}

/// A whole `--target` run through a recording proxy with `extra` arguments; answers what
/// the proxy saw and the run's own results.
fn run_through_proxy(name: &str, extra: &[&str]) -> (Vec<String>, Value) {
    let served = Served::start("consent-user", "consent-admin", &[]);
    let dir = scratch(name);
    let (proxy, url) = start_proxy(&served.url, &dir.join("proxy"), &[]);
    let reports = dir.join("run");
    let out = Command::new(BIN)
        .args(["--target", &url, "--token", "consent-user"])
        .args(["--admin-token", "consent-admin", "--reports"])
        .arg(&reports)
        .args(extra)
        .output()
        .expect("a run");
    let report = report_of(proxy, &dir.join("proxy"));
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join("results.json")).unwrap_or_else(|_| {
            panic!(
                "no results.json: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        }),
    )
    .expect("results.json parses");
    (seen(&report), results)
}

fn verdict_and_reason(results: &Value, name: &str) -> (String, String) {
    let test = results["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no test {name}"));
    (
        test["verdict"].as_str().unwrap_or_default().to_string(),
        test["reason"].as_str().unwrap_or_default().to_string(),
    )
}

fn without_consent_no_action_beyond_the_run_is_sent() {
    let (seen, results) = run_through_proxy("without", &[]);
    for endpoint in BEYOND_THE_RUN {
        let sent: Vec<&String> = seen
            .iter()
            .filter(|t| t.starts_with(&format!("{endpoint}::")))
            .collect();
        assert!(sent.is_empty(), "{endpoint} was sent: {sent:?}");
        let (verdict, reason) = verdict_and_reason(&results, &format!("{endpoint}::api-v2"));
        assert_eq!(verdict, "skipped", "{endpoint}: {reason}");
        assert!(
            reason.contains("--allow-instance-changes") || reason.contains("--notification-url"),
            "{endpoint}: {reason}"
        );
    }
    let (verdict, reason) = verdict_and_reason(&results, "sequences::notifications");
    assert_eq!(verdict, "skipped", "{reason}");
    assert!(reason.contains("--notification-url"), "{reason}");
}

fn with_consent_the_actions_are_sent() {
    let (seen, _) = run_through_proxy(
        "with",
        &[
            "--allow-instance-changes",
            "--group",
            "admin_settings,admin_users",
        ],
    );
    for endpoint in [
        "admin_settings::revoke_old_certificate",
        "admin_settings::verify_twilio",
        "admin_users::disable_two_factor",
        "admin_users::impersonate",
    ] {
        assert!(
            seen.iter().any(|t| t.starts_with(&format!("{endpoint}::"))),
            "{endpoint} was not sent: {seen:?}"
        );
    }
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        without_consent_no_action_beyond_the_run_is_sent,
        with_consent_the_actions_are_sent
    ]
}
