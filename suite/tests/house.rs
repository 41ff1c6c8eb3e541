//! The house's limits, kept by a test rather than by hand (issue 44): no source file of the
//! suite or the reference over 700 lines, no function over 100 (from its `fn` line to its
//! closing brace, as `cargo fmt` lays it out). Tests are not held to it: a test file is a list
//! of scenarios.

use std::path::{Path, PathBuf};

/// Longest a source file may be, in lines.
const FILE_LINES: usize = 700;

/// Longest a function may be, in lines.
const FUNCTION_LINES: usize = 100;

/// Every `.rs` file under `dir`, in name order.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut next = vec![dir.to_path_buf()];
    while let Some(dir) = next.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                next.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The functions of a file longer than the limit: `(first line, lines)`. A function is a
/// line starting (after its indent and qualifiers) with `fn NAME` that does not end in `;`,
/// and ends at the first later line that is its indent and `}`.
fn long_functions(text: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let mut words = body.split_whitespace().skip_while(|w| {
            w.starts_with("pub") || matches!(*w, "async" | "const" | "unsafe" | "extern")
        });
        if words.next() != Some("fn") || line.trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close) {
            let length = end + 2;
            if length > FUNCTION_LINES {
                long.push((i + 1, length));
            }
        }
    }
    long
}

/// What breaks the limits under the crate folders `roots`, one line each.
fn broken_limits(roots: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for file in roots.iter().flat_map(|r| sources(r)) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let shown = file.display();
        let lines = text.lines().count();
        if lines > FILE_LINES {
            broken.push(format!("{shown}: {lines} lines (at most {FILE_LINES})"));
        }
        for (line, length) in long_functions(&text) {
            broken.push(format!(
                "{shown}:{line}: a function of {length} lines (at most {FUNCTION_LINES})"
            ));
        }
    }
    broken
}

fn no_source_file_or_function_is_over_the_limits() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let roots = [repo.join("suite/src"), repo.join("reference/src")];
    assert!(!sources(&roots[0]).is_empty(), "no sources found");
    let broken = broken_limits(&roots);
    assert!(
        broken.is_empty(),
        "split what is too long:\n{}",
        broken.join("\n")
    );
}

fn the_limits_see_a_long_function_and_nothing_else() {
    let long: String = std::iter::once("    pub(crate) async fn long() {\n".to_string())
        .chain((0..FUNCTION_LINES).map(|i| format!("        let _x{i} = {i};\n")))
        .chain(std::iter::once("    }\n".to_string()))
        .collect();
    assert_eq!(long_functions(&long), vec![(1, FUNCTION_LINES + 2)]);
    let short = "fn short() {\n    1;\n}\nfn declared();\n";
    assert!(long_functions(short).is_empty());
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        no_source_file_or_function_is_over_the_limits,
        the_limits_see_a_long_function_and_nothing_else
    ]
}
