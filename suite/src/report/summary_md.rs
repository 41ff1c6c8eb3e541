//! `summary.md`: a GitHub-flavoured markdown summary, ready to append to
//! `$GITHUB_STEP_SUMMARY`: the headline, a table per group, every root cause, the failures
//! with their failed checks (those a large cause does not account for first; a text of
//! several lines as a fenced block), the waived tests, the warnings, what was not deleted
//! (folded) and the configuration.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use super::{rate, tally, write_markdown, CauseGroup, Counts, RunInfo, RunReport};
use crate::verdict::{TestResult, Verdict};

/// Failures listed in full; the rest are named under their cause (GitHub caps a step
/// summary at 1 MiB).
const MAX_LISTED: usize = 100;

/// Test names given with each root cause.
const NAMES_PER_CAUSE: usize = 8;

/// Writes `summary.md`.
pub fn write_summary_md(path: &Path, report: &RunReport) -> std::io::Result<()> {
    write_markdown(path, &render(report), report.info)
}

/// The markdown text.
pub fn render(report: &RunReport) -> String {
    let info = report.info;
    let (groups, total) = tally(report.results);
    let failing: Vec<&TestResult> = report
        .results
        .iter()
        .filter(|r| r.verdict.fails_run())
        .collect();
    let mut md = String::new();
    headline(&mut md, report, &failing, total);
    table(&mut md, &groups, total);
    // Root causes first, every one of them; then the failures, those a large cause does not
    // already account for first (errors, then the rarest causes, `::bare` path forms last), so
    // that a cap never hides a failure of its own behind a hundred of one kind.
    let causes = super::cause_groups(report.results, report.profile);
    root_causes(&mut md, &causes, info);
    failures(&mut md, &failing, &causes, info);
    waived(&mut md, report);
    closing(&mut md, report);
    md
}

/// The headline, the run's figures, the changes since the baseline, throttling and lag.
fn headline(md: &mut String, report: &RunReport, failing: &[&TestResult], total: Counts) {
    let info = report.info;
    let headline = match (info.get("interrupted"), failing.is_empty()) {
        (Some(how), _) => format!("⚠️ interrupted {how}"),
        (None, true) => "✅ passed".to_string(),
        (None, false) => format!("❌ {} failing", failing.len()),
    };
    let _ = writeln!(md, "# conform: {headline}\n");
    let bound = super::console::bounds_words(report.figures, " · ");
    let _ = writeln!(
        md,
        "Profile **{}** against `{}` · conform {} · {} tests · {} requests · {:.1} s{bound} · {:.0} requests/s\n",
        report.profile.as_str(),
        info.get("target").unwrap_or_default(),
        env!("CARGO_PKG_VERSION"),
        total.total(),
        report.figures.requests,
        report.figures.wall.as_secs_f64(),
        rate(report.figures),
    );
    if let Some(line) = super::effects_line(report.results) {
        let _ = writeln!(md, "{line}\n");
    }
    // what a nightly reader asks first: what changed since last night
    if let Some((baseline, changes)) = report.changes {
        let _ = writeln!(md, "{}", changes.render_at(baseline, Some(2)));
    }
    let t = &report.figures.throttle;
    if t.rate_limited > 0 || !t.paced.is_zero() || !t.learned.is_zero() {
        let _ = writeln!(
            md,
            "Throttled: {} answer(s) 429, {} waiting for the target's rate limit, {} paced at its learned limit, {} paced by `--rate`.\n",
            t.rate_limited,
            crate::clock::human(t.throttled),
            crate::clock::human(t.learned),
            crate::clock::human(t.paced),
        );
        if let Some(line) = super::route_waits_line(t) {
            let _ = writeln!(md, "{line}\n");
        }
    }
    if let Some(line) = report.figures.lags.line() {
        let _ = writeln!(md, "{}.\n", capitalised(&line));
    }
}

/// The table of verdicts per group, with the totals.
fn table(md: &mut String, groups: &BTreeMap<&str, Counts>, total: Counts) {
    let _ = write!(md, "| group |");
    for v in Verdict::ALL {
        let _ = write!(md, " {} |", v.as_str());
    }
    let _ = write!(md, "\n|---|");
    for _ in Verdict::ALL {
        let _ = write!(md, "---:|");
    }
    md.push('\n');
    for (group, counts) in groups {
        let _ = write!(md, "| {} |", cell(group));
        for n in counts.0 {
            let _ = write!(md, " {n} |");
        }
        md.push('\n');
    }
    let _ = write!(md, "| **total** |");
    for n in total.0 {
        let _ = write!(md, " **{n}** |");
    }
    md.push_str("\n\n");
}

