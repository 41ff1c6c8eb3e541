//! Self-validation: the suite against the embedded reference service, first unbroken (every
//! test must pass at `--profile tfe`, `--repeat` times), then with each fault of the fault
//! list (`selftest/faults.toml`) in turn. A fault is caught when a test it names fails with
//! a check it names; what else failed is shown as caught by accident. The mutation score is
//! the share of faults caught, per level. Precision ([`crate::precision`]) runs the reference
//! in the shapes of partial servers.

mod faults;
mod markdown;
mod render;
mod runs;

pub use faults::{
    judge, Catch, Failure, FaultCase, FaultList, FaultOutcome, LevelName, EMBEDDED_FAULTS,
};
pub use markdown::checks_markdown;
pub use runs::{reference_plan, run_baseline, run_fault, run_shape};

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
        .map(|s| run_shape(s, list.timeout))
        .collect();
    Report {
        baseline,
        faults,
        shapes,
        wall: started.elapsed(),
    }
}

impl Report {
    /// True when every baseline run passed and every fault was caught as expected.
    pub fn ok(&self) -> bool {
        self.baseline
            .iter()
            .all(|b| b.error.is_none() && b.not_passed.is_empty())
            && self
                .faults
                .iter()
                .all(|f| f.catch == Catch::Caught && f.error.is_none())
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
