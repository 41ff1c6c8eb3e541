//! Helpers shared by the project's integration tests: run the suite in-process against the
//! embedded reference service, with faults switched on.

#![allow(dead_code)]

pub mod impostors;
pub mod limiter;
pub mod processes;
pub mod scratch;

use conform::cli::RunArgs;
use conform::harness::run_plan;
use conform::plan::{Item, Plan};
use conform::settings::Settings;
use conform::verdict::{TestResult, Verdict};

/// The plan of `conform ARGS` against the reference with `faults`: every test and family of
/// the catalog (no selection), for the caller to narrow.
pub fn plan(faults: &[&str], args: &[&str]) -> Plan {
    let mut words: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    for fault in faults {
        words.push("--reference-fault".into());
        words.push(fault.to_string());
    }
    let args = RunArgs::from_words(&words).expect("arguments parse");
    Plan::new(Settings::resolve(&args).expect("settings resolve")).expect("catalog loads")
}

/// True when a name starts with one of `prefixes` (or none is given).
fn named(name: &str, prefixes: &[&str]) -> bool {
    prefixes.is_empty() || prefixes.iter().any(|p| name.starts_with(p))
}

/// Runs the tests whose names start with one of `prefixes` (all when empty) against the
/// reference with `faults`, plus extra command-line `args`.
pub fn run(faults: &[&str], prefixes: &[&str], args: &[&str]) -> Vec<TestResult> {
    let plan = plan(faults, args)
        .retain(|item| matches!(item, Item::Test(case) if named(&case.name, prefixes)));
    assert!(!plan.items.is_empty(), "no test matches {prefixes:?}");
    run_plan(&plan).expect("session opens").0
}

/// The names of the tests with that verdict.
pub fn with_verdict(results: &[TestResult], verdict: Verdict) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.verdict == verdict)
        .map(|r| r.name.clone())
        .collect()
}

/// The check ids that failed in a test.
pub fn failed_checks(results: &[TestResult], name: &str) -> Vec<&'static str> {
    results
        .iter()
        .filter(|r| r.name == name)
        .flat_map(|r| r.findings.iter().map(|f| f.check.id))
        .collect()
}

/// Runs the sequence families whose test names start with one of `prefixes` (all when
/// empty) against the reference with `faults`, plus extra command-line `args`.
pub fn run_sequences(faults: &[&str], prefixes: &[&str], args: &[&str]) -> Vec<TestResult> {
    run_plan(&family_plan(faults, prefixes, args))
        .expect("session opens")
        .0
}

/// The plan of the sequence families whose test names start with one of `prefixes` (all
/// when empty); at least one.
pub fn family_plan(faults: &[&str], prefixes: &[&str], args: &[&str]) -> Plan {
    let plan = plan(faults, args)
        .retain(|item| matches!(item, Item::Family(_)) && named(&item.name(), prefixes));
    assert!(
        !plan.items.is_empty(),
        "no sequence family matches {prefixes:?}"
    );
    plan
}