/// Every root cause, with the tests it accounts for.
fn root_causes(md: &mut String, causes: &[CauseGroup], info: &RunInfo) {
    if !causes.is_empty() {
        let _ = writeln!(
            md,
            "## Root causes\n\nEach is reported at its own test; the tests below it are blocked by it or share it. Fix these first.\n"
        );
        for g in causes {
            let _ = writeln!(
                md,
                "- {}: {}",
                prose(&info.scrub(&g.line())),
                names(&g.tests, NAMES_PER_CAUSE)
            );
        }
        md.push('\n');
    }
}

/// The failures in full (up to [`MAX_LISTED`]), then the rest named by cause.
fn failures(md: &mut String, failing: &[&TestResult], causes: &[CauseGroup], info: &RunInfo) {
    if !failing.is_empty() {
        let cause_of: HashMap<&str, (usize, usize)> = causes
            .iter()
            .enumerate()
            .flat_map(|(i, g)| {
                g.tests
                    .iter()
                    .map(move |t| (t.as_str(), (g.tests.len(), i)))
            })
            .collect();
        let mut ordered = failing.to_vec();
        ordered.sort_by_key(|r| {
            let bare = r.name.ends_with("::bare");
            (
                bare,
                cause_of.get(r.name.as_str()).copied().unwrap_or((0, 0)),
            )
        });
        let _ = writeln!(md, "## Failures\n");
        for r in ordered.iter().take(MAX_LISTED) {
            test_block(md, r, info);
        }
        let cut = &ordered[ordered.len().min(MAX_LISTED)..];
        if !cut.is_empty() {
            let _ = writeln!(
                md,
                "### {} more failing tests, named here by cause\n\nNot listed in full (the summary stops at {MAX_LISTED}); each one's findings and requests are in `report.html` and `results.json`:\n",
                cut.len()
            );
            let mut by_cause: BTreeMap<usize, (String, Vec<String>)> = BTreeMap::new();
            for r in cut {
                let (key, line) = match cause_of.get(r.name.as_str()) {
                    Some(&(_, i)) => (i, info.scrub(&causes[i].cause)),
                    None => (usize::MAX, r.verdict.as_str().to_string()),
                };
                by_cause
                    .entry(key)
                    .or_insert_with(|| (line, Vec::new()))
                    .1
                    .push(r.name.clone());
            }
            for (line, tests) in by_cause.into_values() {
                let _ = writeln!(md, "- {}: {}", prose(&line), names(&tests, usize::MAX));
            }
            md.push('\n');
        }
    }
}

/// The waived tests, with their reasons.
fn waived(md: &mut String, report: &RunReport) {
    let info = report.info;
    let waived: Vec<&TestResult> = report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Waived)
        .collect();
    if !waived.is_empty() {
        let _ = writeln!(md, "## Waived\n");
        for r in waived.iter().take(MAX_LISTED) {
            let _ = writeln!(
                md,
                "- `{}`: {}",
                r.name,
                prose(&info.scrub(r.reason.as_deref().unwrap_or("")))
            );
        }
        if waived.len() > MAX_LISTED {
            let cut: Vec<String> = waived[MAX_LISTED..]
                .iter()
                .map(|r| r.name.clone())
                .collect();
            let _ = writeln!(
                md,
                "- and {} more waived: {}",
                cut.len(),
                names(&cut, usize::MAX)
            );
        }
        md.push('\n');
    }
}

