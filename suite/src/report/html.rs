//! `report.html`: one self-contained page (inline CSS and plain JS, no external asset), in
//! the order a reader needs it: the figures, the root causes (each naming and linking the
//! tests it accounts for), a table per group (failing counts highlighted, linking to those
//! tests), the warnings, a row per test (failing tests first) with its failed checks and,
//! for failing and waived tests, every request and response of the test, then what the run
//! could not delete (folded) and the configuration. A text of several lines (a sequence
//! failure's numbered steps) is a `pre` block.
//!
//! Filters by group, verdict and name (a part of it, or a whole name: that test alone); they
//! live in the URL hash (`#group=runs&verdict=fail`,
//! `verdict=fail,error` for several), so a link opens the page filtered. Every row is a
//! `tr.t` with `data-group`, `data-verdict` and `data-name`; hidden rows carry `hidden`; the
//! number of rows shown is in `#shown`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::{rate, tally, write_scrubbed, Counts, RunInfo, RunReport};
use crate::verdict::{TestResult, Verdict};

/// Writes `report.html`.
pub fn write_html(path: &Path, report: &RunReport) -> std::io::Result<()> {
    write_scrubbed(path, &render(report), report.info)
}

/// Escapes text for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Scrubs, then escapes.
fn safe(info: &RunInfo, text: &str) -> String {
    esc(&info.scrub(text))
}

/// Scrubs, escapes, and shows the `code` spans the project's messages use as `<code>`
/// (a text with an odd number of backticks is left as it is).
fn prose(info: &RunInfo, text: &str) -> String {
    let escaped = safe(info, text);
    let parts: Vec<&str> = escaped.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escaped;
    }
    let mut out = String::with_capacity(escaped.len() + parts.len() * 6);
    for (i, part) in parts.iter().enumerate() {
        match i % 2 {
            1 => {
                out.push_str("<code>");
                out.push_str(part);
                out.push_str("</code>");
            }
            _ => out.push_str(part),
        }
    }
    out
}

/// Root-cause tests linked inline; more than this are folded.
const INLINE_LINKS: usize = 3;

/// A text of one line as a `div`; of several (a sequence failure's numbered steps and
/// `curl` lines) as a `pre` that keeps them, as the console prints them. Scrubbed, escaped
/// once.
fn text_block(info: &RunInfo, text: &str) -> String {
    let text = text.trim_end();
    if text.lines().count() <= 1 {
        format!("<div>{}</div>", prose(info, text))
    } else {
        format!("<pre class=\"reason\">{}</pre>", safe(info, text))
    }
}

/// A link that shows one test (the name filter), its name as the text.
fn test_link(name: &str) -> String {
    format!(
        "<a href=\"#q={}\" class=\"check\">{}</a>",
        esc(name),
        esc(name)
    )
}

