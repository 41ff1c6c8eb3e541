//! The binary in its own processes, for the tests that drive it end to end: `conform serve`,
//! `conform proxy`, scratch folders and what a process said.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fresh scratch folder under the target directory, named after the test file (`area`) and
/// the test (`name`).
pub fn scratch(area: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{area}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// What a finished process printed: its stdout, then its stderr.
pub fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Starts `conform proxy` in front of `target` on a free loopback port, writing its reports
/// to `reports` (at most 60 s unless `extra` says otherwise); answers the child and the
/// proxy's root URL.
pub fn start_proxy(target: &str, reports: &Path, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["proxy", "--target", target, "--listen", "127.0.0.1:0"])
        .arg("--reports")
        .arg(reports)
        .args(["--duration", "60"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("conform proxy starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the proxy says where it listens");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .map(|w| w.trim_end_matches(',').to_string())
        .unwrap_or_else(|| panic!("no address in `{line}`"));
    (child, url)
}

/// Stops the proxy with SIGTERM and waits for it (its reports are then written); answers
/// what it printed on stderr.
pub fn stop_proxy(mut child: Child) -> String {
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -TERM {pid}");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the proxy did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    err
}

/// `conform serve` in its own process on a free loopback port; killed when dropped.
pub struct Served {
    child: Child,
    /// Its root URL, from the banner's first line.
    pub url: String,
    /// The banner's lines (the address, the tokens, what it seeded, ...).
    pub banner: Vec<String>,
}

impl Served {
    /// A service that takes these tokens, with these faults switched on.
    pub fn start(token: &str, admin_token: &str, faults: &[&str]) -> Self {
        let mut args = vec!["--token", token, "--admin-token", admin_token];
        for fault in faults {
            args.extend(["--fault", fault]);
        }
        Self::with_args(&args)
    }

    /// A service started with these `conform serve` arguments (besides `--port 0`).
    pub fn with_args(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
            .args(["serve", "--port", "0"])
            .args(args)
            .env_remove("CONFORM_TOKEN")
            .env_remove("CONFORM_ADMIN_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("conform serve starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut banner = Vec::new();
        for line in lines.by_ref() {
            let line = line.expect("readable");
            let last = line.trim_start().starts_with("compat:");
            banner.push(line);
            if last {
                break;
            }
        }
        let first = banner.first().cloned().unwrap_or_default();
        let url = first
            .strip_prefix("reference service at ")
            .unwrap_or_else(|| panic!("unexpected banner: {banner:?}"))
            .trim()
            .to_string();
        // keep draining its output so it never blocks
        std::thread::spawn(move || for _ in lines {});
        Served { child, url, banner }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
