//! No wait that cannot change a verdict (issue 43): a test that already fails at the run's
//! profile reads what its other checks observe once, and notes what it did not wait for; with
//! waivers, which may waive one check alone, it waits as before.

use serde_json::Value;

use crate::support::processes::{scratch, text, Served};

const TOKEN: &str = "waits-token";
const ADMIN_TOKEN: &str = "waits-admin-token";

/// `runs::apply::api-v2` at tfe against a server that answers run actions 200 (TFE: 202)
/// and never moves a run, with `extra` arguments: the test's result.
fn apply_against_a_stuck_run(served: &Served, name: &str, extra: &[&str]) -> Value {
    let dir = scratch("waits", name);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &served.url, "--token", TOKEN])
        .args(["--admin-token", ADMIN_TOKEN, "--profile", "tfe"])
        .args(["runs::apply::api-v2", "--exact", "--reports"])
        .arg(&dir)
        .args(extra)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .output()
        .expect("conform runs");
    let results: Value = std::fs::read(dir.join("results.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_else(|| panic!("no results.json: {}", text(&out)));
    results["tests"]
        .as_array()
        .and_then(|tests| tests.iter().find(|t| t["name"] == "runs::apply::api-v2"))
        .cloned()
        .unwrap_or_else(|| panic!("no runs::apply::api-v2: {}", text(&out)))
}

/// The ids of a result's failed checks.
fn failed(result: &Value) -> Vec<String> {
    result["failed_checks"]
        .as_array()
        .map(|checks| {
            checks
                .iter()
                .filter_map(|c| c["id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn a_test_that_already_fails_does_not_wait_for_what_cannot_change_its_verdict() {
    let served = Served::start(TOKEN, ADMIN_TOKEN, &["wrong-status", "run-action-noop"]);
    let result = apply_against_a_stuck_run(&served, "failing", &[]);
    assert_eq!(result["verdict"], "fail", "{result}");
    let failing = failed(&result);
    assert!(failing.contains(&"tfe.status-code".into()), "{result}");
    // the run never moves: read once, neither passed nor failed, and the reason says so
    assert!(
        !failing.contains(&"tfe.state-after-action".into()),
        "{result}"
    );
    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(
            "tfe.state-after-action not waited for: the test already fails on tfe.status-code"
        ),
        "{result}"
    );

    // With waivers (here one for another test), a check may be waived alone: the test waits
    // for the state, in vain, and says so in a finding.
    let dir = scratch("waits", "waivers-file");
    let waivers = dir.join("waivers.toml");
    std::fs::write(
        &waivers,
        "[[waiver]]\ntest = \"teams::*\"\nreason = \"another test\"\nlink = \"https://example.com/1\"\nexpires = \"2099-12-31\"\n",
    )
    .expect("waivers written");
    let waivers = waivers.to_string_lossy().to_string();
    let waited = apply_against_a_stuck_run(&served, "waived", &["--waivers", &waivers]);
    assert_eq!(waited["verdict"], "fail", "{waited}");
    assert!(
        failed(&waited).contains(&"tfe.state-after-action".into()),
        "{waited}"
    );
    assert!(
        waited["requests"].as_u64() > result["requests"].as_u64(),
        "the wait polls: {} requests waited, {} not",
        waited["requests"],
        result["requests"]
    );
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_test_that_already_fails_does_not_wait_for_what_cannot_change_its_verdict
    ]
}
