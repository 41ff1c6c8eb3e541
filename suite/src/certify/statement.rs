//! The statement of a certificate, in plain words, decided from a run's `results.json`, its
//! waivers and the bundle's date: the one judgement `certify` writes and `verify` makes again.
//!
//! At a profile, a test stands against conformance when it failed or errored, when its group
//! is absent (`unsupported`, or failed as required), when it is `blocked`, or when it is
//! `waived` by no waiver that holds on the bundle's date. A run at `--profile tfe` is judged at
//! core too, from its failed checks' levels (a failure of TFE-level checks only does not stand
//! at core); a run at `--profile core` says nothing of tfe.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::glob::glob;
use crate::runner::GROUP_REQUIRED;

/// One test as `results.json` states it.
#[derive(Debug, Clone)]
pub struct Tested {
    /// `group::endpoint::variant`.
    pub name: String,
    /// Its group.
    pub group: String,
    /// Its verdict's name.
    pub verdict: String,
    /// Why, for a verdict other than pass.
    pub reason: Option<String>,
    /// The level of each failed check (`core`, `tfe`, `info`).
    pub failed_levels: Vec<String>,
}

/// The tests of a `results.json` document.
pub fn tests_of(doc: &Value) -> Result<Vec<Tested>, String> {
    let tests = doc["tests"]
        .as_array()
        .ok_or("not a results.json of conform (no `tests`)")?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    Ok(tests
        .iter()
        .map(|t| Tested {
            name: text(&t["name"]),
            group: text(&t["group"]),
            verdict: text(&t["verdict"]),
            reason: t["reason"].as_str().map(str::to_string),
            failed_levels: t["failed_checks"]
                .as_array()
                .map(|c| c.iter().map(|c| text(&c["level"])).collect())
                .unwrap_or_default(),
        })
        .collect())
}

/// A waiver as the bundle records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaiverEntry {
    /// The glob on test names.
    pub test: String,
    /// Why the deviation is accepted.
    pub reason: String,
    /// Where it is tracked.
    pub link: Option<String>,
    /// The last day it holds, `YYYY-MM-DD`.
    pub expires: String,
    /// When not empty, only failures of these checks were waived.
    pub checks: Vec<String>,
}

/// What a bundle states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// Conformant at core.
    pub core: bool,
    /// Conformant at tfe; `None` for a run at `--profile core`.
    pub tfe: Option<bool>,
    /// Groups the target does not serve.
    pub not_implemented: Vec<String>,
    /// The tests waived, each with the waiver that holds.
    pub waived: Vec<String>,
    /// How much of the catalog the verdicts cover.
    pub scope: String,
    /// Why it is not conformant (the first tests that stand against it, per profile).
    pub reasons: Vec<String>,
    /// All of it in one line.
    pub text: String,
}

/// At most this many tests named per profile among the reasons.
const REASONS_SHOWN: usize = 20;

/// Judges `tests` (of a run at `run_profile`) with `waivers` on `day` (`YYYY-MM-DD`),
/// against the catalog's test names.
pub fn judge(
    tests: &[Tested],
    run_profile: &str,
    waivers: &[WaiverEntry],
    day: &str,
    catalog: &[String],
) -> Statement {
    let mut reasons = Vec::new();
    let mut at = |profile: &str| {
        let against: Vec<String> = tests
            .iter()
            .filter_map(|t| stands_against(t, profile, run_profile, waivers, day))
            .collect();
        let judged = tests.iter().any(|t| t.verdict == "pass");
        if !judged {
            reasons.push(format!("at {profile}: no test passed: nothing was judged"));
        }
        for why in against.iter().take(REASONS_SHOWN) {
            reasons.push(format!("at {profile}: {why}"));
        }
        if against.len() > REASONS_SHOWN {
            reasons.push(format!(
                "at {profile}: and {} more test(s) (results.json)",
                against.len() - REASONS_SHOWN
            ));
        }
        judged && against.is_empty()
    };
    let core = at("core");
    let tfe = (run_profile == "tfe").then(|| at("tfe"));
    let not_implemented: Vec<String> = tests
        .iter()
        .filter(|t| t.verdict == "unsupported" || group_required_absent(t))
        .map(|t| t.group.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let waived: Vec<String> = tests
        .iter()
        .filter(|t| t.verdict == "waived")
        .filter_map(|t| holding_waiver(t, waivers, day).map(|w| waived_by(t, w)))
        .collect();
    let scope = scope(tests, catalog);
    let text = render(core, tfe, &not_implemented, &waived, &scope);
    Statement {
        core,
        tfe,
        not_implemented,
        waived,
        scope,
        reasons,
        text,
    }
}

/// Why a test stands against conformance at `profile`, or `None`.
fn stands_against(
    t: &Tested,
    profile: &str,
    run_profile: &str,
    waivers: &[WaiverEntry],
    day: &str,
) -> Option<String> {
    let first_line = || {
        t.reason
            .as_deref()
            .and_then(|r| r.lines().next())
            .unwrap_or("")
            .to_string()
    };
    // a tfe run's failure of TFE-level checks alone does not stand at core
    let counts_here = profile == run_profile
        || t.failed_levels.is_empty()
        || t.failed_levels.iter().any(|l| l == profile);
    match t.verdict.as_str() {
        "error" | "unsupported" | "blocked" => {
            Some(format!("{} is {}: {}", t.name, t.verdict, first_line()))
        }
        "fail" if counts_here => Some(format!("{} failed{}", t.name, failed_how(t))),
        "waived" if counts_here && holding_waiver(t, waivers, day).is_none() => Some(format!(
            "{} is waived, but no waiver in the bundle holds it on {day}{}",
            t.name,
            expired_waiver(t, waivers)
                .map(|w| format!(" (`{}` expired on {})", w.test, w.expires))
                .unwrap_or_default()
        )),
        _ => None,
    }
}

fn failed_how(t: &Tested) -> String {
    match t.reason.as_deref().and_then(|r| r.lines().next()) {
        Some(why) => format!(": {why}"),
        None => format!(" ({} failed check(s))", t.failed_levels.len()),
    }
}

/// True for a test of an absent group the run required.
fn group_required_absent(t: &Tested) -> bool {
    t.verdict == "fail"
        && t.reason
            .as_deref()
            .is_some_and(|r| r.lines().next().unwrap_or("").ends_with(GROUP_REQUIRED))
}

/// The first waiver that names the test and holds on `day` (dates compare as text:
/// `YYYY-MM-DD`).
fn holding_waiver<'a>(
    t: &Tested,
    waivers: &'a [WaiverEntry],
    day: &str,
) -> Option<&'a WaiverEntry> {
    waivers
        .iter()
        .find(|w| glob(&w.test, &t.name) && w.expires.as_str() >= day)
}

