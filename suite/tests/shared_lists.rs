//! Inside a large organization others share, a test finds its own item through the list's
//! documented filter instead of reading the whole list (issue 22, item 2): a run there costs
//! about what it costs in an empty organization, and passes.

use crate::support::processes::{scratch, text, Served};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};

/// Teams others made in the shared organization: many pages at any page size the suite uses.
const OTHERS_TEAMS: usize = 400;

/// Runs `work` with a client on a runtime of its own, to its end.
fn on_runtime<F: std::future::Future<Output = ()>>(work: impl FnOnce(reqwest::Client) -> F) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(work(reqwest::Client::new()));
}

/// Creates `count` teams named `other-team-N` in `organization`.
fn seed_teams(root: &str, token: &str, organization: &str, count: usize) {
    on_runtime(|client| async move {
        for n in 0..count {
            let body = json!({"data": {"type": "teams", "attributes": {"name": format!("other-team-{n}")}}});
            let res = client
                .post(format!("{root}/api/v2/organizations/{organization}/teams"))
                .bearer_auth(token)
                .header("content-type", "application/vnd.api+json")
                .body(body.to_string())
                .send()
                .await
                .expect("the service answers");
            assert_eq!(res.status().as_u16(), 201, "team {n}");
        }
    });
}

/// The reference with the shared tokens, `extra` options and a seeded `organization`.
fn serve_with(organization: &str, extra: &[&str]) -> Served {
    let args = ["--token", "shared-user", "--admin-token", "shared-admin"];
    Served::with_args(&[&args[..], extra, &["--seed-organization", organization]].concat())
}

/// `conform --group teams` inside `organization` (the sequences left out): its results.
fn run_in(served: &Served, token: &str, organization: &str) -> Value {
    run_with(
        served,
        token,
        organization,
        &["--group", "teams", "--skip", "sequences::"],
    )
}

/// `conform` inside `organization` with `args`, which must succeed: its results.
fn run_with(served: &Served, token: &str, organization: &str, args: &[&str]) -> Value {
    let (out, results) = run_raw(served, token, organization, args);
    assert!(out.status.success(), "{}", text(&out));
    results
}

/// `conform` inside `organization` with `args`: how it ended, and its results.
fn run_raw(
    served: &Served,
    token: &str,
    organization: &str,
    args: &[&str],
) -> (std::process::Output, Value) {
    let dir = scratch(
        "shared-lists",
        &format!("{organization}-{}", args.join("-")),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &served.url, "--token", token])
        .args(["--organization", organization])
        .args(args)
        .arg("--reports")
        .arg(&dir)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .output()
        .expect("conform runs");
    let results = std::fs::read(dir.join("results.json"))
        .unwrap_or_else(|_| panic!("no results.json: {}", text(&out)));
    (out, serde_json::from_slice(&results).unwrap())
}

fn a_run_finds_its_own_teams_in_a_large_organization_by_filter() {
    let token = "shared-user";
    let served = serve_with("small", &[]);
    let big = serve_with("big", &[]);
    seed_teams(&big.url, token, "big", OTHERS_TEAMS);
    let small = run_in(&served, token, "small");
    let large = run_in(&big, token, "big");
    let requests = |r: &Value| r["figures"]["requests"].as_u64().unwrap_or(0);
    assert_eq!(large["counts"], small["counts"], "the same verdicts");
    // the team list's own test reads the list's first page and its paging; every other
    // lookup is one filtered request: a few more requests, not pages x tests
    assert!(
        requests(&large) <= requests(&small) + 30,
        "{} requests in the large organization, {} in the small one",
        requests(&large),
        requests(&small)
    );
}

fn the_team_sequences_in_a_large_organization_read_their_own_teams_by_filter() {
    // Issue 22: a sequence's lists and page walks go through the list's name filter (`q`),
    // narrowed to its own names: the others' teams cost it nothing.
    let token = "shared-user";
    let small = serve_with("small", &[]);
    let big = serve_with("big", &[]);
    seed_teams(&big.url, token, "big", OTHERS_TEAMS);
    let only = ["sequences::teams", "--seed", "7"];
    let small = run_with(&small, token, "small", &only);
    let large = run_with(&big, token, "big", &only);
    let requests = |r: &Value| r["figures"]["requests"].as_u64().unwrap_or(0);
    assert_eq!(large["counts"], small["counts"], "the same verdicts");
    assert_eq!(large["counts"]["pass"], 1, "{large}");
    assert!(
        requests(&large) <= requests(&small) + 20,
        "{} requests in the large organization, {} in the small one",
        requests(&large),
        requests(&small)
    );
}

