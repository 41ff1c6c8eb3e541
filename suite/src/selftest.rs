//! Self-validation: the suite against the embedded reference service, first unbroken (every
//! test must pass at `--profile tfe`, `--repeat` times), then with each fault of the fault
//! list (`selftest/faults.toml`) in turn. A fault is caught when a test it names fails with
//! a check it names; what else failed is shown as caught by accident. The mutation score is
//! the share of faults caught, per level.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Deserialize;

use crate::checks::{self, Level};
use crate::cli::Cli;
use crate::harness::{load_catalog, selected_tests, Session};
use crate::settings::ConfigError;
use crate::verdict::{TestResult, Verdict};

/// The fault list the binary embeds.
pub const EMBEDDED_FAULTS: &str = include_str!("../../selftest/faults.toml");

/// The seed of the sequence families in every selftest run.
const SEQUENCE_SEED: u64 = 7;

/// Concurrent tests within one run (as `conform` itself).
const TEST_CONCURRENCY: usize = 16;

/// One row of the fault list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultCase {
    /// The fault as `--reference-fault` takes it: `name` or `name=ARG`.
    pub fault: String,
    /// `core`: caught at `--profile core`; `tfe`: needs `--profile tfe` to fail.
    pub level: LevelName,
    /// The check ids expected to catch it (each must fail in an expected test).
    pub checks: Vec<String>,
    /// Test-name patterns expected to fail (`*` matches any run of characters).
    pub tests: Vec<String>,
    /// The suite must absorb this fault: no test may fail (a guard against false failures).
    #[serde(default)]
    pub tolerated: bool,
    /// Tests that may fail as a consequence (a fixture or a show another test relies on):
    /// not counted as accidents.
    #[serde(default)]
    pub collateral: Vec<String>,
    /// Why these tests and checks, in a sentence (optional).
    #[serde(default)]
    pub note: Option<String>,
}

impl FaultCase {
    /// The catalog name of the fault (before `=`).
    pub fn name(&self) -> &str {
        self.fault.split('=').next().unwrap_or("").trim()
    }

    /// Whether a test name matches one of the expected patterns.
    pub fn expects_test(&self, name: &str) -> bool {
        self.tests.iter().any(|p| glob(p, name))
    }
}

/// A level as the fault list writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LevelName {
    /// Caught at `--profile core`.
    Core,
    /// Caught only at `--profile tfe`.
    Tfe,
}

impl LevelName {
    /// As a check level.
    pub fn level(self) -> Level {
        match self {
            LevelName::Core => Level::Core,
            LevelName::Tfe => Level::Tfe,
        }
    }
}

/// The fault list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultList {
    /// Request timeout of the fault runs, in seconds (short, so that `slow` is caught fast).
    #[serde(default = "default_timeout")]
    pub timeout: f64,
    /// Tests that may fail as a consequence of any fault (the sequence families, whose
    /// histories cross many endpoints).
    #[serde(default)]
    pub collateral: Vec<String>,
    /// The faults.
    #[serde(rename = "fault")]
    pub faults: Vec<FaultCase>,
}

fn default_timeout() -> f64 {
    2.0
}

impl FaultList {
    /// The embedded list.
    pub fn embedded() -> Result<Self, ConfigError> {
        Self::parse(EMBEDDED_FAULTS, "selftest/faults.toml")
    }

    /// A list read from a file.
    pub fn from_path(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a list (see [`FaultList::problems`] for its consistency).
    pub fn parse(text: &str, origin: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError(format!("{origin}: {e}")))
    }

