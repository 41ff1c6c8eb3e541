//! The peer run's reports, in `--reports` (default `reports/go-tfe/`): `junit.xml` (the suite
//! `go-tfe`), `results.json`, `summary.md` and `report.html`, each with go-tfe's results beside
//! the suite's verdicts per group (the proxy's judgement of go-tfe's own exchanges, and a suite
//! run's `results.json` when `--suite-results` names one), the disagreements first; the
//! proxy's own reports go to `proxy/`. Every text is scrubbed of the token.

use std::collections::BTreeMap;
use std::path::Path;

use junit_report::{Duration as JDuration, ReportBuilder, TestCase, TestSuiteBuilder};
use serde_json::{json, Value};

use super::{Difference, Outcome, PeerFile, Status};
use crate::proxy::Finished;
use crate::verdict::Verdict;

/// The name of the bucket of tests in groups the spec does not list.
const OUTSIDE: &str = "(outside the spec's groups)";

/// Verdicts of a suite run (its `results.json`), counted per group.
#[derive(Debug, Default)]
pub struct SuiteVerdicts {
    by_group: BTreeMap<String, (u64, u64)>,
    /// The run's target as its configuration says it.
    target: String,
}

impl SuiteVerdicts {
    /// Reads a suite run's `results.json`.
    pub fn read(path: &Path) -> Result<SuiteVerdicts, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--suite-results {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("--suite-results {}: not JSON: {e}", path.display()))?;
        let tests = doc["tests"].as_array().ok_or_else(|| {
            format!(
                "--suite-results {}: not a conform run's results.json (no `tests`)",
                path.display()
            )
        })?;
        let mut by_group: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for t in tests {
            let group = t["group"].as_str().unwrap_or_default().to_string();
            let slot = by_group.entry(group).or_default();
            match t["verdict"].as_str().and_then(Verdict::named) {
                Some(Verdict::Pass) => slot.0 += 1,
                Some(verdict) if verdict.fails_run() => slot.1 += 1,
                _ => {}
            }
        }
        let target = doc["config"]["target"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok(SuiteVerdicts { by_group, target })
    }

    /// Whether the run judged `target` (`None`: the embedded reference).
    pub fn judged(&self, target: Option<&str>) -> bool {
        match target {
            Some(url) => self.target.trim_end_matches('/') == url.trim_end_matches('/'),
            None => self.target.ends_with("(embedded reference service)"),
        }
    }
}

/// One group's row of the side-by-side table.
#[derive(Debug, Default, Clone)]
struct GroupRow {
    group: String,
    pass: u64,
    fail: u64,
    skipped: u64,
    not_run: u64,
    failing_tests: Vec<String>,
    exchanges: u64,
    deviations: BTreeMap<String, u64>,
    suite: Option<(u64, u64)>,
}

impl GroupRow {
    /// Where the two judges disagree, in a phrase (none when they agree).
    fn disagreement(&self) -> Option<&'static str> {
        // The tests outside the spec's groups reach endpoints of many groups: no one judge
        // of the suite sits beside them.
        if self.group == OUTSIDE {
            return None;
        }
        // go-tfe's tests of the group used none of its endpoints (TFE's workspace-scoped
        // variables rather than the spec's `/vars`) and no suite run is beside them: nothing
        // of the suite's to compare.
        if self.exchanges == 0 && self.suite.is_none() {
            return None;
        }
        let suite_fails = self.suite.is_some_and(|(_, f)| f > 0);
        let suite_finds = !self.deviations.is_empty() || suite_fails;
        if self.fail > 0 && !suite_finds {
            Some("go-tfe fails, the suite finds nothing")
        } else if self.fail == 0 && self.pass > 0 && suite_finds {
            Some("the suite finds deviations, go-tfe passes")
        } else {
            None
        }
    }
}

/// Everything the reports say.
pub struct PeerReport<'a> {
    /// The peer's data.
    pub file: &'a PeerFile,
    /// The pinned version.
    pub version: &'a str,
    /// What was tested.
    pub target: String,
    /// Each test run, in order.
    pub outcomes: &'a [Outcome],
    /// Tests not run, with the reason.
    pub not_run: &'a [(String, String)],
    /// What the proxy saw of go-tfe's exchanges.
    pub proxy: &'a Finished,
    /// A suite run's verdicts, if given.
    pub suite: Option<&'a SuiteVerdicts>,
    /// Results that differ from the expectations (embedded reference only).
    pub differences: &'a [Difference],
    /// Wall time of the tests.
    pub seconds: f64,
    /// Scrubbed from every text (`target::redact`: a short one where it stands as a
    /// credential).
    pub token: &'a str,
}

