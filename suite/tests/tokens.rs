//! Tokens, end to end with the binary: the embedded run uses the tokens of the service it
//! starts whatever the environment holds, and says where each token came from; a `--target`
//! run whose token or administrator token is refused stops in preflight, exit 2, with one
//! line, before any test. No token ever appears in the output.

use crate::support;

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::support::processes::{self, text, Served};

const BIN: &str = env!("CARGO_BIN_EXE_conform");

fn scratch(name: &str) -> PathBuf {
    processes::scratch("tokens", name)
}

/// `conform ARGS` with exactly these token variables in its environment.
fn conform(args: &[&str], variables: &[(&str, &str)], name: &str) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).arg("--reports").arg(scratch(name));
    for variable in [
        "CONFORM_TOKEN",
        "TFE_TOKEN",
        "CONFORM_ADMIN_TOKEN",
        "CONFORM_TARGET",
        "TFE_ADDRESS",
    ] {
        command.env_remove(variable);
    }
    command.envs(variables.iter().copied());
    command.output().expect("conform runs")
}

fn the_embedded_run_passes_with_tokens_exported_and_says_whose_tokens_it_uses() {
    let exported = [
        ("CONFORM_TOKEN", "exported-conform-token-1"),
        ("TFE_TOKEN", "exported-tfe-token-2"),
        ("CONFORM_ADMIN_TOKEN", "exported-admin-token-3"),
    ];
    let out = conform(&["--profile", "tfe"], &exported, "exported");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("total "), "{said}");
    assert!(
        said.contains("the embedded reference service (the token of the environment variable CONFORM_TOKEN is for --target runs, not used)"),
        "{said}"
    );
    assert!(
        said.contains("the embedded reference service (the token of the environment variable CONFORM_ADMIN_TOKEN is for --target runs, not used)"),
        "{said}"
    );
    for (_, token) in exported {
        assert!(!said.contains(token), "a token was printed");
    }
    // TFE_TOKEN alone, as terraform users have it
    let out = conform(
        &["--group", "organizations"],
        &[("TFE_TOKEN", "exported-tfe-token-2")],
        "tfe-token",
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("the environment variable TFE_TOKEN is for --target runs"),
        "{said}"
    );
}

fn a_token_flag_without_a_target_is_a_warning_and_the_embedded_tokens_are_used() {
    let out = conform(
        &["--group", "organizations", "--token", "flag-token-4"],
        &[],
        "flag",
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("--token given without --target: the run uses the embedded reference service and its own tokens"),
        "{said}"
    );
    assert!(!said.contains("flag-token-4"), "a token was printed");
}

fn a_refused_admin_token_stops_a_target_run_before_any_test() {
    let served = Served::start("right-user", "right-admin", &[]);
    for (args, variables, source) in [
        (
            vec!["--token", "right-user", "--admin-token", "wrong-admin-5"],
            vec![],
            "from --admin-token",
        ),
        (
            vec!["--token", "right-user"],
            vec![("CONFORM_ADMIN_TOKEN", "wrong-admin-5")],
            "from the environment variable CONFORM_ADMIN_TOKEN",
        ),
    ] {
        let mut words = vec!["--target", served.url.as_str()];
        words.extend(args);
        let out = conform(&words, &variables, "admin");
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        let line = format!("the administrator token ({source}) was refused");
        assert!(said.contains(&line), "{said}");
        assert!(!said.contains("running "), "a test ran: {said}");
        assert!(!said.contains("wrong-admin-5"), "a token was printed");
    }
    // the user token too, with where it came from
    let words = ["--target", served.url.as_str()];
    let out = conform(&words, &[("TFE_TOKEN", "wrong-user-6")], "user");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("the token (from the environment variable TFE_TOKEN) was refused"),
        "{said}"
    );
    assert!(!said.contains("wrong-user-6"), "a token was printed");
}

/// `--token ""` (a CI line whose variable is not set) is a mistake, not a wish for the
/// environment's token: exit 2, one line naming the flag, before any request, even where the
/// environment holds a token the target takes. So is `--admin-token ""`.
fn an_empty_token_flag_is_exit_2_naming_the_flag() {
    let served = Served::start("right-user-7", "right-admin-8", &[]);
    let exported = [
        ("CONFORM_TOKEN", "right-user-7"),
        ("CONFORM_ADMIN_TOKEN", "right-admin-8"),
    ];
    for flag in ["--token", "--admin-token"] {
        let words = [
            "--target",
            served.url.as_str(),
            "--group",
            "organizations",
            flag,
            "",
        ];
        let out = conform(&words, &exported, "empty");
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {said}");
        assert!(
            said.contains(&format!("error: {flag} was given empty")),
            "{flag}: {said}"
        );
        assert_eq!(said.trim().lines().count(), 1, "one line: {said}");
        assert!(!said.contains("right-"), "a token was printed");
    }
}

