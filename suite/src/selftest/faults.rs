//! The fault list (`selftest/faults.toml`): every fault of the reference with the checks and
//! tests expected to catch it, and the judgement of one fault run against its row.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::checks::{self, Level};
use crate::glob::glob;
use crate::settings::ConfigError;
use crate::verdict::{TestResult, Verdict};

/// The fault list the binary embeds.
pub const EMBEDDED_FAULTS: &str = include_str!("../../../selftest/faults.toml");
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
    /// The target keeps what it answers deleted: the run must report what it made as left
    /// (the safety part: a delete's word is never taken).
    #[serde(default)]
    pub left: bool,
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
    /// Reported as information (at `--profile tfe`), failing no test.
    Info,
}

impl LevelName {
    /// As a check level.
    pub fn level(self) -> Level {
        match self {
            LevelName::Core => Level::Core,
            LevelName::Tfe => Level::Tfe,
            LevelName::Info => Level::Info,
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

/// Judges one fault run.
pub fn judge(
    case: &FaultCase,
    results: &[TestResult],
) -> (Catch, Vec<Failure>, Vec<String>, Vec<String>) {
    let failures: Vec<Failure> = results
        .iter()
        .filter(|r| {
            r.verdict.fails_run()
                || (case.level == LevelName::Info
                    && r.findings.iter().any(|f| f.level == Level::Info))
        })
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
                why: r.first_line(|f| f.message.to_string()),
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