    /// What is wrong with the list: unknown checks, faults that do not parse, catalog faults
    /// that have no row, rows without tests or checks, a check's level above the fault's.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut listed = BTreeSet::new();
        for case in &self.faults {
            if let Err(e) = case.fault.parse::<conform_reference::Fault>() {
                out.push(format!("fault `{}`: {e}", case.fault));
            }
            listed.insert(case.name().to_string());
            if !case.tolerated && (case.checks.is_empty() || case.tests.is_empty()) {
                out.push(format!(
                    "fault `{}` names no check or no test pattern",
                    case.fault
                ));
            }
            for id in &case.checks {
                match checks::by_id(id) {
                    None => out.push(format!("fault `{}` names an unknown check `{id}`", case.fault)),
                    Some(c) if c.level > case.level.level() => out.push(format!(
                        "fault `{}` is level {} but names the {} check `{id}` (it cannot fail at --profile core)",
                        case.fault,
                        case.level.level(),
                        c.level
                    )),
                    Some(_) => {}
                }
            }
        }
        for info in conform_reference::fault_catalog() {
            if !listed.contains(info.name) {
                out.push(format!(
                    "the reference fault `{}` has no row in the fault list",
                    info.name
                ));
            }
        }
        for check in checks::CHECKS {
            if !self
                .faults
                .iter()
                .any(|f| f.checks.iter().any(|c| c == check.id))
            {
                out.push(format!(
                    "the check `{}` is proven by no fault of the list",
                    check.id
                ));
            }
        }
        out
    }

    /// The faults that prove a check can fail.
    pub fn proving(&self, check: &str) -> Vec<&FaultCase> {
        self.faults
            .iter()
            .filter(|f| f.checks.iter().any(|c| c == check))
            .collect()
    }
}

pub use crate::glob::glob;

/// How a selftest runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Baseline runs (no fault, `--profile tfe`): more than one looks for flakes.
    pub repeat: usize,
    /// Fault runs at once (each has its own reference service and runtime).
    pub jobs: usize,
    /// Only the faults whose text contains one of these (all when empty).
    pub only: Vec<String>,
    /// Skip the baseline (for running one fault while developing).
    pub no_baseline: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            repeat: 1,
            jobs: 2,
            only: Vec::new(),
            no_baseline: false,
        }
    }
}

/// A test that did not pass, with the checks that failed in it.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The test name.
    pub test: String,
    /// Its verdict (`fail` or `error`).
    pub verdict: Verdict,
    /// The ids of the checks that failed in it (at any level).
    pub checks: Vec<&'static str>,
    /// Whether the fault list expects this test to fail.
    pub expected: bool,
    /// Whether the list names it as a possible consequence.
    pub collateral: bool,
    /// The first line of the reason or first finding.
    pub why: String,
}

/// How a fault fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catch {
    /// An expected test failed with an expected check, and every expected check fired.
    Caught,
    /// Caught by an expected test, but some expected checks never failed.
    Partly,
    /// Only tests or checks outside the expectation failed.
    Accident,
    /// Nothing failed.
    Missed,
    /// The run could not start.
    NoRun,
    /// A fault the suite must absorb made tests fail.
    NotTolerated,
}

impl Catch {
    /// Lower-case label.
    pub fn as_str(self) -> &'static str {
        match self {
            Catch::Caught => "caught",
            Catch::Partly => "caught, some expected checks silent",
            Catch::Accident => "caught only by accident",
            Catch::Missed => "NOT CAUGHT",
            Catch::NoRun => "run did not start",
            Catch::NotTolerated => "NOT TOLERATED: tests failed",
        }
    }
}

/// One fault's run.
#[derive(Debug, Clone)]
pub struct FaultOutcome {
    /// The row of the list.
    pub case: FaultCase,
    /// The verdict on the fault.
    pub catch: Catch,
    /// Every test that did not pass.
    pub failures: Vec<Failure>,
    /// Expected checks that failed in expected tests.
    pub fired: Vec<String>,
    /// Expected checks that did not.
    pub silent: Vec<String>,
    /// Why the run did not start, if it did not.
    pub error: Option<String>,
    /// Wall time of the run.
    pub wall: Duration,
}

impl FaultOutcome {
    /// The tests that failed although the list does not expect them to.
    pub fn accidental(&self) -> impl Iterator<Item = &Failure> {
        self.failures
            .iter()
            .filter(|f| !f.expected && !f.collateral)
    }
}

/// One baseline run.
#[derive(Debug, Clone)]
pub struct BaselineOutcome {
    /// Tests run.
    pub tests: usize,
    /// The tests that did not pass, with their failure text.
    pub not_passed: Vec<(String, String)>,
    /// Why the run did not start, if it did not.
    pub error: Option<String>,
    /// Wall time of the run.
    pub wall: Duration,
}

/// The whole selftest.
#[derive(Debug, Clone)]
pub struct Report {
    /// Baseline runs.
    pub baseline: Vec<BaselineOutcome>,
    /// One per fault, in list order.
    pub faults: Vec<FaultOutcome>,
    /// One per shape (precision), in list order.
    pub shapes: Vec<crate::precision::ShapeOutcome>,
    /// Wall time of everything.
    pub wall: Duration,
}

