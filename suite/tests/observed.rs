//! A delete counts only when a read sees it done (issue 42): against `conform serve --fault
//! delete-noop`, whose every DELETE answers 204 and keeps the resource, what the run made in a
//! given organization is reported left by teardown, none of it is `deleted` in the ledger,
//! and `conform sweep` (its dry run and itself alike) reports the same items left.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::support::processes::{self, text, Served};

const BIN: &str = env!("CARGO_BIN_EXE_conform");

/// A run of `groups` against `served` inside its seeded organization `given`, reports in `dir`.
fn run_in_given(served: &Served, tokens: (&str, &str), dir: &Path, groups: &str) -> Output {
    Command::new(BIN)
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1, "--organization", "given"])
        .args(["--group", groups, "--reports"])
        .arg(dir)
        .output()
        .expect("a run")
}

/// `conform sweep` of the ledger in `dir`, with `extra` arguments.
fn sweep(served: &Served, tokens: (&str, &str), dir: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .args(["sweep", "--ledger"])
        .arg(dir.join("ledger.jsonl"))
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1, "--consistency-window", "1s"])
        .args(extra)
        .output()
        .expect("conform sweep runs")
}

/// A run's results.json.
fn results(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("results.json"))
        .expect("results.json parses")
}

/// `conform serve` whose every DELETE answers 204 and keeps the resource, with the organization
/// `given` seeded.
fn delete_noop_in_given(tokens: (&str, &str)) -> Served {
    Served::with_args(&[
        "--token",
        tokens.0,
        "--admin-token",
        tokens.1,
        "--fault",
        "delete-noop",
        "--seed-organization",
        "given",
    ])
}

/// The `(kind, id)` of each leftover in a run's results.json (`kind id: why` each).
fn leftovers(dir: &Path) -> BTreeSet<(String, String)> {
    results(dir)["leftovers"]
        .as_array()
        .expect("leftovers")
        .iter()
        .filter_map(|l| {
            let (what, _) = l.as_str()?.split_once(':')?;
            let (kind, id) = what.split_once(' ')?;
            Some((kind.to_string(), id.to_string()))
        })
        .collect()
}

/// The ledger's lines of `event`, as `(kind, id)`.
fn ledger_lines(dir: &Path, event: &str) -> BTreeSet<(String, String)> {
    conform::ledger::read(&dir.join("ledger.jsonl"))
        .expect("the ledger reads")
        .entries
        .into_iter()
        .filter(|e| serde_json::to_value(e.event).ok() == Some(Value::from(event)))
        .map(|e| (e.kind, e.id))
        .collect()
}

/// The ids of the workspaces the reference holds in `given`.
fn workspaces_in_given(served: &Served, token: &str) -> BTreeSet<String> {
    let url = format!(
        "{}/api/v2/organizations/given/workspaces?page%5Bsize%5D=100",
        served.url
    );
    let out = Command::new("curl")
        .args(["-s", "-H", &format!("Authorization: Bearer {token}"), &url])
        .output();
    let body: Value = out
        .ok()
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
        .unwrap_or(Value::Null);
    body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["id"].as_str().map(str::to_string))
        .collect()
}

