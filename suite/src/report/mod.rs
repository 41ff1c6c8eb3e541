//! Reports: verdicts in, files and console lines out. Nothing here knows HTTP beyond the
//! recorded exchanges.
//!
//! A run writes, into `--reports DIR`: `junit.xml`, `summary.md` (for a CI step summary),
//! `results.json` (every test, for tools) and `report.html` (self-contained, with the
//! transcripts of the failing tests and filters by group and verdict). All of them state the
//! same verdicts, and every text in them is scrubbed of the run's secrets.

mod causes;
mod console;
mod html;
mod json;
mod junit;
mod progress;
mod summary_md;

pub use causes::{cause_groups, CauseGroup};
pub use console::{print_failures, print_summary, Figures};
pub use html::write_html;
pub use json::write_json;
pub use junit::write_junit;
pub use progress::{Progress, ProgressMode};
pub use summary_md::write_summary_md;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::target::{redact, Secret};
use crate::verdict::{Profile, TestResult, Verdict};

/// What every report states about the run (printed at the start too).
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The resolved configuration, one `key = value` per entry, tokens redacted.
    pub config: Vec<(String, String)>,
    /// The secrets to scrub from anything written.
    pub secrets: Vec<Secret>,
}

impl RunInfo {
    /// Scrubs every secret from a text.
    pub fn scrub(&self, text: &str) -> String {
        let refs: Vec<&Secret> = self.secrets.iter().collect();
        redact(text, &refs)
    }

    /// A configuration value by key (`target`, `profile`, ...), scrubbed.
    pub fn get(&self, key: &str) -> Option<String> {
        self.config
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| self.scrub(v))
    }
}

/// Everything the report files are made from.
#[derive(Debug, Clone, Copy)]
pub struct RunReport<'a> {
    /// Every test's result, sorted by name.
    pub results: &'a [TestResult],
    /// The run's configuration and secrets.
    pub info: &'a RunInfo,
    /// The profile.
    pub profile: Profile,
    /// Requests and wall time.
    pub figures: &'a Figures,
    /// What the run made and could not delete.
    pub leftovers: &'a [String],
    /// End-of-run warnings (waivers that matched nothing, expired waivers, ...).
    pub warnings: &'a [String],
}

/// The verdicts in the order every report lists them.
pub const VERDICTS: [Verdict; 7] = [
    Verdict::Pass,
    Verdict::Fail,
    Verdict::Blocked,
    Verdict::Unsupported,
    Verdict::Skipped,
    Verdict::Waived,
    Verdict::Error,
];

/// Counts per verdict, in [`VERDICTS`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts(pub [usize; 7]);

impl Counts {
    /// Adds one verdict.
    pub fn add(&mut self, verdict: Verdict) {
        if let Some(i) = VERDICTS.iter().position(|v| *v == verdict) {
            self.0[i] += 1;
        }
    }

    /// The count of one verdict.
    pub fn of(&self, verdict: Verdict) -> usize {
        VERDICTS
            .iter()
            .position(|v| *v == verdict)
            .map(|i| self.0[i])
            .unwrap_or(0)
    }

    /// All tests.
    pub fn total(&self) -> usize {
        self.0.iter().sum()
    }
}

/// Counts per group (sorted) and in all.
pub fn tally(results: &[TestResult]) -> (BTreeMap<&str, Counts>, Counts) {
    let mut groups: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut total = Counts::default();
    for r in results {
        groups.entry(r.group.as_str()).or_default().add(r.verdict);
        total.add(r.verdict);
    }
    (groups, total)
}

/// One line on what the passes certify: how many observed the endpoint's effect (a check of
/// `checks::EFFECTS`), and how many passed on the form of their answers alone (reads whose
/// whole contract is a document). `None` when nothing passed.
pub fn effects_line(results: &[TestResult]) -> Option<String> {
    let passed: Vec<&TestResult> = results
        .iter()
        .filter(|r| r.verdict == Verdict::Pass)
        .collect();
    if passed.is_empty() {
        return None;
    }
    let observed = passed.iter().filter(|r| !r.observed().is_empty()).count();
    Some(format!(
        "effects: {observed} of {} passes observed what their endpoint did (made, changed, removed, linked, read back: `observed` in results.json); {} passed on their answers' form alone",
        passed.len(),
        passed.len() - observed
    ))
}

/// True for the verdicts that fail the run.
pub fn is_failure(verdict: Verdict) -> bool {
    matches!(verdict, Verdict::Fail | Verdict::Error)
}

/// Writes every report file into `dir`; returns each path with how writing it went.
pub fn write_reports(dir: &Path, report: &RunReport) -> Vec<(PathBuf, std::io::Result<()>)> {
    let mut out = Vec::new();
    let junit = dir.join("junit.xml");
    let r = write_junit(&junit, report.results, report.info);
    out.push((junit, r));
    let md = dir.join("summary.md");
    let r = write_summary_md(&md, report);
    out.push((md, r));
    let json = dir.join("results.json");
    let r = write_json(&json, report);
    out.push((json, r));
    let html = dir.join("report.html");
    let r = write_html(&html, report);
    out.push((html, r));
    out
}

/// Writes a text file, creating its folder, scrubbing the whole text once more; `Ok` only
/// once the whole text is on disk (a full disk is an error and leaves no file, never an
/// empty report).
fn write_scrubbed(path: &Path, text: &str, info: &RunInfo) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let written = std::fs::File::create(path).and_then(|mut file| {
        file.write_all(info.scrub(text).as_bytes())?;
        file.sync_all()
    });
    if written.is_err() {
        // a cut or stale file must not pass for this run's report
        let _ = std::fs::remove_file(path);
    }
    written
}

/// The waiting by route, for the summaries: `waiting by route: POST /x/:id 6.0 s (3 x 429),
/// ...`, and whether the target's 429s showed a limit on the whole client. `None` without
/// a 429.
pub fn route_waits_line(throttle: &crate::target::ThrottleStats) -> Option<String> {
    if throttle.routes.is_empty() {
        return None;
    }
    let routes: Vec<String> = throttle
        .routes
        .iter()
        .map(|r| {
            format!(
                "{} {} ({} x 429)",
                r.route,
                crate::clock::human(r.waited),
                r.rate_limited
            )
        })
        .collect();
    let scope = if throttle.global {
        format!(
            "; 429s on {} routes within {} s showed a global limit, so every request waited then",
            crate::target::GLOBAL_ROUTES,
            crate::target::GLOBAL_SPAN.as_secs()
        )
    } else {
        "; other routes went on".to_string()
    };
    Some(format!("waiting by route: {}{scope}", routes.join(", ")))
}

/// Requests per second of the run.
fn rate(figures: &Figures) -> f64 {
    let secs = figures.wall.as_secs_f64();
    if secs > 0.0 {
        figures.requests as f64 / secs
    } else {
        0.0
    }
}
