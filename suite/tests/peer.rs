//! `conform peer go-tfe` end to end with a stand-in `go` on PATH (a shell script that answers
//! `go env`, `go mod download`, `go test -c` and `go tool test2json` as Go does), so that the
//! runner, the comparison with the peer file, the reports and the exit codes are tested on any
//! machine in a second. The real go-tfe set runs in `.ci/run` (`conform peer go-tfe`).

use crate::support::scratch::Scratch;

use std::path::Path;
use std::process::{Command, Output};

fn scratch(name: &str) -> Scratch {
    Scratch::new("peer", name)
}

fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `go` that knows four tests: one passes (and prints the token it was given), one fails,
/// one panics, one skips every subtest.
const FAKE_GO: &str = r#"#!/bin/sh
case "$1 $2" in
  "env GOVERSION") echo go0.0-stand-in ;;
  "mod download") mkdir -p "$HERE/mod"; echo "{\"Dir\": \"$HERE/mod\"}" ;;
  "test -c") out="$5"; printf '#!/bin/sh\nfor t in ${FAKE_TESTS:-TestPass TestFail TestPanic TestSkips TestExcluded}; do echo $t; done\n' > "$out"; chmod +x "$out" ;;
  "tool test2json")
    name=$(echo "$6" | sed 's/-test.run=^//; s/\$$//')
    ev() { printf '{"Action":"%s","Test":"%s","Output":"%s"}\n' "$1" "$2" "$3"; }
    case "$name" in
      TestPass) ev output TestPass "token is $TFE_TOKEN\\n"; ev pass TestPass/a ""; ev pass TestPass "" ;;
      TestFail) ev output TestFail/a "Error: expected 200, got 404 (beta: $ENABLE_BETA)\\n"; ev fail TestFail/a ""; ev fail TestFail "" ;;
      TestPanic) ev output TestPanic "panic: runtime error: index out of range\\n"; exit 2 ;;
      TestSkips) ev output TestSkips/a "needs ENABLE_BETA\\n"; ev skip TestSkips/a ""; ev pass TestSkips "" ;;
      TestSleep) sleep 31.7 ;;
    esac ;;
  *) echo "stand-in go: $*" >&2; exit 1 ;;
esac
"#;

const PEER_FILE: &str = r#"module = "example.com/peer"
version = "v0.0.1"
[groups]
TestPass = "organizations"
[[exclude]]
reason = "not for this server"
tests = ["TestExcluded"]
[instance_changes]
reason = "changes settings"
tests = []
[[skip]]
reason = "beta only"
tests = ["TestSkips"]
[[gap]]
reason = "not yet"
tests = ["TestFail", "TestPanic"]
[[skip_subtests]]
reason = "needs a plan"
subtests = ["_RunDependent"]
[[env]]
reason = "a beta feature"
tests = ["TestFail"]
vars = { ENABLE_BETA = "1" }
"#;

fn peer(dir: &Path, path_var: &str, extra: &[&str]) -> Output {
    std::fs::write(dir.join("peer.toml"), PEER_FILE).unwrap();
    Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["peer", "go-tfe", "--peer-file"])
        .arg(dir.join("peer.toml"))
        .arg("--reports")
        .arg(dir.join("reports"))
        .args(extra)
        .env("PATH", path_var)
        .env("HERE", dir)
        .env("CONFORM_CACHE", dir.join("cache"))
        .env_remove("CONFORM_TOKEN")
        .env_remove("TFE_TOKEN")
        .output()
        .unwrap()
}

fn with_fake_go(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    write_exec(&bin.join("go"), FAKE_GO);
    format!("{}:/usr/bin:/bin", bin.display())
}

fn without_go_it_says_what_to_install_and_exits_2() {
    let dir = scratch("nogo");
    let out = peer(&dir, dir.to_str().unwrap(), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("install Go"), "{err}");
}

