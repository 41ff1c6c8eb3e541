//! A suite run: options -> [`Plan`] -> target (or the embedded reference) -> preflight -> one
//! final result per plan item -> teardown -> reports -> exit code.

mod calibrate;
pub mod cancel;
mod preflight;
mod relay;
mod session;
mod trials;

pub use preflight::Preflight;
pub use session::{ItemRunner, Session};
pub use trials::{exit_code, nothing_judged};

use std::process::ExitCode;

use crate::cli::RunArgs;
use crate::exit::ExitCodes;
use crate::plan::Plan;
use crate::settings::ConfigError;
use crate::verdict::TestResult;

/// Runs the suite (`conform [OPTIONS]`); returns the process exit code.
pub fn run(args: RunArgs) -> ExitCode {
    ExitCode::from(run_code(args))
}

/// Runs the suite as [`run`] does; answers the exit code as a number ([`ExitCodes`]), for a
/// caller that goes on after the run (`conform certify`).
pub fn run_code(args: RunArgs) -> u8 {
    let outcome = Plan::from_args(&args).and_then(|plan| trials::run_trials(plan, args.libtest));
    outcome.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCodes::CONFIG
    })
}

/// Runs a plan in this process without libtest's output (the selftest, `conform diff`, the
/// project's tests): every item's final result, the tests' then the families', and what
/// teardown could not delete.
pub fn run_plan(plan: &Plan) -> Result<(Vec<TestResult>, Vec<String>), ConfigError> {
    let session = Session::open(plan)?;
    let results = session.run(&plan.items);
    let (leftovers, _) = session.close();
    Ok((results, leftovers))
}
