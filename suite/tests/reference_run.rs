//! The whole suite against the embedded reference service passes, at both profiles; a
//! fault makes the tests that guard its behaviour fail.

mod support;

use conform::verdict::Verdict;

#[test]
fn whole_suite_passes_against_the_reference_at_profile_tfe() {
    let results = support::run(&[], &[], &["--profile", "tfe"]);
    let bad: Vec<String> = results
        .iter()
        .filter(|r| r.verdict != Verdict::Pass)
        .map(|r| format!("{} {:?}\n{}", r.name, r.verdict, r.failure_text()))
        .collect();
    assert!(
        bad.is_empty(),
        "{} tests did not pass:\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert!(results.len() > 340);
}

#[test]
fn a_dropped_route_fails_exactly_its_tests() {
    let results = support::run(&["drop-route=GET /runs/:run_id"], &["runs::"], &[]);
    let failed = support::with_verdict(&results, Verdict::Fail);
    assert!(
        failed.contains(&"runs::show::bare".to_string()),
        "{failed:?}"
    );
    assert!(
        failed.contains(&"runs::show::api-v2".to_string()),
        "{failed:?}"
    );
    assert!(support::failed_checks(&results, "runs::show::bare").contains(&"endpoint.exists"));
}

#[test]
fn a_missing_group_is_unsupported_unless_required() {
    let faults = ["drop-route=GET /organization/audit-trail"];
    let results = support::run(&faults, &["audit_trail::"], &[]);
    assert_eq!(
        support::with_verdict(&results, Verdict::Unsupported).len(),
        2,
        "{results:#?}"
    );
    let results = support::run(&faults, &["audit_trail::"], &["--require", "audit_trail"]);
    assert_eq!(support::with_verdict(&results, Verdict::Fail).len(), 2);
}

#[test]
fn a_failing_create_precondition_is_an_error_that_names_it() {
    // State versions are made on a locked workspace (TFE); without the lock route the
    // create test cannot run, and says why instead of failing the endpoint.
    let results = support::run(
        &["drop-route=POST /workspaces/:id/actions/lock"],
        &["state_versions::create::"],
        &[],
    );
    for r in &results {
        assert_eq!(r.verdict, Verdict::Error, "{}", r.name);
        assert!(
            r.reason.as_deref().unwrap_or("").contains("actions/lock"),
            "{:?}",
            r.reason
        );
    }
}
