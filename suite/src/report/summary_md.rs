//! `summary.md`: a GitHub-flavoured markdown summary, ready to append to
//! `$GITHUB_STEP_SUMMARY`: the headline, the configuration, a table per group, the failures
//! with their failed checks, the waived tests, leftovers and warnings.

use std::fmt::Write as _;
use std::path::Path;

use super::{is_failure, rate, tally, write_scrubbed, RunReport, VERDICTS};
use crate::verdict::{TestResult, Verdict};

/// Failures listed in full; the rest are counted (GitHub caps a step summary at 1 MiB).
const MAX_LISTED: usize = 100;

/// Writes `summary.md`.
pub fn write_summary_md(path: &Path, report: &RunReport) -> std::io::Result<()> {
    write_scrubbed(path, &render(report), report.info)
}

/// The markdown text.
pub fn render(report: &RunReport) -> String {
    let info = report.info;
    let (groups, total) = tally(report.results);
    let failing: Vec<&TestResult> = report
        .results
        .iter()
        .filter(|r| is_failure(r.verdict))
        .collect();
    let mut md = String::new();
    let headline = match (info.get("interrupted"), failing.is_empty()) {
        (Some(how), _) => format!("⚠️ interrupted {how}"),
        (None, true) => "✅ passed".to_string(),
        (None, false) => format!("❌ {} failing", failing.len()),
    };
    let _ = writeln!(md, "# conform: {headline}\n");
    let _ = writeln!(
        md,
        "Profile **{}** against `{}` · conform {} · {} tests · {} requests · {:.1} s · {:.0} requests/s\n",
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
    let t = &report.figures.throttle;
    if t.rate_limited > 0 || !t.paced.is_zero() {
        let _ = writeln!(
            md,
            "Throttled: {} answer(s) 429, {} waiting for the target's rate limit, {} paced by `--rate`.\n",
            t.rate_limited,
            crate::clock::human(t.throttled),
            crate::clock::human(t.paced),
        );
        if let Some(line) = super::route_waits_line(t) {
            let _ = writeln!(md, "{line}\n");
        }
    }
    let _ = write!(md, "| group |");
    for v in VERDICTS {
        let _ = write!(md, " {} |", v.as_str());
    }
    let _ = write!(md, "\n|---|");
    for _ in VERDICTS {
        let _ = write!(md, "---:|");
    }
    md.push('\n');
    for (group, counts) in &groups {
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

    let causes = super::cause_groups(report.results, report.profile);
    if !causes.is_empty() {
        let _ = writeln!(
            md,
            "## Root causes\n\nEach is reported at its own test; the tests below it are blocked by it or share it. Fix these first.\n"
        );
        for g in causes.iter().take(MAX_LISTED) {
            let _ = writeln!(md, "- {}", one_line(&info.scrub(&g.line())));
        }
        md.push('\n');
    }
    if !failing.is_empty() {
        let _ = writeln!(md, "## Failures\n");
        for r in failing.iter().take(MAX_LISTED) {
            test_block(&mut md, r, info);
        }
        if failing.len() > MAX_LISTED {
            let _ = writeln!(
                md,
                "… and {} more failing tests: see `report.html` or `results.json`.\n",
                failing.len() - MAX_LISTED
            );
        }
    }
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
                one_line(&info.scrub(r.reason.as_deref().unwrap_or("")))
            );
        }
        md.push('\n');
    }
    if !report.leftovers.is_empty() {
        let _ = writeln!(
            md,
            "## Not deleted\n\nThe run made these and could not delete them:\n"
        );
        for l in report.leftovers {
            let _ = writeln!(md, "- {}", one_line(&info.scrub(l)));
        }
        md.push('\n');
    }
    if !report.warnings.is_empty() {
        let _ = writeln!(md, "## Warnings\n");
        for w in report.warnings {
            let _ = writeln!(md, "- {}", one_line(&info.scrub(w)));
        }
        md.push('\n');
    }
    md.push_str("<details><summary>Configuration</summary>\n\n| key | value |\n|---|---|\n");
    for (k, v) in &info.config {
        let _ = writeln!(md, "| {} | {} |", cell(k), cell(&info.scrub(v)));
    }
    md.push_str("\n</details>\n");
    md
}

fn test_block(md: &mut String, r: &TestResult, info: &super::RunInfo) {
    let _ = writeln!(
        md,
        "### `{}` · {} · {} ms",
        r.name,
        r.verdict.as_str(),
        r.duration.as_millis()
    );
    if let Some(reason) = &r.reason {
        let _ = writeln!(md, "\n{}", one_line(&info.scrub(reason)));
    }
    md.push('\n');
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
                    " — `{} {}` → {status}",
                    ex.request.method,
                    info.scrub(&ex.request.url)
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "- **{}** [{}] {}{evidence}  \n  <sub>{}</sub>",
            f.check.id,
            f.check.level,
            one_line(&info.scrub(&f.message)),
            cell(f.check.cites)
        );
    }
    md.push('\n');
}

/// A text on one line, safe inside markdown prose.
fn one_line(text: &str) -> String {
    escape_html(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
