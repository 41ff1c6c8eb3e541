//! The selftest's runs, each a [`Plan`] against a fresh embedded reference service: the
//! baseline, one per fault, one per shape.

use std::time::{Duration, Instant};

use super::{judge, BaselineOutcome, Catch, FaultCase, FaultOutcome, LevelName};
use crate::cli::RunArgs;
use crate::harness::run_plan;
use crate::plan::Plan;
use crate::precision::{ShapeCase, ShapeOutcome};
use crate::settings::{ConfigError, Settings};
use crate::verdict::{Profile, TestResult, Verdict};

/// The seed of the sequence families in every selftest run.
const SEQUENCE_SEED: u64 = 7;

/// The consistency window of a fault or shape run that gives none: long enough that a failing
/// observation is read again (so the recall faults show detection holds after waiting), short
/// enough that a server whose every observation fails does not wait out a whole window at
/// each. The lag shapes' rows give the default window (`args`).
const SHORT_WINDOW: Duration = Duration::from_millis(200);

/// Concurrent tests within one run (as `conform` itself).
const TEST_CONCURRENCY: usize = 16;

/// The plan of one selftest run: every test, then every sequence family, against a fresh
/// embedded reference service with `faults` and `shapes`, with what a user of such a server
/// gives (`user_args`, command-line words such as `--organization acme`), at `profile`, with
/// a short request timeout when given.
pub fn reference_plan(
    user_args: &[String],
    faults: &[String],
    shapes: &[String],
    profile: Profile,
    timeout: Option<f64>,
) -> Result<Plan, ConfigError> {
    let args = RunArgs::from_words(user_args).map_err(|e| ConfigError(e.to_string()))?;
    let mut settings = Settings::resolve(&args)?;
    settings.profile = profile;
    settings.reference_faults = faults.to_vec();
    settings.reference_shapes = shapes.to_vec();
    // The sequences run with a fixed seed, so that a selftest is repeatable.
    settings.seed = Some(SEQUENCE_SEED);
    let mut poll_budget = None;
    if let Some(t) = timeout {
        settings.timeout = Duration::from_secs_f64(t);
        // A fault run that the target throttles for ever ends within a bound, as a nightly
        // run under `--deadline` would.
        settings.deadline = Some(Duration::from_secs((t * 10.0).ceil() as u64));
        // State that a fault keeps from changing is given up on after one request timeout.
        poll_budget = Some(settings.timeout);
        // An observation a fault or a shape keeps from holding is read again within a short
        // window (that detection survives waiting is shown, at little cost: a server that
        // stores nothing would otherwise wait out the whole window at every observation),
        // unless the row gives its own (the lag shapes, which need the default).
        if args.consistency_window.is_none() {
            settings.consistency_window = SHORT_WINDOW;
        }
    }
    let mut plan = Plan::new(settings)?;
    plan.concurrency = TEST_CONCURRENCY;
    plan.poll_budget = poll_budget;
    Ok(plan)
}

/// Runs a selftest plan: every item's final result.
fn run_suite(plan: Result<Plan, ConfigError>) -> Result<Vec<TestResult>, ConfigError> {
    run_plan(&plan?).map(|(results, _)| results)
}

/// Runs one fault of the list.
pub fn run_fault(case: &FaultCase, timeout: f64) -> FaultOutcome {
    let started = Instant::now();
    let profile = match case.level {
        LevelName::Core => Profile::Core,
        LevelName::Tfe | LevelName::Info => Profile::Tfe,
    };
    let plan = reference_plan(
        &[],
        std::slice::from_ref(&case.fault),
        &[],
        profile,
        Some(timeout),
    )
    .map(|mut plan| {
        if case.tolerated {
            // A tolerated fault is a consistent server the suite must absorb (lists that
            // ignore their filters cost whole walks): its run ends by itself, and is not cut
            // short by the deadline that bounds a fault throttling for ever.
            plan.settings.deadline = None;
        }
        plan
    });
    match plan.and_then(|plan| run_plan(&plan)) {
        Ok((results, left)) => {
            let (catch, failures, fired, silent) = judge(case, &results);
            // a target that keeps what it deletes: what the run made is reported left
            let error = (case.left && left.is_empty()).then(|| {
                "the run reported nothing left, though this target keeps what it answers deleted"
                    .to_string()
            });
            FaultOutcome {
                case: case.clone(),
                catch,
                failures,
                fired,
                silent,
                error,
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
    match run_suite(reference_plan(&[], &[], &[], Profile::Tfe, None)) {
        Ok(results) => BaselineOutcome {
            tests: results.len(),
            not_passed: results
                .iter()
                .filter(|r| r.verdict != Verdict::Pass && !r.unobservable())
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

/// Runs one shape row.
pub fn run_shape(case: &ShapeCase, timeout: f64) -> ShapeOutcome {
    let started = Instant::now();
    let plan = match case.profile.as_str() {
        "tfe" => Ok(Profile::Tfe),
        "core" => Ok(Profile::Core),
        other => Err(ConfigError(format!(
            "{}: profile `{other}` is not one of: core, tfe",
            case.name
        ))),
    }
    .and_then(|profile| {
        reference_plan(
            &case.args,
            &case.faults,
            &case.shapes,
            profile,
            Some(timeout),
        )
        .map(|mut plan| {
            // A shape is a whole, consistent server (a slow one too, that asks to be waited
            // for): its run is bounded by its own tests, not by the fault runs' deadline.
            plan.settings.deadline = None;
            plan
        })
    });
    match run_suite(plan) {
        Ok(results) => ShapeOutcome {
            tests: results.len(),
            differences: results
                .iter()
                .filter_map(|r| case.difference(r).map(|why| (r.name.clone(), why)))
                .collect(),
            case: case.clone(),
            error: None,
            wall: started.elapsed(),
        },
        Err(e) => ShapeOutcome {
            case: case.clone(),
            tests: 0,
            differences: Vec::new(),
            error: Some(e.to_string()),
            wall: started.elapsed(),
        },
    }
}