/// The warnings, what was not deleted (folded) and the configuration (folded).
fn closing(md: &mut String, report: &RunReport) {
    let info = report.info;
    if !report.warnings.is_empty() {
        let _ = writeln!(md, "## Warnings\n");
        for w in report.warnings {
            let _ = writeln!(md, "- {}", prose(&info.scrub(w)));
        }
        md.push('\n');
    }
    // often long, and no verdict's evidence: folded
    if !report.leftovers.is_empty() {
        let _ = writeln!(
            md,
            "## Not deleted\n\n<details><summary>{} resource(s) the run made and could not delete (<code>conform sweep</code> removes them)</summary>\n",
            report.leftovers.len()
        );
        for l in report.leftovers {
            let _ = writeln!(md, "- {}", prose(&info.scrub(l)));
        }
        md.push_str("\n</details>\n\n");
    }
    if !report.figures.kept_in_place.is_empty() {
        md.push_str("## Made, and not deletable through the API\n\n");
        for l in &report.figures.kept_in_place {
            let _ = writeln!(md, "- {}", prose(&info.scrub(l)));
        }
        md.push('\n');
    }
    let slowest = super::slowest_tests(report.results, report.figures);
    if !slowest.is_empty() {
        md.push_str(
            "## Slowest tests\n\nWhat each waited for (a state, a list, its turn at a lock):\n\n",
        );
        for l in &slowest {
            let _ = writeln!(md, "- {}", prose(&info.scrub(l)));
        }
        md.push('\n');
    }
    md.push_str("<details><summary>Configuration</summary>\n\n| key | value |\n|---|---|\n");
    for (k, v) in &info.config {
        let _ = writeln!(md, "| {} | {} |", cell(k), cell(&info.scrub(v)));
    }
    md.push_str("\n</details>\n");
}

fn test_block(md: &mut String, r: &TestResult, info: &super::RunInfo) {
    let _ = writeln!(
        md,
        "### `{}` · {} · {} ms\n",
        r.name,
        r.verdict.as_str(),
        r.duration.as_millis()
    );
    if let Some(reason) = &r.reason {
        text_block(md, &info.scrub(reason));
    }
    for f in &r.findings {
        let evidence = f
            .exchange
            .and_then(|i| r.exchanges.get(i))
            .map(|ex| {
                let status = ex
                    .status()
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "no answer".into());
                format!(
                    " — {} → {status}",
                    code(&format!(
                        "{} {}",
                        ex.request.method,
                        info.scrub(&ex.request.url)
                    ))
                )
            })
            .unwrap_or_default();
        let message = info.scrub(&f.message);
        let (inline, block) = match message.lines().count() {
            0 | 1 => (prose(&message), None),
            _ => (String::new(), Some(message)),
        };
        let _ = writeln!(
            md,
            "- **{}** [{}] {inline}{evidence}  \n  <sub>{}</sub>",
            f.check.id,
            f.level,
            cell(f.check.cites)
        );
        if let Some(block) = block {
            md.push('\n');
            text_block(md, &block);
        }
    }
    md.push('\n');
}

/// A text as a paragraph when it is one line, else as a fenced block that keeps its lines
/// (a sequence failure's numbered steps and `curl` lines, as the console prints them).
fn text_block(md: &mut String, text: &str) {
    let text = text.trim_end();
    if text.lines().count() <= 1 {
        let _ = writeln!(md, "{}\n", prose(text));
        return;
    }
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    let _ = writeln!(md, "{fence}text\n{text}\n{fence}\n");
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

/// A text as an inline code span, whatever backticks it holds.
fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// Test names as code spans, at most `max` of them, then how many more.
fn names(tests: &[String], max: usize) -> String {
    let mut out: Vec<String> = tests.iter().take(max).map(|t| code(t)).collect();
    if tests.len() > max {
        out.push(format!("and {} more", tests.len() - max));
    }
    out.join(", ")
}

/// A text on one line, as Markdown prose: what would read as HTML (`<`, `&`) is
/// backslash-escaped, never turned into entities.
fn prose(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if matches!(c, '<' | '>' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    prose(text).replace('|', "\\|")
}

/// `line` with its first letter upper-case.
fn capitalised(line: &str) -> String {
    let mut chars = line.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_lines_keep_their_lines_in_a_fence_and_prose_holds_no_entity() {
        let mut md = String::new();
        text_block(
            &mut md,
            "sequence failed: x\n  1. create\n     curl -sS 'http://h/x?a=1&b=<2>'\n",
        );
        assert_eq!(
            md,
            "```text\nsequence failed: x\n  1. create\n     curl -sS 'http://h/x?a=1&b=<2>'\n```\n\n"
        );
        let mut md = String::new();
        text_block(&mut md, "a ``` b\nc");
        assert!(md.starts_with("````text\n"), "{md}");
        assert_eq!(prose("a & <b>\n c"), "a \\& \\<b\\> c");
        assert_eq!(code("a`b"), "``a`b``");
    }
}
