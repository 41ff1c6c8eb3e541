//! Self-validation: the fault list is consistent with the checks and the reference's fault
//! catalog, docs/CHECKS.md is current, and the whole selftest (baseline at --profile tfe,
//! then every fault) catches every fault with the tests and checks the list expects.

use conform::selftest::{self, Catch, FaultList, Options};

fn list() -> FaultList {
    FaultList::embedded().expect("selftest/faults.toml parses")
}

fn the_fault_list_covers_every_fault_and_every_check() {
    let problems = list().problems();
    assert!(
        problems.is_empty(),
        "selftest/faults.toml:\n  {}",
        problems.join("\n  ")
    );
}

fn the_checks_document_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/CHECKS.md");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    let generated = selftest::checks_markdown(&list());
    assert!(
        committed == generated,
        "docs/CHECKS.md is stale: run `cargo run -- checks --markdown > docs/CHECKS.md`"
    );
    assert!(
        !generated.contains("**none**"),
        "a check has no fault that proves it"
    );
}

fn a_fault_naming_an_unknown_check_is_a_problem() {
    let text = r#"
[[fault]]
fault = "no-auth"
level = "tfe"
checks = ["tfe.no-such-check"]
tests = ["*"]
"#;
    let list = FaultList::parse(text, "inline").expect("parses");
    let problems = list.problems();
    assert!(problems
        .iter()
        .any(|p| p.contains("unknown check `tfe.no-such-check`")));
    assert!(problems.iter().any(|p| p.contains("has no row")));
    assert!(problems.iter().any(|p| p.contains("proven by no fault")));
}

fn every_fault_is_caught_by_its_expected_tests_and_the_baseline_passes() {
    let list = list();
    let options = Options {
        repeat: 1,
        jobs: 3,
        ..Options::default()
    };
    let shapes = conform::precision::ShapeList::embedded().expect("shapes parse");
    let report = selftest::run(&list, &shapes, &options);
    let text = report.render();
    println!("{text}");
    assert!(report.ok(), "the selftest did not pass:\n{text}");
    assert_eq!(report.faults.len(), list.faults.len());
    // precision: against every shape, every verdict is exactly the expected one
    assert_eq!(report.shapes.len(), shapes.shapes.len());
    let (right, all) = conform::precision::precision(&report.shapes);
    assert!(all > 0 && right == all, "precision below 100%:\n{text}");
    assert!(report
        .faults
        .iter()
        .all(|f| f.catch == Catch::Caught && f.silent.is_empty()));
    let (caught, total) = report.score(None);
    assert_eq!(caught, total, "mutation score below 100%:\n{text}");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        the_fault_list_covers_every_fault_and_every_check,
        the_checks_document_is_current,
        a_fault_naming_an_unknown_check_is_a_problem,
        every_fault_is_caught_by_its_expected_tests_and_the_baseline_passes
    ]
}
