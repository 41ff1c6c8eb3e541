//! The libtest-mimic harness of the test files whose tests may not be able to run here: a
//! test that needs something missing (chromium, the spec beside the clone, `.venv`) is
//! reported `ignored` with the reason, not `ok`. What a test needs is found by a function
//! that answers it or why it cannot run; in CI such a function panics instead, so the
//! absence fails there.

#![allow(dead_code)]

use libtest_mimic::{Arguments, Completion, Trial};

/// A test that needs nothing.
pub fn test(name: &str, test: fn()) -> Trial {
    Trial::test(name, move || {
        test();
        Ok(())
    })
}

/// A test that needs what `needs` finds: `ignored` with the reason when it is missing.
pub fn needing<T>(
    name: &str,
    needs: impl FnOnce() -> Result<T, String> + Send + 'static,
    test: impl FnOnce(T) + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || match needs() {
        Ok(found) => {
            test(found);
            Ok(Completion::Completed)
        }
        Err(why) => Ok(Completion::ignored_with(why)),
    })
}

/// Runs the trials with the command line's libtest options, and exits.
pub fn run(trials: Vec<Trial>) -> ! {
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// True when this is CI, where a missing tool is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}