impl Report {
    /// True when every baseline run passed and every fault was caught as expected.
    pub fn ok(&self) -> bool {
        self.baseline
            .iter()
            .all(|b| b.error.is_none() && b.not_passed.is_empty())
            && self.faults.iter().all(|f| f.catch == Catch::Caught)
            && self
                .shapes
                .iter()
                .all(|s| s.error.is_none() && s.differences.is_empty())
    }

    /// Caught and total faults at a level (tolerated faults aside).
    pub fn score(&self, level: Option<LevelName>) -> (usize, usize) {
        let at: Vec<&FaultOutcome> = self
            .faults
            .iter()
            .filter(|f| !f.case.tolerated && level.is_none_or(|l| f.case.level == l))
            .collect();
        let caught = at.iter().filter(|f| f.catch == Catch::Caught).count();
        (caught, at.len())
    }

    /// The report as text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, b) in self.baseline.iter().enumerate() {
            let _ = write!(
                out,
                "baseline {}/{}: {} tests, ",
                i + 1,
                self.baseline.len(),
                b.tests
            );
            match &b.error {
                Some(e) => {
                    let _ = writeln!(out, "did not start: {e}");
                }
                None if b.not_passed.is_empty() => {
                    let _ = writeln!(out, "all pass ({:.2} s)", b.wall.as_secs_f64());
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{} did not pass ({:.2} s)",
                        b.not_passed.len(),
                        b.wall.as_secs_f64()
                    );
                    for (name, text) in &b.not_passed {
                        let _ = writeln!(out, "  {name}");
                        for line in text.lines().take(6) {
                            let _ = writeln!(out, "      {line}");
                        }
                    }
                }
            }
        }
        out.push('\n');
        for f in &self.faults {
            let label = match (f.case.tolerated, f.catch) {
                (true, Catch::Caught) => "tolerated",
                (_, c) => c.as_str(),
            };
            let _ = writeln!(
                out,
                "[{}] {:<48} {} ({:.2} s)",
                f.case.level.level(),
                f.case.fault,
                label,
                f.wall.as_secs_f64()
            );
            if let Some(e) = &f.error {
                let _ = writeln!(out, "    error: {e}");
            }
            let expected: Vec<&Failure> = f.failures.iter().filter(|x| x.expected).collect();
            if !expected.is_empty() {
                let _ = writeln!(
                    out,
                    "    by {} test(s) {}: {}",
                    expected.len(),
                    f.case.tests.join(", "),
                    summarize(&expected)
                );
                let _ = writeln!(out, "    checks: {}", f.fired.join(", "));
            }
            if !f.silent.is_empty() {
                let _ = writeln!(
                    out,
                    "    expected checks that did not fail: {}",
                    f.silent.join(", ")
                );
            }
            let collateral = f
                .failures
                .iter()
                .filter(|x| !x.expected && x.collateral)
                .count();
            if collateral > 0 {
                let _ = writeln!(
                    out,
                    "    and {collateral} test(s) failing as a consequence ({})",
                    f.case.collateral.join(", ")
                );
            }
            let accidental: Vec<&Failure> = f.accidental().collect();
            if !accidental.is_empty() {
                let _ = writeln!(
                    out,
                    "    also failed (not expected): {}",
                    summarize(&accidental)
                );
                for a in accidental.iter().take(3) {
                    let _ = writeln!(out, "      {}: {}", a.test, a.why);
                }
            }
            let odd: BTreeSet<&str> = f
                .failures
                .iter()
                .filter(|x| x.expected)
                .flat_map(|x| x.checks.iter().copied())
                .filter(|c| !f.case.checks.iter().any(|e| e == c))
                .collect();
            if !odd.is_empty() {
                let _ = writeln!(
                    out,
                    "    unexpected checks in expected tests: {}",
                    odd.into_iter().collect::<Vec<_>>().join(", ")
                );
            }
        }
        out.push('\n');
        let (c, t) = self.score(None);
        let (cc, ct) = self.score(Some(LevelName::Core));
        let (tc, tt) = self.score(Some(LevelName::Tfe));
        let pct = |a: usize, b: usize| {
            if b == 0 {
                100.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        out.push_str(&crate::precision::render(&self.shapes));
        let _ = writeln!(
            out,
            "mutation score (recall): {c}/{t} ({:.0}%)   core {cc}/{ct}   tfe {tc}/{tt}",
            pct(c, t)
        );
        let tolerated: Vec<&FaultOutcome> =
            self.faults.iter().filter(|f| f.case.tolerated).collect();
        if !tolerated.is_empty() {
            let ok = tolerated
                .iter()
                .filter(|f| f.catch == Catch::Caught)
                .count();
            let _ = writeln!(
                out,
                "tolerated faults (no test may fail): {ok}/{}",
                tolerated.len()
            );
        }
        let bad: Vec<String> = self
            .faults
            .iter()
            .filter(|f| f.catch != Catch::Caught)
            .map(|f| format!("{} ({})", f.case.fault, f.catch.as_str()))
            .collect();
        if !bad.is_empty() {
            let _ = writeln!(out, "not caught as expected: {}", bad.join("; "));
        }
        let accidents: usize = self.faults.iter().map(|f| f.accidental().count()).sum();
        if accidents > 0 {
            let _ = writeln!(
                out,
                "{accidents} test failure(s) outside the expected tests (listed as `also failed`)"
            );
        }
        let _ = writeln!(
            out,
            "selftest wall time: {:.2} s ({} baseline run(s), {} fault run(s))",
            self.wall.as_secs_f64(),
            self.baseline.len(),
            self.faults.len()
        );
        out
    }
}

