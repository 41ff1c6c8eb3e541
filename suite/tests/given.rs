//! A given resource is read with every show that can find it (issue 41 item 3): a workspace
//! given with `--fixture` is read with TFE's own show before the administrator's, so a server
//! without the administrator route (or a run without its token) is not warned that the
//! workspace's "show answered 404" while its own show answers 200. Also the other evidence of
//! a real server's triage: a group only `--fixture` gives, and the parent asked for an absent route.

use std::process::Command;

use crate::support::processes::{self, text, Served};

fn a_given_workspace_is_read_with_its_own_show_before_the_administrators() {
    let tokens = ("given-user-token", "given-admin-token");
    let served = Served::with_args(&[
        "--token",
        tokens.0,
        "--admin-token",
        tokens.1,
        "--seed-organization",
        "given",
        "--seed-workspace",
        "w1",
        "--fault",
        "drop-route=GET /admin/workspaces/:id",
    ]);
    let workspace = served
        .banner
        .iter()
        .find_map(|l| l.trim().strip_prefix("seeded workspace: "))
        .expect("the banner names the seeded workspace")
        .to_string();
    let dir = processes::scratch("given", "own-show");
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1, "--organization", "given"])
        .args(["--fixture", &format!("workspace={workspace}")])
        .args(["--group", "variables", "-q", "--reports"])
        .arg(&dir)
        .output()
        .expect("a run");
    let said = text(&out);
    assert!(!said.contains("is taken as given"), "{said}");
    assert_eq!(out.status.code(), Some(0), "{said}");
}

/// The tests of a run against a reference served with `serve_args` (its tokens among
/// them), run with `run_args` (the same tokens, a filter): their entries in results.json.
fn run_tests(serve_args: &[&str], run_args: &[&str], name: &str) -> Vec<serde_json::Value> {
    let served = Served::with_args(serve_args);
    let dir = processes::scratch("given", name);
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &served.url])
        .args(run_args)
        .args(["-q", "--reports"])
        .arg(&dir)
        .output()
        .expect("a run");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).unwrap_or_default(),
    )
    .unwrap_or_else(|_| panic!("results.json\n{}", text(&out)));
    results["tests"].as_array().cloned().unwrap_or_default()
}

/// The verdicts of the `assessment_results` tests against a served reference with `faults`,
/// run without `--fixture assessment_result=ID` (a kind only a fixture gives).
fn assessment_verdicts(faults: &[&str]) -> Vec<(String, String)> {
    let tokens = [
        "--token",
        "absent-user-token",
        "--admin-token",
        "absent-admin-token",
    ];
    let mut args: Vec<&str> = tokens.to_vec();
    for fault in faults {
        args.extend(["--fault", fault]);
    }
    let mut run_args = tokens.to_vec();
    run_args.extend(["--group", "assessment_results"]);
    run_tests(&args, &run_args, "fixture-only")
        .iter()
        .map(|t| (t["name"].to_string(), t["verdict"].to_string()))
        .collect()
}

/// A group only `--fixture` can give resources of (assessment results) is still asked with
/// ids nobody made (issue 41, a real server's triage): where its routes answer the target's no-route
/// answer and its handlers answer an unknown id otherwise, the group is unsupported; where
/// they are served, its tests are skipped for want of the fixture.
fn a_group_only_fixtures_give_is_asked_with_made_up_ids() {
    let served = assessment_verdicts(&[]);
    assert_eq!(served.len(), 4, "{served:?}");
    assert!(served.iter().all(|(_, v)| v == "\"skipped\""), "{served:?}");
    let absent = assessment_verdicts(&[
        "drop-route=GET /api/v2/assessment-results/:assessment_result_id",
        "drop-route=GET /api/v2/assessment-results/:assessment_result_id/json-output",
    ]);
    assert_eq!(absent.len(), 4, "{absent:?}");
    assert!(
        absent.iter().all(|(_, v)| v == "\"unsupported\""),
        "{absent:?}"
    );
    // a backend without an organization show (a cloud-block backend's): its other
    // handlers (a workspace's, a run's) still tell an unknown id from a missing route
    let without_organization_show = assessment_verdicts(&[
        "drop-route=GET /api/v2/organizations/:organization_name",
        "drop-route=GET /api/v2/assessment-results/:assessment_result_id",
        "drop-route=GET /api/v2/assessment-results/:assessment_result_id/json-output",
    ]);
    assert_eq!(
        without_organization_show, absent,
        "{without_organization_show:?}"
    );
}

/// A backend for terraform's cloud block, its workspace given read-only (`--fixture`): the runs
/// tests change a workspace, so they make their own, which the backend cannot; each skip says
/// that `--scratch workspace=ID` would judge them (issue 41 item 6).
fn a_given_workspace_the_run_may_not_change_names_scratch_in_the_skip() {
    let tokens = [
        "--token",
        "cb-user-token",
        "--admin-token",
        "cb-admin-token",
    ];
    let mut serve_args = tokens.to_vec();
    serve_args.extend(["--shape", "cloud-block-only"]);
    let mut run_args = tokens.to_vec();
    run_args.extend([
        "--organization",
        "acme",
        "--fixture",
        "workspace=ws-cloudblockseeded",
    ]);
    run_args.extend(["--group", "runs"]);
    let tests = run_tests(&serve_args, &run_args, "cloud-block-read-only");
    let skipped: Vec<&str> = tests
        .iter()
        .filter(|t| t["verdict"] == "skipped")
        .map(|t| t["reason"].as_str().unwrap_or_default())
        .collect();
    assert!(!skipped.is_empty(), "{tests:?}");
    for reason in &skipped {
        assert!(
            reason.contains("give --scratch workspace=ID to let the run change a given workspace"),
            "{reason}"
        );
    }
}

