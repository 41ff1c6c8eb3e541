//! What changed since another run: two `results.json` files, test by test (`--baseline FILE`
//! on a run, `conform compare A B`). A nightly user's first question is what broke since last
//! night: new failures come first, then what was fixed, then every other verdict that moved.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::verdict::Verdict;

/// A run's verdicts, read from its `results.json`.
#[derive(Debug, Clone)]
pub struct Verdicts {
    /// The file they came from.
    pub source: String,
    /// The target the run judged.
    pub target: String,
    /// The run's profile.
    pub profile: String,
    /// Each test's verdict and its failing checks.
    pub tests: BTreeMap<String, (String, Vec<String>)>,
    /// Each sequence family's base seed (`results.json`'s `draws`): two runs that drew other
    /// seeds may differ by the draw alone.
    pub seeds: BTreeMap<String, u64>,
}

impl Verdicts {
    /// This run's verdicts, to compare before the reports are written.
    pub fn of(results: &[crate::verdict::TestResult], target: &str, profile: &str) -> Self {
        Self {
            source: "this run".into(),
            target: target.to_string(),
            profile: profile.to_string(),
            tests: results
                .iter()
                .map(|r| {
                    let checks = r.findings.iter().map(|f| f.check.id.to_string()).collect();
                    (r.name.clone(), (r.verdict.as_str().to_string(), checks))
                })
                .collect(),
            seeds: results
                .iter()
                .filter_map(|r| Some((r.name.clone(), r.draws?.base)))
                .collect(),
        }
    }

    /// Reads a `results.json` written by `conform`.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a results.json ({e})", path.display()))?;
        let tests = doc["tests"]
            .as_array()
            .ok_or_else(|| format!("{}: not a results.json (no `tests`)", path.display()))?;
        let text_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Ok(Self {
            source: path.display().to_string(),
            target: text_of(&doc["config"]["target"]),
            profile: text_of(&doc["profile"]),
            tests: tests
                .iter()
                .map(|t| {
                    let checks = t["failed_checks"]
                        .as_array()
                        .map(|c| c.iter().map(|c| text_of(&c["id"])).collect())
                        .unwrap_or_default();
                    (text_of(&t["name"]), (text_of(&t["verdict"]), checks))
                })
                .collect(),
            seeds: tests
                .iter()
                .filter_map(|t| Some((text_of(&t["name"]), t["draws"]["base_seed"].as_u64()?)))
                .collect(),
        })
    }
}

/// One test whose verdict differs between the two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The test.
    pub name: String,
    /// Its verdict in the baseline (`absent` when it was not there).
    pub before: String,
    /// Its verdict now (`absent` when it is no longer run).
    pub now: String,
    /// The checks it fails now.
    pub checks: Vec<String>,
}

/// The differences between a baseline and the run after it.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// Failing now, not failing before: what to look at first.
    pub regressions: Vec<Moved>,
    /// Failing before, passing now.
    pub fixed: Vec<Moved>,
    /// Every other verdict that moved (a test that now skips, is blocked, appeared or went).
    pub moved: Vec<Moved>,
    /// Tests compared (in both runs).
    pub compared: usize,
    /// What a reader should know about the comparison itself (another target or profile).
    pub notes: Vec<String>,
}

/// True for a verdict, named as `results.json` names it, that fails the run.
fn failing(verdict: &str) -> bool {
    Verdict::named(verdict).is_some_and(Verdict::fails_run)
}

impl Changes {
    /// Test by test, `now` against `before`.
    pub fn between(before: &Verdicts, now: &Verdicts) -> Self {
        let mut changes = Changes::default();
        let embedded = |t: &str| t.ends_with("(embedded reference service)");
        if before.target != now.target && !(embedded(&before.target) && embedded(&now.target)) {
            changes.notes.push(format!(
                "the baseline judged {}, this run {}: a verdict may have moved with the server",
                before.target, now.target
            ));
        }
        if before.profile != now.profile {
            changes.notes.push(format!(
                "the baseline ran at --profile {}, this run at {}",
                before.profile, now.profile
            ));
        }
        let absent = || ("absent".to_string(), Vec::new());
        let names: std::collections::BTreeSet<&String> =
            before.tests.keys().chain(now.tests.keys()).collect();
        for name in names {
            let (was, _) = before.tests.get(name).cloned().unwrap_or_else(absent);
            let (is, checks) = now.tests.get(name).cloned().unwrap_or_else(absent);
            if before.tests.contains_key(name) && now.tests.contains_key(name) {
                changes.compared += 1;
            }
            if was == is {
                continue;
            }
            if let (Some(a), Some(b)) = (before.seeds.get(name), now.seeds.get(name)) {
                if a != b {
                    changes.notes.push(format!(
                        "{name} drew other cases (the baseline from --seed {a}, this run from --seed {b}): a sequence family's verdict may depend on the draw; each run's own seed replays it"
                    ));
                }
            }
            let moved = Moved {
                name: name.clone(),
                before: was.clone(),
                now: is.clone(),
                checks,
            };
            if failing(&is) && !failing(&was) {
                changes.regressions.push(moved);
            } else if failing(&was) && is == "pass" {
                changes.fixed.push(moved);
            } else {
                changes.moved.push(moved);
            }
        }
        changes
    }

