//! `conform proxy`: real requests through the proxy to the reference give a report with
//! per-endpoint verdicts and coverage; through a reference fault, the deviation is reported.

use crate::harness;
use crate::support;

use crate::support::processes::stop_proxy;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

const TOKEN: &str = "proxy-test-token";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("conform-proxy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Starts `conform proxy` in front of `target`; answers the child and the proxy's root URL.
fn start_proxy(target: &str, reports: &Path, profile: &str) -> (Child, String) {
    start_proxy_with(target, reports, profile, &[])
}

fn start_proxy_with(
    target: &str,
    reports: &Path,
    profile: &str,
    extra: &[&str],
) -> (Child, String) {
    let mut args = vec!["--profile", profile];
    args.extend_from_slice(extra);
    support::processes::start_proxy(target, reports, &args)
}

/// A short client session through the proxy: an organization made, shown, updated and
/// listed, a workspace, a configuration version uploaded through the rewritten address, an
/// unknown route.
async fn session(proxy: &str) -> Vec<(String, u16)> {
    let client = reqwest::Client::new();
    let mut seen = Vec::new();
    let jsonapi = "application/vnd.api+json";
    let send = |method: reqwest::Method, path: &str, body: Option<Value>| {
        let mut req = client
            .request(method, format!("{proxy}{path}"))
            .bearer_auth(TOKEN)
            .header("accept", jsonapi);
        if let Some(b) = body {
            req = req.header("content-type", jsonapi).body(b.to_string());
        }
        req.send()
    };
    let org = "proxy-org";
    let r = send(
        reqwest::Method::POST,
        "/api/v2/organizations",
        Some(json!({"data":{"type":"organizations","attributes":{"name":org,"email":"proxy@example.com"}}})),
    )
    .await
    .expect("create");
    seen.push(("create".into(), r.status().as_u16()));
    let r = send(
        reqwest::Method::GET,
        &format!("/api/v2/organizations/{org}"),
        None,
    )
    .await
    .expect("show");
    seen.push(("show".into(), r.status().as_u16()));
    let r = send(reqwest::Method::GET, &format!("/organizations/{org}"), None)
        .await
        .expect("show bare");
    seen.push(("show bare".into(), r.status().as_u16()));
    let r = send(
        reqwest::Method::PATCH,
        &format!("/api/v2/organizations/{org}"),
        Some(json!({"data":{"type":"organizations","attributes":{"email":"proxy2@example.com"}}})),
    )
    .await
    .expect("update");
    seen.push(("update".into(), r.status().as_u16()));
    let r = send(
        reqwest::Method::GET,
        "/api/v2/organizations?page%5Bsize%5D=5",
        None,
    )
    .await
    .expect("list");
    seen.push(("list".into(), r.status().as_u16()));
    let r = send(
        reqwest::Method::POST,
        &format!("/api/v2/organizations/{org}/workspaces"),
        Some(json!({"data":{"type":"workspaces","attributes":{"name":"proxy-ws"}}})),
    )
    .await
    .expect("workspace");
    let ws: Value = r.json().await.expect("workspace JSON");
    let ws = ws["data"]["id"].as_str().expect("workspace id").to_string();
    let r = send(
        reqwest::Method::POST,
        &format!("/api/v2/workspaces/{ws}/configuration-versions"),
        Some(json!({"data":{"type":"configuration-versions","attributes":{"auto-queue-runs":false}}})),
    )
    .await
    .expect("configuration version");
    let cv: Value = r.json().await.expect("cv JSON");
    let upload = cv["data"]["attributes"]["upload-url"]
        .as_str()
        .expect("upload-url")
        .to_string();
    assert!(
        upload.starts_with(proxy),
        "the upload address {upload} passes through the proxy {proxy}"
    );
    let r = client
        .put(&upload)
        .header("content-type", "application/octet-stream")
        .body(conform::tarball::config_tarball())
        .send()
        .await
        .expect("upload");
    seen.push(("upload".into(), r.status().as_u16()));
    let r = send(reqwest::Method::GET, "/api/v2/no-such-route", None)
        .await
        .expect("unknown");
    seen.push(("unknown".into(), r.status().as_u16()));
    seen
}

fn entry<'a>(results: &'a Value, test: &str) -> &'a Value {
    results["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["test"] == test)
        .unwrap_or_else(|| panic!("no entry {test} in {results:#}"))
}

/// A reference with `faults` and a `conform proxy` at `profile` in front of it, writing its
/// reports to a fresh folder named after `name`.
struct Behind {
    runtime: tokio::runtime::Runtime,
    reference: conform_reference::Running,
    dir: PathBuf,
    child: Child,
    proxy: String,
}

