//! The binary end to end: the main job against the embedded reference writes a JUnit file a
//! JUnit consumer parses; bad input gets one clear message and exit 2, or failed tests that
//! say what is wrong; the token never appears in any output.

use crate::support::scratch::Scratch;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

fn conform(args: &[&str], reports: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(args)
        .arg("--reports")
        .arg(reports)
        .env_remove("CONFORM_TOKEN")
        .env_remove("TFE_TOKEN")
        .env_remove("TFE_ADDRESS")
        .env_remove("CONFORM_TARGET")
        .output()
        .expect("conform runs")
}

fn scratch(name: &str) -> Scratch {
    Scratch::new("test", name)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A loopback HTTP server that answers every request with `response` (or, when `None`,
/// reads the request and never answers). Records each request head.
fn fake_server(response: Option<Vec<u8>>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (response, log) = (response.clone(), log.clone());
            thread::spawn(move || handle(stream, response, log));
        }
    });
    (addr, seen)
}

fn handle(mut stream: TcpStream, response: Option<Vec<u8>>, log: Arc<Mutex<Vec<String>>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let length = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            })
            .unwrap_or(0);
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        log.lock().expect("log").push(head);
        match &response {
            Some(bytes) => {
                if stream.write_all(bytes).is_err() {
                    return;
                }
            }
            None => thread::sleep(Duration::from_secs(30)),
        }
    }
}

fn http(status: &str, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn main_job_passes_and_writes_junit_a_consumer_parses() {
    let reports = scratch("main");
    let out = conform(&[], &reports);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("requests/s"), "the summary prints its figures");
    let xml = std::fs::File::open(reports.join("junit.xml")).expect("junit.xml written");
    let suites =
        junit_parser::from_reader(std::io::BufReader::new(xml)).expect("a JUnit parser reads it");
    let cases: usize = suites.suites.iter().map(|s| s.cases.len()).sum();
    assert!(cases > 340, "one testcase per test, found {cases}");
    let runs = suites
        .suites
        .iter()
        .find(|s| s.name == "runs")
        .expect("a suite per group");
    assert!(runs
        .cases
        .iter()
        .all(|c| c.classname.as_deref() == Some("runs")));
    assert!(
        runs.properties.hashmap.contains_key("target"),
        "suite properties carry the target"
    );
    assert_eq!(
        runs.properties.hashmap.get("profile").map(String::as_str),
        Some("core")
    );
}

fn list_names_every_test() {
    let reports = scratch("list");
    let out = conform(&["--list"], &reports);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().count() > 340);
    assert!(stdout.contains("runs::show::api-v2: test"));
    assert!(stdout.contains("registry_modules::delete_version::deprecated: test"));
}

fn wrong_flags_and_configs_exit_2_with_one_message() {
    let reports = scratch("config");
    for args in [
        vec!["--target", "not a url"],
        vec!["--target", "ftp://example.test"],
        vec!["--config", "/nonexistent/conform.toml"],
        vec!["--group", "no_such_group"],
        vec!["--require", "workspaces"],
        vec!["--fixture", "novalue"],
        vec!["--timeout", "-1"],
        vec!["--test-threads", "0"],
        vec!["--max-body", "0"],
        vec!["--rate", "0/s"],
    ] {
        let out = conform(&args, &reports);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("error:"), "{args:?}");
    }
    let bad = reports.join("bad.toml");
    std::fs::write(&bad, "target = [").expect("write");
    let out = conform(&["--config", bad.to_str().expect("utf8")], &reports);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("bad.toml"), "{}", text(&out));
}

fn reports_that_cannot_be_written_exit_2_before_the_run() {
    let dir = scratch("reports-file");
    let file = dir.join("a-file");
    std::fs::write(&file, "").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args([
            "--reports",
            file.to_str().expect("utf8"),
            "--group",
            "account",
        ])
        .output()
        .expect("conform runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("is a file, not a folder"),
        "{}",
        text(&out)
    );
    assert!(
        !text(&out).contains("account::"),
        "no test ran: {}",
        text(&out)
    );
}