fn expired_waiver<'a>(t: &Tested, waivers: &'a [WaiverEntry]) -> Option<&'a WaiverEntry> {
    waivers.iter().find(|w| glob(&w.test, &t.name))
}

fn waived_by(t: &Tested, w: &WaiverEntry) -> String {
    format!("{} (by `{}` until {})", t.name, w.test, w.expires)
}

/// How much of the catalog `tests` cover.
fn scope(tests: &[Tested], catalog: &[String]) -> String {
    let catalog: BTreeSet<&str> = catalog.iter().map(String::as_str).collect();
    let covered = tests
        .iter()
        .filter(|t| catalog.contains(t.name.as_str()))
        .count();
    let outside = tests.len() - covered;
    let mut scope = if covered == catalog.len() {
        format!("the whole catalog ({covered} tests)")
    } else {
        let groups: BTreeSet<&str> = tests.iter().map(|t| t.group.as_str()).collect();
        format!(
            "a part of the catalog: {covered} of its {} tests (groups {})",
            catalog.len(),
            groups.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    if outside > 0 {
        scope.push_str(&format!("; {outside} test(s) this catalog does not have"));
    }
    scope
}

fn render(
    core: bool,
    tfe: Option<bool>,
    not_implemented: &[String],
    waived: &[String],
    scope: &str,
) -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let none_or = |list: &[String]| {
        if list.is_empty() {
            "none".to_string()
        } else {
            list.join(", ")
        }
    };
    format!(
        "conformant at core: {}; at tfe: {}; groups not implemented: {}; waived: {}; scope: {scope}",
        yes(core),
        tfe.map_or("not judged (the run was at --profile core)", yes),
        none_or(not_implemented),
        none_or(waived),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tested(name: &str, verdict: &str, levels: &[&str]) -> Tested {
        Tested {
            name: name.into(),
            group: name.split("::").next().unwrap_or_default().into(),
            verdict: verdict.into(),
            reason: None,
            failed_levels: levels.iter().map(|l| l.to_string()).collect(),
        }
    }

    fn waiver(test: &str, expires: &str) -> WaiverEntry {
        WaiverEntry {
            test: test.into(),
            reason: "known".into(),
            link: None,
            expires: expires.into(),
            checks: Vec::new(),
        }
    }

    #[test]
    fn a_tfe_only_failure_stands_at_tfe_not_at_core() {
        let tests = [
            tested("a::x::bare", "pass", &[]),
            tested("a::y::bare", "fail", &["tfe"]),
        ];
        let names = ["a::x::bare".to_string(), "a::y::bare".to_string()];
        let s = judge(&tests, "tfe", &[], "2026-01-01", &names);
        assert!(s.core);
        assert_eq!(s.tfe, Some(false));
        assert!(
            s.text.starts_with("conformant at core: yes; at tfe: no;"),
            "{}",
            s.text
        );
        assert!(
            s.text.contains("scope: the whole catalog (2 tests)"),
            "{}",
            s.text
        );
    }

    #[test]
    fn a_waiver_holds_to_its_last_day_and_no_later() {
        let tests = [
            tested("a::x::bare", "pass", &[]),
            tested("a::y::bare", "waived", &["core"]),
        ];
        let names = ["a::x::bare".to_string()];
        let waivers = [waiver("a::y::*", "2026-01-01")];
        let held = judge(&tests, "core", &waivers, "2026-01-01", &names);
        assert!(held.core, "{:?}", held.reasons);
        assert_eq!(held.waived, ["a::y::bare (by `a::y::*` until 2026-01-01)"]);
        let expired = judge(&tests, "core", &waivers, "2026-01-02", &names);
        assert!(!expired.core);
        assert!(
            expired.reasons[0].contains("`a::y::*` expired on 2026-01-01"),
            "{:?}",
            expired.reasons
        );
    }
}