/// The failed checks of `test` in a run of `filter` against a served reference in `shape`
/// with `faults`.
fn failed_checks(shape: &str, faults: &[&str], filter: &str, test: &str) -> Vec<String> {
    let mut args = vec!["--token", "given-user-token", "--shape", shape];
    for fault in faults {
        args.extend(["--fault", fault]);
    }
    let tests = run_tests(
        &args,
        &["--token", "given-user-token", filter],
        "failed-checks",
    );
    let result = tests
        .iter()
        .find(|t| t["name"] == test)
        .unwrap_or_else(|| panic!("{test} not in results.json: {tests:?}"));
    let checks = result["failed_checks"].as_array().into_iter().flatten();
    checks
        .map(|c| c["id"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A documented refusal on a route proven absent (a real server's ingress attributes) fails
/// `endpoint.exists` only, in both path forms (a real server's triage: the `::api-v2` form
/// also failed `transport.no-5xx` on a real server's 500 to the parent's show asked with a made-up id,
/// a finding of that show's test; the `::bare` form was skipped, the parent asked in a bare
/// form the server does not serve at all answering as the router does).
fn a_documented_refusal_on_an_absent_route_fails_endpoint_exists_only() {
    let dropped = "drop-route=GET /configuration-versions/:id/ingress-attributes";
    let test = "configuration_versions::ingress_attributes::api-v2";
    let checks = failed_checks("unconfigured", &["unknown-id-500", dropped], test, test);
    assert_eq!(checks, ["endpoint.exists"], "{checks:?}");
    let test = "configuration_versions::ingress_attributes::bare";
    let checks = failed_checks("unconfigured", &["no-bare", dropped], test, test);
    assert_eq!(checks, ["endpoint.exists"], "{checks:?}");
}

/// A run that has ended (a real server's: its plan errored, no engine to download) never becomes
/// confirmable: `runs::apply` ends its wait for `is-confirmable` at the first read that shows
/// the run `errored` (resources' `ends`) and says so, instead of polling the budget out
/// (issue 43: a real server's slowest tests). Here the runs' precondition reads are the given evidence.
fn a_wait_ends_at_a_state_the_resource_never_leaves() {
    let tokens = [
        "--token",
        "ended-user-token",
        "--admin-token",
        "ended-admin-token",
    ];
    let mut serve_args = tokens.to_vec();
    serve_args.extend(["--fault", "plan-errors-at-once"]);
    let mut run_args = tokens.to_vec();
    run_args.push("runs::apply::");
    let tests = run_tests(&serve_args, &run_args, "run-ended");
    assert_eq!(tests.len(), 2, "{tests:?}");
    for test in &tests {
        assert_eq!(test["verdict"], "skipped", "{test}");
        let reason = test["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("/data/attributes/status was \"errored\", a state it never leaves"),
            "{reason}"
        );
        assert!(!reason.contains("poll budget"), "{reason}");
    }
}

/// An action whose run never became ready is asked all the same on the run the suite made:
/// where its route gives the no-route answer (a server that serves no bare form), it
/// fails `endpoint.exists` there, instead of being skipped on the wait (a real server's triage at
/// 411bdff, sample #27); the served form stays skipped.
fn an_action_whose_run_never_became_ready_is_still_asked_for_its_route() {
    let tokens = ["--token", "unready-user-token"];
    let mut serve_args = tokens.to_vec();
    serve_args.extend(["--fault", "plan-errors-at-once", "--fault", "no-bare"]);
    let mut run_args = tokens.to_vec();
    run_args.push("runs::apply::");
    let tests = run_tests(&serve_args, &run_args, "run-unready");
    let verdict = |name: &str| {
        let test = tests.iter().find(|t| t["name"] == name);
        let test = test.unwrap_or_else(|| panic!("{name} not in {tests:?}"));
        let checks: Vec<&str> = test["failed_checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str())
            .collect();
        (
            test["verdict"].as_str().unwrap_or_default().to_string(),
            checks.join(","),
        )
    };
    assert_eq!(
        verdict("runs::apply::bare"),
        ("fail".into(), "endpoint.exists".into())
    );
    assert_eq!(
        verdict("runs::apply::api-v2"),
        ("skipped".into(), String::new())
    );
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_given_workspace_is_read_with_its_own_show_before_the_administrators,
        a_group_only_fixtures_give_is_asked_with_made_up_ids,
        a_given_workspace_the_run_may_not_change_names_scratch_in_the_skip,
        a_documented_refusal_on_an_absent_route_fails_endpoint_exists_only,
        a_wait_ends_at_a_state_the_resource_never_leaves,
        an_action_whose_run_never_became_ready_is_still_asked_for_its_route
    ]
}
