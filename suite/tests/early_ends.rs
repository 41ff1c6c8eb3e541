//! A run that ends early or runs long still tells the truth (issue 21): real signals to a real
//! `conform` process (the first stops gracefully: teardown, every report marked interrupted,
//! exit 130/143; a second stops at once with the ledger whole), a full filesystem under the
//! reports and the ledger (nothing created unrecorded, never exit 0), and `--test-timeout` with
//! the progress line naming the tests running longest.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::processes::Served;

const TOKEN: &str = "early-ends-token";
const ADMIN_TOKEN: &str = "early-ends-admin-token";

/// A fresh scratch folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("conform-early-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// `conform` with the tokens of the standalone service and nothing else from the environment.
fn conform() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_conform"));
    command
        .env_remove("TFE_TOKEN")
        .env_remove("TFE_ADDRESS")
        .env_remove("CONFORM_TARGET")
        .env("CONFORM_TOKEN", TOKEN)
        .env("CONFORM_ADMIN_TOKEN", ADMIN_TOKEN);
    command
}

/// A standalone `conform serve` on loopback with the tokens of the runs, killed when dropped.
fn serve() -> Served {
    Served::start(TOKEN, ADMIN_TOKEN, &[])
}

/// A running `conform` whose stdout and stderr lines are collected; `first_test` fires at the
/// first finished test.
struct Run {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Run {
    fn start(mut command: Command) -> Self {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("conform runs");
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().expect("piped");
        let err = child.stderr.take().expect("piped");
        for stream in [Box::new(out) as Box<dyn Read + Send>, Box::new(err)] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
        }
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (at most `within`) for a line that `wanted` accepts.
    fn wait_for(&mut self, within: Duration, wanted: impl Fn(&str) -> bool) {
        let end = Instant::now() + within;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = wanted(&line);
                    self.seen.push(line);
                    if hit {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("no such line within {within:?}:\n{}", self.seen.join("\n"));
    }

    /// Waits for the first test to finish (libtest's `test NAME ... ok|ignored|FAILED`).
    fn first_test_done(&mut self) {
        self.wait_for(Duration::from_secs(120), |line| {
            line.starts_with("test ") && line.contains(" ... ")
        });
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: sends a signal to the child this test started.
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0, "the signal is sent");
    }

    /// Waits (at most `within`) for the process to end; its status and every line it printed.
    fn end(mut self, within: Duration) -> (ExitStatus, String) {
        let end = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("still running {within:?} later:\n{}", self.seen.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // the readers end with the pipes
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status, self.seen.join("\n"))
    }
}

/// A run against `url` writing into `reports`, with `extra` options.
fn run_against(url: &str, reports: &Path, extra: &[&str]) -> Command {
    let mut command = conform();
    command
        .args(["--target", url, "--reports"])
        .arg(reports)
        .args(extra);
    command
}

/// The ledger's creates that no delete follows.
fn outstanding(ledger: &Path) -> Vec<String> {
    let contents = conform::ledger::read(ledger).expect("the ledger reads");
    assert!(contents.skipped.is_empty(), "the ledger is whole");
    contents
        .outstanding()
        .into_iter()
        .map(|e| format!("{} {}", e.kind, e.id))
        .collect()
}

/// `conform sweep` of the run's ledger exits 0: nothing of the run is left.
fn sweep_leaves_nothing(url: &str, ledger: &Path) {
    let sweep = conform()
        .args(["sweep", "--target", url, "--ledger"])
        .arg(ledger)
        .output()
        .expect("sweep runs");
    assert_eq!(
        sweep.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&sweep.stdout),
        String::from_utf8_lossy(&sweep.stderr)
    );
}

