//! Reports: verdicts in, files and console lines out. Nothing here knows HTTP beyond the
//! recorded exchanges.
//!
//! A run writes, into `--reports DIR`: `junit.xml`, `summary.md` (for a CI step summary),
//! `results.json` (every test, for tools) and `report.html` (self-contained, with the
//! transcripts of the failing tests and filters by group and verdict). All of them state the
//! same verdicts, and every text in them is scrubbed of the run's secrets
//! ([`crate::target::redact`]: a secret of 8 characters or more wherever it occurs, a
//! shorter one only where it stands as a credential, so that test names and messages that
//! merely contain its letters stay intact).

mod causes;
mod console;
mod html;
mod json;
mod junit;
mod progress;
mod summary_md;

pub use causes::{cause_groups, CauseGroup};
pub use console::{print_failures, print_summary, Figures, Latency, LatencyBound, RateBound};
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
    /// Scrubs the run's secrets from a text (see [`crate::target::redact`]). Call it on the
    /// text before it is escaped for its format: a short secret is recognised by what stands
    /// around it (a quote, `=`, an authorization scheme).
    pub fn scrub(&self, text: &str) -> String {
        let refs: Vec<&Secret> = self.secrets.iter().collect();
        redact(text, &refs)
    }

    /// A text as a terminal or `summary.md` may show it: scrubbed, then its control
    /// characters written visibly ([`crate::target::visible`]: a target's answer never sets a
    /// window title or clears the screen).
    pub fn shown(&self, text: &str) -> String {
        crate::target::visible(&self.scrub(text)).into_owned()
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
    /// What changed since `--baseline` (the baseline's file, and the changes).
    pub changes: Option<(&'a str, &'a crate::compare::Changes)>,
}

/// Counts per verdict, in [`Verdict::ALL`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts(pub [usize; 7]);

impl Counts {
    /// Adds one verdict.
    pub fn add(&mut self, verdict: Verdict) {
        if let Some(i) = Verdict::ALL.iter().position(|v| *v == verdict) {
            self.0[i] += 1;
        }
    }

    /// The count of one verdict.
    pub fn of(&self, verdict: Verdict) -> usize {
        Verdict::ALL
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
    if let Some((baseline, changes)) = report.changes {
        let path = dir.join("changes.md");
        let r = write_markdown(&path, &changes.render(baseline, true), report.info);
        out.push((path, r));
    }
    out
}

/// Writes a text file, creating its folder, scrubbing the whole text once more; `Ok` only
/// once the whole text is on disk (a full disk is an error and leaves no file, never an
/// empty report).
fn write_scrubbed(path: &Path, text: &str, info: &RunInfo) -> std::io::Result<()> {
    write_text(path, &info.scrub(text))
}

/// Writes a markdown file as [`write_scrubbed`] does, its control characters written visibly
/// ([`RunInfo::shown`]): `cat summary.md` replays nothing a target answered.
fn write_markdown(path: &Path, text: &str, info: &RunInfo) -> std::io::Result<()> {
    write_text(path, &info.shown(text))
}

/// Writes `text` whole, or leaves no file.
fn write_text(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let written = std::fs::File::create(path).and_then(|mut file| {
        file.write_all(text.as_bytes())?;
        file.sync_all()
    });
    if written.is_err() {
        // a cut or stale file must not pass for this run's report
        let _ = std::fs::remove_file(path);
    }
    written
}

/// The waiting by route, for the summaries: `waiting by route: POST /x/:id 6.0 s (3 x 429),
/// ...` (each route waits out its own 429s). `None` without a 429.
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
    Some(format!("waiting by route: {}", routes.join(", ")))
}

/// Requests per second of the run.
/// The slowest tests shown at most.
const SLOWEST_SHOWN: usize = 5;

/// The tests that took a second or more, slowest first (at most `SLOWEST_SHOWN`), each
/// with what it waited for: `teams::add_users::api-v2 5.1 s: 5.0 s for teams::show
/// /data/attributes/users-count (in vain)`.
pub fn slowest_tests(results: &[TestResult], figures: &Figures) -> Vec<String> {
    let mut slow: Vec<&TestResult> = results
        .iter()
        .filter(|r| r.duration >= std::time::Duration::from_secs(1))
        .collect();
    slow.sort_by_key(|r| std::cmp::Reverse(r.duration));
    slow.iter()
        .take(SLOWEST_SHOWN)
        .map(|r| {
            let waited = match figures.waits.get(&r.name) {
                Some(waits) if !waits.is_empty() => waits.join("; "),
                _ => "no wait noted (its own requests)".to_string(),
            };
            format!("{} {}: {waited}", r.name, crate::clock::human(r.duration))
        })
        .collect()
}

