//! The binary in its own processes, for the tests that drive it end to end: `conform serve`,
//! `conform proxy`, scratch folders and what a process said.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
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

/// How long `conform serve` may take to print its banner.
const BANNER_WITHIN: Duration = Duration::from_secs(30);

/// `conform serve` in its own process on a free loopback port; killed when dropped (and the
/// folder it wrote its certificate authority to, with `--tls`, removed).
pub struct Served {
    child: Child,
    /// Its root URL, from the banner's first line (`http://127.0.0.1:PORT`, or `https://`
    /// with `--tls`).
    pub url: String,
    /// The banner's lines (the address, the tokens, what it seeded, ...), up to the last,
    /// `compat:`.
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

    /// A service started with these `conform serve` arguments (and `--port 0` unless they
    /// name a port), `CONFORM_TOKEN` and `CONFORM_ADMIN_TOKEN` removed from its environment.
    pub fn with_args(args: &[&str]) -> Self {
        Self::with_env(args, &[])
    }

    /// Like [`Served::with_args`], with these environment variables set (after
    /// `CONFORM_TOKEN` and `CONFORM_ADMIN_TOKEN` are removed, so they can be set here):
    /// the tokens given the way an operator may give them.
    pub fn with_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_conform"));
        command.arg("serve");
        if !args.contains(&"--port") {
            command.args(["--port", "0"]);
        }
        let mut child = command
            .args(args)
            .env_remove("CONFORM_TOKEN")
            .env_remove("CONFORM_ADMIN_TOKEN")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("conform serve starts");
        // Both streams are read on threads of their own, to the end, so that it never blocks
        // on a full pipe; stderr is only shown when no banner comes.
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let deadline = Instant::now() + BANNER_WITHIN;
        let mut banner = Vec::new();
        let whole = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    let last = line.trim_start().starts_with("compat:");
                    banner.push(line);
                    if last {
                        break true;
                    }
                }
                Err(_) => break false,
            }
        };
        let url = banner
            .first()
            .and_then(|first| first.strip_prefix("reference service at "))
            .map(|url| url.trim().to_string());
        match url {
            Some(url) if whole => Served { child, url, banner },
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                let errors = errors.join().unwrap_or_default();
                panic!(
                    "no whole banner from conform serve {args:?} within {BANNER_WITHIN:?}: \
                     {banner:?}\n{errors}"
                );
            }
        }
    }

    /// The value of the banner's first line that starts (leading blanks aside) with `prefix`,
    /// trimmed: `line("admin token:")`, `line("seeded assessment_result:")`,
    /// `line("terraform:")`, `line("trust this file:")`; `None` when no line does.
    pub fn line(&self, prefix: &str) -> Option<&str> {
        self.banner
            .iter()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .map(str::trim)
    }

    /// Like [`Served::line`], for a line the banner must have: panics, showing the banner,
    /// when it has none.
    pub fn value(&self, prefix: &str) -> &str {
        self.line(prefix)
            .unwrap_or_else(|| panic!("no {prefix} in {:?}", self.banner))
    }

    /// The port it listens on, from its URL.
    pub fn port(&self) -> u16 {
        self.url
            .rsplit(':')
            .next()
            .and_then(|p| p.trim_end_matches('/').parse().ok())
            .unwrap_or_else(|| panic!("no port in {}", self.url))
    }

    /// Sends SIGTERM, as a service manager stops it, and waits (10 s at most) for the exit
    /// code.
    pub fn terminate(&mut self) -> Option<i32> {
        // SAFETY: a signal to our own child, whose pid has not been waited for yet.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The file holding the certificate authority to trust, which `conform serve --tls`
    /// makes at start and prints (`trust this file:`); `None` without `--tls`, or with the
    /// user's own certificate (`--tls-cert`/`--tls-key`).
    pub fn trust_file(&self) -> Option<&Path> {
        self.line("trust this file:").map(Path::new)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The folder `conform serve --tls` wrote the authority to (`conform-serve-PID`).
        if let Some(dir) = self.trust_file().and_then(Path::parent) {
            let ours = dir
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("conform-serve-"));
            if ours {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}