/// The reference's delete-noop: the workspace the run made in `given` is still there, so it
/// is a leftover (the target's doing, said so), the ledger records it kept and never deleted,
/// and the variables whose deletes answered 204 are left too; then the dry run and the sweep
/// report the same items left, and both exit 1.
fn a_delete_that_keeps_the_resource_is_a_leftover_in_teardown_ledger_and_sweep() {
    let tokens = ("noop-user", "noop-admin");
    let served = delete_noop_in_given(tokens);
    let dir = processes::scratch("observed", "delete-noop");
    let out = run_in_given(&served, tokens, &dir, "runs,variables");
    let said = text(&out);
    let kept = workspaces_in_given(&served, tokens.0);
    assert!(!kept.is_empty(), "the run made workspaces\n{said}");
    let left = leftovers(&dir);
    for ws in &kept {
        assert!(
            left.contains(&("workspace".to_string(), ws.clone())),
            "workspace {ws} is kept by the target but not a leftover: {left:?}\n{said}"
        );
    }
    let deleted = ledger_lines(&dir, "deleted");
    assert!(
        !deleted
            .iter()
            .any(|(kind, _)| kind == "workspace" || kind == "variable"),
        "the ledger says deleted: {deleted:?}"
    );
    let kept_lines = ledger_lines(&dir, "kept");
    for ws in &kept {
        assert!(
            kept_lines.contains(&("workspace".to_string(), ws.clone())),
            "{kept_lines:?}"
        );
    }
    assert!(
        said.contains("answered 204, the workspace is still shown"),
        "{said}"
    );
    assert!(left.iter().any(|(kind, _)| kind == "variable"), "{left:?}");

    let dry = sweep(&served, tokens, &dir, &["--dry-run"]);
    let real = sweep(&served, tokens, &dir, &[]);
    let (dry_said, real_said) = (text(&dry), text(&real));
    assert_eq!(dry.status.code(), Some(1), "{dry_said}");
    assert_eq!(real.status.code(), Some(1), "{real_said}");
    for (kind, id) in &left {
        let line = format!("{kind} {id} ");
        assert!(
            real_said
                .lines()
                .any(|l| l.contains("not deleted:") && l.contains(&line)),
            "{kind} {id} not reported left by the sweep\n{real_said}"
        );
        assert!(
            dry_said
                .lines()
                .any(|l| l.contains("not deleted:") && l.contains(&line)),
            "{kind} {id} not reported left by the dry run\n{dry_said}"
        );
    }
    assert!(!real_said.contains("\ndeleted "), "{real_said}");
    assert_eq!(ledger_lines(&dir, "deleted").len(), 0, "{real_said}");
}

/// A request to the service, answering its status and document.
fn send(method: reqwest::Method, url: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut request = reqwest::Client::new()
            .request(method, url)
            .bearer_auth(token);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/vnd.api+json")
                .body(body.to_string());
        }
        let res = request.send().await.expect("an answer");
        let status = res.status().as_u16();
        let bytes = res.bytes().await.unwrap_or_default();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    })
}

/// Makes an organization, a workspace in it and a variable in that, and writes the ledger a
/// run killed before its teardown leaves (with the route it saw answer, the organization's
/// show); answers how many resources it names.
fn a_killed_runs_ledger(served: &Served, token: &str, ledger: &Path) -> usize {
    let api = format!("{}/api/v2", served.url.trim_end_matches('/'));
    let org = "conform-reset-org";
    let post = |url: String, body: Value| {
        let (status, doc) = send(reqwest::Method::POST, &url, token, Some(body));
        assert_eq!(status, 201, "{url}: {doc}");
        doc["data"]["id"].as_str().expect("an id").to_string()
    };
    post(
        format!("{api}/organizations"),
        json!({"data": {"type": "organizations", "attributes": {"name": org, "email": "r@example.com"}}}),
    );
    let ws = post(
        format!("{api}/organizations/{org}/workspaces"),
        json!({"data": {"type": "workspaces", "attributes": {"name": "conform-reset-ws"}}}),
    );
    let var = post(
        format!("{api}/vars"),
        json!({"data": {"type": "vars", "attributes": {"key": "k", "value": "v", "category": "env"},
            "relationships": {"workspace": {"data": {"type": "workspaces", "id": ws}}}}}),
    );
    let line = |kind: &str,
                id: &str,
                url: String,
                show: Option<String>,
                list: Option<String>,
                parents: Value| {
        json!({"event": "created", "prefix": "conform-reset", "kind": kind, "id": id,
            "method": "DELETE", "url": url, "auth": "user", "show": show, "list": list,
            "parents": parents, "time": "2026-01-01T00:00:00Z"})
        .to_string()
    };
    let org_url = format!("{api}/organizations/{org}");
    let ws_url = format!("{api}/workspaces/{ws}");
    let list = format!("{api}/vars?filter%5Borganization%5D%5Bname%5D={org}&filter%5Bworkspace%5D%5Bname%5D=conform-reset-ws");
    let lines = [
        line(
            "organization",
            org,
            org_url.clone(),
            Some(org_url),
            None,
            json!([]),
        ),
        line(
            "workspace",
            &ws,
            ws_url.clone(),
            Some(ws_url),
            None,
            json!([["organization", org]]),
        ),
        line(
            "variable",
            &var,
            format!("{api}/vars/{var}"),
            None,
            Some(list),
            json!([["workspace", ws]]),
        ),
        json!({"event": "route-answers", "prefix": "conform-reset", "kind": "route",
            "id": "organizations::show::api-v2", "time": "2026-01-01T00:00:00Z"})
        .to_string(),
    ];
    std::fs::write(ledger, lines.join("\n") + "\n").expect("ledger written");
    3
}

