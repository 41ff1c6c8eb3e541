//! Waivers, sharding and the report files, through the real binary against the embedded
//! reference service with faults: the formats agree on every verdict, the HTML renders and
//! filters in a real headless browser, and no token reaches any output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness;

const BIN: &str = env!("CARGO_BIN_EXE_conform");
const SHOW: &str = "drop-route=GET /runs/:run_id";
const AUDIT: &str = "drop-route=GET /organization/audit-trail";

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reports-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Runs `conform` in `dir` (so no stray conform.toml is read), reports into `dir/reports`.
fn conform(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .arg("--reports")
        .arg(dir.join("reports"))
        .env("CI", "true")
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .env_remove("TFE_TOKEN")
        .env_remove("TFE_ADDRESS")
        .env_remove("CONFORM_TARGET")
        .output()
        .expect("conform runs")
}

fn faults(list: &[&str]) -> Vec<String> {
    list.iter()
        .flat_map(|f| ["--reference-fault".to_string(), f.to_string()])
        .collect()
}

fn run_faulted(dir: &Path, extra: &[&str]) -> Output {
    let mut args = faults(&[SHOW, AUDIT]);
    args.extend(["--group", "runs,audit_trail,organizations"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    conform(dir, &refs)
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn results_json(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("reports/results.json")).expect("results.json");
    serde_json::from_str(&text).expect("results.json is JSON")
}

fn verdicts_json(doc: &Value) -> BTreeMap<String, String> {
    doc["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).expect("write");
    path.display().to_string()
}

const VERDICTS: [&str; 7] = [
    "pass",
    "fail",
    "blocked",
    "unsupported",
    "skipped",
    "waived",
    "error",
];

fn count(map: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = VERDICTS.iter().map(|v| (v.to_string(), 0)).collect();
    for v in map.values() {
        *out.entry(v.clone()).or_default() += 1;
    }
    out
}

/// Per test verdicts from JUnit: failure, error, skipped type=..., else pass.
fn verdicts_junit(xml: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for case in xml.split("<testcase").skip(1) {
        let name = attr(case, "name").expect("testcase name");
        let verdict = if case.contains("<failure") {
            "fail".to_string()
        } else if case.contains("<error") {
            "error".to_string()
        } else if let Some(i) = case.find("<skipped") {
            attr(&case[i..], "type").expect("skipped type")
        } else {
            "pass".to_string()
        };
        out.insert(name, verdict);
    }
    out
}

/// Per test verdicts and visibility from the HTML's `tr.t` rows.
fn rows_html(html: &str) -> Vec<(String, String, String, bool)> {
    html.split("<tr class=\"t\"")
        .skip(1)
        .map(|row| {
            let tag = &row[..row.find('>').expect("tag end")];
            (
                attr(tag, "data-name").expect("name"),
                attr(tag, "data-group").expect("group"),
                attr(tag, "data-verdict").expect("verdict"),
                tag.contains(" hidden"),
            )
        })
        .collect()
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(
        tag[start..end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&#39;", "'")
            .replace("&amp;", "&"),
    )
}

/// The `| **total** | **n** | …` row of summary.md.
fn totals_md(md: &str) -> Vec<usize> {
    let row = md
        .lines()
        .find(|l| l.starts_with("| **total** |"))
        .expect("total row");
    row.split('|')
        .skip(2)
        .filter_map(|c| c.trim().trim_matches('*').parse().ok())
        .collect()
}

/// The console's `total` row.
fn totals_console(stdout: &str) -> Vec<usize> {
    let row = stdout
        .lines()
        .find(|l| l.starts_with("total "))
        .expect("console total row");
    row.split_whitespace()
        .skip(1)
        .map(|n| n.parse().expect("number"))
        .collect()
}

fn every_format_states_the_same_verdicts() {
    let dir = scratch("same-verdicts");
    let waivers = write(
        &dir,
        "waivers.toml",
        "[[waiver]]\ntest = \"runs::show::api-v2\"\nreason = \"tracked\"\nlink = \"https://example.com/issues/1\"\nexpires = \"2999-12-31\"\n",
    );
    let out = run_faulted(&dir, &["--waivers", &waivers]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    let doc = results_json(&dir);
    let json = verdicts_json(&doc);
    let counts = count(&json);
    for v in ["pass", "fail", "unsupported", "waived"] {
        assert!(counts[v] > 0, "no {v} test: {counts:?}");
    }
    for v in VERDICTS {
        assert_eq!(doc["counts"][v].as_u64(), Some(counts[v] as u64), "{v}");
    }
    assert_eq!(doc["figures"]["tests"].as_u64(), Some(json.len() as u64));

    let junit = std::fs::read_to_string(dir.join("reports/junit.xml")).expect("junit");
    assert_eq!(verdicts_junit(&junit), json, "JUnit and JSON disagree");

    let html = std::fs::read_to_string(dir.join("reports/report.html")).expect("html");
    let rows: BTreeMap<String, String> = rows_html(&html)
        .into_iter()
        .map(|(n, _, v, _)| (n, v))
        .collect();
    assert_eq!(rows, json, "HTML and JSON disagree");
    for v in VERDICTS {
        assert!(
            html.contains(&format!("data-total=\"{v}\">{}<", counts[v])),
            "HTML total of {v}"
        );
    }

    let expected: Vec<usize> = VERDICTS.iter().map(|v| counts[*v]).collect();
    let md = std::fs::read_to_string(dir.join("reports/summary.md")).expect("md");
    assert_eq!(totals_md(&md), expected, "summary.md totals\n{md}");
    for name in json.iter().filter(|(_, v)| *v == "fail").map(|(n, _)| n) {
        assert!(
            md.contains(&format!("### `{name}`")),
            "{name} not in summary.md"
        );
    }
    assert!(md.contains("Profile **core**"), "{md}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(totals_console(&stdout), expected, "console totals");

    // The JSON carries what a tool needs per test.
    let failing = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "runs::show::bare")
        .expect("runs::show::bare");
    assert_eq!(failing["verdict"], "fail");
    let check = &failing["failed_checks"][0];
    assert_eq!(check["id"], "endpoint.exists");
    assert_eq!(check["level"], "core");
    assert!(check["message"].as_str().unwrap().contains("404"));
    assert!(check["evidence"]
        .as_str()
        .unwrap()
        .contains("response: 404"));
    assert!(failing["requests"].as_u64().unwrap() >= 1);
    assert!(failing["duration_ms"].as_f64().is_some());
    let passing = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["verdict"] == "pass")
        .expect("a passing test");
    assert!(!passing["passed_checks"].as_array().unwrap().is_empty());
    assert_eq!(doc["config"]["token"], "(redacted)");
    assert!(doc["figures"]["requests"].as_u64().unwrap() > 0);

    // JUnit as CI reads it: the totals on <testsuites>, the skipped count on each suite, and
    // a failure's whole finding (check, message, evidence) in the <failure> element's body.
    let suites = junit_parser::from_reader(junit.as_bytes()).expect("a JUnit parser reads it");
    assert_eq!(suites.tests, json.len() as u64);
    assert_eq!(suites.failures, counts["fail"] as u64);
    assert_eq!(suites.errors, counts["error"] as u64);
    assert!(suites.time > 0.0, "{}", suites.time);
    let skipped: u64 = suites.suites.iter().map(|s| s.skipped).sum();
    let not_run = ["blocked", "unsupported", "skipped", "waived"];
    assert_eq!(
        skipped,
        not_run.iter().map(|v| counts[*v] as u64).sum::<u64>()
    );
    let case = suites
        .suites
        .iter()
        .flat_map(|s| &s.cases)
        .find(|c| c.original_name == "runs::show::bare")
        .expect("runs::show::bare in junit.xml");
    assert!(case.status.is_failure(), "{:?}", case.status);
    let failure = case.status.failure_as_ref();
    let message = check["message"].as_str().unwrap();
    assert!(
        failure.message.starts_with("endpoint.exists: ") && !failure.message.contains('\n'),
        "{}",
        failure.message
    );
    assert!(
        !failure.text.trim().is_empty(),
        "the failure's body is empty"
    );
    for part in [
        "endpoint.exists",
        message,
        "response: 404",
        "reproduce: curl",
    ] {
        assert!(
            failure.text.contains(part),
            "{part} not in {}",
            failure.text
        );
    }
}

fn waivers_waive_until_they_expire_and_stale_ones_are_reported() {
    let dir = scratch("waivers");
    let waivers = write(
        &dir,
        "waivers.toml",
        r#"
[[waiver]]
test = "runs::show::api-v2"
reason = "staging lacks it"
link = "https://example.com/issues/7"
expires = "2999-12-31"

[[waiver]]
test = "runs::show::bare"
reason = "was fixed long ago"
link = "https://example.com/issues/8"
expires = "2001-01-01"

[[waiver]]
test = "nothing::*::bare"
reason = "a typo"
expires = "2999-12-31"

[[waiver]]
test = "organizations::*"
reason = "nothing fails there"
expires = "2999-12-31"
"#,
    );
    let out = run_faulted(&dir, &["--waivers", &waivers]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc = results_json(&dir);
    let test = |name: &str| {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing"))
    };
    let waived = test("runs::show::api-v2");
    assert_eq!(waived["verdict"], "waived");
    let reason = waived["reason"].as_str().unwrap();
    assert!(
        reason.contains("2999-12-31") && reason.contains("https://example.com/issues/7"),
        "{reason}"
    );
    assert_eq!(waived["failed_checks"][0]["id"], "endpoint.exists");
    let expired = test("runs::show::bare");
    assert_eq!(expired["verdict"], "fail");
    assert!(
        expired["reason"]
            .as_str()
            .unwrap()
            .contains("expired on 2001-01-01"),
        "{expired}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("waiver `nothing::*::bare`") && stderr.contains("matches no test"),
        "{stderr}"
    );
    assert!(
        stderr.contains("waiver `organizations::*`") && stderr.contains("none of which failed"),
        "{stderr}"
    );
    assert!(stderr.contains("expired on 2001-01-01"), "{stderr}");
    let warnings = doc["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 3, "{warnings:?}");

    // Narrowed to a check, a waiver leaves other failures of the same tests failing; a
    // waiver over every failure makes the run pass.
    let narrow = write(
        &dir,
        "narrow.toml",
        "[[waiver]]\ntest = \"runs::*\"\nreason = \"r\"\nexpires = \"2999-12-31\"\nchecks = [\"create.then-show\"]\n[[waiver]]\ntest = \"audit_trail::*\"\nreason = \"r\"\nexpires = \"2999-12-31\"\n",
    );
    let out = run_faulted(&dir, &["--waivers", &narrow]);
    let verdicts = verdicts_json(&results_json(&dir));
    assert_eq!(
        verdicts["runs::show::bare"], "fail",
        "endpoint.exists is not waived"
    );
    assert_eq!(out.status.code(), Some(1));
    let all = write(
        &dir,
        "all.toml",
        "[[waiver]]\ntest = \"runs::*\"\nreason = \"r\"\nlink = \"https://example.com/1\"\nexpires = \"2999-12-31\"\n",
    );
    let out = run_faulted(&dir, &["--waivers", &all]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let counts = count(&verdicts_json(&results_json(&dir)));
    assert_eq!(counts["fail"], 0);
    // the two runs::show tests (runs::create, whose show is that absent route, is observed
    // in its list instead)
    assert!(counts["waived"] >= 2, "{counts:?}");
}

fn bad_waivers_and_partitions_stop_the_run_before_any_request() {
    let dir = scratch("bad-config");
    let cases = [
        ("[[waiver]]\ntest = \"runs::*\"\nreason = \"r\"\nexpires = \"2025-02-30\"\n", "2025-02-30"),
        ("[[waiver]]\ntest = \"runs::*\"\nreason = \"r\"\nexpires = \"31.12.2099\"\n", "YYYY-MM-DD"),
        ("[[waiver]]\ntest = \"runs show\"\nreason = \"r\"\nexpires = \"2099-12-31\"\n", "pattern"),
        ("[[waiver]]\ntest = \"runs::[a-z]\"\nreason = \"r\"\nexpires = \"2099-12-31\"\n", "pattern"),
        ("[[waiver]]\ntest = \"runs::*\"\nexpires = \"2099-12-31\"\n", "reason"),
        ("[[waiver]]\ntest = \"runs::*\"\nreason = \"r\"\nexpires = \"2099-12-31\"\nexpiry = \"x\"\n", "expiry"),
        ("[[waiver]]\ntest = \"runs::*\"\nreason = \"r\"\nexpires = \"2099-12-31\"\nchecks = [\"no.such\"]\n", "no.such"),
        ("not toml [", "waiver file"),
    ];
    // An unreachable target: a run that got as far as a request would say so instead.
    for (i, (body, says)) in cases.iter().enumerate() {
        let file = write(&dir, &format!("w{i}.toml"), body);
        let out = conform(
            &dir,
            &["--target", "http://127.0.0.1:9", "--waivers", &file],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{body}\n{}", text(&out));
        assert!(stderr.contains(says), "{body}: {stderr}");
        assert!(!stderr.contains("cannot reach"), "{stderr}");
    }
    let out = conform(&dir, &["--waivers", "/no/such/waivers.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    for bad in [
        "hash:0/3",
        "hash:4/3",
        "hash:1/0",
        "hash:1",
        "slice:1/2",
        "1/2",
        "hash:x/2",
    ] {
        let out = conform(
            &dir,
            &["--target", "http://127.0.0.1:9", "--partition", bad],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}\n{}", text(&out));
        assert!(stderr.contains("--partition"), "{bad}: {stderr}");
    }
    assert!(
        !dir.join("reports").exists(),
        "a refused run writes no report"
    );
}

fn listed(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["--list"];
    args.extend(extra);
    let out = conform(dir, &args);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

fn partitions_split_the_tests_deterministically() {
    let dir = scratch("partition");
    let all = listed(&dir, &[]);
    assert!(all.len() > 300, "{}", all.len());
    for kind in ["hash", "count"] {
        let mut union = Vec::new();
        for m in 1..=3 {
            let spec = format!("{kind}:{m}/3");
            let shard = listed(&dir, &["--partition", &spec]);
            assert!(
                shard.len() > all.len() / 5 && shard.len() < all.len() / 2,
                "{spec}: {} of {}",
                shard.len(),
                all.len()
            );
            assert_eq!(
                shard,
                listed(&dir, &["--partition", &spec]),
                "{spec} is stable"
            );
            union.extend(shard);
        }
        union.sort();
        let mut expected = all.clone();
        expected.sort();
        assert_eq!(
            union, expected,
            "{kind}: the shards cover every test exactly once"
        );
    }
    // A shard runs, and says which it is.
    let out = conform(&dir, &["--group", "runs", "--partition", "hash:2/2"]);
    assert!(out.status.success(), "{}", text(&out));
    let doc = results_json(&dir);
    let partition = doc["config"]["partition"].as_str().unwrap();
    assert!(partition.starts_with("hash:2/2: "), "{partition}");
    let ran: Vec<String> = verdicts_json(&doc).into_keys().collect();
    let expected: Vec<String> = listed(&dir, &["--group", "runs", "--partition", "hash:2/2"]);
    assert_eq!(ran, expected);
}

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Loads a page in headless chromium and returns the DOM after its scripts ran.
fn dump_dom(chromium: &Path, profile: &Path, url: &str) -> String {
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("chromium output");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Chromium, or why the report.html check cannot run here (in CI its absence fails).
fn chromium() -> Result<PathBuf, String> {
    match find_chromium() {
        Some(chromium) => Ok(chromium),
        None if harness::in_ci() => panic!(
            "chromium is not installed but CI is set: .ci/run installs it (apt-get install chromium)"
        ),
        None => Err(
            "skipped: the headless-browser check of report.html needs chromium (apt-get install chromium); CI runs it"
                .into(),
        ),
    }
}

/// report.html renders in headless chromium, and its filters show what they say.
fn the_html_report_renders_and_filters_in_headless_chromium(chromium: PathBuf) {
    let chromium = chromium.as_path();
    let dir = scratch("html");
    let out = run_faulted(&dir, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let json = verdicts_json(&results_json(&dir));
    let html_path = dir.join("reports/report.html");
    let html = std::fs::read_to_string(&html_path).expect("html");
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("@import"),
        "the report must not load external assets"
    );
    let page = url::Url::from_file_path(&html_path).expect("file URL");
    let profile = dir.join("chromium-profile");
    let visible = |hash: &str| -> (Vec<(String, String, String, bool)>, String) {
        let dom = dump_dom(chromium, &profile, &format!("{page}{hash}"));
        assert!(
            dom.contains("data-ready=\"true\""),
            "the page's script did not run for {hash}:\n{}",
            &dom[..dom.len().min(2000)]
        );
        let shown = dom
            .split("id=\"shown\">")
            .nth(1)
            .and_then(|s| s.split('<').next())
            .unwrap_or("")
            .to_string();
        (rows_html(&dom), shown)
    };

    // Unfiltered: every test, nothing hidden, and the failing tests' transcripts are there.
    let (rows, shown) = visible("");
    assert_eq!(rows.len(), json.len());
    assert!(
        rows.iter().all(|r| !r.3),
        "nothing is hidden without a filter"
    );
    assert_eq!(shown, json.len().to_string());

    for (hash, keep) in [
        (
            "#verdict=fail",
            &(|_: &str, v: &str| v == "fail") as &dyn Fn(&str, &str) -> bool,
        ),
        ("#group=audit_trail", &|g: &str, _: &str| g == "audit_trail"),
        ("#group=runs&verdict=pass", &|g: &str, v: &str| {
            g == "runs" && v == "pass"
        }),
        ("#verdict=fail,unsupported", &|_: &str, v: &str| {
            v == "fail" || v == "unsupported"
        }),
    ] {
        let (rows, shown) = visible(hash);
        let expected: Vec<&String> = rows
            .iter()
            .filter(|(_, g, v, _)| keep(g, v))
            .map(|r| &r.0)
            .collect();
        let shown_rows: Vec<&String> = rows.iter().filter(|r| !r.3).map(|r| &r.0).collect();
        assert!(!expected.is_empty(), "{hash} selects nothing");
        assert!(expected.len() < rows.len(), "{hash} hides nothing");
        assert_eq!(shown_rows, expected, "{hash}");
        assert_eq!(shown, expected.len().to_string(), "{hash}: the shown count");
    }

    // A whole name, as the root causes link it, shows that test alone.
    let (rows, shown) = visible("#q=runs::show::bare");
    let shown_rows: Vec<&str> = rows.iter().filter(|r| !r.3).map(|r| r.0.as_str()).collect();
    assert_eq!(shown_rows, ["runs::show::bare"]);
    assert_eq!(shown, "1");

    // The failing rows carry their transcripts.
    let (_, _) = visible("#verdict=fail");
    let fail_rows = json.values().filter(|v| *v == "fail").count();
    assert_eq!(
        html.matches("<details class=\"transcript\" open>").count(),
        fail_rows
    );
    assert!(html.contains("response: 404"));
}

fn no_token_reaches_any_output() {
    const USER: &str = "canary-user-7f3a9b2c41d8e6";
    const ADMIN: &str = "canary-admin-0d5e8c17b92f4a";
    let dir = scratch("canary");
    let mut server = Command::new(BIN)
        .args([
            "serve",
            "--token",
            USER,
            "--admin-token",
            ADMIN,
            "--fault",
            SHOW,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut first = String::new();
    {
        use std::io::BufRead;
        let stdout = server.stdout.as_mut().expect("stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut first)
            .expect("serve prints its address");
    }
    let url = first
        .trim()
        .strip_prefix("reference service at ")
        .expect("address line")
        .to_string();
    let out = conform(
        &dir,
        &[
            "--target",
            &url,
            "--token",
            USER,
            "--admin-token",
            ADMIN,
            "--group",
            "runs,admin_users",
        ],
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let s = String::from_utf8_lossy(bytes);
        assert!(!s.contains(USER) && !s.contains(ADMIN), "a token in {what}");
    }
    let mut files = 0;
    for entry in std::fs::read_dir(dir.join("reports")).expect("reports") {
        let path = entry.expect("entry").path();
        let s = std::fs::read_to_string(&path).expect("report text");
        assert!(
            !s.contains(USER) && !s.contains(ADMIN),
            "a token in {}",
            path.display()
        );
        files += 1;
    }
    assert!(files >= 4, "junit, md, json and html are written");
    let html = std::fs::read_to_string(dir.join("reports/report.html")).unwrap();
    assert!(
        html.contains("$CONFORM_TOKEN"),
        "transcripts are in the page, redacted"
    );
}

fn progress_is_plain_lines_in_ci_and_a_live_line_on_a_terminal() {
    let dir = scratch("progress");
    let out = conform(&dir, &["--group", "runs"]);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("progress: "))
        .expect("a progress line");
    assert!(
        line.contains("tests done") && line.contains("requests/s"),
        "{line}"
    );
    assert!(!stderr.contains('\r'), "no live redraws in CI");
    let libtest_line = |s: &str| {
        s.lines()
            .any(|l| l.starts_with("test runs::show::bare ") && l.trim_end().ends_with("... ok"))
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(libtest_line(&stdout), "libtest lines stay on stdout in CI");

    // On a terminal (a pseudo-terminal via util-linux `script`), the live line is redrawn
    // and libtest's lines go to reports/libtest.log instead.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: the live-line check needs util-linux `script`");
        return;
    }
    let reports = dir.join("live");
    let cmd = format!("{BIN} --group runs --reports {}", reports.display());
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(&dir)
        .env_remove("CI")
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("script runs");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(tty.contains("\r\x1b[2Kprogress: "), "{tty}");
    assert!(!libtest_line(&tty), "{tty}");
    let log = std::fs::read_to_string(reports.join("libtest.log")).expect("libtest.log");
    assert!(libtest_line(&log), "{log}");
}

fn every_report_names_the_root_cause_of_blocked_tests_once() {
    let dir = scratch("root-causes");
    let out = conform(
        &dir,
        &[
            "--reference-fault",
            "drop-route=POST /organizations/:organization_name/teams",
            "--group",
            "teams",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let see = "see teams::create::api-v2";
    let line = said
        .lines()
        .find(|l| l.contains("blocked: POST /api/v2/organizations/") && l.contains(see))
        .unwrap_or_else(|| panic!("no root-cause line on the console:\n{said}"));
    let doc = results_json(&dir);
    let causes = doc["root_causes"].as_array().expect("root_causes");
    let blocked = causes
        .iter()
        .find(|c| c["verdict"] == "blocked" && c["see"] == "teams::create::api-v2")
        .expect("the blocked group in results.json");
    let n = blocked["tests"].as_array().map_or(0, Vec::len);
    assert!(
        n > 5 && line.trim_start().starts_with(&n.to_string()),
        "{line} / {n}"
    );
    let md = std::fs::read_to_string(dir.join("reports/summary.md")).expect("md");
    assert!(md.contains("## Root causes") && md.contains(see), "{md}");
    let html = std::fs::read_to_string(dir.join("reports/report.html")).expect("html");
    assert!(html.contains("<h2>Root causes</h2>") && html.contains(see));
    let junit = std::fs::read_to_string(dir.join("reports/junit.xml")).expect("junit");
    assert!(junit.contains(see));
}

/// A run where the bare path forms are not served (165 failures of one cause), the
/// sequences find an extra item in every list, and organizations cannot be deleted: summary.md
/// lists every root cause and, in full, every failure a large cause does not account for
/// before any `::bare` one, and names the ones it cuts; a sequence failure reads as its
/// numbered steps in summary.md, report.html and junit.xml alike; report.html puts the root
/// causes (linking their tests) and the failing tests before what was not deleted (folded).
fn failures_of_their_own_come_first_and_sequences_read_as_steps() {
    let dir = scratch("order");
    let out = conform(
        &dir,
        &[
            "--reference-shape",
            "api-v2-only",
            "--reference-fault",
            "list-holds-extra",
            "--reference-fault",
            "drop-route=DELETE /organizations/:organization_name",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc = results_json(&dir);
    let json = verdicts_json(&doc);
    let failing: Vec<&String> = json
        .iter()
        .filter(|(_, v)| *v == "fail")
        .map(|(n, _)| n)
        .collect();
    let bare = |n: &str| n.ends_with("::bare");
    assert!(
        failing.iter().filter(|n| bare(n)).count() > 100,
        "{failing:?}"
    );
    let reason = |name: &str| -> String {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["reason"].as_str())
            .unwrap_or_else(|| panic!("{name} has no reason"))
            .trim_end()
            .to_string()
    };
    // a family whose curl lines carry a query (`&`) if the draw gave one
    let families: Vec<&&String> = failing
        .iter()
        .filter(|n| n.starts_with("sequences::"))
        .collect();
    let sequence = families
        .iter()
        .find(|n| reason(n).contains('&'))
        .or(families.first())
        .expect("a failing sequence family");
    let steps = reason(sequence);
    assert!(
        steps.lines().any(|l| l.starts_with("  1. ")),
        "numbered steps: {steps}"
    );

    let md = std::fs::read_to_string(dir.join("reports/summary.md")).expect("md");
    for entity in ["&amp;", "&lt;", "&gt;", "&quot;"] {
        assert!(
            !md.contains(entity),
            "an HTML entity in summary.md: {entity}"
        );
    }
    let causes = doc["root_causes"].as_array().expect("root_causes");
    let listed = md
        .split("## Root causes")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("root causes in summary.md");
    assert_eq!(
        listed.lines().filter(|l| l.starts_with("- ")).count(),
        causes.len(),
        "every root cause: {listed}"
    );
    let in_full: Vec<&str> = md
        .lines()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    for name in failing.iter().filter(|n| !bare(n)) {
        assert!(
            in_full.contains(&name.as_str()),
            "{name} not listed in full"
        );
    }
    let first_bare = in_full
        .iter()
        .position(|n| bare(n))
        .expect("a bare one listed");
    assert!(in_full[first_bare..].iter().all(|n| bare(n)), "{in_full:?}");
    assert!(in_full.len() < failing.len(), "the cap applies");
    assert!(
        md.contains("more failing tests, named here by cause"),
        "{md}"
    );
    for name in &failing {
        assert!(
            md.contains(&format!("`{name}`")),
            "{name} cut without a word"
        );
    }
    let block = md
        .split(&format!("### `{sequence}`"))
        .nth(1)
        .and_then(|s| s.split("```text\n").nth(1))
        .and_then(|s| s.split("\n```").next())
        .expect("the sequence failure in a fenced block");
    assert_eq!(
        block, steps,
        "summary.md keeps the steps as the console prints them"
    );

    let html = std::fs::read_to_string(dir.join("reports/report.html")).expect("html");
    let escaped = steps
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;");
    assert!(
        html.contains(&format!("<pre class=\"reason\">{escaped}</pre>")),
        "the steps as one pre block, escaped once"
    );
    assert!(!html.contains("&amp;amp;"), "escaped twice");
    let at = |what: &str| html.find(what).unwrap_or_else(|| panic!("no {what}"));
    assert!(at("<h2>Root causes</h2>") < at("<h2>Tests</h2>"));
    assert!(at("<h2>Tests</h2>") < at("<h2>Not deleted</h2>"));
    assert!(html.contains("<details id=\"leftovers\"><summary>"));
    let causes_html = &html[at("<h2>Root causes</h2>")..at("<h2>Groups</h2>")];
    for name in &failing {
        assert!(
            causes_html.contains(&format!("<a href=\"#q={name}\"")),
            "the root causes do not link {name}"
        );
    }
    assert!(html.contains("<td class=\"n hot\"><a href=\"#group=sequences&amp;verdict=fail\">"));
    let rows = rows_html(&html);
    let first_other = rows
        .iter()
        .position(|r| r.2 != "fail" && r.2 != "error")
        .expect("passing rows");
    assert_eq!(first_other, failing.len(), "the failing rows come first");

    let junit = std::fs::read_to_string(dir.join("reports/junit.xml")).expect("junit");
    let suites = junit_parser::from_reader(junit.as_bytes()).expect("a JUnit parser reads it");
    let case = suites
        .suites
        .iter()
        .flat_map(|s| &s.cases)
        .find(|c| c.original_name.as_str() == sequence.as_str())
        .expect("the family in junit.xml");
    assert!(case.status.failure_as_ref().text.contains(&steps));
}

/// This file's tests.
pub fn tests() -> Vec<harness::Test> {
    vec![
        harness::test(
            "every_format_states_the_same_verdicts",
            every_format_states_the_same_verdicts,
        ),
        harness::test(
            "waivers_waive_until_they_expire_and_stale_ones_are_reported",
            waivers_waive_until_they_expire_and_stale_ones_are_reported,
        ),
        harness::test(
            "bad_waivers_and_partitions_stop_the_run_before_any_request",
            bad_waivers_and_partitions_stop_the_run_before_any_request,
        ),
        harness::test(
            "partitions_split_the_tests_deterministically",
            partitions_split_the_tests_deterministically,
        ),
        harness::test("no_token_reaches_any_output", no_token_reaches_any_output),
        harness::test(
            "progress_is_plain_lines_in_ci_and_a_live_line_on_a_terminal",
            progress_is_plain_lines_in_ci_and_a_live_line_on_a_terminal,
        ),
        harness::test(
            "failures_of_their_own_come_first_and_sequences_read_as_steps",
            failures_of_their_own_come_first_and_sequences_read_as_steps,
        ),
        harness::test(
            "every_report_names_the_root_cause_of_blocked_tests_once",
            every_report_names_the_root_cause_of_blocked_tests_once,
        ),
        harness::needing(
            "the_html_report_renders_and_filters_in_headless_chromium",
            chromium,
            the_html_report_renders_and_filters_in_headless_chromium,
        ),
    ]
}
