//! The target's rate learned (issue 43, item 2): against the reference limited to 20
//! requests a second, a run meets a few 429s (about 20 for 400 requests, most before it
//! learned; without learning about 1 in 4 answers), and judges
//! every test as it does without the limit. Counts, not timings.

use std::collections::BTreeMap;

use crate::support::processes::{scratch, text, Served};
use serde_json::Value;

/// The reference's limit, requests a second.
const LIMIT: u32 = 20;

/// The groups run: a few hundred requests over many routes.
const GROUPS: &str = "organizations,teams";

/// Runs `conform` over [`GROUPS`] against `served` with `extra`; answers its `results.json`
/// and what it printed.
fn run(served: &Served, name: &str, extra: &[&str]) -> (Value, String) {
    let dir = scratch("learned-rate", name);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &served.url, "--token", "pace-user"])
        .args([
            "--admin-token",
            "pace-admin",
            "--group",
            GROUPS,
            "--reports",
        ])
        .arg(&dir)
        .args(extra)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .output()
        .expect("conform runs");
    let said = text(&out);
    let results = std::fs::read(dir.join("results.json"))
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| panic!("results.json: {e}\n{said}"));
    (results, said)
}

/// Each test's verdict.
fn verdicts(results: &Value) -> BTreeMap<String, String> {
    results["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or_default().to_string(),
                t["verdict"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn a_limited_reference_is_paced_with_few_429s_and_the_same_verdicts() {
    let fault = format!("rate-limit-per-second={LIMIT}");
    let limited = Served::start("pace-user", "pace-admin", &[&fault]);
    let (paced, said) = run(&limited, "limited", &[]);
    let free = Served::start("pace-user", "pace-admin", &[]);
    let (unlimited, _) = run(&free, "unlimited", &[]);

    let figures = &paced["figures"];
    let requests = figures["requests"].as_u64().unwrap_or(0);
    let refused = figures["rate_limited_answers"].as_u64().unwrap_or(u64::MAX);
    eprintln!("at {LIMIT}/s: {requests} requests, {refused} answered 429; {figures}");
    assert!(requests > 150, "the run met the limit: {figures}");
    assert!(
        refused * 10 <= requests,
        "{refused} 429s for {requests} requests (more than 1 in 10)\n{said}"
    );
    let learned = figures["learned_limit_per_second"].as_f64().unwrap_or(0.0);
    assert!(
        (f64::from(LIMIT) * 0.7..=f64::from(LIMIT) * 1.3).contains(&learned),
        "learned {learned}/s of a {LIMIT}/s limit: {figures}"
    );
    let line = said
        .lines()
        .find(|l| l.starts_with("requests: "))
        .unwrap_or_default();
    assert!(
        line.contains("bound ") && line.contains("the target's"),
        "{line}"
    );
    assert_eq!(
        verdicts(&paced),
        verdicts(&unlimited),
        "the limit changed verdicts"
    );
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![a_limited_reference_is_paced_with_few_429s_and_the_same_verdicts]
}
