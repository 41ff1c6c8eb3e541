//! What a `pass` certifies: against servers that look like the API and do not implement it
//! (written apart from the reference, `support::impostors`), almost nothing may pass. A test
//! whose endpoint has an effect passes only when it observed that effect; a server that
//! stores nothing, or stores documents without their meaning, shows none.

use crate::support;

use std::path::PathBuf;

use crate::support::impostors::{serve, Impostor};
use conform::harness::run_plan;
use conform::verdict::{TestResult, Verdict};

/// The whole plan against `impostor` at `profile`, with both tokens (the administrator groups
/// are judged too); the ledger in a scratch folder.
fn run_against(impostor: Impostor, profile: &str) -> Vec<TestResult> {
    let address = serve(impostor);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "depth-{impostor:?}-{profile}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let target = format!("http://{address}");
    let ledger = dir.join("ledger.jsonl");
    let plan = support::plan(
        &[],
        &[
            "--target",
            &target,
            "--token",
            "impostor-token",
            "--admin-token",
            "impostor-admin-token",
            "--profile",
            profile,
            "--ledger",
            ledger.to_str().expect("utf-8 path"),
            "--reports",
            dir.to_str().expect("utf-8 path"),
            "--timeout",
            "5",
        ],
    );
    run_plan(&plan).expect("session opens").0
}

/// Asserts at most `bound` passes, listing them when there are more.
fn at_most(results: &[TestResult], bound: usize, what: &str) {
    let passed = support::with_verdict(results, Verdict::Pass);
    if std::env::var_os("CONFORM_DEPTH_LIST").is_some() {
        eprintln!("{what}: {} passed", passed.len());
        for name in &passed {
            eprintln!("  {name}");
        }
    }
    assert!(
        passed.len() <= bound,
        "{what}: {} tests passed, at most {bound} may:\n  {}",
        passed.len(),
        passed.join("\n  ")
    );
}

fn a_server_that_stores_nothing_passes_almost_nothing_at_tfe() {
    let results = run_against(Impostor::Hollow, "tfe");
    at_most(&results, 10, "a server that stores nothing, at tfe");
}

fn a_server_that_stores_nothing_passes_almost_nothing_at_core() {
    let results = run_against(Impostor::Hollow, "core");
    at_most(&results, 40, "a server that stores nothing, at core");
}

fn a_generic_store_passes_almost_nothing_at_tfe() {
    let results = run_against(Impostor::GenericStore, "tfe");
    at_most(&results, 45, "a generic JSON:API store, at tfe");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_server_that_stores_nothing_passes_almost_nothing_at_tfe,
        a_server_that_stores_nothing_passes_almost_nothing_at_core,
        a_generic_store_passes_almost_nothing_at_tfe
    ]
}
