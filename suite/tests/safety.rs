//! Safety and politeness against a shared service: the prefix on every name, the crash-safe
//! ledger and `conform sweep` after a real kill, the blast-radius guard, 429 handling, the
//! deadline, redirects, and a canary token that must appear nowhere.

use crate::support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::processes::Served;
use conform::cli::RunArgs;
use conform::harness::Session;
use conform::plan::Plan;
use conform::settings::Settings;
use conform::verdict::Verdict;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_conform");

/// A scratch folder under the target directory, fresh for each test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("safety-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

fn run_conform(args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let out = Command::new(BIN).args(args).output().expect("conform runs");
    (out, started.elapsed())
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// GET a JSON document from a service.
fn get_json(url: &str, token: &str) -> (u16, Value) {
    send_json(reqwest::Method::GET, url, token)
}

/// Sends `method` to `url` without a body; the status and the JSON document answered.
fn send_json(method: reqwest::Method, url: &str, token: &str) -> (u16, Value) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let res = reqwest::Client::new()
            .request(method, url)
            .bearer_auth(token)
            .send()
            .await
            .expect("answer");
        let status = res.status().as_u16();
        let body = res.bytes().await.unwrap_or_default();
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    })
}

/// Names of the organizations on a service that start with `prefix`.
fn organizations_with_prefix(root: &str, token: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    for page in 1..100 {
        let (status, doc) = get_json(
            &format!("{root}/api/v2/organizations?page%5Bnumber%5D={page}&page%5Bsize%5D=100"),
            token,
        );
        assert_eq!(status, 200, "{doc}");
        let items = doc["data"].as_array().cloned().unwrap_or_default();
        for item in &items {
            if let Some(name) = item["attributes"]["name"].as_str() {
                if name.starts_with(prefix) {
                    names.push(name.to_string());
                }
            }
        }
        if items.is_empty()
            || doc
                .pointer("/meta/pagination/next-page")
                .is_none_or(Value::is_null)
        {
            break;
        }
    }
    names
}

fn created_lines(ledger: &Path) -> usize {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"event\":\"created\""))
        .count()
}

fn every_payload_names_what_it_makes_with_the_run_prefix() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/payloads");
    let mut unprefixed = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("payloads") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("payload");
        let doc: Value = serde_json::from_str(&text).expect("payload is JSON");
        let mut stack = vec![doc.clone()];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(map) => {
                    for (k, v) in map {
                        let names_something = matches!(k.as_str(), "name" | "email" | "key");
                        if let (true, Value::String(s)) = (names_something, &v) {
                            // a name is the run's when it has the prefix or is another fixture's
                            if !s.contains("{{prefix}}") && !s.contains("{{") {
                                unprefixed.push(format!("{}: {k} = {s}", path.display()));
                            }
                        }
                        stack.push(v);
                    }
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        if doc.pointer("/data/type").and_then(Value::as_str) == Some("terraform-versions") {
            if let Some(version) = doc
                .pointer("/data/attributes/version")
                .and_then(Value::as_str)
            {
                if !version.contains("{{prefix}}") {
                    unprefixed.push(format!("{}: version = {version}", path.display()));
                }
            }
        }
    }
    assert!(unprefixed.is_empty(), "{unprefixed:#?}");
}