fn summarize(failures: &[&Failure]) -> String {
    let shown: usize = std::env::var("CONFORM_SELFTEST_SHOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let mut parts: Vec<String> = failures
        .iter()
        .take(shown)
        .map(|f| {
            let checks = if f.checks.is_empty() {
                f.verdict.as_str().to_string()
            } else {
                f.checks.join("+")
            };
            format!("{} [{checks}]", f.test)
        })
        .collect();
    if failures.len() > shown {
        parts.push(format!("and {} more", failures.len() - shown));
    }
    parts.join(", ")
}

/// Runs the whole suite (every test, then every sequence family) once in-process against a
/// fresh embedded reference service with `faults`, at `profile`, with a request timeout.
pub fn run_suite(
    faults: &[&str],
    profile: &str,
    timeout: Option<f64>,
) -> Result<Vec<TestResult>, ConfigError> {
    let mut args = Vec::new();
    for fault in faults {
        args.push("--reference-fault".to_string());
        args.push(fault.to_string());
    }
    run_suite_with(&args, profile, timeout)
}

/// Runs the whole suite in-process against a fresh embedded reference service with extra
/// command-line `args` (faults, shapes, what a user would give), at `profile`.
pub fn run_suite_with(
    args: &[String],
    profile: &str,
    timeout: Option<f64>,
) -> Result<Vec<TestResult>, ConfigError> {
    let mut argv: Vec<String> = vec!["conform".into(), "--profile".into(), profile.into()];
    argv.extend(args.iter().cloned());
    if let Some(t) = timeout {
        argv.push("--timeout".into());
        argv.push(t.to_string());
        // A fault run that the target throttles for ever ends within a bound, as a nightly
        // run under `--deadline` would.
        argv.push("--deadline".into());
        argv.push(format!("{}s", (t * 10.0).ceil() as u64));
    }
    // The sequences run with a fixed seed, so that a selftest is repeatable.
    argv.extend(["--seed".into(), SEQUENCE_SEED.to_string()]);
    let cli = Cli::try_parse_from(argv).map_err(|e| ConfigError(e.to_string()))?;
    let (catalog, schemas) = load_catalog(&cli.run)?;
    let tests = selected_tests(&catalog, &[])?;
    let mut session = Session::open(&cli.run, catalog, schemas)?;
    if let (Some(t), Some(ctx)) = (timeout, Arc::get_mut(&mut session.ctx)) {
        // State that a fault keeps from changing is given up on after one request timeout.
        ctx.poll_budget = Duration::from_secs_f64(t);
    }
    let mut results = session.run_direct(&tests, TEST_CONCURRENCY);
    let families = session.ctx.catalog.families.clone();
    results.extend(session.run_sequences(&families));
    session.close();
    Ok(results)
}

fn first_line(result: &TestResult) -> String {
    result
        .findings
        .first()
        .map(|f| f.message.clone())
        .or_else(|| result.reason.clone())
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Judges one fault run.
pub fn judge(
    case: &FaultCase,
    results: &[TestResult],
) -> (Catch, Vec<Failure>, Vec<String>, Vec<String>) {
    let failures: Vec<Failure> = results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Fail | Verdict::Error))
        .map(|r| {
            let mut checks: Vec<&'static str> = r.findings.iter().map(|f| f.check.id).collect();
            checks.dedup();
            let mut seen = BTreeSet::new();
            checks.retain(|c| seen.insert(*c));
            Failure {
                test: r.name.clone(),
                verdict: r.verdict,
                checks,
                expected: case.expects_test(&r.name),
                collateral: case.collateral.iter().any(|p| glob(p, &r.name)),
                why: first_line(r),
            }
        })
        .collect();
    let fired_set: BTreeSet<&str> = failures
        .iter()
        .filter(|f| f.expected)
        .flat_map(|f| f.checks.iter().copied())
        .collect();
    let fired: Vec<String> = case
        .checks
        .iter()
        .filter(|c| fired_set.contains(c.as_str()))
        .cloned()
        .collect();
    let silent: Vec<String> = case
        .checks
        .iter()
        .filter(|c| !fired_set.contains(c.as_str()))
        .cloned()
        .collect();
    let catch = if case.tolerated {
        if failures.is_empty() {
            Catch::Caught
        } else {
            Catch::NotTolerated
        }
    } else if failures.is_empty() {
        Catch::Missed
    } else if fired.is_empty() {
        Catch::Accident
    } else if !silent.is_empty() {
        Catch::Partly
    } else {
        Catch::Caught
    };
    (catch, failures, fired, silent)
}

