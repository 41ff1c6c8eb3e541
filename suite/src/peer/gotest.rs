//! One top-level Go test in its own process (`go tool test2json` around the test binary), its
//! events read as they come, and its outcome: a panic ends only its own process, so it fails
//! only its own test. Memory is bounded: each test keeps the last 16 KiB of the output of the
//! (sub)tests that failed or skipped.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

/// Output kept per (sub)test.
const KEPT_OUTPUT: usize = 16 * 1024;
/// The longest line read whole; the rest of a longer one is dropped.
const LONGEST_LINE: u64 = 64 * 1024;

/// What a top-level test came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// It passed, and at least one subtest (or the test itself) ran.
    Pass,
    /// It failed.
    Fail,
    /// It skipped, or every subtest it has skipped: it judged nothing.
    Skipped,
}

impl Status {
    /// `pass`, `fail` or `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skipped => "skipped",
        }
    }
}

/// One top-level test's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The top-level test.
    pub name: String,
    /// What it came to.
    pub status: Status,
    /// Whether it panicked (its process ended in the panic).
    pub panicked: bool,
    /// Why it failed or skipped, in a line.
    pub reason: String,
    /// The subtests that failed.
    pub failed_subtests: Vec<String>,
    /// The output of what failed (or, for a skip, of what skipped), bounded.
    pub output: String,
    /// How long its process ran.
    pub duration: Duration,
    /// The suite's tests (`group::endpoint::form`) its exchanges matched (filled by the
    /// runner from the test's own proxy).
    pub endpoints: Vec<String>,
}

/// How to run one test.
pub struct Invocation<'a> {
    /// The test binary.
    pub binary: &'a Path,
    /// The folder it runs in.
    pub workdir: &'a Path,
    /// The `-test.skip` pattern.
    pub skip: &'a str,
    /// The environment it gets, on top of PATH, HOME and TMPDIR only.
    pub env: &'a [(String, String)],
    /// Killed after this long.
    pub timeout: Duration,
}

#[derive(Debug, Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Output")]
    output: Option<String>,
}

/// What the events said, test by test.
#[derive(Debug, Default)]
struct Events {
    /// Final action of each (sub)test.
    ended: BTreeMap<String, String>,
    /// Kept output of each (sub)test.
    output: BTreeMap<String, String>,
    panicked: bool,
}

impl Events {
    fn take(&mut self, event: Event) {
        let test = event.test.unwrap_or_default();
        match event.action.as_str() {
            "pass" | "fail" | "skip" if !test.is_empty() => {
                self.ended.insert(test, event.action);
            }
            "output" => {
                let text = event.output.unwrap_or_default();
                if text.starts_with("panic: ") || text.contains("\npanic: ") {
                    self.panicked = true;
                }
                let kept = self.output.entry(test).or_default();
                kept.push_str(&text);
                if kept.len() > KEPT_OUTPUT {
                    let mut cut = kept.len() - KEPT_OUTPUT;
                    while !kept.is_char_boundary(cut) {
                        cut += 1;
                    }
                    kept.drain(..cut);
                }
            }
            _ => {}
        }
    }