fn a_killed_run_is_swept_clean_from_its_ledger() {
    let (token, admin) = ("kill-user-token", "kill-admin-token");
    let served = Served::start(token, admin, &[]);
    let dir = scratch("kill");
    let ledger = dir.join("ledger.jsonl");
    let prefix = format!("conform-kill{}", std::process::id() % 100_000);
    let mut run = Command::new(BIN)
        .args([
            "--target",
            &served.url,
            "--token",
            token,
            "--admin-token",
            admin,
            "--prefix",
            &prefix,
            "--reports",
            dir.to_str().unwrap(),
            "--rate",
            "60/s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("a run starts");
    let waited = Instant::now();
    while created_lines(&ledger) < 25 {
        assert!(
            run.try_wait().expect("status").is_none(),
            "the run ended before it could be killed"
        );
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "no ledger entries"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    run.kill().expect("kill"); // SIGKILL: no teardown runs
    run.wait().expect("reaped");
    let left = organizations_with_prefix(&served.url, token, &prefix);
    assert!(!left.is_empty(), "the killed run left nothing to sweep");
    let contents = conform::ledger::read(&ledger).expect("ledger reads");
    assert!(contents
        .outstanding()
        .iter()
        .any(|e| e.kind == "organization"));

    let in_ledger: Vec<String> = contents.entries.iter().map(|e| e.id.clone()).collect();
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "--ledger",
            ledger.to_str().unwrap(),
            "--target",
            &served.url,
            "--token",
            token,
            "--admin-token",
            admin,
        ];
        args.extend_from_slice(extra);
        let (out, _) = run_conform(&args);
        let said = text(&out);
        // A delete the run made just before the kill, not yet in the ledger, leaves an
        // entry whose resource is gone; where nothing can show that (users have no show),
        // sweep says it cannot confirm it, and exits 1. Nothing else may be left.
        let unconfirmable =
            |l: &&str| l.contains("there is no show to tell") || l.contains("neither route exists");
        let failed: Vec<&str> = said
            .lines()
            .filter(|l| l.trim_start().starts_with("not deleted:"))
            .collect();
        assert!(failed.iter().all(unconfirmable), "{said}");
        assert_eq!(out.status.success(), failed.is_empty(), "{said}");
        said
    };
    // the ledger alone removes everything the run recorded
    let said = sweep(&[]);
    assert!(said.contains("deleted organization"), "{said}");
    let after_ledger = organizations_with_prefix(&served.url, token, &prefix);
    assert!(
        after_ledger.iter().all(|o| !in_ledger.contains(o)),
        "recorded organizations survived the sweep: {after_ledger:?}\n{said}"
    );
    // an organization whose create was in flight at the kill is not in the ledger: the
    // prefix finds it
    let said = sweep(&["--prefix", &prefix]);
    assert_eq!(
        organizations_with_prefix(&served.url, token, &prefix),
        Vec::<String>::new(),
        "{said}"
    );
    let (status, versions) = get_json(
        &format!(
            "{}/api/v2/admin/terraform-versions?filter%5Bversion%5D={prefix}",
            served.url
        ),
        admin,
    );
    assert_eq!(status, 200);
    assert_eq!(
        versions["data"].as_array().map(Vec::len),
        Some(0),
        "{versions}"
    );

    // no user the run invited is left
    let (status, users) = get_json(
        &format!(
            "{}/api/v2/admin/users?q={prefix}&page%5Bsize%5D=100",
            served.url
        ),
        admin,
    );
    assert_eq!(status, 200);
    assert_eq!(users["data"].as_array().map(Vec::len), Some(0), "{users}");

    // a second sweep finds nothing left, but what it could not confirm gone
    let said = sweep(&[]);
    assert!(
        said.contains("0 resource(s) created and not deleted") || said.contains(" 0 deleted,"),
        "{said}"
    );
}

fn sweep_reports_what_it_cannot_delete_and_goes_on() {
    let (token, admin) = ("sweep-user", "sweep-admin");
    let served = Served::start(
        token,
        admin,
        &["server-error=DELETE /workspaces/:workspace_id"],
    );
    let dir = scratch("sweep-fail");
    let ledger = dir.join("ledger.jsonl");
    let entry = |kind: &str, id: &str, path: &str| {
        format!(
            r#"{{"event":"created","prefix":"conform-x","kind":"{kind}","id":"{id}","method":"DELETE","url":"{}{path}","auth":"user","time":"2026-01-01T00:00:00.000Z"}}"#,
            served.url
        )
    };
    // an organization and a workspace made outside conform, as a run would have
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ws = rt.block_on(async {
        let client = reqwest::Client::new();
        client
            .post(format!("{}/api/v2/organizations", served.url))
            .bearer_auth(token)
            .header("content-type", "application/vnd.api+json")
            .body(r#"{"data":{"type":"organizations","attributes":{"name":"conform-x-0001","email":"x@example.com"}}}"#)
            .send()
            .await
            .unwrap();
        let res = client
            .post(format!("{}/api/v2/organizations/conform-x-0001/workspaces", served.url))
            .bearer_auth(token)
            .header("content-type", "application/vnd.api+json")
            .body(r#"{"data":{"type":"workspaces","attributes":{"name":"conform-x-0002"}}}"#)
            .send()
            .await
            .unwrap();
        let doc: Value = res.json().await.unwrap();
        doc["data"]["id"].as_str().unwrap().to_string()
    });
    let text_ledger = format!(
        "{}\n{}\n{}\n{{\"event\":\"created\",\"pre",
        entry(
            "organization",
            "conform-x-0001",
            "/api/v2/organizations/conform-x-0001"
        ),
        entry("workspace", &ws, &format!("/api/v2/workspaces/{ws}")),
        entry("team", "team-gone", "/api/v2/teams/team-gone"),
    );
    std::fs::write(&ledger, text_ledger).unwrap();
    let (out, _) = run_conform(&[
        "sweep",
        "--ledger",
        ledger.to_str().unwrap(),
        "--target",
        &served.url,
        "--token",
        token,
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("skipped 1 line(s)"), "{said}");
    // a 404 from both its delete and its show, with no show of a team seen to answer, is
    // not proof that it is gone (a server without those routes answers the same)
    assert!(
        said.contains("not deleted: team team-gone") && said.contains("neither route exists"),
        "{said}"
    );
    assert!(
        said.contains("1 deleted, 0 already gone, 2 could not be deleted"),
        "{said}"
    );
    assert!(
        said.contains(&format!("not deleted: workspace {ws}")) && said.contains("answered 500"),
        "{said}"
    );
    // it went on: the organization (older, deleted after the failure) is gone
    assert!(
        said.contains("deleted organization conform-x-0001"),
        "{said}"
    );
    assert!(organizations_with_prefix(&served.url, token, "conform-x-").is_empty());
}

fn the_guard_refuses_a_mutation_on_a_resource_the_run_did_not_create() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let config = conform_reference::Config::default();
    let (token, admin) = (config.token.clone(), config.admin_token.clone());
    let running = rt.block_on(conform_reference::start(config)).unwrap();
    let root = running.root_url();
    // someone else's organization and workspace, made before the run
    let foreign = rt.block_on(async {
        let client = reqwest::Client::new();
        for body in [
            r#"{"data":{"type":"organizations","attributes":{"name":"someone-else","email":"x@example.com"}}}"#,
        ] {
            client
                .post(format!("{root}/api/v2/organizations"))
                .bearer_auth(&token)
                .header("content-type", "application/vnd.api+json")
                .body(body)
                .send()
                .await
                .unwrap();
        }
        let res = client
            .post(format!("{root}/api/v2/organizations/someone-else/workspaces"))
            .bearer_auth(&token)
            .header("content-type", "application/vnd.api+json")
            .body(r#"{"data":{"type":"workspaces","attributes":{"name":"production"}}}"#)
            .send()
            .await
            .unwrap();
        let doc: Value = res.json().await.unwrap();
        doc["data"]["id"].as_str().unwrap().to_string()
    });
    // A catalog whose recipe picks the first workspace of the whole installation (a bad
    // recipe, or a target where the list is shared): that one is someone else's.
    let dir = scratch("guard");
    let cases = dir.join("cases");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases"),
        &cases,
    );
    let resources = std::fs::read_to_string(cases.join("resources.toml")).unwrap();
    let marker = "[resources.workspace]\nparents = [\"organization\"]\ncreate = { method = \"POST\", path = \"/organizations/:organization_name/workspaces\", payload = \"workspace.json\" }";
    assert!(resources.contains(marker));
    let resources = resources.replace(
        marker,
        "[resources.workspace]\nparents = [\"organization\"]\nfind = { method = \"GET\", path = \"/admin/workspaces\", pick = \"first\" }",
    );
    std::fs::write(cases.join("resources.toml"), resources).unwrap();

    let argv = [
        "conform",
        "--target",
        &root,
        "--token",
        &token,
        "--admin-token",
        &admin,
        "--cases",
        cases.to_str().unwrap(),
        "--reports",
        dir.to_str().unwrap(),
    ];
    let args = RunArgs::from_words(&argv[1..]).unwrap();
    let mut plan = Plan::new(Settings::resolve(&args).unwrap())
        .unwrap()
        .retain(|item| item.name().starts_with("admin_workspaces::delete::"));
    assert_eq!(plan.items.len(), 2);
    plan.concurrency = 2;
    let session = Session::open(&plan).unwrap();
    let results = session.run(&plan.items);
    // the guard is the HTTP layer's: a direct request is refused as well
    let direct = session.runtime.block_on(
        session.ctx.target.send(conform::target::Request::new(
            reqwest::Method::PATCH,
            session
                .ctx
                .target
                .url(&format!("/api/v2/workspaces/{foreign}")),
            conform::target::Auth::User,
        )),
    );
    session.close();
    for r in &results {
        assert_eq!(
            r.verdict,
            Verdict::Error,
            "{}: {}",
            r.name,
            r.failure_text()
        );
        let why = r.failure_text();
        assert!(why.contains("blast-radius guard"), "{why}");
        assert!(why.contains(&foreign), "{why}");
        assert!(why.contains("--fixture"), "{why}");
    }
    assert!(
        matches!(
            &direct.response,
            Err(conform::target::TransportError::Refused(_))
        ),
        "{:?}",
        direct.response
    );
    // nothing was sent: the workspace is still there
    let (status, _) = get_json(&format!("{root}/api/v2/workspaces/{foreign}"), &token);
    assert_eq!(status, 200);
    running.shutdown();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

fn read_only_sends_nothing_but_reads() {
    // every test of two groups, mutating ones included: the HTTP layer sends only reads
    let results = support::run(&[], &["organizations::", "account::"], &["--read-only"]);
    for r in &results {
        for ex in &r.exchanges {
            assert!(
                ex.request.method == "GET" || ex.response.is_err(),
                "{} sent {} {}",
                r.name,
                ex.request.method,
                ex.request.url
            );
        }
    }
    let refused = results
        .iter()
        .filter(|r| r.verdict == Verdict::Error && r.failure_text().contains("--read-only"))
        .count();
    assert!(refused > 0, "no mutating test was refused");
    // the binary runs only the tests that change nothing, and makes no fixture
    let dir = scratch("read-only");
    let (out, _) = run_conform(&[
        "--read-only",
        "--group",
        "organizations,account",
        "--reports",
        dir.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("organizations::list::api-v2"), "{said}");
    assert!(!said.contains("organizations::create::"), "{said}");
    assert!(!said.contains("organizations::delete::"), "{said}");
    assert!(said.contains("--read-only creates nothing"), "{said}");
    // `read-only = true` in the config file selects the same tests
    let config = dir.join("conform.toml");
    std::fs::write(&config, "read-only = true\n").expect("config");
    let (out, _) = run_conform(&[
        "--config",
        config.to_str().unwrap(),
        "--group",
        "organizations,account",
        "--reports",
        dir.to_str().unwrap(),
    ]);
    let from_file = text(&out);
    assert!(out.status.success(), "{from_file}");
    assert!(
        !from_file.contains("organizations::create::"),
        "{from_file}"
    );
}

fn a_target_that_rate_limits_its_first_requests_passes_with_throttling_reported() {
    let dir = scratch("rate-first");
    let (out, took) = run_conform(&[
        "--reference-fault",
        "rate-limit-first=20",
        "--group",
        "admin_settings,account,organizations,runs",
        "--reports",
        dir.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let line = said
        .lines()
        .find(|l| l.starts_with("throttled: "))
        .unwrap_or_else(|| panic!("no throttling line:\n{said}"));
    let answers: u64 = line
        .trim_start_matches("throttled: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(answers >= 10, "{line}");
    assert!(line.contains("waiting as the target asked"), "{line}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    // and in the report files
    let results: Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        results["figures"]["rate_limited_answers"].as_u64(),
        Some(answers)
    );
    assert!(results["figures"]["throttled_seconds"].as_f64().unwrap() > 0.5);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("Throttled: "), "{summary}");
}

fn a_target_that_rate_limits_forever_gets_a_clear_verdict_within_the_deadline() {
    let dir = scratch("rate-forever");
    let (out, took) = run_conform(&[
        "--reference-fault",
        "rate-limit-forever",
        "--deadline",
        "6s",
        "--group",
        "runs,organizations",
        "--reports",
        dir.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    // the deadline bounds the run; teardown (nothing to delete) adds little
    assert!(took < Duration::from_secs(12), "{took:?}\n{said}");
    assert!(said.contains("429 Too Many Requests"), "{said}");
    let total = said.lines().find(|l| l.starts_with("total ")).unwrap();
    let cells: Vec<&str> = total.split_whitespace().collect();
    assert_eq!(cells[1], "0", "nothing passes: {total}");
    assert_eq!(
        cells[2], "0",
        "nothing fails (the target was not judged): {total}"
    );
    assert_ne!(cells[cells.len() - 1], "0", "errors: {total}");
}

fn a_deadline_ends_unfinished_tests_as_errors_and_teardown_still_runs() {
    let (token, admin) = ("deadline-user", "deadline-admin");
    let served = Served::start(token, admin, &[]);
    let dir = scratch("deadline");
    let prefix = format!("conform-dl{}", std::process::id() % 100_000);
    let (out, took) = run_conform(&[
        "--target",
        &served.url,
        "--token",
        token,
        "--prefix",
        &prefix,
        "--rate",
        "20/s",
        "--deadline",
        "2s",
        "--reports",
        dir.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("--deadline passed before this test"),
        "{said}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    // teardown ran: nothing of the run is left, and the ledger says so
    assert!(organizations_with_prefix(&served.url, token, &prefix).is_empty());
    let contents = conform::ledger::read(&dir.join("ledger.jsonl")).unwrap();
    assert!(!contents.entries.is_empty());
    assert!(
        contents.outstanding().is_empty(),
        "{:?}",
        contents.outstanding()
    );
}

/// A server that records every request head and answers as `reply` says.
fn recorder(reply: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf).into_owned());
            use std::io::Write;
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (format!("http://{addr}"), heads)
}

fn a_redirect_never_carries_the_token_to_another_origin() {
    let (elsewhere, elsewhere_heads) =
        recorder("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into());
    let (target_url, target_heads) = recorder(format!(
        "HTTP/1.1 302 Found\r\nlocation: {elsewhere}/stolen\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    ));
    let token = "canary-redirect-0d5e";
    let target = conform::target::Target::new(conform::target::TargetConfig {
        root: url::Url::parse(&target_url).unwrap(),
        registry: url::Url::parse(&format!("{target_url}/api/registry/v1/modules/")).unwrap(),
        token: Some(conform::target::Secret::new(token)),
        admin_token: Some(conform::target::Secret::new(token)),
        auth_header: "Authorization".into(),
        auth_scheme: "Bearer".into(),
        timeout: Duration::from_secs(5),
        max_body: 1 << 20,
        ca_cert: None,
        insecure: false,
        rate: None,
        learn_rate: true,
        max_retries: 0,
        forms: Default::default(),
        served_at_tfe_path: Vec::new(),
        no_route: Default::default(),
    })
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let first = rt.block_on(target.send(conform::target::Request::new(
        reqwest::Method::GET,
        target.url("/api/v2/registry/download"),
        conform::target::Auth::User,
    )));
    // not followed automatically
    assert_eq!(first.status(), Some(302));
    assert!(elsewhere_heads.lock().unwrap().is_empty());
    assert!(target_heads.lock().unwrap()[0].contains(token));
    // followed the way the runner follows: to the Location, with the credential the
    // target layer allows there (none: another origin)
    let location = url::Url::parse(first.header("location").unwrap()).unwrap();
    for auth in [conform::target::Auth::User, conform::target::Auth::Admin] {
        let second = rt.block_on(target.send(conform::target::Request::new(
            reqwest::Method::GET,
            location.clone(),
            auth,
        )));
        assert_eq!(second.status(), Some(200));
    }
    let heads = elsewhere_heads.lock().unwrap();
    assert_eq!(heads.len(), 2);
    for head in heads.iter() {
        assert!(!head.contains(token), "{head}");
        assert!(
            !head.to_ascii_lowercase().contains("authorization"),
            "{head}"
        );
    }
}

fn a_canary_token_appears_nowhere_in_output_reports_or_ledger() {
    let token = "canary-XYZ-7f3a91c2";
    let admin = "canary-ADMIN-51be08d4";
    // a dropped route, so failing tests with transcripts land in the reports too
    let served = Served::start(token, admin, &["drop-route=GET /runs/:run_id"]);
    let dir = scratch("canary");
    let (out, _) = run_conform(&[
        "--target",
        &served.url,
        "--token",
        token,
        "--admin-token",
        admin,
        "--reports",
        dir.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the dropped route fails: {said}"
    );
    assert!(said.contains("runs::show::"), "{said}");
    for secret in [token, admin] {
        assert!(!said.contains(secret), "the run printed a token");
    }
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.iter().any(|f| f.ends_with("junit.xml")), "{files:?}");
    assert!(
        files.iter().any(|f| f.ends_with("ledger.jsonl")),
        "{files:?}"
    );
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let content = String::from_utf8_lossy(&bytes);
        for secret in [token, admin] {
            assert!(
                !content.contains(secret),
                "{} holds a token",
                file.display()
            );
        }
    }
    // a clean run leaves nothing to sweep, and the sweep prints no token either
    let (out, _) = run_conform(&[
        "sweep",
        "--ledger",
        dir.join("ledger.jsonl").to_str().unwrap(),
        "--target",
        &served.url,
        "--token",
        token,
        "--admin-token",
        admin,
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(": 0 resource(s) created and not deleted"),
        "{said}"
    );
    assert!(!said.contains(token) && !said.contains(admin));
}

fn older_than_finds_the_debris_of_runs_whose_ledger_is_gone() {
    let (token, admin) = ("old-user", "old-admin");
    let served = Served::start(token, admin, &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = reqwest::Client::new();
        for name in ["conform-gone01-0001", "conform-gone02-0001", "production"] {
            client
                .post(format!("{}/api/v2/organizations", served.url))
                .bearer_auth(token)
                .header("content-type", "application/vnd.api+json")
                .body(format!(
                    r#"{{"data":{{"type":"organizations","attributes":{{"name":"{name}","email":"x@example.com"}}}}}}"#
                ))
                .send()
                .await
                .unwrap();
        }
    });
    let dir = scratch("older-than");
    let missing = dir.join("no-ledger.jsonl");
    let sweep = |age: &str| {
        let (out, _) = run_conform(&[
            "sweep",
            "--ledger",
            missing.to_str().unwrap(),
            "--target",
            &served.url,
            "--token",
            token,
            "--older-than",
            age,
        ]);
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    };
    // younger than an hour: left alone
    let said = sweep("1h");
    assert!(said.contains("sweep: 0 deleted"), "{said}");
    assert_eq!(
        organizations_with_prefix(&served.url, token, "conform-").len(),
        2
    );
    // older than nothing: every organization the prefix names is old enough (no clock to wait on)
    let said = sweep("0s");
    assert!(said.contains("sweep: 2 deleted"), "{said}");
    assert!(organizations_with_prefix(&served.url, token, "conform-").is_empty());
    // what does not carry the prefix is never touched
    assert_eq!(
        organizations_with_prefix(&served.url, token, "production").len(),
        1
    );
    // a bad duration is a configuration error
    let (out, _) = run_conform(&["sweep", "--target", &served.url, "--older-than", "soon"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The `curl` lines a failure prints work when pasted into a shell: the user token from
/// `$CONFORM_TOKEN`, the administrator's from `$CONFORM_ADMIN_TOKEN`.
fn printed_curl_lines_reproduce_when_pasted_into_a_shell() {
    let (token, admin) = ("curl-user-token", "curl-admin-token");
    let served = Served::start(
        token,
        admin,
        &[
            "wrong-content-type=GET /account/details",
            "wrong-content-type=GET /admin/users",
        ],
    );
    let dir = scratch("curl");
    let (out, _) = run_conform(&[
        "--target",
        &served.url,
        "--token",
        token,
        "--admin-token",
        admin,
        "--profile",
        "tfe",
        "--reports",
        dir.to_str().unwrap(),
        "--group",
        "account,admin_users",
        "api-v2",
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let lines: Vec<&str> = said
        .lines()
        .filter_map(|l| l.trim().strip_prefix("reproduce: "))
        .filter(|l| l.contains("/account/details") || l.contains("/admin/users"))
        .collect();
    let user = lines.iter().find(|l| l.contains("/account/details"));
    let admin_line = lines.iter().find(|l| l.contains("/admin/users"));
    let (Some(user), Some(admin_line)) = (user, admin_line) else {
        panic!("no reproduce lines for both requests: {said}");
    };
    assert!(admin_line.contains("$CONFORM_ADMIN_TOKEN"), "{admin_line}");
    for line in [user, admin_line] {
        let pasted = Command::new("sh")
            .arg("-c")
            .arg(format!("{line} -o /dev/null -w '%{{http_code}}'"))
            .env("CONFORM_TOKEN", token)
            .env("CONFORM_ADMIN_TOKEN", admin)
            .output()
            .expect("sh runs");
        let status = String::from_utf8_lossy(&pasted.stdout).to_string();
        assert_eq!(status, "200", "{line}\n{}", text(&pasted));
    }
}

/// A sequence family that cannot run here says `ignored` on its libtest line, with why.
fn a_skipped_sequence_family_says_ignored() {
    let served = Served::start("seq-user-token", "seq-admin-token", &[]);
    let dir = scratch("skipped-family");
    let (out, _) = run_conform(&[
        "--target",
        &served.url,
        "--token",
        "seq-user-token",
        "--reports",
        dir.to_str().unwrap(),
        "--cases",
        "1",
        "--exact",
        "sequences::admin_users",
    ]);
    let said = text(&out);
    let line = said
        .lines()
        .find(|l| l.starts_with("test sequences::admin_users"))
        .unwrap_or_else(|| panic!("no libtest line: {said}"));
    assert!(
        line.contains("ignored") && line.contains("--admin-token"),
        "{line}"
    );
}

/// `--rate N/s` against a server that answers 429 to the request after N in any second:
/// never refused. The same server refuses an unpaced run (the fault is real).
fn a_run_at_the_servers_rate_is_never_refused() {
    let served = Served::start("rate-user", "rate-admin", &["rate-limit-per-second=20"]);
    let run = |rate: Option<&str>, name: &str| -> Value {
        let dir = scratch(name);
        let mut args = vec![
            "--target",
            &served.url,
            "--token",
            "rate-user",
            "--reports",
            dir.to_str().unwrap(),
            "--group",
            "organizations,teams",
        ];
        if let Some(rate) = rate {
            args.extend(["--rate", rate]);
        }
        let (out, _) = run_conform(&args);
        let results = std::fs::read_to_string(dir.join("results.json"))
            .unwrap_or_else(|_| panic!("results.json: {}", text(&out)));
        serde_json::from_str(&results).expect("results.json parses")
    };
    let paced = run(Some("20/s"), "rate-paced");
    assert_eq!(
        paced["figures"]["rate_limited_answers"], 0,
        "{}",
        paced["figures"]
    );
    assert!(
        paced["figures"]["requests"].as_u64().unwrap_or(0) > 60,
        "{}",
        paced["figures"]
    );
    let unpaced = run(None, "rate-unpaced");
    assert!(
        unpaced["figures"]["rate_limited_answers"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{}",
        unpaced["figures"]
    );
}

/// A server without the delete routes of agent pools and registry modules: teardown does not
/// count a 404 as deleted. The debris is a leftover in results.json and in the ledger, with
/// the requests that failed, and `conform sweep` says it could not delete it.
fn debris_behind_a_missing_delete_route_is_reported_not_counted_deleted() {
    let served = Served::start(
        "debris-user",
        "debris-admin",
        &[
            "drop-route=DELETE /agent-pools/:agent_pool_id",
            "drop-route=DELETE /organizations/:organization_name/registry-modules/:registry_name/:namespace/:name",
            "drop-route=DELETE /organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider",
            "no-deprecated-registry",
        ],
    );
    let dir = scratch("debris");
    let ledger = dir.join("ledger.jsonl");
    // a shared organization the run is given: never deleted, so what is in it stays
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let made = rt.block_on(
        reqwest::Client::new()
            .post(format!("{}/api/v2/organizations", served.url))
            .bearer_auth("debris-user")
            .header("content-type", "application/vnd.api+json")
            .body(r#"{"data":{"type":"organizations","attributes":{"name":"shared-org","email":"s@example.com"}}}"#)
            .send(),
    );
    assert_eq!(made.expect("made").status().as_u16(), 201);
    let (out, _) = run_conform(&[
        "--target",
        &served.url,
        "--token",
        "debris-user",
        "--admin-token",
        "debris-admin",
        "--organization",
        "shared-org",
        "--reports",
        dir.to_str().unwrap(),
        "--group",
        "agents,registry_modules",
    ]);
    let said = text(&out);
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
    )
    .expect("parses");
    let leftovers = results["leftovers"].to_string();
    assert!(leftovers.contains("agent_pool"), "{leftovers}\n{said}");
    assert!(leftovers.contains("registry_module"), "{leftovers}");
    assert!(leftovers.contains("is still shown"), "{leftovers}");
    let outstanding = conform::ledger::read(&ledger)
        .expect("ledger")
        .outstanding();
    assert!(outstanding.iter().any(|e| e.kind == "agent_pool"));
    assert!(outstanding.iter().any(|e| e.kind == "registry_module"));
    let (out, _) = run_conform(&[
        "sweep",
        "--ledger",
        ledger.to_str().unwrap(),
        "--target",
        &served.url,
        "--token",
        "debris-user",
        "--admin-token",
        "debris-admin",
    ]);
    let swept = text(&out);
    assert_eq!(out.status.code(), Some(1), "{swept}");
    assert!(swept.contains("not deleted: agent_pool"), "{swept}");
    assert!(swept.contains("is still shown"), "{swept}");
}

/// A membership delete that does nothing (answered 204) and a membership show route that
/// answers 404 for everything (a router's, as a real server's): teardown does not count the 404 of a
/// show route never seen answering as "deleted" (issue 30 item 17). The memberships are
/// leftovers, outstanding in the ledger, and still in the organization's membership list.
fn a_show_route_never_seen_answering_proves_no_delete_in_teardown() {
    let served = Served::start(
        "noshow-user",
        "noshow-admin",
        &[
            "drop-route=GET /organization-memberships/:organization_membership_id",
            "delete-noop",
        ],
    );
    let dir = scratch("noshow");
    let ledger = dir.join("ledger.jsonl");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let made = rt.block_on(
        reqwest::Client::new()
            .post(format!("{}/api/v2/organizations", served.url))
            .bearer_auth("noshow-user")
            .header("content-type", "application/vnd.api+json")
            .body(r#"{"data":{"type":"organizations","attributes":{"name":"shared-org","email":"s@example.com"}}}"#)
            .send(),
    );
    assert_eq!(made.expect("made").status().as_u16(), 201);
    let (out, _) = run_conform(&[
        "--target",
        &served.url,
        "--token",
        "noshow-user",
        "--admin-token",
        "noshow-admin",
        "--organization",
        "shared-org",
        "--reports",
        dir.to_str().unwrap(),
        "--group",
        "organization_memberships",
    ]);
    let said = text(&out);
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
    )
    .expect("parses");
    let leftovers = results["leftovers"].to_string();
    assert!(
        leftovers.contains("organization_membership"),
        "{leftovers}\n{said}"
    );
    assert!(leftovers.contains("never answered"), "{leftovers}");
    let outstanding = conform::ledger::read(&ledger)
        .expect("ledger")
        .outstanding();
    assert!(outstanding
        .iter()
        .any(|e| e.kind == "organization_membership"));
    let (status, doc) = get_json(
        &format!(
            "{}/api/v2/organizations/shared-org/organization-memberships",
            served.url
        ),
        "noshow-user",
    );
    assert_eq!(status, 200);
    assert!(doc["data"].as_array().is_some_and(|d| d.len() > 1), "{doc}");
}

/// Invitations make user accounts, which outlive the organization: a clean run deletes them
/// through the administrator API, and without the administrator token reports them.
fn users_an_invitation_made_are_deleted_or_reported() {
    let served = Served::start("users-user", "users-admin", &[]);
    let list_users = || {
        let (status, doc) = get_json(
            &format!("{}/api/v2/admin/users?page%5Bsize%5D=100", served.url),
            "users-admin",
        );
        assert_eq!(status, 200);
        doc["data"].as_array().map(Vec::len).unwrap_or(0)
    };
    let before = list_users();
    let run = |admin: bool, name: &str| -> Value {
        let dir = scratch(name);
        let mut args = vec![
            "--target",
            &served.url,
            "--token",
            "users-user",
            "--reports",
            dir.to_str().unwrap(),
            "--group",
            "organization_memberships,teams",
        ];
        if admin {
            args.extend(["--admin-token", "users-admin"]);
        }
        let (out, _) = run_conform(&args);
        serde_json::from_str(
            &std::fs::read_to_string(dir.join("results.json"))
                .unwrap_or_else(|_| panic!("{}", text(&out))),
        )
        .expect("parses")
    };
    let clean = run(true, "users-admin");
    assert_eq!(clean["leftovers"], serde_json::json!([]));
    assert_eq!(list_users(), before, "a clean run left users behind");
    // the administrator users family's users: in the ledger from their create on, and gone
    let dir = scratch("users-sequences");
    let (out, _) = run_conform(&[
        "--target",
        &served.url,
        "--token",
        "users-user",
        "--admin-token",
        "users-admin",
        "--reports",
        dir.to_str().unwrap(),
        "--cases",
        "4",
        "--exact",
        "sequences::admin_users",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let contents = conform::ledger::read(&dir.join("ledger.jsonl")).expect("ledger");
    let users = contents
        .entries
        .iter()
        .filter(|e| {
            e.url
                .as_deref()
                .is_some_and(|u| u.contains("/admin/users/"))
        })
        .count();
    assert!(users > 0, "the family's users are not in the ledger");
    assert!(
        contents.outstanding().is_empty(),
        "{:?}",
        contents.outstanding()
    );
    assert_eq!(list_users(), before, "the family left users behind");
    let without = run(false, "users-noadmin");
    let leftovers = without["leftovers"].to_string();
    assert!(leftovers.contains("user "), "{leftovers}");
    assert!(leftovers.contains("--admin-token"), "{leftovers}");
    assert!(list_users() > before);
}

/// What the run did not make it never changes: against a target, the instance-wide settings
/// updates and the account update are skipped (with the reason) unless
/// `--allow-instance-changes`; with it they change a value, read it back, and leave every
/// setting as it was.
fn instance_wide_settings_change_only_when_allowed_and_are_restored() {
    let (token, admin) = ("instance-token", "instance-admin-token");
    let served = Served::start(token, admin, &[]);
    let settings = [
        "general",
        "cost-estimation",
        "saml",
        "smtp",
        "twilio",
        "customization",
    ];
    let read_all = || -> Vec<Value> {
        let mut docs: Vec<Value> = settings
            .iter()
            .map(|s| get_json(&format!("{}/api/v2/admin/{s}-settings", served.url), admin).1)
            .collect();
        docs.push(get_json(&format!("{}/api/v2/account/details", served.url), token).1);
        docs
    };
    let before = read_all();
    assert!(before.iter().all(|d| d["data"].is_object()), "{before:?}");
    let dir = scratch("instance");
    let reports = dir.to_str().unwrap();
    let ledger = dir.join("ledger.jsonl");
    let common = [
        "--target",
        served.url.as_str(),
        "--token",
        token,
        "--admin-token",
        admin,
        "--group",
        "admin_settings,account",
        "--reports",
        reports,
        "--ledger",
        ledger.to_str().unwrap(),
    ];
    let (out, _) = run_conform(&common);
    let said = text(&out);
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let skipped: Vec<&str> = results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["verdict"] == "skipped")
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in [
        "admin_settings::update_general::api-v2",
        "admin_settings::revoke_old_certificate::bare",
        "admin_settings::verify_twilio::api-v2",
        "account::update::bare",
    ] {
        assert!(skipped.contains(&name), "{name} not skipped:\n{said}");
    }
    assert_eq!(
        read_all(),
        before,
        "a run without the flag changed a setting"
    );
    let mut allowed = common.to_vec();
    allowed.push("--allow-instance-changes");
    let (out, _) = run_conform(&allowed);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let after = read_all();
    // revoke-old-certificate is an action with no way back: the old certificate is gone
    let strip = |docs: Vec<Value>| -> Vec<Value> {
        docs.into_iter()
            .map(|mut d| {
                if let Some(a) = d
                    .pointer_mut("/data/attributes")
                    .and_then(Value::as_object_mut)
                {
                    a.remove("old-idp-cert");
                }
                d
            })
            .collect()
    };
    assert_eq!(
        strip(after),
        strip(before),
        "an instance-wide change was not restored"
    );
}

/// The verdicts of a run's results.json, by test name.
fn verdicts_in(reports: &Path) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(reports.join("results.json")).unwrap_or_default();
    let results: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    results["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t["name"].as_str()?.into(), t["verdict"].as_str()?.into())))
        .collect()
}

/// Issue 30 items 13 and 22: on a server that serves only terraform's cloud block, a given
/// workspace is never changed by a run (its state versions and runs are skipped), and one given
/// with `--scratch` is: the run locks it and runs on it, and gives it back unlocked.
fn a_scratch_workspace_is_run_on_and_given_back_and_a_given_one_is_not_touched() {
    let (token, admin) = ("scratch-token", "scratch-admin-token");
    let served = Served::with_args(&[
        "--shape",
        "cloud-block-only",
        "--token",
        token,
        "--admin-token",
        admin,
    ]);
    let workspace = || {
        let url = format!("{}/api/v2/organizations/acme/workspaces/cloud", served.url);
        get_json(&url, token).1["data"].clone()
    };
    let before = workspace();
    assert_eq!(before["id"], "ws-cloudblockseeded", "{before}");
    let dir = scratch("scratch-workspace");
    // at tfe: an apply's effect is observed there (the spec names no state after it)
    let run = |flag: &str, name: &str| {
        let reports = dir.join(name);
        let ledger = dir.join(format!("{name}.jsonl"));
        let (out, _) = run_conform(&[
            "--profile",
            "tfe",
            "--target",
            served.url.as_str(),
            "--token",
            token,
            "--admin-token",
            admin,
            "--organization",
            "acme",
            flag,
            "workspace=ws-cloudblockseeded",
            "--group",
            "state_versions,runs",
            "--reports",
            reports.to_str().unwrap(),
            "--ledger",
            ledger.to_str().unwrap(),
        ]);
        (text(&out), verdicts_in(&reports))
    };
    // a scratch workspace the run makes nothing in holds nothing of the run's: no leftover
    // (the server refuses to unlock a workspace that is not locked)
    let nothing = dir.join("nothing");
    let (out, _) = run_conform(&[
        "--target",
        served.url.as_str(),
        "--token",
        token,
        "--organization",
        "acme",
        "--scratch",
        "workspace=ws-cloudblockseeded",
        "--group",
        "account",
        "--reports",
        nothing.to_str().unwrap(),
        "--ledger",
        dir.join("nothing.jsonl").to_str().unwrap(),
    ]);
    assert!(!text(&out).contains("still held"), "{}", text(&out));
    let (said, given) = run("--fixture", "given");
    assert!(
        said.contains("--fixture workspace=ws-cloudblockseeded is taken as given"),
        "{said}"
    );
    for test in [
        "state_versions::show::bare",
        "state_versions::create::api-v2",
        "runs::create::api-v2",
    ] {
        assert_eq!(
            given.get(test).map(String::as_str),
            Some("skipped"),
            "{said}"
        );
    }
    assert_eq!(
        workspace(),
        before,
        "a run changed a workspace it was given"
    );
    let (said, scratch) = run("--scratch", "scratch");
    // a state version's create works inside the scratch workspace: each state it sends has
    // a serial above the last, and its test runs alone there
    for test in [
        "state_versions::show::bare",
        "state_versions::create::api-v2",
        "state_versions::current::api-v2",
        "runs::create::api-v2",
        "runs::apply::bare",
    ] {
        assert_eq!(
            scratch.get(test).map(String::as_str),
            Some("pass"),
            "{test}: {said}"
        );
    }
    // nothing is blocked on the workspace whose show is absent (only the comments, whose
    // create the cloud block lacks)
    let blocked: Vec<&String> = scratch
        .iter()
        .filter(|(name, v)| *v == "blocked" && !name.starts_with("runs::show_comment"))
        .map(|(name, _)| name)
        .collect();
    assert!(blocked.is_empty(), "{blocked:?}: {said}");
    let after = workspace();
    assert_eq!(
        after["attributes"]["locked"], false,
        "left locked: {after}\n{said}"
    );
    assert!(
        after["relationships"]["current-state-version"]["data"].is_object(),
        "the scratch workspace holds the run's state: {after}"
    );
}

/// Issue 41 item 6 (a cloud-block backend's triage): a scratch workspace someone else has locked
/// is theirs. The run's own lock answers "already locked" (409 here, 423 on some cloud-block backends), so
/// it pushes no state under that lock, and at the end it does not unlock what it never locked.
fn a_scratch_workspace_someone_else_locked_is_neither_pushed_to_nor_unlocked() {
    let token = "held-scratch-token";
    let served = Served::with_args(&["--shape", "cloud-block-only", "--token", token]);
    let lock = format!(
        "{}/api/v2/workspaces/ws-cloudblockseeded/actions/lock",
        served.url
    );
    let (status, _) = send_json(reqwest::Method::POST, &lock, token);
    assert_eq!(status, 200, "the other caller's lock");
    let dir = scratch("someone-elses-lock");
    let reports = dir.join("r");
    let (out, _) = run_conform(&[
        "--target",
        served.url.as_str(),
        "--token",
        token,
        "--organization",
        "acme",
        "--scratch",
        "workspace=ws-cloudblockseeded",
        "--group",
        "state_versions",
        "--reports",
        reports.to_str().unwrap(),
        "--ledger",
        dir.join("r.jsonl").to_str().unwrap(),
    ]);
    let said = text(&out);
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join("results.json")).unwrap_or_default(),
    )
    .unwrap_or_else(|_| panic!("{said}"));
    let create = results["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "state_versions::create::api-v2")
        .cloned()
        .unwrap_or_else(|| panic!("{said}"));
    assert_ne!(create["verdict"], "pass", "{create}");
    let reason = create["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("held by someone else"), "{reason}");
    let show = format!("{}/api/v2/organizations/acme/workspaces/cloud", served.url);
    let after = get_json(&show, token).1["data"].clone();
    assert_eq!(
        after["attributes"]["locked"], true,
        "unlocked: {after}\n{said}"
    );
    assert!(
        after["relationships"]["current-state-version"]["data"].is_null(),
        "state pushed under another's lock: {after}"
    );
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        every_payload_names_what_it_makes_with_the_run_prefix,
        a_killed_run_is_swept_clean_from_its_ledger,
        sweep_reports_what_it_cannot_delete_and_goes_on,
        the_guard_refuses_a_mutation_on_a_resource_the_run_did_not_create,
        read_only_sends_nothing_but_reads,
        a_target_that_rate_limits_its_first_requests_passes_with_throttling_reported,
        a_target_that_rate_limits_forever_gets_a_clear_verdict_within_the_deadline,
        a_deadline_ends_unfinished_tests_as_errors_and_teardown_still_runs,
        a_redirect_never_carries_the_token_to_another_origin,
        a_canary_token_appears_nowhere_in_output_reports_or_ledger,
        older_than_finds_the_debris_of_runs_whose_ledger_is_gone,
        printed_curl_lines_reproduce_when_pasted_into_a_shell,
        a_skipped_sequence_family_says_ignored,
        a_run_at_the_servers_rate_is_never_refused,
        debris_behind_a_missing_delete_route_is_reported_not_counted_deleted,
        a_show_route_never_seen_answering_proves_no_delete_in_teardown,
        users_an_invitation_made_are_deleted_or_reported,
        instance_wide_settings_change_only_when_allowed_and_are_restored,
        a_scratch_workspace_is_run_on_and_given_back_and_a_given_one_is_not_touched,
        a_scratch_workspace_someone_else_locked_is_neither_pushed_to_nor_unlocked
    ]
}
