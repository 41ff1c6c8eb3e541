//! The selftest report as text: the baseline runs, each fault, the shapes, the scores.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{Catch, Failure, FaultOutcome, LevelName, Report};

impl Report {
    /// The report as text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_baseline(&mut out);
        out.push('\n');
        for f in &self.faults {
            render_fault(&mut out, f);
        }
        out.push('\n');
        self.render_scores(&mut out);
        out
    }

    /// One line per baseline run, with the tests that did not pass.
    fn render_baseline(&self, out: &mut String) {
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
    }

    /// The scores: precision over the shapes, recall over the faults, the tolerated faults, the misses.
    fn render_scores(&self, out: &mut String) {
        let (c, t) = self.score(None);
        let (cc, ct) = self.score(Some(LevelName::Core));
        let (tc, tt) = self.score(Some(LevelName::Tfe));
        let (ic, it) = self.score(Some(LevelName::Info));
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
            "mutation score (recall): {c}/{t} ({:.0}%)   core {cc}/{ct}   tfe {tc}/{tt}   info {ic}/{it}",
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
    }
}

/// One fault's lines: how it was caught, by which tests and checks, and what else failed.
fn render_fault(out: &mut String, f: &FaultOutcome) {
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
        if f.case.tolerated {
            // a tolerated fault may fail nothing: say why each one failed
            let failed = f.failures.iter().filter(|x| !x.expected && x.collateral);
            for x in failed.take(5) {
                let _ = writeln!(out, "      {}: {}", x.test, x.why);
            }
        }
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