fn sigint_stops_gracefully_with_teardown_reports_and_exit_130() {
    let served = serve();
    let reports = scratch("sigint");
    let mut run = Run::start(run_against(
        &served.url,
        &reports,
        &["--rate", "20/s", "--prefix", "conform-sigint"],
    ));
    run.first_test_done();
    let signalled = Instant::now();
    run.signal(libc::SIGINT);
    let (status, out) = run.end(Duration::from_secs(60));
    assert_eq!(status.code(), Some(130), "{out}");
    assert!(
        signalled.elapsed() < Duration::from_secs(60),
        "reports within 60 s"
    );
    let last = out
        .lines()
        .find(|l| l.starts_with("interrupted by SIGINT:"))
        .unwrap_or_else(|| panic!("one line says the run was interrupted:\n{out}"));
    assert!(last.contains("teardown ran"), "{last}");
    assert!(last.contains("conform sweep --target"), "{last}");
    assert!(!out.contains(TOKEN), "no token printed");
    let junit = std::fs::read_to_string(reports.join("junit.xml")).expect("junit.xml");
    assert!(
        junit.contains("interrupted by SIGINT before it ran"),
        "tests not run are skipped with the reason"
    );
    assert!(junit.contains("name=\"interrupted\""), "junit says so");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join("results.json")).expect("results.json"),
    )
    .expect("json");
    assert!(json["interrupted"]
        .as_str()
        .is_some_and(|s| s.starts_with("by SIGINT")));
    let summary = std::fs::read_to_string(reports.join("summary.md")).expect("summary.md");
    assert!(summary.starts_with("# conform: ⚠️ interrupted by SIGINT"));
    let html = std::fs::read_to_string(reports.join("report.html")).expect("report.html");
    assert!(html.contains("interrupted by SIGINT"));
    // teardown ran: every create of the ledger has its delete
    let ledger = reports.join("ledger.jsonl");
    assert_eq!(outstanding(&ledger), Vec::<String>::new(), "{out}");
    sweep_leaves_nothing(&served.url, &ledger);
    let _ = std::fs::remove_dir_all(&reports);
}

fn sigint_stops_an_embedded_run_gracefully_with_exit_130() {
    let reports = scratch("embedded");
    let mut command = conform();
    command
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .args(["--rate", "20/s", "--reports"])
        .arg(&reports);
    let mut run = Run::start(command);
    run.first_test_done();
    run.signal(libc::SIGINT);
    let (status, out) = run.end(Duration::from_secs(60));
    assert_eq!(status.code(), Some(130), "{out}");
    let last = out
        .lines()
        .find(|l| l.starts_with("interrupted by SIGINT:"))
        .unwrap_or_else(|| panic!("one line says the run was interrupted:\n{out}"));
    assert!(
        last.contains("teardown ran") && last.contains("the embedded service kept nothing"),
        "{last}"
    );
    let junit = std::fs::read_to_string(reports.join("junit.xml")).expect("junit.xml");
    assert!(junit.contains("interrupted by SIGINT before it ran"));
    let _ = std::fs::remove_dir_all(&reports);
}

fn a_second_sigterm_stops_at_once_with_the_ledger_whole_and_exit_143() {
    let served = serve();
    let reports = scratch("sigterm");
    let mut run = Run::start(run_against(
        &served.url,
        &reports,
        &["--rate", "10/s", "--prefix", "conform-sigterm"],
    ));
    run.first_test_done();
    run.signal(libc::SIGTERM);
    run.wait_for(Duration::from_secs(10), |line| {
        line.starts_with("SIGTERM received")
    });
    let again = Instant::now();
    run.signal(libc::SIGTERM);
    let (status, out) = run.end(Duration::from_secs(10));
    assert_eq!(status.code(), Some(143), "{out}");
    assert!(
        again.elapsed() < Duration::from_secs(3),
        "at once: {:?}",
        again.elapsed()
    );
    assert!(out.contains("interrupted again: stopped at once"), "{out}");
    assert!(out.contains("conform sweep --target"), "{out}");
    // whole: every line parses; what is outstanding the sweep removes
    let ledger = reports.join("ledger.jsonl");
    let _ = outstanding(&ledger);
    sweep_leaves_nothing(&served.url, &ledger);
    let _ = std::fs::remove_dir_all(&reports);
}

fn a_test_past_test_timeout_is_an_error_the_run_goes_on_and_progress_names_it() {
    let reports = scratch("timeout");
    let mut command = conform();
    command
        .env("CI", "1")
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .args(["--group", "state_versions", "--timeout", "20"])
        .args(["--test-timeout", "3s", "--reference-fault"])
        .arg("slow=GET /state-versions/:state_version_id")
        .arg("--reports")
        .arg(&reports);
    let (status, out) = Run::start(command).end(Duration::from_secs(120));
    assert_eq!(status.code(), Some(1), "{out}");
    let junit = std::fs::read_to_string(reports.join("junit.xml")).expect("junit.xml");
    assert!(
        junit.contains("the test ran past --test-timeout 3.0 s"),
        "{junit}"
    );
    assert!(junit.matches("<testcase").count() > junit.matches("<error").count());
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join("results.json")).expect("results.json"),
    )
    .expect("json");
    assert!(
        json["counts"]["pass"].as_u64().is_some_and(|n| n > 0),
        "the run went on"
    );
    let progress = out
        .lines()
        .find(|l| l.starts_with("progress:") && l.contains("; running: state_versions::"))
        .unwrap_or_else(|| panic!("the progress line names the test running:\n{out}"));
    assert!(progress.contains(" s)"), "{progress}");
    let _ = std::fs::remove_dir_all(&reports);
}

