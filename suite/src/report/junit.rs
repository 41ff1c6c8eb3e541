//! JUnit XML, in the structure of the Jenkins schema (xunit-plugin's `junit-10.xsd`), which
//! GitLab's and GitHub's test reporters read too:
//!
//! ```xml
//! <testsuites name="conform" tests="352" failures="2" errors="0" time="3.210">
//!   <testsuite name="runs" tests="20" failures="1" errors="0" skipped="0" time="0.412">
//!     <properties><property name="target" value="…"/>…</properties>
//!     <testcase name="runs::show::bare" classname="runs" time="0.012">
//!       <failure type="fail" message="endpoint.exists: GET … answered 404">the whole
//!         finding: the requests, each failed check with the exchange that shows it, the
//!         rerun line</failure>
//!     </testcase>
//!     <testcase …><skipped type="blocked" message="needs …">…</skipped></testcase>
//!   </testsuite>
//! </testsuites>
//! ```
//!
//! One `testsuite` per group, `classname` = group. A failing test's `<failure>` (an
//! errored one's `<error>`) carries a short `message` and, as its text, the whole finding
//! with its evidence, which is what CI UIs show; a blocked, unsupported, skipped or waived
//! test is `<skipped>` with its verdict as `type`. Suite properties carry the resolved
//! configuration. `<testsuites>` carries the totals the schema declares there (tests,
//! failures, errors, time); the skipped count is on each `<testsuite>`, where the schema
//! has it. Times are seconds as decimals (the schema's `SUREFIRE_TIME`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::RunInfo;
use crate::verdict::{TestResult, Verdict};

/// Characters of a `message` attribute at most: the text holds the rest.
const MESSAGE_CHARS: usize = 200;

/// Writes `path` (creating its folder). Every text is scrubbed of secrets.
pub fn write_junit(path: &Path, results: &[TestResult], info: &RunInfo) -> std::io::Result<()> {
    super::write_scrubbed(path, &render(results, info), info)
}

/// Counts of one suite, or of all.
#[derive(Default)]
struct Tally {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    seconds: f64,
}

impl Tally {
    fn add(&mut self, r: &TestResult) {
        self.tests += 1;
        self.seconds += r.duration.as_secs_f64();
        match r.verdict {
            Verdict::Pass => {}
            Verdict::Fail => self.failures += 1,
            Verdict::Error => self.errors += 1,
            _ => self.skipped += 1,
        }
    }
}

/// The XML document.
pub fn render(results: &[TestResult], info: &RunInfo) -> String {
    let mut by_group: BTreeMap<&str, Vec<&TestResult>> = BTreeMap::new();
    let mut all = Tally::default();
    for r in results {
        by_group.entry(r.group.as_str()).or_default().push(r);
        all.add(r);
    }
    let mut properties = String::from("<properties>");
    for (k, v) in &info.config {
        let _ = write!(
            properties,
            "<property name=\"{}\" value=\"{}\"/>",
            attr(k),
            attr(&info.scrub(v))
        );
    }
    properties.push_str("</properties>");
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"conform\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3}\">",
        all.tests, all.failures, all.errors, all.seconds
    );
    for (group, tests) in by_group {
        let mut t = Tally::default();
        tests.iter().for_each(|r| t.add(r));
        let _ = writeln!(
            xml,
            "<testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">{properties}",
            attr(group),
            t.tests,
            t.failures,
            t.errors,
            t.skipped,
            t.seconds
        );
        for r in tests {
            testcase(&mut xml, r, info);
        }
        xml.push_str("</testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn testcase(xml: &mut String, r: &TestResult, info: &RunInfo) {
    let _ = write!(
        xml,
        "<testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
        attr(&r.name),
        attr(&r.group),
        r.duration.as_secs_f64()
    );
    let text = info.scrub(&r.failure_text());
    let reason = info.scrub(r.reason.as_deref().unwrap_or(""));
    let (element, kind, message) = match r.verdict {
        Verdict::Pass => {
            xml.push_str("/>\n");
            return;
        }
        Verdict::Fail => {
            let first = r
                .findings
                .first()
                .map(|f| format!("{}: {}", f.check.id, info.scrub(&f.message)))
                .unwrap_or_else(|| reason.clone());
            ("failure", "fail", first)
        }
        Verdict::Error => ("error", "error", reason.clone()),
        _ => ("skipped", r.verdict.as_str(), reason.clone()),
    };
    let _ = write!(
        xml,
        "><{element} type=\"{kind}\" message=\"{}\"",
        attr(&short(&message))
    );
    if text.is_empty() {
        xml.push_str("/>");
    } else {
        let _ = write!(xml, ">{}</{element}>", cdata(&text));
    }
    xml.push_str("</testcase>\n");
}

/// The first line of a message, at most [`MESSAGE_CHARS`] characters.
fn short(message: &str) -> String {
    let line = message.lines().next().unwrap_or("");
    match line.char_indices().nth(MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// Text content: markup escaped, and what XML cannot hold replaced ([`legal`]).
fn content(text: &str) -> String {
    legal(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Text as one CDATA section (a `]]>` in it split across two), with the characters XML
/// cannot hold replaced: readers that drop entity references from text (junit-parser) get
/// every character of it.
fn cdata(text: &str) -> String {
    format!(
        "<![CDATA[{}]]>",
        legal(text).replace("]]>", "]]]]><![CDATA[>")
    )
}

/// The text without the characters XML 1.0 cannot hold (control characters a target may
/// answer), each replaced by U+FFFD.
fn legal(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// An attribute value (in double quotes): text content's escapes, quotes and line breaks.
fn attr(text: &str) -> String {
    content(text)
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_stripped_of_what_xml_cannot_hold() {
        assert_eq!(content("a<b & ]]> \u{1}c"), "a&lt;b &amp; ]]&gt; \u{fffd}c");
        assert_eq!(cdata("x]]>y"), "<![CDATA[x]]]]><![CDATA[>y]]>");
        assert_eq!(attr("say \"x\"\nthen"), "say &quot;x&quot;&#10;then");
        assert_eq!(short("one\ntwo"), "one");
        assert_eq!(short(&"x".repeat(300)).chars().count(), MESSAGE_CHARS + 1);
    }
}