/// Runs one fault of the list.
pub fn run_fault(case: &FaultCase, timeout: f64) -> FaultOutcome {
    let started = Instant::now();
    let profile = match case.level {
        LevelName::Core => "core",
        LevelName::Tfe => "tfe",
    };
    match run_suite(&[case.fault.as_str()], profile, Some(timeout)) {
        Ok(results) => {
            let (catch, failures, fired, silent) = judge(case, &results);
            FaultOutcome {
                case: case.clone(),
                catch,
                failures,
                fired,
                silent,
                error: None,
                wall: started.elapsed(),
            }
        }
        Err(e) => FaultOutcome {
            case: case.clone(),
            catch: Catch::NoRun,
            failures: Vec::new(),
            fired: Vec::new(),
            silent: case.checks.clone(),
            error: Some(e.to_string()),
            wall: started.elapsed(),
        },
    }
}

/// Runs the baseline once.
pub fn run_baseline() -> BaselineOutcome {
    let started = Instant::now();
    match run_suite(&[], "tfe", None) {
        Ok(results) => BaselineOutcome {
            tests: results.len(),
            not_passed: results
                .iter()
                .filter(|r| r.verdict != Verdict::Pass)
                .map(|r| {
                    (
                        format!("{} ({})", r.name, r.verdict.as_str()),
                        r.failure_text(),
                    )
                })
                .collect(),
            error: None,
            wall: started.elapsed(),
        },
        Err(e) => BaselineOutcome {
            tests: 0,
            not_passed: Vec::new(),
            error: Some(e.to_string()),
            wall: started.elapsed(),
        },
    }
}

/// Runs the selftest: the baseline `repeat` times, then every (selected) fault, `jobs` at
/// a time.
pub fn run(list: &FaultList, shapes: &crate::precision::ShapeList, options: &Options) -> Report {
    let started = Instant::now();
    let baseline = if options.no_baseline {
        Vec::new()
    } else {
        (0..options.repeat.max(1)).map(|_| run_baseline()).collect()
    };
    let selected: Vec<&FaultCase> = list
        .faults
        .iter()
        .filter(|f| options.only.is_empty() || options.only.iter().any(|o| f.fault.contains(o)))
        .collect();
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<BTreeMap<usize, FaultOutcome>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.clamp(1, selected.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(case) = selected.get(i) else { break };
                let mut case = (*case).clone();
                case.collateral.extend(list.collateral.iter().cloned());
                let outcome = run_fault(&case, list.timeout);
                if let Ok(mut all) = outcomes.lock() {
                    all.insert(i, outcome);
                }
            });
        }
    });
    let faults = outcomes
        .into_inner()
        .unwrap_or_default()
        .into_values()
        .collect();
    let shapes = shapes
        .shapes
        .iter()
        .filter(|s| options.only.is_empty() || options.only.iter().any(|o| s.name.contains(o)))
        .map(|s| crate::precision::run_shape(s, list.timeout))
        .collect();
    Report {
        baseline,
        faults,
        shapes,
        wall: started.elapsed(),
    }
}

