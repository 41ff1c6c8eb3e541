//! Helpers shared by the project's integration tests: run the suite in-process against the
//! embedded reference service, with faults switched on.

#![allow(dead_code)]

use clap::Parser;
use conform::cli::Cli;
use conform::harness::{load_catalog, selected_tests, Session};
use conform::verdict::{TestResult, Verdict};

/// Runs the tests whose names start with one of `prefixes` (all when empty) against the
/// reference with `faults`, plus extra command-line `args`.
pub fn run(faults: &[&str], prefixes: &[&str], args: &[&str]) -> Vec<TestResult> {
    let mut argv = vec!["conform".to_string()];
    for fault in faults {
        argv.push("--reference-fault".into());
        argv.push(fault.to_string());
    }
    argv.extend(args.iter().map(|a| a.to_string()));
    let cli = Cli::try_parse_from(argv).expect("arguments parse");
    let (catalog, schemas) = load_catalog(&cli.run).expect("catalog loads");
    let tests: Vec<_> = selected_tests(&catalog, &[])
        .expect("tests")
        .into_iter()
        .filter(|t| prefixes.is_empty() || prefixes.iter().any(|p| t.name.starts_with(p)))
        .collect();
    assert!(!tests.is_empty(), "no test matches {prefixes:?}");
    let session = Session::open(&cli.run, catalog, schemas).expect("session opens");
    let results = session.run_direct(&tests, 16);
    session.close();
    results
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
    let mut argv = vec!["conform".to_string()];
    for fault in faults {
        argv.push("--reference-fault".into());
        argv.push(fault.to_string());
    }
    argv.extend(args.iter().map(|a| a.to_string()));
    let cli = Cli::try_parse_from(argv).expect("arguments parse");
    let (catalog, schemas) = load_catalog(&cli.run).expect("catalog loads");
    let families = families_named(&catalog, prefixes);
    let session = Session::open(&cli.run, catalog, schemas).expect("session opens");
    let results = session.run_sequences(&families);
    session.close();
    results
}

/// The sequence families whose test names start with one of `prefixes` (all when empty); at
/// least one.
pub fn families_named(
    catalog: &conform::catalog::Catalog,
    prefixes: &[&str],
) -> Vec<std::sync::Arc<conform::catalog::families::model::Family>> {
    let families: Vec<_> = catalog
        .families
        .iter()
        .filter(|f| {
            let name = conform::sequences::test_name(f);
            prefixes.is_empty() || prefixes.iter().any(|p| name.starts_with(p))
        })
        .cloned()
        .collect();
    assert!(
        !families.is_empty(),
        "no sequence family matches {prefixes:?}"
    );
    families
}