impl PeerReport<'_> {
    fn scrub(&self, text: &str) -> String {
        crate::target::redact(text, &[&crate::target::Secret::new(self.token)])
    }

    fn group_of(&self, test: &str) -> String {
        self.file.group(test).unwrap_or(OUTSIDE).to_string()
    }

    fn count(&self, status: Status) -> usize {
        self.outcomes.iter().filter(|o| o.status == status).count()
    }

    /// The side-by-side rows, disagreements first, then by group.
    fn rows(&self) -> Vec<GroupRow> {
        let mut by: BTreeMap<String, GroupRow> = BTreeMap::new();
        for o in self.outcomes {
            let g = self.group_of(&o.name);
            let r = by.entry(g.clone()).or_insert_with(|| GroupRow {
                group: g,
                ..GroupRow::default()
            });
            match o.status {
                Status::Pass => r.pass += 1,
                Status::Fail => {
                    r.fail += 1;
                    r.failing_tests.push(o.name.clone());
                }
                Status::Skipped => r.skipped += 1,
            }
        }
        for (test, _) in self.not_run {
            let g = self.group_of(test);
            by.entry(g.clone())
                .or_insert_with(|| GroupRow {
                    group: g,
                    ..GroupRow::default()
                })
                .not_run += 1;
        }
        let results = self
            .proxy
            .observed
            .results(&self.proxy.info, &self.proxy.documented);
        for e in results["entries"].as_array().into_iter().flatten() {
            let test = e["test"].as_str().unwrap_or_default();
            let group = test.split("::").next().unwrap_or_default().to_string();
            let r = by.entry(group.clone()).or_insert_with(|| GroupRow {
                group,
                ..GroupRow::default()
            });
            r.exchanges += e["count"].as_u64().unwrap_or(0);
            for d in e["deviations"].as_array().into_iter().flatten() {
                if d["fails"].as_bool() == Some(true) {
                    *r.deviations
                        .entry(d["check"].as_str().unwrap_or_default().to_string())
                        .or_default() += d["count"].as_u64().unwrap_or(0);
                }
            }
        }
        if let Some(suite) = self.suite {
            for (group, counts) in &suite.by_group {
                if let Some(r) = by.get_mut(group) {
                    r.suite = Some(*counts);
                }
            }
        }
        let mut keep: Vec<GroupRow> = by.into_values().collect();
        keep.sort_by_key(|r| {
            (
                r.disagreement().is_none(),
                r.group == OUTSIDE,
                r.group.clone(),
            )
        });
        keep
    }

    /// The one-screen console summary.
    pub fn console(&self) -> String {
        let mut out = format!(
            "\ngo-tfe {} against {}: {} pass, {} fail ({} panicked), {} skipped, {} not run, in {:.0} s; the proxy judged {} exchanges ({} failing deviations)\n",
            self.version,
            self.target,
            self.count(Status::Pass),
            self.count(Status::Fail),
            self.outcomes.iter().filter(|o| o.panicked).count(),
            self.count(Status::Skipped),
            self.not_run.len(),
            self.seconds,
            self.proxy.observed.exchanges(),
            self.proxy.observed.failing(self.proxy.info.profile),
        );
        for o in self.outcomes.iter().filter(|o| o.status == Status::Fail) {
            out.push_str(&format!("  fail {}: {}\n", o.name, o.reason));
        }
        let left: Vec<&String> = self.proxy.observed.organizations_left().collect();
        if !left.is_empty() {
            out.push_str(&format!(
                "  left behind by go-tfe's tests: {} organization(s): {}\n",
                left.len(),
                left.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.differences.is_empty() {
            out.push_str(&format!(
                "\n{} result(s) differ from cases/peers/go-tfe.toml:\n",
                self.differences.len()
            ));
            for d in self.differences {
                out.push_str(&format!("  {}: {}\n", d.test, d.message));
            }
        }
        self.scrub(&out)
    }

    fn results_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows()
            .iter()
            .map(|r| {
                json!({
                    "group": r.group,
                    "go_tfe": {"pass": r.pass, "fail": r.fail, "skipped": r.skipped, "not_run": r.not_run, "failing": r.failing_tests},
                    "proxy": {"exchanges": r.exchanges, "failing_deviations": r.deviations},
                    "suite": r.suite.map(|(p, f)| json!({"pass": p, "fail": f})),
                    "disagreement": r.disagreement(),
                })
            })
            .collect();
        json!({
            "tool": "conform peer go-tfe",
            "module": self.file.module,
            "version": self.version,
            "target": self.target,
            "wall_seconds": self.seconds,
            "counts": {
                "pass": self.count(Status::Pass),
                "fail": self.count(Status::Fail),
                "panicked": self.outcomes.iter().filter(|o| o.panicked).count(),
                "skipped": self.count(Status::Skipped),
                "not_run": self.not_run.len(),
            },
            "tests": self.outcomes.iter().map(|o| json!({
                "name": o.name,
                "group": self.file.group(&o.name),
                "status": o.status.as_str(),
                "panicked": o.panicked,
                "reason": o.reason,
                "failed_subtests": o.failed_subtests,
                "seconds": o.duration.as_secs_f64(),
                "endpoints": o.endpoints,
            })).collect::<Vec<_>>(),
            "not_run": self.not_run.iter().map(|(t, why)| json!({"name": t, "reason": why})).collect::<Vec<_>>(),
            "groups": rows,
            "organizations_left": self.proxy.observed.organizations_left().collect::<Vec<_>>(),
            "differences": self.differences.iter().map(|d| json!({"test": d.test, "message": d.message})).collect::<Vec<_>>(),
        })
    }

    fn summary_md(&self) -> String {
        let mut out = format!(
            "# go-tfe {} against {}\n\n{} pass, {} fail, {} skipped (judged nothing), {} not run; {:.0} s. The suite's proxy judged {} of go-tfe's exchanges at --profile {}: {} failing deviations (its own reports: `proxy/summary.md`).\n\n",
            self.version,
            self.target,
            self.count(Status::Pass),
            self.count(Status::Fail),
            self.count(Status::Skipped),
            self.not_run.len(),
            self.seconds,
            self.proxy.observed.exchanges(),
            self.proxy.info.profile.as_str(),
            self.proxy.observed.failing(self.proxy.info.profile),
        );
        if !self.differences.is_empty() {
            out.push_str("## Results that differ from `cases/peers/go-tfe.toml`\n\n");
            for d in self.differences {
                out.push_str(&format!("- `{}`: {}\n", d.test, d.message));
            }
            out.push('\n');
        }
        out.push_str("## Per group: go-tfe beside the suite (disagreements first)\n\n| group | go-tfe pass | fail | skipped | not run | suite's checks on go-tfe's exchanges | suite run (pass / fail) | disagreement |\n|---|---|---|---|---|---|---|---|\n");
        for r in self.rows() {
            let devs = if r.deviations.is_empty() {
                format!("{} exchanges, no failing deviation", r.exchanges)
            } else {
                format!(
                    "{} exchanges; {}",
                    r.exchanges,
                    r.deviations
                        .iter()
                        .map(|(c, n)| format!("`{c}` {n}x"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.group,
                r.pass,
                r.fail,
                r.skipped,
                r.not_run,
                devs,
                r.suite
                    .map_or("-".to_string(), |(p, f)| format!("{p} / {f}")),
                r.disagreement().unwrap_or("")
            ));
        }
        let failing: Vec<&Outcome> = self
            .outcomes
            .iter()
            .filter(|o| o.status == Status::Fail)
            .collect();
        if !failing.is_empty() {
            out.push_str("\n## Failing go-tfe tests\n\n");
            for o in failing {
                out.push_str(&format!(
                    "### `{}` ({})\n\n{}\n\n```\n{}\n```\n\n",
                    o.name,
                    self.group_of(&o.name),
                    o.reason,
                    tail(&o.output, 3000)
                ));
            }
        }
        let left: Vec<&String> = self.proxy.observed.organizations_left().collect();
        if !left.is_empty() {
            out.push_str(&format!(
                "\n## Left behind\n\ngo-tfe's tests made and did not delete {} organization(s): {}. Delete them with `conform sweep --prefix tst- --target …`.\n",
                left.len(),
                left.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        out.push_str("\n## Not run\n\n");
        let mut reasons: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (t, why) in self.not_run {
            reasons.entry(why.as_str()).or_default().push(t.as_str());
        }
        for (why, tests) in reasons {
            out.push_str(&format!("- {why}: {} tests\n", tests.len()));
        }
        self.scrub(&out)
    }

    /// The map: each go-tfe test of a group the spec lists, the suite's endpoints its exchanges
    /// touched (their tests judge the same requests), and what the peer file says of the
    /// behaviour it asserts (`covers`).
    fn map_md(&self) -> String {
        let mut out = format!(
            "# go-tfe {}'s tests of the spec's groups, and the suite's checks of the same behaviour\n\n\
             Made by `conform peer go-tfe` (its `map.md`). For each go-tfe test of a group the spec lists: its \
             result against {}, the suite's endpoints its exchanges touched (each is a suite test, \
             `group::endpoint`, with that endpoint's checks), and what the suite checks of the \
             behaviour the test asserts, or does not yet (`covers` in `cases/peers/go-tfe.toml`).\n\n\
             | go-tfe test | result | suite endpoints touched | the same behaviour in the suite |\n|---|---|---|---|\n",
            self.version, self.target
        );
        let mut rows: Vec<&Outcome> = self
            .outcomes
            .iter()
            .filter(|o| self.file.group(&o.name).is_some())
            .collect();
        rows.sort_by_key(|o| (self.group_of(&o.name), o.name.clone()));
        for o in rows {
            let mut endpoints: Vec<String> = o
                .endpoints
                .iter()
                .map(|e| {
                    e.rsplit_once("::")
                        .map_or(e.as_str(), |(ep, _)| ep)
                        .to_string()
                })
                .collect();
            endpoints.dedup();
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                o.name,
                o.status.as_str(),
                endpoints
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.file
                    .covers
                    .get(&o.name)
                    .map_or("not mapped yet", String::as_str)
            ));
        }
        self.scrub(&out)
    }

    fn report_html(&self) -> String {
        let esc = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        };
        let mut rows = String::new();
        for r in self.rows() {
            let class = if r.disagreement().is_some() {
                " class=\"disagree\""
            } else {
                ""
            };
            rows.push_str(&format!(
                "<tr{class}><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{} exchanges{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&r.group),
                r.pass,
                if r.fail > 0 { "bad" } else { "" },
                r.fail,
                r.skipped,
                r.not_run,
                r.exchanges,
                r.deviations.iter().map(|(c, n)| format!("; {} {n}x", esc(c))).collect::<String>(),
                r.suite.map_or("-".to_string(), |(p, f)| format!("{p} / {f}")),
                esc(r.disagreement().unwrap_or(""))
            ));
        }
        let mut failing = String::new();
        for o in self.outcomes.iter().filter(|o| o.status == Status::Fail) {
            failing.push_str(&format!(
                "<details><summary><code>{}</code>: {}</summary><pre>{}</pre></details>\n",
                esc(&o.name),
                esc(&o.reason),
                esc(tail(&o.output, 3000))
            ));
        }
        let page = format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>go-tfe {v}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .5em}}tr.disagree{{background:#fff3cd}}td.bad{{color:#b00;font-weight:bold}}pre{{white-space:pre-wrap}}</style></head><body><h1>go-tfe {v} against {t}</h1><p>{p} pass, {f} fail, {s} skipped, {n} not run.</p><h2>Per group: go-tfe beside the suite (disagreements first)</h2><table><tr><th>group</th><th>go-tfe pass</th><th>fail</th><th>skipped</th><th>not run</th><th>suite's checks on go-tfe's exchanges</th><th>suite run (pass / fail)</th><th>disagreement</th></tr>\n{rows}</table><h2>Failing go-tfe tests</h2>{failing}</body></html>\n",
            v = esc(self.version),
            t = esc(&self.target),
            p = self.count(Status::Pass),
            f = self.count(Status::Fail),
            s = self.count(Status::Skipped),
            n = self.not_run.len(),
        );
        self.scrub(&page)
    }

    fn junit(&self) -> Result<Vec<u8>, String> {
        let mut suite = TestSuiteBuilder::new("go-tfe");
        for o in self.outcomes {
            let time = JDuration::milliseconds(o.duration.as_millis() as i64);
            let name = format!("{}::{}", self.group_of(&o.name), o.name);
            let case = match o.status {
                Status::Pass => TestCase::success(&name, time),
                Status::Skipped => TestCase::skipped(&name),
                Status::Fail => {
                    let mut c = TestCase::failure(&name, time, "fail", &self.scrub(&o.reason));
                    c.set_system_out(&self.scrub(&o.output));
                    c
                }
            };
            suite.add_testcase(case);
        }
        let report = ReportBuilder::new().add_testsuite(suite.build()).build();
        let mut out = Vec::new();
        report.write_xml(&mut out).map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// Writes every report into `dir` (and the proxy's into `dir/proxy`).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        self.proxy
            .observed
            .write(&dir.join("proxy"), &self.proxy.info, &self.proxy.documented)?;
        let mut json =
            self.scrub(&serde_json::to_string_pretty(&self.results_json()).unwrap_or_default());
        json.push('\n');
        std::fs::write(dir.join("results.json"), json)?;
        std::fs::write(dir.join("summary.md"), self.summary_md())?;
        std::fs::write(dir.join("report.html"), self.report_html())?;
        std::fs::write(dir.join("map.md"), self.map_md())?;
        let junit = self.junit().map_err(std::io::Error::other)?;
        std::fs::write(
            dir.join("junit.xml"),
            self.scrub(&String::from_utf8_lossy(&junit)),
        )
    }
}

/// The last `n` bytes of a text, cut at a character boundary.
fn tail(text: &str, n: usize) -> &str {
    if text.len() <= n {
        return text;
    }
    let mut cut = text.len() - n;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    &text[cut..]
}
