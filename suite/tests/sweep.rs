//! `conform sweep` tells the truth, with real processes against `conform serve`: what lived in
//! something the sweep deleted and is no longer shown went along, `--dry-run` lists exactly
//! what the sweep then does, and after a run killed with SIGKILL the sweep exits 0 with
//! nothing left, and a second sweep finds nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::processes::{self, text, Served};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_conform");

/// Every delete route of a registry module, gone: a module then goes only with its
/// organization.
const NO_MODULE_DELETE: [&str; 3] = [
    "drop-route=DELETE /organizations/:organization_name/registry-modules/:registry_name/:namespace/:name",
    "drop-route=DELETE /organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider",
    "no-deprecated-registry",
];

fn scratch(name: &str) -> PathBuf {
    processes::scratch("sweep", name)
}

/// `conform sweep` of a ledger against a service, with `extra` arguments.
fn sweep(served: &Served, tokens: (&str, &str), ledger: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .args(["sweep", "--ledger"])
        .arg(ledger)
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1])
        .args(extra)
        .output()
        .expect("conform sweep runs")
}

/// The resources a sweep's lines name after `verb` (`would delete`, `deleted`, `already
/// gone`): the text up to the colon.
fn named(said: &str, verb: &str) -> BTreeSet<String> {
    said.lines()
        .filter_map(|l| l.strip_prefix(verb))
        .filter_map(|rest| rest.trim_start_matches(':').trim().split(':').next())
        .map(|what| what.trim().to_string())
        .collect()
}

/// A dry run, then the sweep: both exit 0, the dry run's "would delete" lines name exactly
/// what the sweep deleted and its "already gone" lines what the sweep found gone; then a
/// second sweep finds nothing. Answers the sweep's output.
fn dry_run_then_sweep(served: &Served, tokens: (&str, &str), ledger: &Path) -> String {
    let dry = sweep(served, tokens, ledger, &["--dry-run"]);
    let predicted = text(&dry);
    assert_eq!(dry.status.code(), Some(0), "{predicted}");
    let real = sweep(served, tokens, ledger, &[]);
    let said = text(&real);
    assert_eq!(
        real.status.code(),
        Some(0),
        "{said}\n--- dry run:\n{predicted}"
    );
    assert!(!said.contains("not deleted:"), "{said}");
    assert_eq!(
        named(&predicted, "would delete "),
        named(&said, "deleted "),
        "the dry run said other things than the sweep did\n--- dry run:\n{predicted}\n--- sweep:\n{said}"
    );
    assert_eq!(
        named(&predicted, "already gone"),
        named(&said, "already gone"),
        "{predicted}\n{said}"
    );
    let again = sweep(served, tokens, ledger, &[]);
    let second = text(&again);
    assert_eq!(again.status.code(), Some(0), "{second}");
    assert!(
        second.contains("0 resource(s) created and not deleted"),
        "{second}"
    );
    said
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

/// One `created` line of a ledger, as a run writes it.
fn created(kind: &str, id: &str, url: &str, parents: Value) -> String {
    json!({
        "event": "created", "prefix": "conform-direct", "kind": kind, "id": id,
        "method": "DELETE", "url": url, "auth": "user", "show": url, "parents": parents,
        "time": "2026-01-01T00:00:00Z",
    })
    .to_string()
}

/// A ledger written as a killed run leaves it, on a service where registry modules cannot be
/// deleted by themselves: one module deleted before its line was written (its show answers
/// 404), two still there. The modules are gone with their organization, the first already
/// gone, and the dry run said so.
fn modules_whose_organization_the_sweep_deleted_went_along() {
    let tokens = ("direct-user", "direct-admin");
    let served = Served::start(tokens.0, tokens.1, &NO_MODULE_DELETE);
    let dir = scratch("direct");
    let ledger = dir.join("ledger.jsonl");
    let api = format!("{}/api/v2", served.url.trim_end_matches('/'));
    let org = "conform-direct-org";
    let (status, doc) = send(
        reqwest::Method::POST,
        &format!("{api}/organizations"),
        tokens.0,
        Some(
            json!({"data": {"type": "organizations", "attributes": {"name": org, "email": "d@example.com"}}}),
        ),
    );
    assert_eq!(status, 201, "{doc}");
    let org_url = format!("{api}/organizations/{org}");
    // an organization's id is its name
    let mut lines = vec![created("organization", org, &org_url, json!([]))];
    for name in ["conform-direct-a", "conform-direct-b"] {
        let (status, doc) = send(
            reqwest::Method::POST,
            &format!("{org_url}/registry-modules"),
            tokens.0,
            Some(
                json!({"data": {"type": "registry-modules", "attributes": {"name": name, "provider": "aws", "registry-name": "private"}}}),
            ),
        );
        assert_eq!(status, 201, "{doc}");
        let id = doc["data"]["id"].as_str().expect("a module id");
        let url = format!("{org_url}/registry-modules/private/{org}/{name}/aws");
        lines.push(created(
            "registry_module",
            id,
            &url,
            json!([["organization", org]]),
        ));
    }
    // deleted before the kill let its `deleted` line be written
    let url = format!("{org_url}/registry-modules/private/{org}/conform-direct-gone/aws");
    lines.push(created(
        "registry_module",
        "mod-conformgone0000",
        &url,
        json!([["organization", org]]),
    ));
    std::fs::write(&ledger, lines.join("\n") + "\n").expect("ledger written");

    let said = dry_run_then_sweep(&served, tokens, &ledger);
    assert!(
        said.contains("went with its organization conform-direct-org"),
        "{said}"
    );
    assert!(
        said.contains("already gone: registry_module mod-conformgone0000"),
        "{said}"
    );
    assert!(said.contains("deleted organization"), "{said}");
    let (status, _) = send(reqwest::Method::GET, &org_url, tokens.0, None);
    assert_eq!(status, 404, "the organization is gone");
}

fn created_lines(ledger: &Path, kind: &str) -> usize {
    let needle = format!("\"kind\":\"{kind}\"");
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"event\":\"created\"") && l.contains(&needle))
        .count()
}