/// `docs/CHECKS.md`: every check with its id, level, citation and the faults that prove it
/// can fail, from the check table and the fault list.
pub fn checks_markdown(list: &FaultList) -> String {
    let mut out = String::new();
    out.push_str("# Checks\n\n");
    out.push_str(
        "Every check of `conform checks`, with the faults of the reference service that prove it\n\
         can fail (`selftest/faults.toml`; `conform selftest` runs them). Generated by\n\
         `conform checks --markdown`; a test fails when this page is stale.\n\n",
    );
    out.push_str("| id | level | cites | asserts | proven by |\n|---|---|---|---|---|\n");
    for check in checks::CHECKS {
        let faults: Vec<String> = list
            .proving(check.id)
            .iter()
            .map(|f| format!("`{}`", f.fault.replace('|', "\\|")))
            .collect();
        let faults = if faults.is_empty() {
            "**none**".to_string()
        } else {
            faults.join(", ")
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            check.id,
            check.level,
            check.cites,
            check.title.replace('|', "\\|"),
            faults
        );
    }
    out.push_str("\n## Faults\n\n");
    out.push_str(
        "A fault is caught when a test matching its patterns fails with one of its checks, and\n\
         every check it names fails somewhere in those tests. `core` faults are run at\n\
         `--profile core`, `tfe` faults at `--profile tfe`.\n\n",
    );
    out.push_str("| fault | level | checks | tests expected to fail |\n|---|---|---|---|\n");
    for f in &list.faults {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            f.fault.replace('|', "\\|"),
            f.case_level(),
            f.checks
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if f.tolerated {
                "none: the suite must absorb it".to_string()
            } else {
                f.tests
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
    }
    out
}

impl FaultCase {
    fn case_level(&self) -> &'static str {
        self.level.level().as_str()
    }
}

/// `conform checks --markdown`.
pub fn checks_command() -> std::process::ExitCode {
    match FaultList::embedded() {
        Ok(list) => {
            print!("{}", checks_markdown(&list));
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(crate::exit::ExitCodes::CONFIG)
        }
    }
}

/// `conform selftest`: exit 0 when the baseline passes and every fault is caught, 1 when
/// not, 2 when the fault list is wrong.
pub fn command(args: &crate::cli::SelftestArgs) -> std::process::ExitCode {
    use crate::exit::ExitCodes;
    use std::process::ExitCode;
    let list = match &args.faults {
        Some(path) => FaultList::from_path(path),
        None => FaultList::embedded(),
    };
    let list = match list {
        Ok(list) => list,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(ExitCodes::CONFIG);
        }
    };
    let problems = list.problems();
    for p in &problems {
        eprintln!("fault list: {p}");
    }
    let options = Options {
        repeat: args.repeat,
        jobs: args.jobs,
        only: args.only.clone(),
        no_baseline: args.no_baseline,
    };
    println!(
        "conform selftest: {} fault(s), baseline x{}, {} at a time, timeout {} s",
        list.faults.len(),
        if options.no_baseline {
            0
        } else {
            options.repeat.max(1)
        },
        options.jobs,
        list.timeout
    );
    let shapes = match crate::precision::ShapeList::embedded() {
        Ok(shapes) => shapes,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(ExitCodes::CONFIG);
        }
    };
    let report = run(&list, &shapes, &options);
    print!("{}", report.render());
    if !problems.is_empty() {
        println!(
            "the fault list has {} problem(s) (see above)",
            problems.len()
        );
    }
    if report.ok() && problems.is_empty() {
        ExitCode::from(ExitCodes::OK)
    } else {
        ExitCode::from(ExitCodes::FAILED)
    }
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("runs::show::*", "runs::show::bare"));
        assert!(!glob("runs::show::*", "runs::list::bare"));
        assert!(glob("*::bare", "runs::show::bare"));
        assert!(glob("runs::*::api-v2", "runs::apply::api-v2"));
        assert!(glob("runs::show::bare", "runs::show::bare"));
        assert!(!glob("runs::*::bare", "runs::bare"));
        assert!(glob("*", "x"));
    }
}
