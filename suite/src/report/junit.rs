//! JUnit XML: one `testcase` per test, `classname` = group; failures carry the request,
//! a `curl` line and the response. Suite properties carry the resolved configuration.

use std::collections::BTreeMap;
use std::path::Path;

use junit_report::{Duration, ReportBuilder, TestCase, TestSuiteBuilder};

use super::RunInfo;
use crate::verdict::{TestResult, Verdict};

/// Writes `path` (creating its folder). Every text is scrubbed of secrets.
pub fn write_junit(path: &Path, results: &[TestResult], info: &RunInfo) -> std::io::Result<()> {
    let mut by_group: BTreeMap<&str, Vec<&TestResult>> = BTreeMap::new();
    for r in results {
        by_group.entry(r.group.as_str()).or_default().push(r);
    }
    let mut report = ReportBuilder::new();
    for (group, tests) in by_group {
        let mut suite = TestSuiteBuilder::new(group);
        for r in tests {
            let time = Duration::milliseconds(r.duration.as_millis() as i64);
            let text = info.scrub(&r.failure_text());
            let mut case = match r.verdict {
                Verdict::Pass => TestCase::success(&r.name, time),
                Verdict::Fail => {
                    let first = r
                        .findings
                        .first()
                        .map(|f| format!("{}: {}", f.check.id, f.message))
                        .or_else(|| r.reason.clone())
                        .unwrap_or_default();
                    let mut c = TestCase::failure(&r.name, time, "fail", &info.scrub(&first));
                    c.set_system_out(&text);
                    c
                }
                Verdict::Error => {
                    let mut c = TestCase::error(
                        &r.name,
                        time,
                        "error",
                        &info.scrub(r.reason.as_deref().unwrap_or("error")),
                    );
                    c.set_system_out(&text);
                    c
                }
                Verdict::Skipped | Verdict::Unsupported | Verdict::Waived | Verdict::Blocked => {
                    let mut c = TestCase::skipped_with_cause(
                        &r.name,
                        r.verdict.as_str(),
                        &info.scrub(r.reason.as_deref().unwrap_or("")),
                    );
                    if !text.is_empty() {
                        c.set_system_out(&text);
                    }
                    c
                }
            };
            case.set_classname(&r.group);
            suite.add_testcase(case);
        }
        report.add_testsuite(suite.build());
    }
    let mut xml = Vec::new();
    report
        .build()
        .write_xml(&mut xml)
        .map_err(std::io::Error::other)?;
    let xml = with_properties(&String::from_utf8_lossy(&xml), info);
    super::write_scrubbed(path, &xml, info)
}

/// Inserts a `<properties>` block (the resolved configuration) into every `<testsuite>`:
/// `junit-report` (0.9) writes no properties and has no way to add them, so they go into its
/// XML here.
fn with_properties(xml: &str, info: &RunInfo) -> String {
    let mut props = String::from("<properties>");
    for (k, v) in &info.config {
        props.push_str(&format!(
            "<property name=\"{}\" value=\"{}\"/>",
            escape(k),
            escape(v)
        ));
    }
    props.push_str("</properties>");
    let mut out = String::with_capacity(xml.len() + props.len() * 8);
    let mut rest = xml;
    while let Some(start) = rest.find("<testsuite ") {
        let Some(end) = rest[start..].find('>') else {
            break;
        };
        let end = start + end + 1;
        out.push_str(&rest[..end]);
        if !rest[..end].ends_with("/>") {
            out.push_str(&props);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