/// After the target was reset (a new service on the same port), a sweep of a killed run's
/// ledger says "already gone" for each item and nothing else: no "deleted", no "went with its
/// organization" (it deleted nothing), exit 0; its dry run says the same, line by line; the
/// counts match the lines.
fn after_a_reset_the_sweep_says_already_gone_only() {
    let tokens = ("reset-user", "reset-admin");
    let mut served = Served::start(tokens.0, tokens.1, &[]);
    let dir = processes::scratch("observed", "reset");
    let n = a_killed_runs_ledger(&served, tokens.0, &dir.join("ledger.jsonl"));
    let port = served.port().to_string();
    served.terminate();
    let served = Served::with_args(&[
        "--token",
        tokens.0,
        "--admin-token",
        tokens.1,
        "--port",
        &port,
    ]);
    let dry = sweep(&served, tokens, &dir, &["--dry-run"]);
    let real = sweep(&served, tokens, &dir, &[]);
    for (out, verb) in [(&dry, "would delete"), (&real, "deleted")] {
        let said = text(out);
        assert_eq!(out.status.code(), Some(0), "{said}");
        assert!(!said.contains("went with"), "{said}");
        let gone = said
            .lines()
            .filter(|l| l.starts_with("already gone: "))
            .count();
        assert_eq!(gone, n, "{said}");
        assert!(
            said.contains(&format!(
                "sweep: 0 {verb}, {n} already gone, 0 could not be deleted"
            )),
            "{said}"
        );
    }
    let lines = |out: &Output| -> Vec<String> {
        text(out)
            .lines()
            .filter(|l| l.starts_with("already gone: "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(lines(&dry), lines(&real));
}

/// The lines of a sweep's output that say what became of an entry, with the dry run's
/// words put as the sweep's ("would delete X" as "deleted X").
fn classed(out: &Output) -> BTreeSet<String> {
    text(out)
        .lines()
        .filter(|l| {
            [
                "would delete ",
                "deleted ",
                "already gone: ",
                "  not deleted: ",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .map(|l| {
            let l = l.replacen("would delete ", "deleted ", 1);
            // after what it is comes the dry run's request or the sweep's answer, or why
            let parts = if l.starts_with("deleted ") { 1 } else { 2 };
            l.split(": ").take(parts).collect::<Vec<_>>().join(": ")
        })
        .collect()
}

/// A server whose invitations name users that are never made (`invite-stub`): teardown
/// reports no user left (no read ever showed one), and a sweep of the run's creates (its
/// ledger without the lines teardown wrote, as a killed run leaves it) and its dry run class
/// every entry the same way, with the same exit code, and name no user left.
fn a_stub_invitation_leaves_no_false_leftover_and_dry_run_agrees_with_sweep() {
    let tokens = ("stub-user", "stub-admin");
    let served = Served::start(tokens.0, tokens.1, &["invite-stub"]);
    let dir = processes::scratch("observed", "invite-stub");
    let out = Command::new(BIN)
        .args(["--target", &served.url, "--token", tokens.0])
        .args([
            "--admin-token",
            tokens.1,
            "--group",
            "organization_memberships,admin_users",
        ])
        .arg("--reports")
        .arg(&dir)
        .output()
        .expect("a run");
    let said = text(&out);
    let left = leftovers(&dir);
    assert!(
        !left.iter().any(|(kind, _)| kind == "user"),
        "a user no read showed is reported left: {left:?}\n{said}"
    );
    let ledger = dir.join("ledger.jsonl");
    let created: Vec<String> = std::fs::read_to_string(&ledger)
        .expect("the ledger")
        .lines()
        .filter(|l| !l.contains("\"event\":\"deleted\"") && !l.contains("\"event\":\"kept\""))
        .map(str::to_string)
        .collect();
    assert!(
        created.iter().any(|l| l.contains("\"kind\":\"user\"")),
        "the run recorded no invited user"
    );
    std::fs::write(&ledger, created.join("\n") + "\n").expect("ledger written");
    let dry = sweep(&served, tokens, &dir, &["--dry-run"]);
    let real = sweep(&served, tokens, &dir, &[]);
    let (dry_said, real_said) = (text(&dry), text(&real));
    assert_eq!(
        dry.status.code(),
        real.status.code(),
        "{dry_said}\n---\n{real_said}"
    );
    let (predicted, done) = (classed(&dry), classed(&real));
    let differ: Vec<_> = predicted.symmetric_difference(&done).collect();
    assert!(
        differ.is_empty(),
        "{differ:#?}\n{dry_said}\n---\n{real_said}"
    );
    assert!(
        !real_said.lines().any(|l| l.contains("not deleted: user ")),
        "{real_said}"
    );
}

/// A server that moves an OAuth client to a new id when it is updated (`rename-on-update`, as
/// a real server does): the run follows the client to its new id, and teardown removes it there, so the
/// given organization holds no client of the run's afterwards and nothing is left.
fn teardown_removes_what_an_update_renamed() {
    let tokens = ("rename-user", "rename-admin");
    let served = Served::with_args(&[
        "--token",
        tokens.0,
        "--admin-token",
        tokens.1,
        "--fault",
        "rename-on-update",
        "--seed-organization",
        "given",
    ]);
    let dir = processes::scratch("observed", "rename");
    let out = run_in_given(&served, tokens, &dir, "oauth_clients_and_tokens");
    let said = text(&out);
    assert!(
        said.contains("update.same-id"),
        "the rename went unseen\n{said}"
    );
    let url = format!("{}/api/v2/organizations/given/oauth-clients", served.url);
    let (status, doc) = send(reqwest::Method::GET, &url, tokens.0, None);
    assert_eq!(status, 200, "{doc}");
    let kept = doc["data"].as_array().map_or(0, Vec::len);
    assert_eq!(kept, 0, "clients left in given: {doc}\n{said}");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    let renamed = conform::ledger::read(&dir.join("ledger.jsonl"))
        .expect("the ledger")
        .outstanding();
    assert!(renamed.is_empty(), "{renamed:?}");
}

/// A sequence's own cleanup takes no delete's word either: against delete-noop, the agent
/// pools a sequence made in `given` and "deleted" are still there, so they are leftovers and
/// the ledger never says `deleted` of one.
fn a_sequence_cleanup_takes_no_deletes_word() {
    let tokens = ("seq-user", "seq-admin");
    let served = delete_noop_in_given(tokens);
    let dir = processes::scratch("observed", "sequence-cleanup");
    let out = Command::new(BIN)
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1, "--organization", "given"])
        .args(["--group", "sequences", "--cases", "6", "--reports"])
        .arg(&dir)
        .args(["--exact", "sequences::agents"])
        .output()
        .expect("a run");
    let said = text(&out);
    let results = results(&dir);
    let left = results["leftovers"].to_string();
    assert!(
        left.contains("agent pool apool-"),
        "no agent pool left: {left}\n{said}"
    );
    let deleted = ledger_lines(&dir, "deleted");
    assert!(
        !deleted.iter().any(|(kind, _)| kind == "agent pool"),
        "the ledger says deleted: {deleted:?}"
    );
}

/// What the API cannot delete, made in a workspace the run was given (terraform's cloud
/// block backend, `--scratch`), is listed with its count and place, not as a leftover.
fn what_the_api_cannot_delete_is_listed_where_it_stays() {
    let dir = processes::scratch("observed", "kept-in-place");
    let out = Command::new(BIN)
        .args([
            "--reference-shape",
            "cloud-block-only",
            "--organization",
            "acme",
        ])
        .args(["--scratch", "workspace=ws-cloudblockseeded"])
        .args(["--group", "state_versions", "-q", "--reports"])
        .arg(&dir)
        .output()
        .expect("a run");
    let said = text(&out);
    let results = results(&dir);
    let kept = results["kept_in_place"].as_array().expect("kept_in_place");
    assert!(
        kept.iter().any(|l| l
            .as_str()
            .is_some_and(|l| l.contains("state_version(s) in workspace ws-cloudblockseeded"))),
        "{kept:?}\n{said}"
    );
    assert!(leftovers(&dir).is_empty(), "{said}");
    assert!(said.contains("not deletable through the API"), "{said}");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_delete_that_keeps_the_resource_is_a_leftover_in_teardown_ledger_and_sweep,
        after_a_reset_the_sweep_says_already_gone_only,
        a_stub_invitation_leaves_no_false_leftover_and_dry_run_agrees_with_sweep,
        teardown_removes_what_an_update_renamed,
        a_sequence_cleanup_takes_no_deletes_word,
        what_the_api_cannot_delete_is_listed_where_it_stays
    ]
}