    /// The outcome of `name` from its events and how its process ended.
    fn outcome(self, name: &str, ended_by: Option<String>, duration: Duration) -> Outcome {
        let subtests: Vec<(&String, &String)> = self
            .ended
            .iter()
            .filter(|(t, _)| t.starts_with(&format!("{name}/")))
            .collect();
        let failed_subtests: Vec<String> = subtests
            .iter()
            .filter(|(_, a)| a.as_str() == "fail")
            .map(|(t, _)| t.to_string())
            .collect();
        let all_skipped =
            !subtests.is_empty() && subtests.iter().all(|(_, a)| a.as_str() == "skip");
        let top = self.ended.get(name).map(String::as_str);
        let (status, reason) = match (top, &ended_by) {
            (_, Some(why)) => (Status::Fail, why.clone()),
            (Some("pass"), _) if all_skipped => (
                Status::Skipped,
                format!("every subtest skipped: {}", skip_reason(&self.output, name)),
            ),
            (Some("pass"), _) => (Status::Pass, String::new()),
            (Some("skip"), _) => (Status::Skipped, skip_reason(&self.output, name)),
            (Some(_), _) if self.panicked => (Status::Fail, "panicked".to_string()),
            (Some(_), _) if failed_subtests.is_empty() => (Status::Fail, "failed".to_string()),
            (Some(_), _) => (
                Status::Fail,
                format!(
                    "{} of {} subtests failed",
                    failed_subtests.len(),
                    subtests.len()
                ),
            ),
            (None, None) => (
                Status::Fail,
                if self.panicked {
                    "panicked".to_string()
                } else {
                    "the test's process ended without a result".to_string()
                },
            ),
        };
        let shown: Vec<&str> = match status {
            Status::Pass => Vec::new(),
            Status::Skipped => vec![name],
            Status::Fail => std::iter::once(name)
                .chain(failed_subtests.iter().map(String::as_str))
                .collect(),
        };
        let mut output = String::new();
        for test in shown {
            if let Some(text) = self.output.get(test) {
                output.push_str(text);
            }
        }
        if output.len() > KEPT_OUTPUT {
            let mut cut = output.len() - KEPT_OUTPUT;
            while !output.is_char_boundary(cut) {
                cut += 1;
            }
            output.drain(..cut);
        }
        Outcome {
            name: name.to_string(),
            status,
            panicked: self.panicked,
            reason,
            failed_subtests,
            output,
            duration,
            endpoints: Vec::new(),
        }
    }
}

/// The first `t.Skip` message of a test or its subtests.
fn skip_reason(output: &BTreeMap<String, String>, name: &str) -> String {
    output
        .iter()
        .filter(|(t, _)| t.as_str() == name || t.starts_with(&format!("{name}/")))
        .flat_map(|(_, text)| text.lines())
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("===") && !l.starts_with("---"))
        .unwrap_or("no reason given")
        .chars()
        .take(200)
        .collect()
}

/// Reads the events of a test2json stream.
fn read_events(stream: impl Read) -> Events {
    let mut events = Events::default();
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line longer than the bound is read in part; the rest is dropped below.
        match (&mut reader)
            .take(LONGEST_LINE)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') && line.len() as u64 == LONGEST_LINE {
            let mut rest = Vec::new();
            let _ = reader.read_until(b'\n', &mut rest);
        }
        if let Ok(event) = serde_json::from_slice::<Event>(&line) {
            events.take(event);
        }
    }
    events
}

