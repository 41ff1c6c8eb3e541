//! Progress on stderr: tests done of the total, failures so far, requests per second, and
//! the tests running longest.
//!
//! On a terminal (and without `CI`) one live line is redrawn in place; libtest's per-test
//! lines then go to `reports/libtest.log` so the two never interleave. Elsewhere (a pipe, a
//! CI log) a plain line is printed every few seconds and once at the end, while libtest's
//! lines stay on stdout.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::verdict::Verdict;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A line redrawn in place on a terminal.
    Live,
    /// Plain lines every `every`, for logs.
    Lines {
        /// Time between two lines.
        every: Duration,
    },
}

impl ProgressMode {
    /// `Live` on a terminal outside CI, else plain lines every 10 seconds.
    pub fn detect() -> Self {
        let ci = std::env::var("CI")
            .map(|v| !v.is_empty() && v != "false" && v != "0")
            .unwrap_or(false);
        if !ci
            && std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb")
        {
            ProgressMode::Live
        } else {
            ProgressMode::Lines {
                every: Duration::from_secs(10),
            }
        }
    }
}

type Requests = Box<dyn Fn() -> u64 + Send + Sync>;

/// How many of the tests running the progress line names.
const LONGEST_SHOWN: usize = 3;

/// The progress of a run; [`Progress::record`] after every test, [`Progress::finish`] once.
pub struct Progress {
    mode: ProgressMode,
    total: AtomicUsize,
    done: AtomicUsize,
    /// Tests a signal kept from running or finishing: not done.
    not_run: AtomicUsize,
    failed: AtomicUsize,
    started: Instant,
    requests: Requests,
    /// The tests running, with when each started.
    running: Mutex<HashMap<String, Instant>>,
    stop: Mutex<bool>,
    wake: Condvar,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

impl Progress {
    /// Starts showing progress of `total` tests; `requests` reads the requests sent so far.
    pub fn start(
        mode: ProgressMode,
        total: usize,
        requests: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Arc<Self> {
        let progress = Arc::new(Self {
            mode,
            total: AtomicUsize::new(total),
            done: AtomicUsize::new(0),
            not_run: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
            started: Instant::now(),
            requests: Box::new(requests),
            running: Mutex::new(HashMap::new()),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            ticker: Mutex::new(None),
        });
        let every = match mode {
            ProgressMode::Live => Duration::from_millis(200),
            ProgressMode::Lines { every } => every,
        };
        let me = progress.clone();
        let handle = std::thread::spawn(move || loop {
            let Ok(stopped) = me.stop.lock() else { return };
            // a finish before this thread first waits has notified no one: seen here
            if *stopped {
                return;
            }
            let Ok((stopped, _)) = me.wake.wait_timeout(stopped, every) else {
                return;
            };
            if *stopped {
                return;
            }
            drop(stopped);
            me.show();
        });
        if let Ok(mut ticker) = progress.ticker.lock() {
            *ticker = Some(handle);
        }
        progress
    }

    /// Sets the number of tests (once the filters are applied).
    pub fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
    }

    /// Notes that a test started.
    pub fn begin(&self, name: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.insert(name.to_string(), Instant::now());
        }
    }

    /// Counts one finished test.
    pub fn record(&self, name: &str, verdict: Verdict) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(name);
        }
        self.done.fetch_add(1, Ordering::Relaxed);
        if verdict.fails_run() {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one test a signal kept from running or finishing: not among those done.
    pub fn not_run(&self, name: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(name);
        }
        self.not_run.fetch_add(1, Ordering::Relaxed);
    }

    /// The progress as one line of text.
    pub fn line(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64();
        let rate = if secs > 0.0 {
            (self.requests)() as f64 / secs
        } else {
            0.0
        };
        let failed = self.failed.load(Ordering::Relaxed);
        let not_run = match self.not_run.load(Ordering::Relaxed) {
            0 => String::new(),
            n => format!(", {n} not run (interrupted)"),
        };
        let mut line = format!(
            "{}/{} tests done{not_run}, {failed} failing, {rate:.0} requests/s, {secs:.0} s",
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed)
        );
        let longest = self.longest_running(LONGEST_SHOWN);
        if !longest.is_empty() {
            let named: Vec<String> = longest
                .iter()
                .map(|(name, ran)| format!("{name} ({} s)", ran.as_secs()))
                .collect();
            line.push_str(&format!("; running: {}", named.join(", ")));
        }
        line
    }

    /// The `n` tests running longest, longest first, with how long each has run.
    pub fn longest_running(&self, n: usize) -> Vec<(String, Duration)> {
        let Ok(running) = self.running.lock() else {
            return Vec::new();
        };
        let mut all: Vec<(String, Duration)> = running
            .iter()
            .map(|(name, since)| (name.clone(), since.elapsed()))
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }

    fn show(&self) {
        let mut err = std::io::stderr().lock();
        let _ = match self.mode {
            ProgressMode::Live => write!(err, "\r\x1b[2K{}", self.line()),
            ProgressMode::Lines { .. } => writeln!(err, "progress: {}", self.line()),
        };
        let _ = err.flush();
    }

    /// Stops the ticker and prints the last line (ending the live line).
    pub fn finish(&self) {
        if let Ok(mut stopped) = self.stop.lock() {
            *stopped = true;
        }
        self.wake.notify_all();
        if let Some(handle) = self.ticker.lock().ok().and_then(|mut t| t.take()) {
            let _ = handle.join();
        }
        let mut err = std::io::stderr().lock();
        if self.mode == ProgressMode::Live {
            let _ = write!(err, "\r\x1b[2K");
        }
        let _ = writeln!(err, "progress: {}", self.line());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_tests_running_longest_first() {
        let progress = Progress::start(
            ProgressMode::Lines {
                every: Duration::from_secs(3600),
            },
            3,
            || 0,
        );
        progress.begin("runs::apply::api-v2");
        std::thread::sleep(Duration::from_millis(20));
        progress.begin("workspaces::show::bare");
        progress.begin("teams::list::bare");
        progress.record("teams::list::bare", Verdict::Pass);
        let line = progress.line();
        assert!(line.starts_with("1/3 tests done"), "{line}");
        let running = line.split("; running: ").nth(1).unwrap_or_default();
        assert!(
            running.starts_with("runs::apply::api-v2 (0 s), workspaces::show::bare (0 s)"),
            "{line}"
        );
        assert!(!running.contains("teams::list::bare"), "{line}");
        progress.finish();
    }

    #[test]
    fn tests_kept_from_running_are_not_counted_done() {
        let progress = Progress::start(
            ProgressMode::Lines {
                every: Duration::from_secs(3600),
            },
            3,
            || 0,
        );
        progress.begin("teams::list::bare");
        progress.record("teams::list::bare", Verdict::Pass);
        progress.begin("runs::apply::api-v2");
        progress.not_run("runs::apply::api-v2");
        progress.not_run("workspaces::show::bare");
        let line = progress.line();
        assert!(
            line.starts_with("1/3 tests done, 2 not run (interrupted), 0 failing"),
            "{line}"
        );
        assert!(!line.contains("running:"), "{line}");
        progress.finish();
    }
}
