//! The whole suite against the embedded reference service passes, at both profiles; a
//! fault makes the tests that guard its behaviour fail.

use crate::support;

use conform::verdict::Verdict;

fn whole_suite_passes_against_the_reference_at_profile_tfe() {
    let results = support::run(&[], &[], &["--profile", "tfe"]);
    let bad: Vec<String> = results
        .iter()
        .filter(|r| r.verdict != Verdict::Pass && !r.unobservable())
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

fn a_failing_create_precondition_outside_the_spec_skips_the_test_and_names_it() {
    // State versions are made on a locked workspace (TFE); without the lock route the
    // create test cannot run. The lock is TFE's route, outside the spec: no test judges it,
    // so no failing test is behind it, and the test is skipped (issue 30: never blocked by
    // nothing that failed), with the request and its answer as the reason.
    let results = support::run(
        &["drop-route=POST /workspaces/:id/actions/lock"],
        &["state_versions::create::"],
        &[],
    );
    assert!(!results.is_empty());
    for r in &results {
        assert_eq!(r.verdict, Verdict::Skipped, "{}", r.name);
        // the request that stopped it is kept, and no test is named
        let stopped = r.blocked_by.as_ref().expect("the request that stopped it");
        assert!(stopped.see.is_none(), "{stopped:?}");
        let reason = r.reason.as_deref().unwrap_or("");
        assert!(reason.contains("actions/lock answered 404"), "{reason}");
        assert!(reason.contains("no failing test is behind it"), "{reason}");
    }
}

fn a_bare_form_not_served_fails_only_the_bare_tests() {
    // Servers that follow TFE serve the API only under /api/v2: fixtures are made there, and
    // the deviation is reported once, at each bare-form test.
    let results = support::run(&["no-bare"], &["runs::", "teams::"], &[]);
    assert!(results.len() > 20);
    for r in &results {
        let bare_form = ["::bare", "::alias", "::deprecated"]
            .iter()
            .any(|s| r.name.ends_with(s));
        if bare_form {
            assert_eq!(r.verdict, Verdict::Fail, "{}", r.name);
            assert_eq!(
                support::failed_checks(&results, &r.name),
                vec!["endpoint.exists"]
            );
        } else {
            // a change only a TFE check observes is skipped at core as unobservable
            assert!(
                r.verdict == Verdict::Pass || r.unobservable(),
                "{}: {}",
                r.name,
                r.failure_text()
            );
        }
    }
}

fn a_fixture_that_cannot_be_made_blocks_the_tests_that_need_it() {
    // Without the team create route the team tests that need a team are blocked by it, and
    // point at the create test where that route is itself judged (and fails, in this run:
    // without it in the run, they are skipped, as no failing test is known to be behind them).
    let results = support::run(
        &["drop-route=POST /organizations/:organization_name/teams"],
        &["teams::show::", "teams::create::"],
        &[],
    );
    let shows: Vec<_> = results
        .iter()
        .filter(|r| r.name.starts_with("teams::show::"))
        .collect();
    assert!(!shows.is_empty());
    for r in shows {
        assert_eq!(r.verdict, Verdict::Blocked, "{}", r.name);
        let see = r.blocked_by.as_ref().and_then(|b| b.see.clone());
        assert!(
            see.is_some_and(|t| t.starts_with("teams::create::")),
            "{:?}",
            r.blocked_by
        );
    }
}

fn one_missing_route_is_one_failure_per_path_form() {
    // The upload test also downloads what it uploaded; an absent download route is the
    // download tests' finding alone.
    let results = support::run(
        &["drop-route=GET /configuration-versions/:configuration_version_id/download"],
        &["configuration_versions::"],
        &[],
    );
    let mut failed = support::with_verdict(&results, Verdict::Fail);
    failed.sort();
    assert_eq!(
        failed,
        vec![
            "configuration_versions::download::api-v2".to_string(),
            "configuration_versions::download::bare".to_string()
        ]
    );
}

fn the_notification_verify_test_calls_only_a_destination_the_user_gives() {
    // Notification configurations point at a destination the run owns (against the embedded
    // service, the service itself; against a target of the user's, --notification-url, else a
    // name that never resolves and verify is skipped), never at a third party's host.
    let results = support::run(&[], &["notification_configurations::"], &[]);
    for r in &results {
        for ex in &r.exchanges {
            let body = ex.request.body.as_deref().unwrap_or("");
            assert!(!body.contains("example.com"), "{}: {body}", r.name);
        }
    }
    // verify's delivery is shown only by TFE's words: unobservable at core, never failed
    assert!(results
        .iter()
        .all(|r| r.verdict == Verdict::Pass || r.unobservable()));
}

fn harmless_updates_send_the_current_values_back() {
    // An update without attributes is refused by reasonable servers (422): the account and
    // the administrator settings are updated with the values a show answers now.
    let results = support::run(&[], &["account::update::", "admin_settings::update_"], &[]);
    assert!(results.len() >= 4);
    for r in &results {
        assert_eq!(r.verdict, Verdict::Pass, "{}", r.failure_text());
        let patch = r
            .exchanges
            .iter()
            .find(|ex| ex.request.method == "PATCH")
            .expect("the update is sent");
        let body: serde_json::Value =
            serde_json::from_str(patch.request.body.as_deref().unwrap_or("{}")).expect("JSON");
        let attributes = body["data"]["attributes"].as_object().expect("attributes");
        assert!(!attributes.is_empty(), "{}: {body}", r.name);
    }
}

fn a_given_organization_is_never_changed_and_most_tests_still_pass() {
    // A server with one fixed organization (no organization list, create, update or delete):
    // with --organization the run works inside it, sends it no PATCH or DELETE, and judges
    // most of what it judges with organization CRUD.
    let args = [
        "--reference-shape",
        "one-organization",
        "--organization",
        "acme",
    ];
    let results = support::run(&[], &[], &args);
    for r in &results {
        for ex in &r.exchanges {
            let path = url::Url::parse(&ex.request.url)
                .map(|u| u.path().trim_start_matches("/api/v2").to_string())
                .unwrap_or_default();
            let on_acme = path == "/organizations/acme" || path == "/admin/organizations/acme";
            let sent = ex.response.is_ok();
            assert!(
                !(on_acme && sent && matches!(ex.request.method.as_str(), "PATCH" | "DELETE")),
                "{} sent {} {}",
                r.name,
                ex.request.method,
                ex.request.url
            );
        }
    }
    // a change only a TFE check observes is skipped at core as unobservable: it counts here
    let passed = results
        .iter()
        .filter(|r| r.verdict == Verdict::Pass || r.unobservable())
        .count();
    assert!(
        passed * 10 >= results.len() * 9,
        "{passed} of {} passed",
        results.len()
    );
    assert!(support::with_verdict(&results, Verdict::Unsupported).is_empty());
}

fn a_404_for_a_resource_that_is_not_found_is_not_a_missing_route() {
    // With numeric-id, the organization's create answers an id that does not address it: the
    // invoices route exists, the organization it names does not. The invoices tests are
    // blocked by the organization, not failed as "the endpoint does not exist".
    let results = support::run(
        &["numeric-id"],
        &["invoices::list::", "organizations::create::"],
        &[],
    );
    let lists: Vec<_> = results
        .iter()
        .filter(|r| r.name.starts_with("invoices::"))
        .collect();
    assert!(!lists.is_empty());
    for r in lists {
        assert_eq!(r.verdict, Verdict::Blocked, "{}", r.failure_text());
        let see = r.blocked_by.as_ref().and_then(|b| b.see.clone());
        assert_eq!(see.as_deref(), Some("organizations::create::api-v2"));
    }
}

fn a_set_up_that_the_main_request_did_not_undo_is_undone() {
    // Without the bare forms, the bare unimpersonate test impersonates (its set-up, in the
    // canonical form) and then fails to unimpersonate: the set-up's own undo is sent, so the
    // impersonate test after it starts from a clean session.
    let args = conform::cli::RunArgs::from_words(&["--reference-shape", "api-v2-only"])
        .expect("arguments parse");
    let settings = conform::settings::Settings::resolve(&args).expect("settings");
    let mut plan = conform::plan::Plan::new(settings).expect("catalog");
    plan.concurrency = 1;
    let pick = |name: &str| {
        let found = plan.items.iter().find(|t| t.name() == name);
        found.cloned().expect(name)
    };
    let tests = [
        pick("admin_users::unimpersonate::bare"),
        pick("admin_users::impersonate::api-v2"),
    ];
    let session = conform::harness::Session::open(&plan).expect("session");
    let first = session.run(&tests[..1]);
    let second = session.run(&tests[1..]);
    session.close();
    assert_eq!(first[0].verdict, Verdict::Fail);
    // answered as documented (impersonation itself is out of an API token's sight)
    assert!(second[0].unobservable(), "{}", second[0].failure_text());
}

fn what_no_run_can_see_is_skipped_when_answered_well_and_fails_when_not() {
    // twilio verify sends an SMS no answer shows (`unobservable` in cases/): answered as
    // documented it is skipped with that reason, never passed; a missing route still fails it.
    let filter = ["admin_settings::verify_twilio::api-v2"];
    let results = support::run(&[], &filter, &[]);
    assert_eq!(results.len(), 1);
    assert!(results[0].unobservable(), "{:?}", results[0].reason);
    let results = support::run(
        &["drop-route=POST /admin/twilio-settings/verify"],
        &filter,
        &[],
    );
    assert_eq!(results[0].verdict, Verdict::Fail, "{:?}", results[0].reason);
    assert!(support::failed_checks(&results, filter[0]).contains(&"endpoint.exists"));
}

fn a_group_served_only_at_tfes_path_is_judged_there() {
    // engine versions only at /admin/terraform-versions: the spec's path fails
    // endpoint.exists, and the behaviour is judged where TFE serves it, so a delete that
    // deletes nothing there fails delete.then-gone as well.
    let filter = ["admin_engine_versions::delete::api-v2"];
    let shape = ["--reference-shape", "tfe-paths"];
    let results = support::run(&[], &filter, &shape);
    assert_eq!(
        support::failed_checks(&results, filter[0]),
        ["endpoint.exists"],
        "{}",
        results[0].failure_text()
    );
    assert!(
        results[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("/api/v2/admin/terraform-versions")),
        "{:?}",
        results[0].reason
    );
    let results = support::run(&["delete-noop"], &filter, &shape);
    let failed = support::failed_checks(&results, filter[0]);
    assert!(failed.contains(&"delete.then-gone"), "{failed:?}");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        whole_suite_passes_against_the_reference_at_profile_tfe,
        a_dropped_route_fails_exactly_its_tests,
        a_missing_group_is_unsupported_unless_required,
        a_failing_create_precondition_outside_the_spec_skips_the_test_and_names_it,
        a_bare_form_not_served_fails_only_the_bare_tests,
        a_fixture_that_cannot_be_made_blocks_the_tests_that_need_it,
        one_missing_route_is_one_failure_per_path_form,
        the_notification_verify_test_calls_only_a_destination_the_user_gives,
        harmless_updates_send_the_current_values_back,
        a_given_organization_is_never_changed_and_most_tests_still_pass,
        a_404_for_a_resource_that_is_not_found_is_not_a_missing_route,
        a_set_up_that_the_main_request_did_not_undo_is_undone,
        what_no_run_can_see_is_skipped_when_answered_well_and_fails_when_not,
        a_group_served_only_at_tfes_path_is_judged_there
    ]
}
