//! The project's integration tests, one binary (as nextest's repository keeps them): each file
//! beside this one is a module listing its tests (`tests()`), run by the libtest-mimic harness
//! of `harness`, so that a test that cannot run here is reported `ignored` with its reason. One
//! binary links the crate once: a one-line change rebuilds one test binary, not 24. (The
//! modules are declared here, not by a macro, so that `cargo fmt` finds them; a module left out
//! of `main`'s list leaves its `tests()` unused, which the build warns about.)

mod harness;
mod support;

mod bounded;
mod catalog;
mod certify;
mod cli;
mod consent;
mod depth;
mod diff;
mod early_ends;
mod edges;
mod elsewhere;
mod examples;
mod given;
mod hostile;
mod house;
mod learned_rate;
mod observed;
mod openapi;
mod peer;
mod proxy;
mod real_clients;
mod reference_run;
mod registry;
mod reports;
mod route_limits;
mod safety;
mod selftest;
mod sequence_files;
mod sequences;
mod serve_banner;
mod serve_tls;
mod shared_lists;
mod sweep;
mod tokens;
mod waits;

/// `(file, its tests)` for each file named.
macro_rules! files {
    ($($file:ident),* $(,)?) => {
        vec![$((stringify!($file), $file::tests())),*]
    };
}

fn main() {
    harness::run(files![
        bounded,
        catalog,
        certify,
        cli,
        consent,
        depth,
        diff,
        early_ends,
        edges,
        elsewhere,
        examples,
        given,
        hostile,
        house,
        learned_rate,
        observed,
        openapi,
        peer,
        proxy,
        real_clients,
        reference_run,
        registry,
        reports,
        route_limits,
        safety,
        selftest,
        sequence_files,
        sequences,
        serve_banner,
        serve_tls,
        shared_lists,
        sweep,
        tokens,
        waits,
    ]);
}
