//! The registry read tests look at what the answers say (versions, one version, the latest,
//! lists, search, the source a download leads to), and a registry-only target can be tested
//! with `--module`.

use crate::support;

use conform::verdict::{TestResult, Verdict};

const GROUP: &str = "registry_modules_read::";

fn not_passed(results: &[TestResult]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.verdict != Verdict::Pass && !r.unobservable())
        .map(|r| format!("{} {:?}\n{}", r.name, r.verdict, r.failure_text()))
        .collect()
}

/// The bytes of the source a download test fetched: the answer of its last GET of the object
/// store (`/v1/object/...`).
fn source_bytes(result: &TestResult) -> Option<Vec<u8>> {
    result
        .exchanges
        .iter()
        .rev()
        .find(|ex| ex.request.url.contains("/v1/object/"))
        .and_then(|ex| ex.response.as_ref().ok())
        .map(|r| r.body.clone())
}

fn downloads(results: &[TestResult]) -> Vec<&TestResult> {
    let found: Vec<&TestResult> = results
        .iter()
        .filter(|r| r.name.contains("::download_"))
        .collect();
    assert_eq!(found.len(), 2, "both download forms run");
    found
}

fn a_registry_only_target_passes_with_the_module_it_holds() {
    let results = support::run(
        &[],
        &[GROUP],
        &[
            "--profile",
            "tfe",
            "--reference-shape",
            "registry-only",
            "--module",
            "acme/network/aws/1.0.0",
        ],
    );
    assert_eq!(results.len(), 9, "every registry read test runs");
    let bad = not_passed(&results);
    assert!(
        bad.is_empty(),
        "{} did not pass:\n{}",
        bad.len(),
        bad.join("\n")
    );
    // nothing was published: no request left the registry protocol and its archive
    for r in &results {
        for ex in &r.exchanges {
            assert!(
                ex.request.url.contains("/api/registry/v1/modules")
                    || ex.request.url.contains("/v1/object/"),
                "{}: {}",
                r.name,
                ex.request.url
            );
        }
    }
    let seeded = conform_reference::seeded_archive();
    for r in downloads(&results) {
        assert!(r.passed.contains(&"registry.download-source"), "{}", r.name);
        assert_eq!(
            source_bytes(r).as_deref(),
            Some(seeded.as_slice()),
            "{}",
            r.name
        );
        let reason = r.reason.as_deref().unwrap_or_default();
        assert!(
            reason.contains("--module") && reason.contains("gzip"),
            "{reason}"
        );
    }
    for (name, check) in [
        ("list_versions", "registry.versions"),
        ("show_version", "registry.version"),
        ("show_latest", "registry.latest"),
        ("list_latest", "registry.latest"),
        ("search", "registry.search"),
        ("list", "tfe.registry-paging"),
        ("list_namespace", "tfe.registry-filters"),
        ("list", "registry.query-accepted"),
    ] {
        let r = results
            .iter()
            .find(|r| r.name == format!("{GROUP}{name}::registry"))
            .expect("the test ran");
        assert!(
            r.passed.contains(&check),
            "{name}: {check} did not run: {:?}",
            r.passed
        );
    }
}

fn every_registry_test_passes_against_the_reference_and_downloads_give_back_the_upload() {
    let results = support::run(&[], &[GROUP], &["--profile", "tfe"]);
    let bad = not_passed(&results);
    assert!(
        bad.is_empty(),
        "{} did not pass:\n{}",
        bad.len(),
        bad.join("\n")
    );
    let uploaded = conform::tarball::config_tarball();
    for r in downloads(&results) {
        assert!(r.passed.contains(&"registry.download-source"), "{}", r.name);
        assert_eq!(
            source_bytes(r).as_deref(),
            Some(uploaded.as_slice()),
            "{}",
            r.name
        );
        assert_eq!(r.reason, None, "{}", r.name);
    }
}

/// The registry read tests, by endpoint.
const ALL: [&str; 9] = [
    "list",
    "list_namespace",
    "list_latest",
    "show_latest",
    "list_versions",
    "show_version",
    "download_latest",
    "download_version",
    "search",
];

/// The list and search tests.
const LISTS: &[&str] = &["list", "list_namespace", "list_latest", "search"];

