//! `conform peer go-tfe --faults`: the two judges side by side on the selftest's faults. For
//! each fault of `selftest/faults.toml`, a fresh embedded reference with that fault runs the
//! go-tfe tests that passed on the unbroken one; the fault is caught by go-tfe when one of
//! them no longer passes. Beside it, what the fault list says the suite catches (its level
//! and checks, which `conform selftest` proves). A fault go-tfe catches and the suite does
//! not fail on (`info` or `tolerated`) is a disagreement to triage.

use std::path::Path;

use serde_json::json;

use super::{Outcome, SetRun, Status};
use crate::selftest::{FaultList, LevelName};

/// Seconds a go-tfe test may take under a fault.
const FAULT_TEST_TIMEOUT: u64 = 30;
/// Tests that no longer pass after which a fault run starts no other (the table names them).
const ENOUGH: usize = 3;

/// One fault's row.
#[derive(Debug, Clone)]
pub struct FaultRow {
    /// The fault as `--reference-fault` takes it.
    pub fault: String,
    /// What the suite does with it: `core`, `tfe`, `info` or `tolerated`.
    pub suite: &'static str,
    /// The checks the fault list says catch it.
    pub checks: Vec<String>,
    /// Go-tfe tests that passed unbroken and did not pass with the fault (the first few: a
    /// fault run stops starting tests after three).
    pub go_tfe: Vec<String>,
    /// Why the fault could not be run, if it could not.
    pub error: Option<String>,
}

impl FaultRow {
    fn suite_fails(&self) -> bool {
        matches!(self.suite, "core" | "tfe")
    }
}

/// Every fault's row.
#[derive(Debug, Clone)]
pub struct FaultTable {
    /// In the fault list's order.
    pub rows: Vec<FaultRow>,
    /// How many go-tfe tests each fault run had.
    pub tests: usize,
    /// Wall time.
    pub seconds: f64,
}