/// The process groups of the tests running now.
static RUNNING: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Ends every test process running now (on a signal to conform).
pub fn kill_all() {
    if let Ok(running) = RUNNING.lock() {
        for pid in running.iter() {
            // SAFETY: kill(2) on a process group this module started.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
}

/// Runs one top-level test and reads its outcome.
pub fn run(name: &str, how: &Invocation) -> Outcome {
    let started = Instant::now();
    let mut cmd = Command::new("go");
    cmd.arg("tool")
        .arg("test2json")
        .arg("-t")
        .arg(how.binary)
        .arg("-test.v=test2json")
        .arg(format!("-test.run=^{name}$"))
        .arg(format!("-test.skip={}", how.skip))
        .arg(format!("-test.timeout={}s", how.timeout.as_secs().max(1)))
        .current_dir(how.workdir)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // Its own process group: a kill reaches the test binary under test2json too.
        .process_group(0);
    for var in [
        "PATH",
        "HOME",
        "TMPDIR",
        "GOROOT",
        "GOPATH",
        "GOCACHE",
        "GOMODCACHE",
    ] {
        if let Some(value) = std::env::var_os(var) {
            cmd.env(var, value);
        }
    }
    for (key, value) in how.env {
        cmd.env(key, value);
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Events::default().outcome(
                name,
                Some(format!("cannot start `go tool test2json`: {e}")),
                started.elapsed(),
            )
        }
    };
    let pid = child.id() as i32;
    if let Ok(mut running) = RUNNING.lock() {
        running.push(pid);
    }
    let stdout = child.stdout.take();
    // The watchdog: the test's own -test.timeout should end it first (with a panic that names
    // what was running); this kill is for a process that does not end even so.
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let hard_limit = how.timeout + Duration::from_secs(20);
    let watchdog = std::thread::spawn(move || {
        if watch.recv_timeout(hard_limit).is_err() {
            // SAFETY: kill(2) on our own child's process group; a stale pgid at worst fails.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            return true;
        }
        false
    });
    let events = stdout.map(read_events).unwrap_or_default();
    let status = child.wait();
    if let Ok(mut running) = RUNNING.lock() {
        running.retain(|p| *p != pid);
    }
    let _ = done.send(());
    let killed = watchdog.join().unwrap_or(false);
    let ended_by = if killed {
        Some(format!(
            "killed after {} s without ending",
            hard_limit.as_secs()
        ))
    } else {
        match status {
            Ok(s) if !s.success() && !events.ended.contains_key(name) && !events.panicked => {
                Some(format!("the test's process ended without a result ({s})"))
            }
            Err(e) => Some(format!("lost the test's process: {e}")),
            _ => None,
        }
    };
    events.outcome(name, ended_by, started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome_of(stream: &str) -> Outcome {
        read_events(stream.as_bytes()).outcome("TestX", None, Duration::ZERO)
    }

    fn ev(action: &str, test: &str, output: &str) -> String {
        serde_json::json!({"Action": action, "Test": test, "Output": output}).to_string() + "\n"
    }

    #[test]
    fn a_pass_with_a_subtest_that_ran_is_a_pass() {
        let s = ev("run", "TestX", "")
            + &ev("pass", "TestX/a", "")
            + &ev("skip", "TestX/b", "")
            + &ev("pass", "TestX", "");
        assert_eq!(outcome_of(&s).status, Status::Pass);
    }

    #[test]
    fn a_pass_whose_subtests_all_skipped_is_skipped_with_the_reason() {
        let s = ev("output", "TestX/a", "    x_test.go:12: needs ENABLE_BETA\n")
            + &ev("skip", "TestX/a", "")
            + &ev("skip", "TestX/b", "")
            + &ev("pass", "TestX", "");
        let o = outcome_of(&s);
        assert_eq!(o.status, Status::Skipped);
        assert!(o.reason.contains("needs ENABLE_BETA"), "{}", o.reason);
    }

    #[test]
    fn a_failed_subtest_fails_the_test_with_its_output() {
        let s = ev("output", "TestX/a", "Error: expected 1, got 2\n")
            + &ev("fail", "TestX/a", "")
            + &ev("pass", "TestX/b", "")
            + &ev("fail", "TestX", "");
        let o = outcome_of(&s);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.failed_subtests, vec!["TestX/a".to_string()]);
        assert_eq!(o.reason, "1 of 2 subtests failed");
        assert!(o.output.contains("expected 1, got 2"));
    }

    #[test]
    fn a_panic_fails_only_its_test_and_says_so() {
        let s = ev(
            "output",
            "TestX",
            "panic: runtime error: index out of range [0] with length 0\n",
        ) + &ev("fail", "TestX", "");
        let o = outcome_of(&s);
        assert_eq!(o.status, Status::Fail);
        assert!(o.panicked);
        assert_eq!(o.reason, "panicked");
        // A process that ended with no result at all is a failure too, never a pass.
        assert_eq!(
            read_events("".as_bytes())
                .outcome("TestX", None, Duration::ZERO)
                .status,
            Status::Fail
        );
    }

    #[test]
    fn output_kept_is_bounded_and_garbage_is_ignored() {
        let big = "x".repeat(200 * 1024);
        let s =
            String::from("not json\n") + &ev("output", "TestX", &big) + &ev("fail", "TestX", "");
        let o = outcome_of(&s);
        assert_eq!(o.status, Status::Fail);
        assert!(o.output.len() <= KEPT_OUTPUT);
    }
}