fn a_token_delete_whose_create_answered_no_secret_is_blocked_by_that_create() {
    // Without the secret there is no token to try before and after the delete: its effect
    // cannot be seen, so at tfe the delete is blocked by the create (which fails on the
    // missing secret), never passed.
    let results = support::run(
        &["token-secret-withheld"],
        &[
            "organization_tags_and_tokens::create_token::api-v2",
            "organization_tags_and_tokens::delete_token::api-v2",
        ],
        &["--profile", "tfe"],
    );
    let create = support::failed_checks(
        &results,
        "organization_tags_and_tokens::create_token::api-v2",
    );
    assert_eq!(create, ["tfe.token-secret"]);
    let delete = results
        .iter()
        .find(|r| r.name == "organization_tags_and_tokens::delete_token::api-v2")
        .expect("the delete ran");
    assert_eq!(
        delete.verdict,
        conform::verdict::Verdict::Blocked,
        "{:?}",
        delete.reason
    );
    let blocker = delete.blocked_by.as_ref().expect("a blocker");
    assert_eq!(
        blocker.see.as_deref(),
        Some("organization_tags_and_tokens::create_token::api-v2")
    );
    // unbroken, the delete passes on what it saw: the token authenticated, then no longer
    let results = support::run(
        &[],
        &["organization_tags_and_tokens::delete_token::api-v2"],
        &["--profile", "tfe"],
    );
    assert_eq!(
        results[0].verdict,
        conform::verdict::Verdict::Pass,
        "{:?}",
        results[0].reason
    );
    assert!(results[0].observed().contains(&"tfe.token-authenticates"));
}

fn a_three_letter_token_leaves_every_test_name_intact_and_is_warned_about() {
    // `conform serve` with the short tokens a local set-up may use; a dropped route so that
    // failing tests carry their transcripts into every report
    let served = Served::start("usr", "adm", &["drop-route=GET /admin/general-settings"]);
    let reports = scratch("short");
    let groups = "admin_users,admin_settings,admin_organizations";
    let mut command = Command::new(BIN);
    command
        .args(["--target", served.url.as_str(), "--token", "usr"])
        .args(["--admin-token", "adm", "--group", groups])
        .arg("--reports")
        .arg(&reports);
    for variable in ["CONFORM_TOKEN", "TFE_TOKEN", "CONFORM_ADMIN_TOKEN", "CI"] {
        command.env_remove(variable);
    }
    let out = command.output().expect("conform runs");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warned: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("too short to redact safely"))
        .collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(
        warned[0].contains("the token and the administrator token are shorter than 8"),
        "{}",
        warned[0]
    );

    let listed = Command::new(BIN)
        .args(["--list", "--group", groups])
        .output()
        .expect("conform --list");
    let names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    assert!(names.len() > 20 && names.iter().all(|n| n.starts_with("admin_")));

    let read = |file: &str| std::fs::read_to_string(reports.join(file)).expect(file);
    let json: serde_json::Value = serde_json::from_str(&read("results.json")).expect("JSON");
    let mut in_json: Vec<String> = json["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect();
    in_json.sort();
    let mut expected = names.clone();
    expected.sort();
    assert_eq!(in_json, expected, "results.json names every test intact");
    let groups_json: Vec<&String> = json["groups"].as_object().expect("groups").keys().collect();
    assert!(
        groups_json.iter().all(|g| g.starts_with("admin_")),
        "{groups_json:?}"
    );
    let failing: Vec<&str> = json["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["verdict"] == "fail")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!failing.is_empty(), "the dropped route fails a test");

    let junit = read("junit.xml");
    let suites = junit_parser::from_reader(junit.as_bytes()).expect("a JUnit parser reads it");
    let mut in_junit: Vec<String> = suites
        .suites
        .iter()
        .flat_map(|s| s.cases.iter().map(|c| c.original_name.clone()))
        .collect();
    in_junit.sort();
    assert_eq!(in_junit, expected, "junit.xml names every test intact");
    assert!(suites.suites.iter().all(|s| s.name.starts_with("admin_")));

    let md = read("summary.md");
    for name in &failing {
        assert!(
            md.contains(&format!("### `{name}`")),
            "{name} not in summary.md"
        );
    }
    for (file, text) in [
        ("results.json", read("results.json")),
        ("junit.xml", junit),
        ("summary.md", md),
        ("report.html", read("report.html")),
    ] {
        assert!(!text.contains("(redacted)in_"), "{file} rewrote a name");
        for token in ["usr", "adm"] {
            if let Err(around) = conform::target::only_inside_words(&text, token) {
                panic!("{file}: the token `{token}` stands as a value: …{around}…");
            }
        }
    }
    assert!(
        !said.contains("(redacted)in_"),
        "the console rewrote a name"
    );
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        the_embedded_run_passes_with_tokens_exported_and_says_whose_tokens_it_uses,
        a_token_flag_without_a_target_is_a_warning_and_the_embedded_tokens_are_used,
        a_refused_admin_token_stops_a_target_run_before_any_test,
        an_empty_token_flag_is_exit_2_naming_the_flag,
        a_token_delete_whose_create_answered_no_secret_is_blocked_by_that_create,
        a_three_letter_token_leaves_every_test_name_intact_and_is_warned_about
    ]
}