/// Runs the faults (those whose text contains one of `--fault-only`, else all).
pub async fn measure(set: &SetRun<'_>, baseline: &[Outcome]) -> Result<FaultTable, String> {
    let list = FaultList::embedded().map_err(|e| e.to_string())?;
    // The faults break the spec's endpoints: the go-tfe tests of the spec's groups judge them
    // (the others reach the same endpoints only on their way).
    let passing: Vec<String> = baseline
        .iter()
        .filter(|o| o.status == Status::Pass && set.file.group(&o.name).is_some())
        .map(|o| o.name.clone())
        .collect();
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    let selected: Vec<_> = list
        .faults
        .iter()
        .filter(|c| {
            set.args.fault_only.is_empty()
                || set
                    .args
                    .fault_only
                    .iter()
                    .any(|t| c.fault.contains(t.as_str()))
        })
        .collect();
    for (n, case) in selected.iter().enumerate() {
        let suite = if case.tolerated {
            "tolerated"
        } else {
            match case.level {
                LevelName::Core => "core",
                LevelName::Tfe => "tfe",
                LevelName::Info => "info",
            }
        };
        let mut row = FaultRow {
            fault: case.fault.clone(),
            suite,
            checks: case.checks.clone(),
            go_tfe: Vec::new(),
            error: None,
        };
        match case.fault.parse::<conform_reference::Fault>() {
            Err(e) => row.error = Some(format!("not a fault of the reference: {e}")),
            Ok(fault) => {
                let service = super::embedded_reference(vec![fault]).await?;
                // A test that passed unbroken and has not ended in 30 s has been caught (go-tfe
                // retries a 5xx for minutes); three tests that no longer pass are enough.
                let run = SetRun {
                    root: service.root,
                    token: service.token,
                    ca_pem: Some(service.ca_pem),
                    verbose: false,
                    timeout: set.timeout.min(FAULT_TEST_TIMEOUT),
                    enough_failures: Some(ENOUGH),
                    ..*set
                };
                let result = run.run(passing.clone()).await?;
                // A test that skips under the fault judged nothing: no catch (go-tfe's
                // TestAdminUsers_Disable2FA skips for a user without two-factor).
                row.go_tfe = result
                    .outcomes
                    .iter()
                    .filter(|o| o.status == Status::Fail)
                    .map(|o| o.name.clone())
                    .collect();
            }
        }
        eprintln!(
            "go-tfe faults [{:>2}/{}] {:<44} suite {:<9} go-tfe {}",
            n + 1,
            selected.len(),
            row.fault,
            row.suite,
            if row.go_tfe.is_empty() {
                "passes".to_string()
            } else {
                format!("fails {} tests", row.go_tfe.len())
            }
        );
        rows.push(row);
    }
    Ok(FaultTable {
        rows,
        tests: passing.len(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

impl FaultTable {
    /// Faults go-tfe catches that the suite fails no test on.
    pub fn missed_by_suite(&self) -> Vec<&FaultRow> {
        self.rows
            .iter()
            .filter(|r| !r.go_tfe.is_empty() && !r.suite_fails())
            .collect()
    }

    fn caught_by_go_tfe(&self) -> usize {
        self.rows.iter().filter(|r| !r.go_tfe.is_empty()).count()
    }

    fn caught_by_suite(&self) -> usize {
        self.rows.iter().filter(|r| r.suite_fails()).count()
    }

    /// The one-paragraph console summary.
    pub fn console(&self) -> String {
        let mut out = format!(
            "\nfaults: {} run ({} go-tfe tests each, {:.0} s); the suite fails on {}, go-tfe's tests on {}; go-tfe catches and the suite does not: {}\n",
            self.rows.len(),
            self.tests,
            self.seconds,
            self.caught_by_suite(),
            self.caught_by_go_tfe(),
            self.missed_by_suite().len()
        );
        for r in self.missed_by_suite() {
            out.push_str(&format!(
                "  {} ({}): go-tfe fails {}\n",
                r.fault,
                r.suite,
                r.go_tfe.join(", ")
            ));
        }
        out
    }

    /// The table as markdown (`faults.md`, and docs/PEER-FAULTS.md).
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "# The selftest's faults, judged by the suite and by go-tfe's tests\n\n\
             Made by `conform peer go-tfe --faults`: each fault of `selftest/faults.toml` on a fresh \
             embedded reference (`--compat tfe`), judged by the suite (its level in the fault \
             list, proven by `conform selftest`: `core` and `tfe` fail tests at that profile, `info` \
             is reported and fails none, `tolerated` is a legal behaviour no test may fail on) and \
             by the {} go-tfe tests of the spec's groups that pass on the unbroken reference (the first tests that no \
             longer pass: a fault run starts no test after three have failed, and a test still \
             running after 30 s has failed).\n\n{} faults: the suite fails on {}, go-tfe's tests on {}; go-tfe catches and the \
             suite does not: {}.\n\n| fault | suite | suite's checks | go-tfe | go-tfe tests that fail |\n|---|---|---|---|---|\n",
            self.tests,
            self.rows.len(),
            self.caught_by_suite(),
            self.caught_by_go_tfe(),
            self.missed_by_suite().len()
        );
        for r in &self.rows {
            let go = match (&r.error, r.go_tfe.len()) {
                (Some(e), _) => format!("not run: {e}"),
                (None, 0) => "passes".to_string(),
                (None, n) if n >= ENOUGH => format!("fails (the first {n})"),
                (None, n) => format!("fails {n}"),
            };
            let mut tests: Vec<String> =
                r.go_tfe.iter().take(6).map(|t| format!("`{t}`")).collect();
            if r.go_tfe.len() > 6 {
                tests.push(format!("and {} more", r.go_tfe.len() - 6));
            }
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                r.fault,
                r.suite,
                r.checks
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                go,
                tests.join(", ")
            ));
        }
        out
    }

    /// Writes `faults.md` and `faults.json` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("faults.md"), self.markdown())?;
        let doc = json!({
            "tests": self.tests,
            "seconds": self.seconds,
            "faults": self.rows.iter().map(|r| json!({
                "fault": r.fault,
                "suite": r.suite,
                "checks": r.checks,
                "go_tfe_fails": r.go_tfe,
                "error": r.error,
            })).collect::<Vec<_>>(),
        });
        std::fs::write(
            dir.join("faults.json"),
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n",
        )
    }
}