/// A small tmpfs, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    /// Mounts a tmpfs of `size` at a scratch folder; `None` (with why) when it cannot.
    fn mount(size: &str) -> Result<Self, String> {
        // SAFETY: geteuid reads the process's effective user id.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: a tmpfs cannot be mounted".into());
        }
        let dir = scratch("full-disk");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Self(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The organizations the service holds whose names start with `prefix`.
fn organizations_named(url: &str, prefix: &str) -> Vec<String> {
    let root = url::Url::parse(url).expect("url");
    let host = root.host_str().expect("host");
    let port = root.port_or_known_default().expect("port");
    let mut stream = TcpStream::connect((host, port)).expect("connect");
    let path = format!("{}api/v2/organizations?page%5Bsize%5D=100", root.path());
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let start = body.find('{').unwrap_or(0);
    let end = body.rfind('}').map_or(body.len(), |e| e + 1);
    let document: serde_json::Value =
        serde_json::from_str(&body[start..end]).unwrap_or_else(|e| panic!("{e}: {answer}"));
    document["data"]
        .as_array()
        .unwrap_or_else(|| panic!("the organizations' list: {answer}"))
        .iter()
        .filter_map(|o| o["id"].as_str().or(o["attributes"]["name"].as_str()))
        .filter(|name| name.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

fn a_full_disk_creates_nothing_unrecorded_and_never_exits_0() {
    let disk = match SmallDisk::mount("16k") {
        Ok(disk) => disk,
        Err(why) => {
            eprintln!("skipped: a_full_disk_creates_nothing_unrecorded_and_never_exits_0 needs a real small tmpfs: {why}");
            return;
        }
    };
    let served = serve();
    let (status, out) = Run::start(run_against(
        &served.url,
        &disk.0,
        &["--prefix", "conform-fulldisk"],
    ))
    .end(Duration::from_secs(600));
    assert_ne!(status.code(), Some(0), "{out}");
    assert_eq!(status.code(), Some(4), "{out}");
    assert!(out.contains("warning: cannot write the ledger"), "{out}");
    assert!(
        out.contains("creates nothing more, so that nothing it makes goes unrecorded"),
        "tests that would create say why: {out}"
    );
    assert!(out.contains("error: cannot write the report"), "{out}");
    // teardown ran: nothing the run made is left, recorded or not
    assert_eq!(
        organizations_named(&served.url, "conform-fulldisk"),
        Vec::<String>::new(),
        "{out}"
    );
}

fn a_ledger_or_report_that_cannot_be_written_never_passes_silently() {
    // what any machine can do without root: the ledger on /dev/full (every write fails with
    // "no space left"), and a report whose path is taken by a folder
    let served = serve();
    let reports = scratch("unwritable");
    std::fs::create_dir_all(reports.join("junit.xml")).expect("a folder in the way");
    let (status, out) = Run::start(run_against(
        &served.url,
        &reports,
        &["--prefix", "conform-devfull", "--ledger", "/dev/full"],
    ))
    .end(Duration::from_secs(600));
    assert_eq!(status.code(), Some(4), "{out}");
    assert!(
        out.contains("warning: cannot write the ledger /dev/full"),
        "{out}"
    );
    assert!(
        out.contains("the ledger /dev/full cannot be written"),
        "the tests that would create end with the reason: {out}"
    );
    assert!(out.contains("error: cannot write the report"), "{out}");
    assert!(out.contains("junit.xml"), "{out}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join("results.json")).expect("results.json"),
    )
    .expect("json");
    assert!(
        json["counts"]["error"].as_u64().is_some_and(|n| n > 0),
        "tests that would create end error"
    );
    assert!(json["warnings"].as_array().is_some_and(|w| w
        .iter()
        .any(|w| w.as_str().is_some_and(|w| w.contains("/dev/full")))));
    assert_eq!(
        organizations_named(&served.url, "conform-devfull"),
        Vec::<String>::new(),
        "teardown ran: {out}"
    );
    let _ = std::fs::remove_dir_all(&reports);
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        sigint_stops_gracefully_with_teardown_reports_and_exit_130,
        sigint_stops_an_embedded_run_gracefully_with_exit_130,
        a_second_sigterm_stops_at_once_with_the_ledger_whole_and_exit_143,
        a_test_past_test_timeout_is_an_error_the_run_goes_on_and_progress_names_it,
        a_full_disk_creates_nothing_unrecorded_and_never_exits_0,
        a_ledger_or_report_that_cannot_be_written_never_passes_silently
    ]
}
