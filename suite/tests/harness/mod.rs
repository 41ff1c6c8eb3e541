//! The libtest-mimic harness of the one integration-test binary (`main.rs`): each file is a
//! module whose `tests()` lists its tests, named `file::test` as libtest would name them. A
//! test that needs something missing (chromium, the spec beside the clone, `.venv`) is reported
//! `ignored` with the reason, not `ok`. What a test needs is found by a function that answers
//! it or why it cannot run; in CI such a function panics instead, so the absence fails there.

use libtest_mimic::{Arguments, Completion, Failed, Trial};

/// One test of a file: its name within the file and what runs it.
pub struct Test {
    name: &'static str,
    run: Box<dyn FnOnce() -> Result<Completion, Failed> + Send>,
}

/// A test that needs nothing.
pub fn test(name: &'static str, test: fn()) -> Test {
    Test {
        name,
        run: Box::new(move || {
            test();
            Ok(Completion::Completed)
        }),
    }
}

/// A test that needs what `needs` finds: `ignored` with the reason when it is missing.
pub fn needing<T>(
    name: &'static str,
    needs: impl FnOnce() -> Result<T, String> + Send + 'static,
    test: impl FnOnce(T) + Send + 'static,
) -> Test {
    Test {
        name,
        run: Box::new(move || match needs() {
            Ok(found) => {
                test(found);
                Ok(Completion::Completed)
            }
            Err(why) => Ok(Completion::ignored_with(why)),
        }),
    }
}

/// Runs an async test to its end on a runtime of its own, as `#[tokio::test]` does.
pub fn block_on<F: std::future::Future>(test: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(test)
}

/// Runs the tests of every file (`(file, its tests)`) with the command line's libtest
/// options, and exits.
pub fn run(files: Vec<(&str, Vec<Test>)>) -> ! {
    let trials = files
        .into_iter()
        .flat_map(|(file, tests)| {
            tests
                .into_iter()
                .map(move |test| Trial::ignorable_test(format!("{file}::{}", test.name), test.run))
        })
        .collect();
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// True when this is CI, where a missing tool is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The tests of a file that need nothing, each named as its function.
macro_rules! tests {
    ($($test:ident),* $(,)?) => {
        vec![$($crate::harness::test(stringify!($test), $test)),*]
    };
}
pub(crate) use tests;
