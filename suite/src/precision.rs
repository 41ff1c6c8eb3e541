//! Precision, the other half of self-validation: the reference is put into the shape of a
//! whole class of real, partial servers (`selftest/shapes.toml`, `conform serve --shape`),
//! and every verdict of a run against it must be exactly the expected one. The fault list
//! asks "is every breakage caught?"; this asks "does a deviation give one verdict, where it
//! belongs, and nothing else?".

use std::time::Duration;

use serde::Deserialize;

use crate::glob::glob;
use crate::settings::ConfigError;
use crate::verdict::{TestResult, Verdict};

/// The shape list the binary embeds.
pub const EMBEDDED_SHAPES: &str = include_str!("../../selftest/shapes.toml");

/// The shape list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeList {
    /// The shapes.
    #[serde(rename = "shape")]
    pub shapes: Vec<ShapeCase>,
}

impl ShapeList {
    /// The embedded list.
    pub fn embedded() -> Result<Self, ConfigError> {
        Self::parse(EMBEDDED_SHAPES, "selftest/shapes.toml")
    }

    /// Parses a list; every shape must be one the reference knows.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let list: Self = toml::from_str(text).map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        for case in &list.shapes {
            for shape in &case.shapes {
                shape
                    .parse::<conform_reference::Shape>()
                    .map_err(|e| ConfigError(format!("{origin}: {}: {e}", case.name)))?;
            }
        }
        Ok(list)
    }
}

/// One shape run: the reference's shapes, the user's arguments, the expected verdicts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeCase {
    /// A name for the row.
    pub name: String,
    /// As `--reference-shape` takes them.
    pub shapes: Vec<String>,
    /// What a user of such a server gives (`--organization acme`).
    #[serde(default)]
    pub args: Vec<String>,
    /// Faults of the reference on top of its shapes, as `--reference-fault` takes them: the
    /// shaped server lacks one more thing (a route), so that a verdict can be pinned where
    /// the shape meets a deviation.
    #[serde(default)]
    pub faults: Vec<String>,
    /// `core` (default) or `tfe`.
    #[serde(default = "core")]
    pub profile: String,
    /// Why these verdicts, in a sentence.
    #[serde(default)]
    pub note: Option<String>,
    /// Rules, first match wins; a test no rule names must pass.
    #[serde(default)]
    pub expect: Vec<Rule>,
}

fn core() -> String {
    "core".into()
}

/// Expected verdicts for the tests a pattern names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Test-name patterns.
    pub tests: Vec<String>,
    /// The verdict, or the verdicts a test may have.
    pub verdict: OneOrMany,
    /// The checks a failing test may fail (at least one must).
    #[serde(default)]
    pub checks: Vec<String>,
}

/// One verdict name or several.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl OneOrMany {
    fn allows(&self, verdict: Verdict) -> bool {
        match self {
            OneOrMany::One(v) => v == verdict.as_str(),
            OneOrMany::Many(vs) => vs.iter().any(|v| v == verdict.as_str()),
        }
    }
}

impl ShapeCase {
    /// Why a result is not what the row expects, or `None` when it is.
    pub fn difference(&self, result: &TestResult) -> Option<String> {
        let rule = self
            .expect
            .iter()
            .find(|r| r.tests.iter().any(|p| glob(p, &result.name)));
        let why = || result.first_line(|f| format!("{}: {}", f.check.id, f.message));
        // a test that did all it could and does nothing the run can see stands for a pass
        let verdict = if result.unobservable() {
            Verdict::Pass
        } else {
            result.verdict
        };
        let Some(rule) = rule else {
            return (verdict != Verdict::Pass)
                .then(|| format!("expected pass, got {} ({})", result.verdict.as_str(), why()));
        };
        if !rule.verdict.allows(verdict) {
            return Some(format!(
                "expected {:?}, got {} ({})",
                rule.verdict,
                result.verdict.as_str(),
                why()
            ));
        }
        if result.verdict == Verdict::Fail && !rule.checks.is_empty() {
            let failed: Vec<&str> = result.findings.iter().map(|f| f.check.id).collect();
            let foreign: Vec<&&str> = failed
                .iter()
                .filter(|c| !rule.checks.iter().any(|r| r == *c))
                .collect();
            if !foreign.is_empty() || failed.is_empty() {
                return Some(format!(
                    "expected only {:?} to fail, got {failed:?} ({})",
                    rule.checks,
                    why()
                ));
            }
        }
        None
    }
}

/// How one shape fared.
#[derive(Debug, Clone)]
pub struct ShapeOutcome {
    /// The row.
    pub case: ShapeCase,
    /// Tests run.
    pub tests: usize,
    /// `(test, why)` for each verdict that is not the expected one.
    pub differences: Vec<(String, String)>,
    /// Why the run did not start, if it did not.
    pub error: Option<String>,
    /// Wall time.
    pub wall: Duration,
}

impl ShapeOutcome {
    /// Verdicts as expected.
    pub fn as_expected(&self) -> usize {
        self.tests - self.differences.len()
    }
}

/// The shape section of the selftest report, ending with the precision figure.
pub fn render(outcomes: &[ShapeOutcome]) -> String {
    let mut out = String::new();
    for o in outcomes {
        let status = match (&o.error, o.differences.is_empty()) {
            (Some(e), _) => format!("run did not start: {e}"),
            (None, true) => "exact".into(),
            (None, false) => format!("{} verdict(s) differ", o.differences.len()),
        };
        out.push_str(&format!(
            "[shape] {:<44} {} ({}/{} as expected, {:.2} s)\n",
            o.case.name,
            status,
            o.as_expected(),
            o.tests,
            o.wall.as_secs_f64()
        ));
        for (test, why) in o.differences.iter().take(10) {
            out.push_str(&format!("    {test}: {why}\n"));
        }
        if o.differences.len() > 10 {
            out.push_str(&format!("    and {} more\n", o.differences.len() - 10));
        }
    }
    let (right, all) = precision(outcomes);
    if all > 0 {
        out.push_str(&format!(
            "precision: {right}/{all} verdicts as expected ({:.1}%) over {} shape(s)\n",
            100.0 * right as f64 / all as f64,
            outcomes.len()
        ));
    }
    out
}

/// Verdicts as expected and verdicts in all, over every shape run.
pub fn precision(outcomes: &[ShapeOutcome]) -> (usize, usize) {
    outcomes
        .iter()
        .fold((0, 0), |(r, a), o| (r + o.as_expected(), a + o.tests))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_list_parses_and_names_known_shapes() {
        let list = ShapeList::embedded().expect("parses");
        assert!(list.shapes.iter().any(|s| s.name == "api-v2-only"));
    }
}