/// A run killed with SIGKILL mid-way (no teardown), on a service whose registry modules go
/// only with their organization: the dry run lists what the sweep then deletes, the sweep
/// exits 0, and a second sweep finds nothing.
fn a_sweep_after_a_killed_run_exits_0_and_its_dry_run_said_what_it_did() {
    let tokens = ("killed-user", "killed-admin");
    let served = Served::start(tokens.0, tokens.1, &NO_MODULE_DELETE);
    let dir = scratch("killed");
    let ledger = dir.join("ledger.jsonl");
    let mut run = Command::new(BIN)
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1, "--reports"])
        .arg(&dir)
        .args([
            "--group",
            "organizations,registry_modules,registry_modules_read,runs",
        ])
        .args(["--rate", "100/s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("a run starts");
    let waited = Instant::now();
    while created_lines(&ledger, "registry_module") < 3 {
        assert!(
            run.try_wait().expect("status").is_none(),
            "the run ended before it could be killed"
        );
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "no registry module in the ledger"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    run.kill().expect("SIGKILL");
    run.wait().expect("reaped");
    let outstanding = conform::ledger::read(&ledger)
        .expect("the ledger reads")
        .outstanding();
    assert!(
        outstanding.iter().any(|e| e.kind == "registry_module"),
        "{outstanding:?}"
    );
    let said = dry_run_then_sweep(&served, tokens, &ledger);
    assert!(said.contains("deleted organization"), "{said}");
}

/// A service that offers only one of the spec's two deletes of a registry module (per
/// provider, or per module): teardown finds it among the delete forms of the catalog, and
/// leaves no module behind (in an organization the run is given, which is never deleted, so
/// each module must go by itself).
fn teardown_deletes_modules_by_the_only_delete_form_served() {
    for (name, dropped) in [
        ("per-provider", NO_MODULE_DELETE[0]),
        ("per-module", NO_MODULE_DELETE[1]),
    ] {
        let tokens = ("provider-user", "provider-admin");
        let served = Served::start(tokens.0, tokens.1, &[dropped, NO_MODULE_DELETE[2]]);
        let dir = scratch(name);
        let api = format!("{}/api/v2", served.url.trim_end_matches('/'));
        let (status, doc) = send(
            reqwest::Method::POST,
            &format!("{api}/organizations"),
            tokens.0,
            Some(
                json!({"data": {"type": "organizations", "attributes": {"name": "shared-modules", "email": "s@example.com"}}}),
            ),
        );
        assert_eq!(status, 201, "{doc}");
        let out = Command::new(BIN)
            .args(["--target", &served.url, "--token", tokens.0])
            .args(["--admin-token", tokens.1, "--reports"])
            .arg(&dir)
            .args([
                "--organization",
                "shared-modules",
                "--group",
                "registry_modules",
            ])
            .output()
            .expect("a run");
        let said = text(&out);
        let results: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
        )
        .expect("results.json parses");
        assert_eq!(
            results["leftovers"],
            json!([]),
            "only {name} delete: {said}"
        );
        let (status, modules) = send(
            reqwest::Method::GET,
            &format!("{api}/organizations/shared-modules/registry-modules"),
            tokens.0,
            None,
        );
        assert_eq!(status, 200);
        assert_eq!(modules["data"], json!([]), "only {name} delete: {modules}");
    }
}

/// A ledger whose resources are all gone (its `deleted` lines lost, as when a run is killed
/// between a delete and its line): every show now answers 404, so the sweep sees none of its
/// routes answer; the routes the run saw answer, which it wrote to the ledger, make that 404
/// "not there". The sweep exits 0 with nothing "not deleted".
fn a_sweep_of_a_ledger_whose_resources_are_gone_trusts_the_routes_the_run_saw_answer() {
    let tokens = ("gone-user", "gone-admin");
    let served = Served::start(tokens.0, tokens.1, &[]);
    let dir = scratch("all-gone");
    let out = Command::new(BIN)
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1, "--reports"])
        .arg(&dir)
        .args(["--group", "organizations,teams"])
        .output()
        .expect("a run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let ledger = dir.join("ledger.jsonl");
    let lines = std::fs::read_to_string(&ledger).expect("the ledger");
    assert!(lines.contains("\"event\":\"route-answers\""), "{lines}");
    let kept: Vec<&str> = lines
        .lines()
        .filter(|l| !l.contains("\"event\":\"deleted\""))
        .collect();
    std::fs::write(&ledger, kept.join("\n") + "\n").expect("the ledger rewritten");
    let outstanding = conform::ledger::read(&ledger)
        .expect("the ledger reads")
        .outstanding();
    assert!(
        outstanding.iter().any(|e| e.kind == "team"),
        "{outstanding:?}"
    );
    let swept = sweep(&served, tokens, &ledger, &[]);
    let said = text(&swept);
    assert_eq!(swept.status.code(), Some(0), "{said}");
    assert!(said.contains(" 0 could not be deleted"), "{said}");
    assert!(!said.contains("not deleted:"), "{said}");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        modules_whose_organization_the_sweep_deleted_went_along,
        a_sweep_after_a_killed_run_exits_0_and_its_dry_run_said_what_it_did,
        a_sweep_of_a_ledger_whose_resources_are_gone_trusts_the_routes_the_run_saw_answer,
        teardown_deletes_modules_by_the_only_delete_form_served
    ]
}