/// Each registry fault: its profile, the check that catches it, the tests it fails (none:
/// tolerated).
const FAULT_CASES: &[(&str, &str, &str, &[&str])] = &[
    (
        "registry-versions-empty",
        "core",
        "registry.versions",
        &["list_versions"],
    ),
    (
        "registry-version-wrong",
        "core",
        "registry.version",
        &["show_version"],
    ),
    (
        "registry-latest-other-provider",
        "core",
        "registry.latest",
        &["show_latest", "list_latest"],
    ),
    (
        "registry-download-wrong-bytes",
        "core",
        "registry.download-source",
        &["download_latest", "download_version"],
    ),
    (
        "registry-archive-truncated",
        "core",
        "registry.download-source",
        &["download_latest", "download_version"],
    ),
    (
        "registry-archive-not-tar",
        "core",
        "registry.download-source",
        &["download_latest", "download_version"],
    ),
    (
        "registry-archive-empty-tar",
        "core",
        "registry.download-source",
        &["download_latest", "download_version"],
    ),
    // the published files packed again as a zip: unpacked, the same files, a pass
    (
        "registry-source-zip",
        "core",
        "registry.download-source",
        &[],
    ),
    (
        "registry-query-refused",
        "core",
        "registry.query-accepted",
        LISTS,
    ),
    (
        "registry-search-q-only",
        "core",
        "registry.search",
        &["search"],
    ),
    (
        "registry-limit-ignored",
        "tfe",
        "tfe.registry-paging",
        LISTS,
    ),
    (
        "registry-filters-ignored",
        "tfe",
        "tfe.registry-filters",
        &["list", "list_namespace", "search"],
    ),
    (
        "registry-reshaped",
        "tfe",
        "tfe.registry-shape",
        &[
            "list",
            "list_namespace",
            "list_latest",
            "show_latest",
            "list_versions",
            "show_version",
            "search",
        ],
    ),
];

/// Each fault of the registry protocol fails exactly its tests, with its check.
fn each_registry_fault_is_caught_by_exactly_its_tests() {
    let all = ALL;
    let cases = FAULT_CASES;
    for (fault, profile, check, expected) in cases {
        let results = support::run(&[fault], &[GROUP], &["--profile", profile]);
        for name in all {
            let test = format!("{GROUP}{name}::registry");
            let r = results
                .iter()
                .find(|r| r.name == test)
                .expect("the test ran");
            if expected.contains(&name) {
                assert_eq!(
                    r.verdict,
                    Verdict::Fail,
                    "{fault}: {test}\n{}",
                    r.failure_text()
                );
                assert!(
                    support::failed_checks(&results, &test).contains(check),
                    "{fault}: {test} did not fail {check}\n{}",
                    r.failure_text()
                );
            } else {
                assert_eq!(
                    r.verdict,
                    Verdict::Pass,
                    "{fault}: {test}\n{}",
                    r.failure_text()
                );
            }
        }
    }
}

fn a_search_that_reads_only_q_is_told_apart_from_one_that_does_not_search() {
    let message = |fault: &str| {
        let results = support::run(&[fault], &[GROUP], &[]);
        let search = results
            .iter()
            .find(|r| r.name == format!("{GROUP}search::registry"))
            .expect("the search test ran");
        search
            .findings
            .iter()
            .find(|f| f.check.id == "registry.search")
            .map(|f| f.message.clone())
            .unwrap_or_else(|| panic!("{fault}: no registry.search finding"))
    };
    let q_only = message("registry-search-q-only");
    assert!(
        q_only.contains("this registry reads `q`, not the spec's `query`"),
        "{q_only}"
    );
    let hidden = message("registry-hides-modules");
    assert!(hidden.contains("does not work either"), "{hidden}");
    assert!(!hidden.contains("this registry reads `q`"), "{hidden}");
}

fn a_source_on_another_origin_is_fetched_without_the_token_and_unanswered_is_not_passed() {
    let results = support::run(
        &["registry-source-elsewhere"],
        &[GROUP],
        &["--profile", "tfe"],
    );
    let downloads = downloads(&results);
    let others: Vec<String> = not_passed(&results)
        .into_iter()
        .filter(|line| !line.contains("::download_"))
        .collect();
    assert!(others.is_empty(), "did not pass:\n{}", others.join("\n"));
    for r in downloads {
        assert_eq!(r.verdict, Verdict::Skipped, "{}", r.name);
        assert!(
            !r.passed.contains(&"registry.download-source"),
            "{}",
            r.name
        );
        let elsewhere: Vec<_> = r
            .exchanges
            .iter()
            .filter(|ex| ex.request.url.contains("example.invalid"))
            .collect();
        assert!(
            !elsewhere.is_empty(),
            "{}: the source was not fetched",
            r.name
        );
        for ex in elsewhere {
            assert!(
                ex.request
                    .headers
                    .iter()
                    .all(|(name, _)| !name.eq_ignore_ascii_case("authorization")),
                "{}: the token went to the other origin",
                r.name
            );
        }
        let reason = r.reason.as_deref().unwrap_or_default();
        assert!(
            reason.contains("not observed") && reason.contains("archive.example.invalid"),
            "{reason}"
        );
    }
}