fn behind_proxy(faults: &[&str], profile: &str, name: &str) -> Behind {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let config = conform_reference::Config {
        token: TOKEN.into(),
        faults: faults.iter().map(|f| f.parse().expect("fault")).collect(),
        ..Default::default()
    };
    let reference = runtime
        .block_on(conform_reference::start(config))
        .expect("reference");
    let dir = temp_dir(name);
    let (child, proxy) = start_proxy(&reference.root_url(), &dir, profile);
    Behind {
        runtime,
        reference,
        dir,
        child,
        proxy,
    }
}

fn run(faults: &[&str], profile: &str, name: &str) -> (Value, String, Vec<(String, u16)>) {
    let Behind {
        runtime,
        reference,
        dir,
        child,
        proxy,
    } = behind_proxy(faults, profile, name);
    let seen = runtime.block_on(session(&proxy));
    let stderr = stop_proxy(child);
    runtime.block_on(async { reference.shutdown() });
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
    )
    .expect("results JSON");
    let summary = std::fs::read_to_string(dir.join("summary.md")).expect("summary.md");
    assert!(
        !summary.contains(TOKEN) && !results.to_string().contains(TOKEN),
        "the token is redacted"
    );
    assert!(!stderr.contains(TOKEN));
    let _ = std::fs::remove_dir_all(&dir);
    (results, summary, seen)
}