    /// The console's lines, or the markdown's when `markdown`.
    pub fn render(&self, baseline: &str, markdown: bool) -> String {
        self.render_at(baseline, markdown.then_some(1))
    }

    /// The console's lines (`None`), or markdown whose headings start at this level
    /// (`changes.md` at 1, a section of `summary.md` at 2).
    pub fn render_at(&self, baseline: &str, level: Option<usize>) -> String {
        let markdown = level.is_some();
        let hashes = "#".repeat(level.unwrap_or(1));
        let mut out = String::new();
        let heading = format!(
            "since the baseline ({baseline}): {} new failure(s), {} fixed, {} other verdict(s) moved, of {} tests in both runs",
            self.regressions.len(),
            self.fixed.len(),
            self.moved.len(),
            self.compared
        );
        if markdown {
            out.push_str(&format!("{hashes} Changes\n\n{}\n", capitalised(&heading)));
        } else {
            out.push_str(&format!("\n{heading}\n"));
        }
        for note in &self.notes {
            out.push_str(&format!(
                "{}note: {note}\n",
                if markdown { "\n" } else { "  " }
            ));
        }
        let sections = [
            ("new failures", &self.regressions),
            ("fixed", &self.fixed),
            ("moved", &self.moved),
        ];
        for (title, list) in sections {
            if list.is_empty() {
                continue;
            }
            if markdown {
                out.push_str(&format!(
                    "\n{hashes}# {}\n\n| test | before | now | failing checks |\n|---|---|---|---|\n",
                    capitalised(title)
                ));
            } else {
                out.push_str(&format!("  {title}:\n"));
            }
            for m in list {
                let checks = m.checks.join(", ");
                if markdown {
                    out.push_str(&format!(
                        "| `{}` | {} | {} | {checks} |\n",
                        m.name, m.before, m.now
                    ));
                } else {
                    let checks = if checks.is_empty() {
                        String::new()
                    } else {
                        format!(" [{checks}]")
                    };
                    out.push_str(&format!(
                        "    {} {} -> {}{checks}\n",
                        m.name, m.before, m.now
                    ));
                }
            }
        }
        out
    }
}

/// `conform compare BASELINE CURRENT`: prints what changed (and writes it as markdown with
/// `--markdown`); exit 1 when a test fails now that did not before, 2 for an unreadable file.
pub fn command(args: &crate::cli::CompareArgs) -> std::process::ExitCode {
    use crate::exit::ExitCodes;
    let read = |p: &Path| Verdicts::read(p);
    let (before, now) = match (read(&args.baseline), read(&args.current)) {
        (Ok(b), Ok(n)) => (b, n),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(ExitCodes::CONFIG);
        }
    };
    let changes = Changes::between(&before, &now);
    print!("{}", changes.render(&before.source, false));
    if let Some(file) = &args.markdown {
        if let Err(e) = std::fs::write(file, changes.render(&before.source, true)) {
            eprintln!("error: cannot write {}: {e}", file.display());
            return std::process::ExitCode::from(ExitCodes::REPORTS_UNWRITTEN);
        }
    }
    std::process::ExitCode::from(if changes.regressions.is_empty() {
        ExitCodes::OK
    } else {
        ExitCodes::FAILED
    })
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tests: &[(&str, &str)]) -> Verdicts {
        Verdicts {
            source: "x".into(),
            target: "t".into(),
            profile: "core".into(),
            tests: tests
                .iter()
                .map(|(n, v)| (n.to_string(), (v.to_string(), Vec::new())))
                .collect(),
            seeds: BTreeMap::new(),
        }
    }

    #[test]
    fn new_failures_fixed_and_moved_are_told_apart() {
        let before = run(&[
            ("a", "pass"),
            ("b", "fail"),
            ("c", "pass"),
            ("d", "fail"),
            ("gone", "pass"),
        ]);
        let now = run(&[
            ("a", "fail"),
            ("b", "pass"),
            ("c", "skipped"),
            ("d", "fail"),
            ("new", "error"),
        ]);
        let changes = Changes::between(&before, &now);
        let names = |l: &[Moved]| l.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&changes.regressions), ["a", "new"]);
        assert_eq!(names(&changes.fixed), ["b"]);
        assert_eq!(names(&changes.moved), ["c", "gone"]);
        assert_eq!(changes.compared, 4);
        assert!(changes.notes.is_empty());
    }

    #[test]
    fn a_sequence_that_moved_with_other_seeds_is_said_to_depend_on_the_draw() {
        let family = "sequences::workspaces";
        let mut before = run(&[(family, "fail"), ("a", "pass")]);
        let mut now = run(&[(family, "pass"), ("a", "fail")]);
        before.seeds.insert(family.into(), 1);
        now.seeds.insert(family.into(), 1129);
        let changes = Changes::between(&before, &now);
        assert_eq!(changes.notes.len(), 1, "{:?}", changes.notes);
        assert!(changes.notes[0].contains("--seed 1,") && changes.notes[0].contains("--seed 1129"));
        // the same draw: a move is the server's or the suite's, not the draw's
        now.seeds.insert(family.into(), 1);
        assert!(Changes::between(&before, &now).notes.is_empty());
    }
}