/// A source terraform's getter takes but conform does not fetch (git) leaves the downloads
/// skipped with the reason, never passed nor failed; every other test passes.
fn a_git_source_is_skipped_with_the_reason() {
    let results = support::run(&["registry-source-git"], &[GROUP], &["--profile", "tfe"]);
    let others: Vec<String> = not_passed(&results)
        .into_iter()
        .filter(|line| !line.contains("::download_"))
        .collect();
    assert!(others.is_empty(), "did not pass:\n{}", others.join("\n"));
    for r in downloads(&results) {
        assert_eq!(r.verdict, Verdict::Skipped, "{}", r.name);
        let reason = r.reason.as_deref().unwrap_or_default();
        assert!(
            reason.contains("`git` getter") && reason.contains("not judged"),
            "{reason}"
        );
    }
}

/// `--module` naming a module or version the registry does not list stops the run before any
/// test (exit 2), naming what the registry lists; the module it holds runs.
fn a_mistyped_module_exits_2_before_any_test_naming_what_is_listed() {
    use crate::support::processes::{scratch, text, Served};
    let served = Served::with_args(&["--shape", "registry-only", "--token", "registry-token-1"]);
    let run = |module: &str| {
        let reports = scratch("registry", &module.replace('/', "-"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
            .args(["--target", &served.url, "--token", "registry-token-1"])
            .args(["--module", module, "--group", "registry_modules_read"])
            .arg("--reports")
            .arg(&reports)
            .env_remove("CONFORM_TOKEN")
            .env_remove("CONFORM_TARGET")
            .output()
            .expect("conform runs");
        (out, reports)
    };
    for (module, says) in [
        (
            "acme/network/aws/1.0.1",
            "the registry does not list version 1.0.1 of acme/network/aws; it lists 1.0.0",
        ),
        (
            "acme/netwrk/aws/1.0.0",
            "the registry does not list the module acme/netwrk/aws",
        ),
    ] {
        let (out, reports) = run(module);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{module}: {said}");
        assert!(said.contains(says), "{module}: {said}");
        assert!(said.contains("1.0.0"), "{module}: {said}");
        assert!(
            !said.contains("registry_modules_read::") && !reports.join("junit.xml").exists(),
            "{module}: a test ran\n{said}"
        );
    }
    let (out, _) = run("acme/network/aws/1.0.0");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // a versions route that answers no JSON cannot say: the tests run, with a warning
    let versions = "non-json=GET /api/registry/v1/modules/:ns/:name/:provider/versions";
    let served = Served::with_args(&[
        "--shape",
        "registry-only",
        "--token",
        "registry-token-1",
        "--fault",
        versions,
    ]);
    let reports = scratch("registry", "versions-not-json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &served.url, "--token", "registry-token-1"])
        .args([
            "--module",
            "acme/network/aws/1.0.1",
            "--group",
            "registry_modules_read",
        ])
        .arg("--reports")
        .arg(&reports)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_TARGET")
        .output()
        .expect("conform runs");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("--module acme/network/aws/1.0.1 was not looked up"),
        "{said}"
    );
    assert!(
        said.contains("registry_modules_read::list_versions::registry"),
        "{said}"
    );
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_registry_only_target_passes_with_the_module_it_holds,
        every_registry_test_passes_against_the_reference_and_downloads_give_back_the_upload,
        each_registry_fault_is_caught_by_exactly_its_tests,
        a_search_that_reads_only_q_is_told_apart_from_one_that_does_not_search,
        a_source_on_another_origin_is_fetched_without_the_token_and_unanswered_is_not_passed,
        a_mistyped_module_exits_2_before_any_test_naming_what_is_listed,
        a_git_source_is_skipped_with_the_reason
    ]
}