/// Every configuration and command-line error, fed a canary token from the flag, the
/// environment and the config file: the canary is in no message.
fn no_configuration_error_prints_a_token() {
    let dir = scratch("canary-errors");
    let canary = "canary7f3e9a1b";
    let configs = [
        format!("token = {canary}\n"),
        format!("token = \"{canary}\"\ninsecure = \"yes\"\n"),
        format!("admin-token = {canary}x\n"),
        format!("target = \"http://127.0.0.1:1\"\ntoken = \"{canary}\"\nunknown = 1\n"),
        format!("token = [\"{canary}\"]\n"),
    ];
    for (i, config) in configs.iter().enumerate() {
        let path = dir.join(format!("c{i}.toml"));
        std::fs::write(&path, config).expect("write");
        let out = conform(&["--config", path.to_str().expect("utf8")], &dir);
        assert_eq!(out.status.code(), Some(2), "{config}: {}", text(&out));
        assert!(!text(&out).contains(canary), "{config}: {}", text(&out));
    }
    let numeric = dir.join("numeric.toml");
    std::fs::write(&numeric, "token = 918273645\n").expect("write");
    let out = conform(&["--config", numeric.to_str().expect("utf8")], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out).contains("918273645"), "{}", text(&out));
    for args in [
        vec!["--token", canary, "--bogus"],
        vec![&format!("--token={canary}"), "--timeout", "x"],
        vec!["--admin-token", canary, "--target", "not a url"],
        vec!["--token", canary, "--test-threads", "0"],
        vec!["--token", canary, "--target", "http://127.0.0.1:1"],
    ] {
        let out = conform(&args, &dir);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains(canary), "{args:?}: {}", text(&out));
    }
    for args in [
        vec!["sweep", "--token", canary],
        vec!["sweep", "--token", canary, "--older-than", "soon"],
        vec![
            "sweep",
            "--token",
            canary,
            "--target",
            "http://127.0.0.1:1",
            "--bogus",
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_conform"))
            .args(&args)
            .output()
            .expect("conform runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains(canary), "{args:?}: {}", text(&out));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", "http://127.0.0.1:1", "--group", "nope"])
        .env("CONFORM_TOKEN", canary)
        .output()
        .expect("conform runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out).contains(canary), "{}", text(&out));
}

/// What `--help` says of defaults is what the code does.
fn help_agrees_with_the_code() {
    let help = Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("--help")
        .output()
        .expect("conform runs");
    let help = text(&help);
    let default = format!("default {}", conform::sequences::DEFAULT_CASES);
    assert!(help.contains(&default), "--cases says {default}: {help}");
    let sweep = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["sweep", "--help"])
        .output()
        .expect("conform runs");
    let sweep = text(&sweep);
    assert!(sweep.contains("`sweep` needs it"), "{sweep}");
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("sweep")
        .env_remove("CONFORM_TARGET")
        .env_remove("TFE_ADDRESS")
        .output()
        .expect("conform runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

fn unreachable_or_silent_target_exits_2_within_seconds() {
    let reports = scratch("unreachable");
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let started = Instant::now();
    let out = conform(&["--target", &addr, "--token", "test-token-123"], &reports);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("cannot reach the target"),
        "{}",
        text(&out)
    );
    let (silent, _) = fake_server(None);
    let out = conform(
        &[
            "--target",
            &silent,
            "--token",
            "test-token-123",
            "--timeout",
            "4",
        ],
        &reports,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no answer within the request timeout (4 s, --timeout)"),
        "{}",
        text(&out)
    );
    // while it waits, it says so
    assert!(
        text(&out).contains("preflight: waiting for"),
        "{}",
        text(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

fn a_target_that_wants_a_token_and_has_none_exits_2() {
    let reports = scratch("notoken");
    let (addr, _) = fake_server(Some(http(
        "401 Unauthorized",
        "content-type: application/vnd.api+json\r\n",
        r#"{"errors":[{"status":"401","title":"unauthorized"}]}"#,
    )));
    let out = conform(&["--target", &addr], &reports);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no token was given"), "{}", text(&out));
}

/// A server that does not speak the API (HTML or garbage to everything, 404 to everything,
/// a gigabyte) is refused before any test: exit 2 with one message that says what it
/// answered, not thousands of failures.
fn a_target_that_does_not_speak_the_api_exits_2_before_any_test() {
    let reports = scratch("html");
    let huge = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
        1u64 << 30,
        " ".repeat(1 << 20)
    );
    for (answer, says) in [
        (
            http(
                "200 OK",
                "content-type: text/html\r\n",
                "<html><body>login</body></html>",
            ),
            "is not JSON",
        ),
        (
            http(
                "200 OK",
                "content-type: application/json\r\n",
                "{\"data\": [1, 2,",
            ),
            "is not JSON",
        ),
        (
            http(
                "200 OK",
                "content-type: application/json\r\n",
                "{\"items\": []}",
            ),
            "JSON without `data`",
        ),
        (
            http("404 Not Found", "content-type: text/plain\r\n", "not found"),
            "answered 404",
        ),
        (huge.into_bytes(), "larger than the response size cap"),
    ] {
        let (addr, _) = fake_server(Some(answer));
        let started = Instant::now();
        let out = conform(
            &[
                "--target",
                &addr,
                "--token",
                "test-token-123",
                "--timeout",
                "3",
            ],
            &reports,
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("does not answer like this API"), "{said}");
        assert!(said.contains(says), "{says}: {said}");
        assert!(!said.contains("::api-v2"), "no test ran: {said}");
        assert!(said.lines().count() < 5, "one message: {said}");
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

/// What preflight warns of reaches the reports, not only the terminal.
fn preflight_warnings_are_in_the_reports() {
    let reports = scratch("preflight-warnings");
    let out = conform(
        &[
            "--reference-shape",
            "registry-only",
            "--module",
            "acme/network/aws/1.0.0",
            "--group",
            "registry_modules_read",
        ],
        &reports,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let results = std::fs::read_to_string(reports.join("results.json")).expect("results.json");
    let doc: serde_json::Value = serde_json::from_str(&results).expect("parses");
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("registry discovery"), "{warnings}");
    let summary = std::fs::read_to_string(reports.join("summary.md")).expect("summary.md");
    assert!(summary.contains("registry discovery"), "{summary}");
}

fn a_redirect_elsewhere_never_carries_the_token() {
    let reports = scratch("redirect");
    let (elsewhere, seen) = fake_server(Some(http(
        "200 OK",
        "content-type: application/json\r\n",
        "{}",
    )));
    let (origin, _) = fake_server(Some(http(
        "302 Found",
        &format!("location: {elsewhere}/stolen\r\n"),
        "",
    )));
    let out = conform(
        &[
            "--target",
            &origin,
            "--token",
            "canary-redirect-token",
            "--group",
            "account,configuration_versions",
        ],
        &reports,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // the message names where the target sends a client
    assert!(
        text(&out).contains(&format!("a redirect to {elsewhere}/stolen")),
        "{}",
        text(&out)
    );
    let heads = seen.lock().expect("log").join("\n").to_ascii_lowercase();
    assert!(
        !heads.contains("canary-redirect-token") && !heads.contains("authorization"),
        "{heads}"
    );
}

fn a_canary_token_appears_in_no_output_or_report() {
    let reports = scratch("canary");
    let canary = "canary-0d2c7f41e9";
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let running = runtime
        .block_on(conform_reference::start(conform_reference::Config {
            token: canary.into(),
            admin_token: format!("{canary}-admin"),
            ..Default::default()
        }))
        .expect("reference starts");
    let root = running.root_url();
    let out = conform(
        &[
            "--target",
            &root,
            "--token",
            canary,
            "--admin-token",
            &format!("{canary}-admin"),
            "--fixture",
            "account_password=reference-password",
        ],
        &reports,
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        !all.contains(canary),
        "the token leaked to stdout or stderr"
    );
    for entry in std::fs::read_dir(&reports).expect("reports") {
        let path = entry.expect("entry").path();
        let content = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            !content.contains(canary),
            "the token leaked into {}",
            path.display()
        );
    }
    running.shutdown();
}

fn serve_prints_its_address_and_answers_discovery() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["serve", "--port", "0", "--token", "serve-test-token"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("conform serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    let mut lines = BufReader::new(stdout);
    lines.read_line(&mut first).expect("a line");
    let addr = first
        .trim()
        .rsplit("http://")
        .next()
        .expect("an address")
        .to_string();
    let mut stream = TcpStream::connect(&addr).expect("connects");
    stream
        .write_all(
            b"GET /.well-known/terraform.json HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        )
        .expect("writes");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("modules.v1"), "{answer}");
}

/// `conform --list | head` and `conform checks | head`: the reader goes away; the listing
/// ends quietly (no panic, no message), as a Unix tool does.
fn a_listing_whose_reader_goes_away_ends_quietly() {
    for args in [&["--list"][..], &["checks"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("conform runs");
        // gone before the first line: every write meets a closed pipe
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("it ends");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!said.contains("panicked"), "{args:?}: {said}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {said}");
    }
}

fn preflight_tells_a_new_user_what_to_give_next() {
    let reports = scratch("preflight-hints");
    // one fixed organization, no list: say --organization
    let out = conform(
        &[
            "--reference-shape",
            "one-organization",
            "--group",
            "account",
        ],
        &reports,
    );
    let said = text(&out);
    assert!(
        said.contains("give an existing one with --organization NAME"),
        "{said}"
    );
    // only the registry read protocol: say --module
    let out = conform(
        &[
            "--reference-shape",
            "registry-only",
            "--group",
            "registry_modules_read",
        ],
        &reports,
    );
    let said = text(&out);
    assert!(
        said.contains("--module NAMESPACE/NAME/PROVIDER/VERSION"),
        "{said}"
    );
    // told already: not said again
    let out = conform(
        &[
            "--reference-shape",
            "one-organization",
            "--organization",
            "acme",
            "--group",
            "account",
        ],
        &reports,
    );
    assert!(!text(&out).contains("give an existing one with --organization"));
}

fn help_names_the_program_its_defaults_and_exit_codes_and_version_completions_and_manpage_exist() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_conform"))
            .args(args)
            .output()
            .expect("conform runs")
    };
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = text(&help);
    assert!(
        help.starts_with("Conformance suite and contract checker"),
        "{help}"
    );
    assert!(help.contains("Usage: conform [OPTIONS] [FILTER]"), "{help}");
    for shown in ["[default: 10]", "[default: 16]", "Exit codes:", "130"] {
        assert!(help.contains(shown), "{shown} missing:\n{help}");
    }
    // libtest's no-op flags still parse but are not offered
    assert!(!help.contains("--nocapture") && !help.contains("--show-output"));
    for flag in ["-V", "--version"] {
        let out = run(&[flag]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            text(&out).trim(),
            format!("conform {}", env!("CARGO_PKG_VERSION"))
        );
    }
    let bash = run(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0));
    assert!(text(&bash).contains("_conform()"));
    let man = run(&["manpage"]);
    assert_eq!(man.status.code(), Some(0));
    assert!(text(&man).contains(".TH conform 1"));
}

fn a_mistyped_organization_fixture_or_ledger_is_exit_2_naming_the_value() {
    let reports = scratch("mistyped");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--organization", "no-such-organization", "account::"],
            "--organization `no-such-organization` is not on the target",
        ),
        (
            &["--fixture", "nokind=1", "account::"],
            "no fixture kind `nokind`",
        ),
        (
            &["--ledger", "/no/such/folder/ledger.jsonl", "account::"],
            "the folder /no/such/folder does not exist",
        ),
        (
            &["--logfile", "/no/such/folder/log", "account::"],
            "--logfile /no/such/folder/log:",
        ),
    ];
    for (args, said) in cases {
        let out = conform(args, &reports);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(said), "{args:?}: {}", text(&out));
    }
    let (addr, _) = fake_server(None);
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args([
            "sweep",
            "--target",
            &addr,
            "--ledger",
            "no-such-ledger.jsonl",
        ])
        .output()
        .expect("conform runs");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--ledger no-such-ledger.jsonl: no such file"));
}