fn rate(figures: &Figures) -> f64 {
    let secs = figures.wall.as_secs_f64();
    if secs > 0.0 {
        figures.requests as f64 / secs
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_slowest_tests_say_what_they_waited_for() {
        let test = |name: &str, ms: u64| TestResult {
            name: name.into(),
            group: "teams".into(),
            verdict: Verdict::Pass,
            reason: None,
            findings: Vec::new(),
            passed: Vec::new(),
            exchanges: Vec::new(),
            requests: 1,
            duration: std::time::Duration::from_millis(ms),
            blocked_by: None,
            minimal: None,
            draws: None,
        };
        let results = [
            test("t::quick", 200),
            test("t::slow", 5100),
            test("t::slower", 9000),
        ];
        let mut figures = Figures {
            requests: 3,
            wall: std::time::Duration::from_secs(10),
            throttle: ThrottleStats::default(),
            lags: Default::default(),
            kept_in_place: Vec::new(),
            waits: Default::default(),
            latency: Default::default(),
        };
        figures.waits.insert(
            "t::slow".into(),
            vec!["5.0 s for teams::show /data (in vain)".into()],
        );
        assert_eq!(
            slowest_tests(&results, &figures),
            [
                "t::slower 9.0 s: no wait noted (its own requests)",
                "t::slow 5.1 s: 5.0 s for teams::show /data (in vain)",
            ]
        );
    }
    use super::*;
    use crate::checks::{Finding, ENDPOINT_EXISTS};
    use crate::target::{Exchange, RequestRecord, ResponseRecord, ThrottleStats};

    /// A three-letter administrator token that a target echoes as a credential (a header, a
    /// JSON `token` field, a query value): every report keeps the test's name whole and
    /// redacts the token wherever it stands as a credential.
    #[test]
    fn a_short_token_is_redacted_as_a_credential_and_names_stay_whole() {
        let name = "admin_users::list::api-v2";
        let exchange = Exchange {
            request: RequestRecord {
                method: "GET".into(),
                url: "http://127.0.0.1:1/api/v2/admin/users?token=adm&page=2".into(),
                headers: vec![("authorization".into(), "Bearer $CONFORM_ADMIN_TOKEN".into())],
                body: None,
            },
            response: Ok(ResponseRecord {
                status: 404,
                headers: vec![("x-echo".into(), "Bearer adm".into())],
                body: br#"{"data":{"type":"authentication-tokens","attributes":{"token":"adm"}}}"#
                    .to_vec(),
                truncated: false,
                received: 70,
            }),
            elapsed: Default::default(),
        };
        let result = TestResult {
            name: name.into(),
            group: "admin_users".into(),
            verdict: Verdict::Fail,
            reason: None,
            findings: vec![Finding::new(
                &ENDPOINT_EXISTS,
                "GET /api/v2/admin/users answered 404 (admin_users lists the adm token's users)"
                    .into(),
                Some(0),
            )],
            passed: Vec::new(),
            exchanges: vec![exchange],
            requests: 1,
            duration: Default::default(),
            blocked_by: None,
            minimal: None,
            draws: None,
        };
        let info = RunInfo {
            config: vec![("admin-token".into(), "(redacted)".into())],
            secrets: vec![Secret::new("usr-token-long-enough"), Secret::new("adm")],
        };
        let figures = Figures {
            requests: 1,
            wall: Default::default(),
            throttle: ThrottleStats::default(),
            lags: Default::default(),
            kept_in_place: Vec::new(),
            waits: Default::default(),
            latency: Default::default(),
        };
        let results = [result];
        let report = RunReport {
            results: &results,
            info: &info,
            profile: Profile::Core,
            figures: &figures,
            leftovers: &[],
            warnings: &[],
            changes: None,
        };
        let dir = std::env::temp_dir().join(format!("conform-redaction-{}", std::process::id()));
        let written = write_reports(&dir, &report);
        for (path, outcome) in written {
            outcome.expect("written");
            let text = std::fs::read_to_string(&path).expect("read back");
            let file = path.display();
            assert!(text.contains(name), "{file}: the name is not whole");
            assert!(!text.contains("(redacted)in_"), "{file}");
            assert!(
                text.contains("the adm token"),
                "{file}: the message is not whole"
            );
            assert!(
                text.contains("(redacted)"),
                "{file}: the credential is not redacted"
            );
            if let Err(around) =
                crate::target::only_inside_words(&text.replace("the adm token", ""), "adm")
            {
                panic!("{file}: the token stands as a value: …{around}…");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