fn a_target_without_a_token_is_a_configuration_error() {
    let dir = scratch("notoken");
    let path = with_fake_go(&dir);
    let out = peer(&dir, &path, &["--target", "http://127.0.0.1:9"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("token"), "{err}");
}

fn results_match_the_peer_file_and_are_reported_without_the_token() {
    let dir = scratch("match");
    let path = with_fake_go(&dir);
    let out = peer(&dir, &path, &[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 pass, 2 fail (1 panicked), 1 skipped, 1 not run"),
        "{stdout}"
    );
    let reports = dir.join("reports");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("results.json")).unwrap())
            .unwrap();
    let status = |name: &str| {
        results["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["status"].as_str().unwrap().to_string())
    };
    assert_eq!(status("TestPass").as_deref(), Some("pass"));
    assert_eq!(status("TestFail").as_deref(), Some("fail"));
    assert_eq!(status("TestPanic").as_deref(), Some("fail"));
    assert_eq!(status("TestSkips").as_deref(), Some("skipped"));
    assert_eq!(status("TestExcluded"), None);
    // The embedded service's token reached the test (it printed it) and no report.
    for file in ["results.json", "summary.md", "report.html", "junit.xml"] {
        let text = std::fs::read_to_string(reports.join(file)).unwrap();
        assert!(
            !text.contains("reference-admin-token"),
            "{file} holds the token"
        );
    }
    assert!(!stdout.contains("reference-admin-token") && !stderr.contains("reference-admin-token"));
    let junit = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    assert!(
        junit.contains("testsuite") && junit.contains("go-tfe"),
        "{junit}"
    );
    assert!(junit.contains("organizations::TestPass"), "{junit}");
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(summary.contains("expected 200, got 404"), "{summary}");
    // The `env` row's variable reached the test it names.
    assert!(summary.contains("(beta: 1)"), "{summary}");
}

fn a_result_that_moves_either_way_fails_the_run() {
    let dir = scratch("moved");
    let path = with_fake_go(&dir);
    // TestPass expected to fail (it passes: promote it) and TestFail expected to pass.
    let moved = PEER_FILE.replace(
        "tests = [\"TestFail\", \"TestPanic\"]",
        "tests = [\"TestPass\", \"TestPanic\"]",
    );
    std::fs::write(dir.join("moved.toml"), moved).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["peer", "go-tfe", "--peer-file"])
        .arg(dir.join("moved.toml"))
        .arg("--reports")
        .arg(dir.join("reports"))
        .env("PATH", &path)
        .env("HERE", &dir)
        .env("CONFORM_CACHE", dir.join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("TestPass: passes now"), "{stdout}");
    assert!(
        stdout.contains("TestFail: expected to pass, failed"),
        "{stdout}"
    );
}

fn an_unreachable_target_is_said_in_one_line_before_anything_is_built() {
    let dir = scratch("unreachable");
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let target = format!("http://127.0.0.1:{port}");
    let out = peer(
        &dir,
        dir.to_str().unwrap(),
        &["--target", &target, "--token", "t0ken-x"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot reach"), "{err}");
    assert!(
        !err.contains("install Go"),
        "the target is checked before Go: {err}"
    );
    assert!(!err.contains("t0ken-x"), "{err}");
}

fn a_signal_ends_the_running_test_processes_too() {
    let dir = scratch("signal");
    let path = with_fake_go(&dir);
    std::fs::write(
        dir.join("sleep.toml"),
        PEER_FILE.replace(
            "[[gap]]",
            "[[gap]]\nreason = \"x\"\ntests = [\"TestSleep\"]\n[[gap]]",
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["peer", "go-tfe", "--peer-file"])
        .arg(dir.join("sleep.toml"))
        .arg("--reports")
        .arg(dir.join("reports"))
        .env("PATH", &path)
        .env("HERE", &dir)
        .env("CONFORM_CACHE", dir.join("cache"))
        .env("FAKE_TESTS", "TestSleep")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sleeping = || {
        Command::new("pgrep")
            .args(["-f", "sleep 31.7"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let started = std::time::Instant::now();
    while !sleeping() && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(sleeping(), "the stand-in test never started");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!sleeping(), "a test process outlived the run");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        without_go_it_says_what_to_install_and_exits_2,
        a_target_without_a_token_is_a_configuration_error,
        results_match_the_peer_file_and_are_reported_without_the_token,
        a_result_that_moves_either_way_fails_the_run,
        an_unreachable_target_is_said_in_one_line_before_anything_is_built,
        a_signal_ends_the_running_test_processes_too
    ]
}