/// Where a verdict's rows come in the test table: failing first, then what needs a look
/// (blocked, waived), then the rest; by name within each.
fn rank(verdict: Verdict) -> u8 {
    match verdict {
        verdict if verdict.fails_run() => 0,
        Verdict::Blocked => 1,
        Verdict::Waived => 2,
        _ => 3,
    }
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1d2127}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin-top:1.5em}
table{border-collapse:collapse}td,th{border-bottom:1px solid #e3e6ea;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f5f7}td.n,th.n{text-align:right}
.v{display:inline-block;padding:0 .5em;border-radius:.7em;font-size:.85em;font-weight:600}
.v-pass{background:#dcf5e3;color:#135c2a}.v-fail{background:#fde0e0;color:#8c1c1c}
.v-error{background:#ffe7c7;color:#80430a}.v-waived{background:#e6e1fa;color:#43307d}
.v-skipped,.v-unsupported{background:#eceef1;color:#4a5059}
pre{background:#f6f8fa;padding:.6em;overflow:auto;max-height:30em;white-space:pre-wrap;word-break:break-all;font-size:12px}
pre.ev{border-left:3px solid #c62828}
.filters{position:sticky;top:0;background:#fff;padding:.6em 0;border-bottom:1px solid #e3e6ea}
.filters label{margin-right:1em}.check{font-family:ui-monospace,monospace}
.muted{color:#68707c}a{color:#0b57d0}
td.hot{background:#fde0e0;font-weight:700}td.hot a{color:#8c1c1c}
#causes li{margin-bottom:.3em}#causes details{display:inline}
pre.reason{border-left:3px solid #68707c}
"#;

const SCRIPT: &str = r#"
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.t'));
  var group = document.getElementById('f-group');
  var verdict = document.getElementById('f-verdict');
  var text = document.getElementById('f-text');
  function choose(select, value) {
    if (value && !Array.prototype.some.call(select.options, function (o) { return o.value === value; })) {
      var o = document.createElement('option');
      o.value = value; o.textContent = value; select.appendChild(o);
    }
    select.value = value || '';
  }
  function parse() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var i = part.indexOf('=');
      if (i > 0) { out[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1)); }
    });
    return out;
  }
  function apply() {
    var g = group.value, vs = verdict.value ? verdict.value.split(',') : null;
    var t = text.value.toLowerCase(), shown = 0;
    // a whole test name (a root cause's link) shows that test alone
    var exact = rows.some(function (row) { return row.getAttribute('data-name') === t; });
    rows.forEach(function (row) {
      var name = row.getAttribute('data-name');
      var show = (!g || row.getAttribute('data-group') === g) &&
        (!vs || vs.indexOf(row.getAttribute('data-verdict')) >= 0) &&
        (!t || (exact ? name === t : name.indexOf(t) >= 0));
      row.hidden = !show;
      if (show) { shown += 1; }
    });
    document.getElementById('shown').textContent = String(shown);
  }
  function fromHash() {
    var h = parse();
    choose(group, h.group); choose(verdict, h.verdict); text.value = h.q || '';
    apply();
  }
  function toHash() {
    var parts = [];
    if (group.value) { parts.push('group=' + encodeURIComponent(group.value)); }
    if (verdict.value) { parts.push('verdict=' + encodeURIComponent(verdict.value)); }
    if (text.value) { parts.push('q=' + encodeURIComponent(text.value)); }
    history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname + location.search);
    apply();
  }
  group.addEventListener('change', toHash);
  verdict.addEventListener('change', toHash);
  text.addEventListener('input', toHash);
  window.addEventListener('hashchange', fromHash);
  fromHash();
  document.body.setAttribute('data-ready', 'true');
})();
"#;

/// The page.
pub fn render(report: &RunReport) -> String {
    let (groups, total) = tally(report.results);
    let failing = report
        .results
        .iter()
        .filter(|r| r.verdict.fails_run())
        .count();
    let mut h = String::new();
    header(&mut h, report, failing, total);
    // What changed since --baseline: new failures first.
    changes(&mut h, report);
    // Root causes first: what to fix before reading single tests, each naming its tests.
    root_causes(&mut h, report);
    // Groups table, with links that filter; failing counts stand out.
    groups_table(&mut h, &groups, total);
    warnings(&mut h, report);
    filters(&mut h, &groups, total);
    tests_table(&mut h, report);
    // What the run could not delete: often long, and no verdict's evidence, so folded.
    closing(&mut h, report);
    h
}

/// The page's head and the headline with the run's figures.
fn header(h: &mut String, report: &RunReport, failing: usize, total: Counts) {
    let info = report.info;
    let title = match info.get("interrupted") {
        Some(how) => esc(&format!("interrupted {how}")),
        None if failing == 0 => "passed".to_string(),
        None => format!("{failing} failing"),
    };
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>conform: {title}</title><style>{STYLE}</style></head><body>\n"
    );
    let _ = writeln!(
        h,
        "<h1>conform: {title}</h1><p class=\"muted\">profile <b>{}</b> against <code>{}</code> · conform {} · {} tests · {} requests · {:.1} s · {:.0} requests/s{}</p>",
        report.profile.as_str(),
        safe(info, &info.get("target").unwrap_or_default()),
        env!("CARGO_PKG_VERSION"),
        total.total(),
        report.figures.requests,
        report.figures.wall.as_secs_f64(),
        rate(report.figures),
        if report.leftovers.is_empty() {
            String::new()
        } else {
            format!(
                " · <a href=\"#leftovers\">{} not deleted</a>",
                report.leftovers.len()
            )
        }
    );
}

/// What changed since `--baseline`.
fn changes(h: &mut String, report: &RunReport) {
    if let Some((baseline, changes)) = report.changes {
        let _ = write!(
            h,
            "<h2>Since the baseline</h2><p id=\"changes\">{} new failure(s), {} fixed, {} other verdict(s) moved since <code>{}</code></p>",
            changes.regressions.len(),
            changes.fixed.len(),
            changes.moved.len(),
            esc(baseline)
        );
        for (title, list) in [
            ("New failures", &changes.regressions),
            ("Fixed", &changes.fixed),
            ("Moved", &changes.moved),
        ] {
            if list.is_empty() {
                continue;
            }
            let _ = write!(h, "<h3>{title}</h3><ul>");
            for m in list {
                let _ = write!(
                    h,
                    "<li>{}: {} &rarr; {} {}</li>",
                    test_link(&m.name),
                    esc(&m.before),
                    esc(&m.now),
                    esc(&m.checks.join(", "))
                );
            }
            h.push_str("</ul>");
        }
    }
}

/// Every root cause, each naming (or folding) its tests.
fn root_causes(h: &mut String, report: &RunReport) {
    let info = report.info;
    let causes = super::cause_groups(report.results, report.profile);
    if !causes.is_empty() {
        h.push_str("<h2>Root causes</h2><ul id=\"causes\">");
        for g in &causes {
            let _ = write!(h, "<li>{}", prose(info, &g.line()));
            let links: Vec<String> = g.tests.iter().map(|t| test_link(t)).collect();
            if links.len() <= INLINE_LINKS {
                let _ = write!(h, ": {}", links.join(", "));
            } else {
                let _ = write!(
                    h,
                    " <details><summary>the {} tests</summary>{}</details>",
                    links.len(),
                    links.join(", ")
                );
            }
            h.push_str("</li>");
        }
        h.push_str("</ul>");
    }
}

/// The table of verdicts per group.
fn groups_table(h: &mut String, groups: &BTreeMap<&str, Counts>, total: Counts) {
    h.push_str("<h2>Groups</h2><table id=\"groups\"><thead><tr><th>group</th>");
    for v in Verdict::ALL {
        let _ = write!(
            h,
            "<th class=\"n\"><a href=\"#verdict={0}\">{0}</a></th>",
            v.as_str()
        );
    }
    h.push_str("</tr></thead><tbody>\n");
    for (g, c) in groups {
        let _ = write!(h, "<tr><td><a href=\"#group={0}\">{0}</a></td>", esc(g));
        for (v, n) in Verdict::ALL.iter().zip(c.0) {
            if v.fails_run() && n > 0 {
                let _ = write!(
                    h,
                    "<td class=\"n hot\"><a href=\"#group={}&amp;verdict={}\">{n}</a></td>",
                    esc(g),
                    v.as_str()
                );
            } else {
                let _ = write!(h, "<td class=\"n\">{n}</td>");
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("<tr><th>total</th>");
    for (i, n) in total.0.iter().enumerate() {
        let _ = write!(
            h,
            "<th class=\"n\" data-total=\"{}\">{n}</th>",
            Verdict::ALL[i].as_str()
        );
    }
    h.push_str("</tr></tbody></table>\n");
}

/// The end-of-run warnings.
fn warnings(h: &mut String, report: &RunReport) {
    let info = report.info;
    if !report.warnings.is_empty() {
        h.push_str("<h2>Warnings</h2><ul id=\"warnings\">");
        for w in report.warnings {
            let _ = write!(h, "<li>{}</li>", prose(info, w));
        }
        h.push_str("</ul>\n");
    }
}

/// The filters over the tests' table: group, verdict, name.
fn filters(h: &mut String, groups: &BTreeMap<&str, Counts>, total: Counts) {
    h.push_str("<h2>Tests</h2><div class=\"filters\"><label>group <select id=\"f-group\"><option value=\"\">all</option>");
    for g in groups.keys() {
        let _ = write!(h, "<option value=\"{0}\">{0}</option>", esc(g));
    }
    h.push_str("</select></label><label>verdict <select id=\"f-verdict\"><option value=\"\">all</option><option value=\"fail,error\">failing (fail, error)</option>");
    for v in Verdict::ALL {
        let _ = write!(h, "<option value=\"{0}\">{0}</option>", v.as_str());
    }
    let _ = writeln!(
        h,
        "</select></label><label>name <input id=\"f-text\" type=\"search\" placeholder=\"runs::show\"></label>\
         <span class=\"muted\"><span id=\"shown\">{0}</span> of {0} shown</span></div>",
        total.total()
    );
}

/// One row per test, failing ones first.
fn tests_table(h: &mut String, report: &RunReport) {
    h.push_str("<table id=\"tests\"><thead><tr><th>test</th><th>verdict</th><th class=\"n\">ms</th><th class=\"n\">requests</th><th>details</th></tr></thead><tbody>\n");
    let mut rows: Vec<&TestResult> = report.results.iter().collect();
    rows.sort_by_key(|r| rank(r.verdict));
    for r in rows {
        row(h, r, report);
    }
    h.push_str("</tbody></table>\n");
}

/// What was not deleted (folded), the configuration and the script.
fn closing(h: &mut String, report: &RunReport) {
    let info = report.info;
    if !report.leftovers.is_empty() {
        let _ = write!(
            h,
            "<h2>Not deleted</h2><details id=\"leftovers\"><summary>{} resource(s) this run made and could not delete (<code>conform sweep</code> removes them)</summary><ul>",
            report.leftovers.len()
        );
        for l in report.leftovers {
            let _ = write!(h, "<li>{}</li>", safe(info, l));
        }
        h.push_str("</ul></details>\n");
    }
    if !report.figures.kept_in_place.is_empty() {
        h.push_str("<h2>Made, and not deletable through the API</h2><ul>");
        for l in &report.figures.kept_in_place {
            let _ = write!(h, "<li>{}</li>", safe(info, l));
        }
        h.push_str("</ul>\n");
    }

    h.push_str("<h2>Configuration</h2><table>");
    for (k, v) in &info.config {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), safe(info, v));
    }
    h.push_str("</table>\n");
    let _ = write!(h, "<script>{SCRIPT}</script>\n</body></html>\n");
}

fn row(h: &mut String, r: &TestResult, report: &RunReport) {
    let info = report.info;
    let v = r.verdict.as_str();
    let _ = write!(
        h,
        "<tr class=\"t\" id=\"t-{id}\" data-group=\"{g}\" data-verdict=\"{v}\" data-name=\"{lname}\">\
         <td><a href=\"#q={id}\" class=\"check\">{name}</a></td><td><span class=\"v v-{v}\">{v}</span></td>\
         <td class=\"n\">{ms}</td><td class=\"n\">{req}</td><td>",
        id = esc(&r.name),
        g = esc(&r.group),
        lname = esc(&r.name.to_lowercase()),
        name = esc(&r.name),
        ms = r.duration.as_millis(),
        req = r.exchanges.len(),
    );
    if let Some(reason) = &r.reason {
        h.push_str(&text_block(info, reason));
    }
    if !r.findings.is_empty() {
        h.push_str("<ul>");
        for f in &r.findings {
            let counts = if report.profile.fails_on(f.level) {
                ""
            } else {
                " <span class=\"muted\">(reported, does not fail this profile)</span>"
            };
            let _ = write!(
                h,
                "<li><span class=\"check\">{}</span> [{}]{counts}: <span class=\"muted\">({})</span>{}</li>",
                esc(f.check.id),
                f.level,
                esc(f.check.cites),
                text_block(info, &f.message)
            );
        }
        h.push_str("</ul>");
    }
    if (r.verdict.fails_run() || r.verdict == Verdict::Waived) && !r.exchanges.is_empty() {
        let _ = write!(
            h,
            "<details class=\"transcript\"{}><summary>transcript: {} request(s)</summary>",
            if r.verdict.fails_run() { " open" } else { "" },
            r.exchanges.len()
        );
        for (i, ex) in r.exchanges.iter().enumerate() {
            let shows: Vec<&str> = r
                .findings
                .iter()
                .filter(|f| f.exchange == Some(i))
                .map(|f| f.check.id)
                .collect();
            let label = if shows.is_empty() {
                String::new()
            } else {
                format!(" · shows {}", shows.join(", "))
            };
            let _ = write!(
                h,
                "<div class=\"muted\">#{}{}</div><pre{}>{}</pre>",
                i + 1,
                esc(&label),
                if shows.is_empty() {
                    ""
                } else {
                    " class=\"ev\""
                },
                safe(info, &ex.transcript())
            );
        }
        h.push_str("</details>");
    }
    h.push_str("</td></tr>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_become_code_and_everything_is_escaped_once() {
        let info = RunInfo {
            config: Vec::new(),
            secrets: Vec::new(),
        };
        assert_eq!(
            prose(&info, "on the `::bare` path form & <more>"),
            "on the <code>::bare</code> path form &amp; &lt;more&gt;"
        );
        assert_eq!(prose(&info, "one ` alone"), "one ` alone");
        assert_eq!(
            text_block(&info, "steps:\n  1. a&b\n"),
            "<pre class=\"reason\">steps:\n  1. a&amp;b</pre>"
        );
    }
}