fn a_list_too_long_to_walk_without_its_filter_is_not_observed_never_failed() {
    // A server whose lists ignore their name filters, with more teams than the walk reads
    // (50 pages of 20): whether the run's own team is listed cannot be seen, so the list
    // test is skipped with the reason; with fewer teams the walk finds it and the test passes.
    let token = "shared-user";
    let unfiltered = ["--fault", "list-filters-ignored"];
    let long = serve_with("long", &unfiltered);
    let short = serve_with("short", &unfiltered);
    seed_teams(&long.url, token, "long", 50 * 20 + 20);
    seed_teams(&short.url, token, "short", OTHERS_TEAMS);
    let only = ["teams::list::api-v2", "--skip", "sequences::"];
    let verdict_of = |results: &Value| -> (String, String) {
        let test = results["tests"]
            .as_array()
            .and_then(|r| r.iter().find(|t| t["name"] == "teams::list::api-v2"))
            .cloned()
            .unwrap_or_else(|| panic!("no teams::list::api-v2 in {results}"));
        (
            test["verdict"].as_str().unwrap_or_default().to_string(),
            test["reason"].as_str().unwrap_or_default().to_string(),
        )
    };
    // nothing else is selected: the run judged nothing, and says so (exit code 3)
    let (out, long_results) = run_raw(&long, token, "long", &only);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let (verdict, reason) = verdict_of(&long_results);
    assert_eq!(verdict, "skipped", "{reason}");
    assert!(reason.contains("not looked for past page 50"), "{reason}");
    let (verdict, reason) = verdict_of(&run_with(&short, token, "short", &only));
    assert_eq!(verdict, "pass", "{reason}");
}

fn a_list_without_links_is_followed_by_its_page_number() {
    // The spec asks no `links` of a list: where the filter is not served either, the run's
    // own team on a later page is found by asking for the next page, and nothing fails.
    let token = "shared-user";
    let served = serve_with(
        "unlinked",
        &[
            "--fault",
            "no-pagination-links",
            "--fault",
            "list-filters-ignored",
        ],
    );
    seed_teams(&served.url, token, "unlinked", 60);
    // At core: at tfe an ignored `filter[names]` is itself a finding (tfe.list-filter).
    let results = run_with(
        &served,
        token,
        "unlinked",
        &[
            "--profile",
            "core",
            "--group",
            "teams",
            "--skip",
            "sequences::",
        ],
    );
    assert_eq!(results["counts"]["fail"], 0, "{}", results["counts"]);
}

fn a_list_others_change_while_it_is_walked_is_not_failed_for_it() {
    // Newest first, a membership another caller adds during a page walk pushes the last one
    // of a page onto the next, where the walk reads it again: the server is not at fault, so
    // a walk counts only while the list stands still.
    let token = "shared-user";
    let served = serve_with("busy", &["--fault", "lists-newest-first"]);
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let changer = {
        let (url, stop) = (served.url.clone(), stop.clone());
        std::thread::spawn(move || keep_changing_memberships(&url, token, "busy", &stop))
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let only = [
        "organization_memberships::list::api-v2",
        "--skip",
        "sequences::",
    ];
    let (out, results) = run_raw(&served, token, "busy", &only);
    stop.store(true, Ordering::Relaxed);
    let _ = changer.join();
    let test = results["tests"]
        .as_array()
        .and_then(|r| r.iter().find(|t| t["name"] == only[0]))
        .cloned()
        .unwrap_or_else(|| panic!("no {} in {results}", only[0]));
    assert_eq!(test["verdict"], "pass", "{test}\n{}", text(&out));
    let passed = test["passed_checks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(passed.contains(&json!("tfe.page-size")), "{test}");
}

/// Until `stop`, invites a member to `organization` and removes the one invited ten before:
/// the membership list moves all the time and stays about the same length.
fn keep_changing_memberships(root: &str, token: &str, organization: &str, stop: &AtomicBool) {
    on_runtime(|client| async move {
        let mut added = std::collections::VecDeque::new();
        for n in 0.. {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let email = format!("other-{n}@example.com");
            let body = json!({"data": {"type": "organization-memberships", "attributes": {"email": email}}});
            let Ok(answer) = client
                .post(format!(
                    "{root}/api/v2/organizations/{organization}/organization-memberships"
                ))
                .bearer_auth(token)
                .header("content-type", "application/vnd.api+json")
                .body(body.to_string())
                .send()
                .await
            else {
                break;
            };
            let made: Value = answer.json().await.unwrap_or_default();
            added.push_back(made["data"]["id"].as_str().unwrap_or_default().to_string());
            if added.len() > 10 {
                let id = added.pop_front().unwrap_or_default();
                let _ = client
                    .delete(format!("{root}/api/v2/organization-memberships/{id}"))
                    .bearer_auth(token)
                    .send()
                    .await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    });
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_run_finds_its_own_teams_in_a_large_organization_by_filter,
        the_team_sequences_in_a_large_organization_read_their_own_teams_by_filter,
        a_list_too_long_to_walk_without_its_filter_is_not_observed_never_failed,
        a_list_without_links_is_followed_by_its_page_number,
        a_list_others_change_while_it_is_walked_is_not_failed_for_it
    ]
}
