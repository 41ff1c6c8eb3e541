//! libtest-mimic's options, flattened into a run's, in this tool's words: their help said for
//! a conformance run (libtest's own texts speak of benchmarks and ignored tests, and one says
//! "Usefull"), the flags that mean nothing here hidden, and a mistyped flag answered with a
//! flag of ours, never a hidden one.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Flags of libtest that a run takes and ignores or that mean nothing for it (kept so that
/// scripts written for cargo's test harness still parse), hidden from `--help`: no test of
/// conform is ignored ahead (a test that cannot run is `skipped`, `blocked` or `unsupported`
/// when it runs), so `--ignored` and `--include-ignored` select nothing or everything.
const HIDDEN: [&str; 7] = [
    "test",
    "bench",
    "nocapture",
    "show_output",
    "unstable_flags",
    "ignored",
    "include_ignored",
];

/// The help of each libtest option a run shows, by its id.
const HELP: [(&str, &str); 8] = [
    (
        "filter",
        "Run only the tests whose names contain FILTER (`group::endpoint::variant`; with \
         --exact, the test so named)",
    ),
    (
        "list",
        "List the names of the tests and sequence families, one a line, and run nothing",
    ),
    (
        "exact",
        "Match FILTER and --skip against whole test names, not parts of them",
    ),
    (
        "quiet",
        "One character per test on standard output instead of one line (--format terse)",
    ),
    (
        "logfile",
        "Write the per-test lines to this file instead of standard output",
    ),
    (
        "skip",
        "Leave out the tests whose names contain FILTER (repeatable)",
    ),
    (
        "color",
        "Colour the per-test lines: auto (on a terminal, tests run one at a time), always, never",
    ),
    (
        "format",
        "The per-test lines on standard output: pretty (one line per test), terse (one \
         character per test), json (one JSON event a line; the rest goes to standard error)",
    ),
];

/// `command` with libtest's options said in this tool's words and its meaningless flags hidden.
pub(super) fn reworded(mut command: clap::Command) -> clap::Command {
    for id in HIDDEN {
        command = command.mut_arg(id, |a| a.hide(true));
    }
    for (id, help) in HELP {
        command = command.mut_arg(id, |a| {
            // the values are said in the help (libtest's enums document them for Rust readers)
            let listed = a.get_action().takes_values() && !a.get_possible_values().is_empty();
            a.help(help)
                .long_help(None::<&str>)
                .hide_possible_values(listed)
        });
    }
    command
}

/// A parse error whose suggestion (`tip: a similar argument exists`) is a hidden flag, made
/// to suggest the visible flag nearest the one typed, or none; every other error as it was.
pub(super) fn suggest_visible(error: clap::Error, command: &clap::Command) -> clap::Error {
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let suggested = match error.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => s.trim_start_matches('-').to_string(),
        _ => return error,
    };
    let hidden = command
        .get_arguments()
        .any(|a| a.is_hide_set() && a.get_long() == Some(suggested.as_str()));
    let typed = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.trim_start_matches('-').to_string(),
        _ => return error,
    };
    if !hidden {
        return error;
    }
    let mut reworded = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(command);
    for (kind, value) in error.context() {
        if kind != ContextKind::SuggestedArg {
            reworded.insert(kind, value.clone());
        }
    }
    if let Some(near) = nearest_visible(&typed, command) {
        reworded.insert(
            ContextKind::SuggestedArg,
            ContextValue::String(format!("--{near}")),
        );
    }
    reworded
}

/// The visible long flag most like `typed` (as clap judges likeness: Jaro above 0.7).
fn nearest_visible(typed: &str, command: &clap::Command) -> Option<String> {
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long())
        .map(|long| (strsim::jaro(typed, long), long))
        .filter(|(likeness, _)| *likeness > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, long)| long.to_string())
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;

    fn error_of(words: &[&str]) -> String {
        let argv = std::iter::once("conform").chain(words.iter().copied());
        match Cli::try_parse_from(argv) {
            Ok(_) => panic!("{words:?} parsed"),
            Err(e) => e.render().to_string(),
        }
    }

    #[test]
    fn a_mistyped_flag_is_never_answered_with_a_hidden_one() {
        let said = error_of(&["--nosuch"]);
        assert!(!said.contains("--bench"), "{said}");
        assert!(said.contains("unexpected argument '--nosuch'"), "{said}");
        let said = error_of(&["--grup", "runs"]);
        assert!(said.contains("'--group'"), "{said}");
    }

    #[test]
    fn the_help_says_nothing_of_libtests_leftovers() {
        let help = Cli::command().render_long_help().to_string();
        for leftover in [
            "Usefull",
            "Run ignored tests",
            "benchmarks",
            "--include-ignored",
            "--ignored",
            "If this is set",
        ] {
            assert!(!help.contains(leftover), "{leftover}:\n{help}");
        }
        assert!(help.contains("--format <pretty|terse|json>"), "{help}");
    }
}