fn traffic_through_the_proxy_is_judged_per_endpoint_with_coverage() {
    let (results, summary, seen) = run(&[], "tfe", "clean");
    for (what, status) in &seen {
        if what != "unknown" {
            assert!((200..300).contains(status), "{what} answered {status}");
        }
    }
    assert_eq!(results["failing_deviations"], 0, "{results:#}");
    let create = entry(&results, "organizations::create::api-v2");
    assert_eq!(create["count"], 1);
    assert_eq!(create["verdict"], "pass");
    for check in [
        "envelope.single",
        "create.returns-id",
        "json.body",
        "transport.no-5xx",
        "tfe.status-code",
        "tfe.media-type",
    ] {
        assert_eq!(create["held"][check], 1, "{check} held: {create:#}");
    }
    // Both path forms are entries of their own.
    assert_eq!(
        entry(&results, "organizations::show::api-v2")["held"]["show.same-id"],
        1
    );
    assert_eq!(entry(&results, "organizations::show::bare")["count"], 1);
    assert_eq!(
        entry(&results, "organizations::update::api-v2")["held"]["update.same-id"],
        1
    );
    assert_eq!(
        entry(&results, "organizations::list::api-v2")["held"]["tfe.pagination-meta"],
        1
    );
    assert_eq!(
        entry(&results, "configuration_versions::create::api-v2")["held"]["upload.url-form"],
        1
    );
    assert_eq!(
        entry(&results, "configuration_versions::upload::upload")["count"],
        1
    );
    // What no documented endpoint matches, and coverage.
    let unmatched: Vec<&str> = results["unmatched"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["request"].as_str())
        .collect();
    assert!(unmatched.contains(&"GET /no-such-route"), "{unmatched:?}");
    let never: Vec<&str> = results["coverage"]["never_touched"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(never.contains(&"runs::apply"));
    assert!(!never.contains(&"organizations::create"));
    assert!(summary.contains("Never touched"));
    assert!(summary.contains("`organizations::create` | api-v2 | 1 | pass"));
}

fn a_reference_fault_is_reported_as_a_deviation() {
    // Core: a list answered as an object breaks the list envelope.
    let (results, summary, _) = run(&["list-as-object"], "core", "fault");
    let list = entry(&results, "organizations::list::api-v2");
    assert_eq!(list["verdict"], "fail", "{list:#}");
    let deviations = list["deviations"].as_array().unwrap();
    let envelope = deviations
        .iter()
        .find(|d| d["check"] == "envelope.list")
        .expect("envelope.list deviates");
    assert_eq!(envelope["fails"], true);
    assert_eq!(envelope["count"], 1);
    let example = &envelope["examples"][0]["exchange"];
    assert!(example["request"]["url"]
        .as_str()
        .unwrap()
        .contains("/api/v2/organizations?"));
    assert_eq!(
        example["request"]["headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h[0] == "authorization")
            .map(|h| h[1].clone()),
        Some(json!("(redacted)"))
    );
    assert_eq!(example["response"]["status"], 200);
    // The other endpoints are unaffected.
    assert_eq!(
        entry(&results, "organizations::create::api-v2")["verdict"],
        "pass"
    );
    assert_eq!(results["failing_deviations"], 1);
    assert!(summary.contains("`envelope.list` (core, 1x)"), "{summary}");
}

fn a_tfe_deviation_is_reported_but_fails_only_at_the_tfe_profile() {
    let (results, _, _) = run(&["plain-json-media-type"], "core", "media");
    let show = entry(&results, "organizations::show::api-v2");
    let media = show["deviations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["check"] == "tfe.media-type")
        .expect("tfe.media-type deviates");
    assert_eq!(media["level"], "tfe");
    assert_eq!(media["fails"], false);
    assert_eq!(show["verdict"], "pass");
}

/// The project's Python with pytfe, or `None` (skip) outside CI.
fn pytfe_python() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let python = root.join(".venv/bin/python");
    let ready = python.is_file()
        && Command::new(&python)
            .args(["-c", "import pytfe"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if ready {
        return Ok(python);
    }
    assert!(
        !harness::in_ci(),
        "{} with pytfe is missing; .ci/run makes it from clients/requirements.txt",
        python.display()
    );
    Err(format!(
        "skipped: {} with pytfe is missing (outside CI); make it with `python3 -m venv .venv && .venv/bin/pip install -r clients/requirements.txt`",
        python.display()
    ))
}

/// Runs the pytfe session through a proxy in front of the reference with `faults`.
fn pytfe_through_proxy(python: &Path, faults: &[&str], profile: &str, name: &str) -> Value {
    let Behind {
        runtime,
        reference,
        dir,
        child,
        proxy,
    } = behind_proxy(faults, profile, name);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pytfe_session.py");
    let out = Command::new(python)
        .arg(script)
        .env("TFE_ADDRESS", &proxy)
        .env("TFE_TOKEN", TOKEN)
        .output()
        .expect("python runs");
    let stderr = stop_proxy(child);
    runtime.block_on(async { reference.shutdown() });
    assert!(
        out.status.success(),
        "the pytfe session failed:\n{}\n{}\n{stderr}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    assert!(!text.contains(TOKEN), "the token is redacted");
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&text).expect("results JSON")
}

fn a_pytfe_session_through_the_proxy_is_judged_and_a_fault_reported(python: PathBuf) {
    let clean = pytfe_through_proxy(&python, &[], "tfe", "pytfe-clean");
    assert_eq!(clean["failing_deviations"], 0, "{clean:#}");
    for test in [
        "organizations::create::api-v2",
        "organizations::show::api-v2",
        "organizations::update::api-v2",
        "organizations::list::api-v2",
        "organizations::delete::api-v2",
    ] {
        assert_eq!(entry(&clean, test)["verdict"], "pass", "{test}");
    }
    assert!(clean["coverage"]["endpoints_touched"].as_u64().unwrap() >= 5);
    // The same session against a reference whose creates answer 200: TFE's 201 deviates.
    let faulty = pytfe_through_proxy(&python, &["wrong-status"], "tfe", "pytfe-fault");
    let create = entry(&faulty, "organizations::create::api-v2");
    assert_eq!(create["verdict"], "fail", "{create:#}");
    assert!(create["deviations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["check"] == "tfe.status-code" && d["fails"] == true));
}

fn an_answer_over_the_cap_streams_through_whole_and_unjudged() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let config = conform_reference::Config {
        token: TOKEN.into(),
        ..Default::default()
    };
    let reference = runtime
        .block_on(conform_reference::start(config))
        .expect("reference");
    let dir = temp_dir("cap");
    let (child, proxy) =
        start_proxy_with(&reference.root_url(), &dir, "core", &["--max-body", "64"]);
    let body = runtime.block_on(async {
        reqwest::Client::new()
            .get(format!("{proxy}/api/v2/organizations"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("list")
            .text()
            .await
            .expect("body")
    });
    stop_proxy(child);
    runtime.block_on(async { reference.shutdown() });
    let doc: Value = serde_json::from_str(&body).expect("the whole answer came through");
    assert!(doc["data"].is_array());
    assert!(body.len() > 64);
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let list = entry(&results, "organizations::list::api-v2");
    assert_eq!(list["verdict"], "pass");
    assert!(list["held"].get("json.body").is_none(), "{list:#}");
    assert_eq!(list["held"]["transport.no-5xx"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// This file's tests.
pub fn tests() -> Vec<harness::Test> {
    vec![
        harness::test(
            "traffic_through_the_proxy_is_judged_per_endpoint_with_coverage",
            traffic_through_the_proxy_is_judged_per_endpoint_with_coverage,
        ),
        harness::test(
            "a_reference_fault_is_reported_as_a_deviation",
            a_reference_fault_is_reported_as_a_deviation,
        ),
        harness::test(
            "a_tfe_deviation_is_reported_but_fails_only_at_the_tfe_profile",
            a_tfe_deviation_is_reported_but_fails_only_at_the_tfe_profile,
        ),
        harness::test(
            "an_answer_over_the_cap_streams_through_whole_and_unjudged",
            an_answer_over_the_cap_streams_through_whole_and_unjudged,
        ),
        harness::needing(
            "a_pytfe_session_through_the_proxy_is_judged_and_a_fault_reported",
            pytfe_python,
            a_pytfe_session_through_the_proxy_is_judged_and_a_fault_reported,
        ),
    ]
}