/// An administrator token that is not a site administrator's (TFE answers it 404 on the whole
/// admin API) is a configuration error naming the token; a target without the admin API
/// (the same 404, from a site administrator's token) is a warning, and the run goes on.
fn an_admin_token_that_is_not_an_administrators_is_told_from_an_absent_admin_api() {
    let reports = scratch("not-admin");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    for shapes in [vec![], vec![conform_reference::Shape::NoAdmin]] {
        let running = runtime
            .block_on(conform_reference::start(conform_reference::Config {
                token: "not-admin-user-token".into(),
                admin_token: "not-admin-admin-token".into(),
                shapes: shapes.clone(),
                ..Default::default()
            }))
            .expect("reference starts");
        let root = running.root_url();
        // the user's own token given as the administrator's
        let admin = if shapes.is_empty() {
            "not-admin-user-token"
        } else {
            "not-admin-admin-token"
        };
        let out = conform(
            &[
                "--target",
                &root,
                "--token",
                "not-admin-user-token",
                "--admin-token",
                admin,
                "account::",
            ],
            &reports,
        );
        let all = text(&out);
        if shapes.is_empty() {
            assert_eq!(out.status.code(), Some(2), "{all}");
            assert!(
                all.contains("is not a site administrator's")
                    && all.contains("is-site-admin false"),
                "{all}"
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{all}");
            assert!(
                all.contains("the target has no administrator API here"),
                "{all}"
            );
        }
        assert!(
            !all.contains("not-admin-user-token"),
            "a token leaked: {all}"
        );
        running.shutdown();
    }
}

/// `conform … | head`: the reader goes away after a line, and the run ends like a cancel
/// (teardown, reports, exit 141), never a panic.
fn a_reader_that_goes_away_cancels_the_run_without_a_panic() {
    let reports = scratch("closed-stdout");
    let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("--reports")
        .arg(&*reports)
        .env_remove("CONFORM_TOKEN")
        .env_remove("TFE_TOKEN")
        .env_remove("TFE_ADDRESS")
        .env_remove("CONFORM_TARGET")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("conform starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(first.starts_with("conform "), "{first}");
    drop(stdout);
    let out = child.wait_with_output().expect("conform ends");
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(!errors.contains("panicked"), "{errors}");
    assert_eq!(out.status.code(), Some(141), "{errors}");
    assert!(
        errors.contains("EPIPE (standard output closed) received"),
        "{errors}"
    );
    assert!(reports.join("results.json").is_file(), "{errors}");
}

/// A nightly run with `--baseline` last night's results.json: a fault added between the two
/// runs shows as new failures (console and changes.md); with `--only-regressions-fail` the old
/// failures alone do not fail the job; `conform compare` says the same.
fn a_baseline_shows_what_changed_and_can_fail_only_on_regressions() {
    let dir = scratch("baseline");
    let (night1, night2, night3) = (dir.join("1"), dir.join("2"), dir.join("3"));
    let first = conform(&["account::"], &night1);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let baseline = night1.join("results.json");
    let baseline = baseline.to_str().unwrap_or_default();
    let broken = [
        "--reference-fault",
        "no-bare",
        "--baseline",
        baseline,
        "account::",
    ];
    let second = conform(&broken, &night2);
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    let said = text(&second);
    assert!(said.contains("3 new failure(s), 0 fixed"), "{said}");
    assert!(
        said.contains("account::details::bare pass -> fail [endpoint.exists]"),
        "{said}"
    );
    assert!(
        !said.contains("note:"),
        "both runs judged the embedded reference: {said}"
    );
    let written = std::fs::read_to_string(night2.join("changes.md")).expect("changes.md");
    assert!(written.contains("| `account::details::bare` | pass | fail | endpoint.exists |"));
    // and in the run's own reports
    let summary = std::fs::read_to_string(night2.join("summary.md")).expect("summary.md");
    assert!(
        summary.contains("## Changes") && summary.contains("### New failures"),
        "{summary}"
    );
    let html = std::fs::read_to_string(night2.join("report.html")).expect("report.html");
    assert!(html.contains("Since the baseline") && html.contains("3 new failure(s)"));
    // the same failures again, judged against the night before: nothing new
    let second_results = night2.join("results.json");
    let second_results = second_results.to_str().unwrap_or_default();
    let again = [
        "--reference-fault",
        "no-bare",
        "--baseline",
        second_results,
        "--only-regressions-fail",
        "account::",
    ];
    let third = conform(&again, &night3);
    assert_eq!(third.status.code(), Some(0), "{}", text(&third));
    assert!(
        text(&third).contains("0 new failure(s)"),
        "{}",
        text(&third)
    );
    let compare = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["compare", baseline, second_results])
        .output()
        .expect("conform runs");
    assert_eq!(compare.status.code(), Some(1), "{}", text(&compare));
    let missing = conform(
        &["--baseline", "/no/such/results.json", "account::"],
        &night3,
    );
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
}

/// `--format json`: standard output is libtest's JSON lines and nothing else; the banner and
/// the group table go to standard error.
fn format_json_writes_only_json_lines_to_stdout() {
    let reports = scratch("format-json");
    let out = conform(&["--format", "json", "account::"], &reports);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.len() > 2, "{stdout}");
    for line in lines {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not JSON: {line}"
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("conform ") && stderr.contains("total"),
        "{stderr}"
    );
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![main_job_passes_and_writes_junit_a_consumer_parses, list_names_every_test, wrong_flags_and_configs_exit_2_with_one_message, reports_that_cannot_be_written_exit_2_before_the_run, no_configuration_error_prints_a_token, help_agrees_with_the_code, unreachable_or_silent_target_exits_2_within_seconds, a_target_that_wants_a_token_and_has_none_exits_2, a_target_that_does_not_speak_the_api_exits_2_before_any_test, preflight_warnings_are_in_the_reports, a_redirect_elsewhere_never_carries_the_token, a_canary_token_appears_in_no_output_or_report, serve_prints_its_address_and_answers_discovery, a_listing_whose_reader_goes_away_ends_quietly, preflight_tells_a_new_user_what_to_give_next, help_names_the_program_its_defaults_and_exit_codes_and_version_completions_and_manpage_exist, a_mistyped_organization_fixture_or_ledger_is_exit_2_naming_the_value, an_admin_token_that_is_not_an_administrators_is_told_from_an_absent_admin_api, a_reader_that_goes_away_cancels_the_run_without_a_panic, a_baseline_shows_what_changed_and_can_fail_only_on_regressions, format_json_writes_only_json_lines_to_stdout]
}
