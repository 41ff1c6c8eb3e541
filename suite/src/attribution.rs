//! Which failing test a stopped test points at, settled once every test of the run is over.
//!
//! A test that cannot be judged because a request it needed failed (a fixture's create, a set-up
//! step) is stopped by that request. While the run goes on, the test can only guess which test
//! judges the request (by its catalog endpoint), and that test may not have run yet, may pass,
//! or may not exist at all (TFE's workspace create has no row in the spec), while another test
//! fails on the very same request. So the verdict of a stopped test is settled here, from the
//! run's own failures:
//!
//! - `blocked`, naming a test that **failed** in this run on the same route with the same answer
//!   (or the test the runner named, when it failed);
//! - else `skipped`, saying that no failing test is behind it, and why the named one is not.
//!
//! One cause, one verdict kind: every test a request stopped gets the same one.

use std::collections::BTreeMap;

use crate::checks::Level;
use crate::target::{route_key, Exchange};
use crate::verdict::{Blocker, Profile, TestResult, Verdict};

/// The route and status of a request a test failed on: `("POST /organizations/:id/workspaces", 500)`.
type Failure = (String, u16);

/// Settles the verdict of every test a request stopped (`blocked_by` is set): blocked by a test
/// that failed on that request in this run, else skipped with the reason. `root` is the path of
/// the service's root (`/` or a prefix such as `/tfe`), taken off each exchange's URL.
pub fn settle(results: &mut [TestResult], profile: Profile, root: &str) {
    let failed = failures(results, profile, root);
    let verdicts: BTreeMap<String, Verdict> = results
        .iter()
        .map(|r| (r.name.clone(), r.verdict))
        .collect();
    for result in results.iter_mut() {
        if !matches!(result.verdict, Verdict::Blocked | Verdict::Skipped) {
            continue;
        }
        let Some(blocker) = result.blocked_by.as_mut() else {
            continue;
        };
        let named = blocker
            .see
            .as_deref()
            .and_then(|s| verdicts.get(s).copied());
        let culprit = match named {
            Some(Verdict::Fail) => blocker.see.clone(),
            _ => failing_on(&failed, blocker, &result.name),
        };
        match culprit {
            Some(test) => {
                blocker.see = Some(test);
                result.verdict = Verdict::Blocked;
                result.reason = Some(blocker.line());
            }
            None => {
                let why = match (blocker.see.take(), named) {
                    (Some(see), None) => format!("{see} judges it, and is not in this run"),
                    (Some(see), Some(Verdict::Unsupported)) => {
                        format!("{see}, which judges it, is unsupported: its group is absent")
                    }
                    (Some(see), Some(verdict)) => format!(
                        "no failing test is behind it: {see}, which judges it, is `{}` in this run",
                        verdict.as_str()
                    ),
                    _ => "no failing test is behind it".to_string(),
                };
                result.verdict = Verdict::Skipped;
                result.reason = Some(blocker.line_unjudged(&why));
            }
        }
    }
}

/// Every request a failing test failed on (a finding counting at `profile` that shows an
/// answer), with the tests that failed on it, the one to name first: a core finding before a
/// TFE one (a refusal probe's 500 is TFE's check, a create's 500 the spec's), one of an
/// endpoint's own tests before a sequence family, then by name.
fn failures(
    results: &[TestResult],
    profile: Profile,
    root: &str,
) -> BTreeMap<Failure, Vec<String>> {
    let mut failed: BTreeMap<Failure, Vec<(bool, bool, String)>> = BTreeMap::new();
    for r in results.iter().filter(|r| r.verdict == Verdict::Fail) {
        for finding in r.failing(profile) {
            let Some(ex) = finding.exchange.and_then(|i| r.exchanges.get(i)) else {
                continue;
            };
            if let Some(key) = failure_of(ex, root) {
                let rank = (
                    finding.level != Level::Core,
                    r.name.starts_with("sequences::"),
                    r.name.clone(),
                );
                failed.entry(key).or_default().push(rank);
            }
        }
    }
    failed
        .into_iter()
        .map(|(key, mut tests)| {
            tests.sort();
            let mut names: Vec<String> = Vec::new();
            for (_, _, name) in tests {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            (key, names)
        })
        .collect()
}

/// The route and status of an answered exchange.
fn failure_of(ex: &Exchange, root: &str) -> Option<Failure> {
    let status = ex.status()?;
    let url = url::Url::parse(&ex.request.url).ok()?;
    let root = root.trim_end_matches('/');
    let path = url.path().strip_prefix(root).unwrap_or(url.path());
    Some((route_key(&ex.request.method, path), status))
}

/// The test that failed on the request that stopped `stopped`, the first of
/// [`failures`]' order, never the stopped test itself.
fn failing_on(
    failed: &BTreeMap<Failure, Vec<String>>,
    blocker: &Blocker,
    stopped: &str,
) -> Option<String> {
    let (method, path) = blocker.request.split_once(' ')?;
    let status = blocker
        .answer
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|s| s.parse::<u16>().ok())?;
    let tests = failed.get(&(route_key(method, path), status))?;
    tests.iter().find(|t| t.as_str() != stopped).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Finding, NO_SERVER_ERROR};
    use crate::target::{RequestRecord, ResponseRecord};

    fn exchange(method: &str, url: &str, status: u16) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: method.into(),
                url: url.into(),
                headers: Vec::new(),
                body: None,
            },
            response: Ok(ResponseRecord {
                status,
                headers: Vec::new(),
                body: Vec::new(),
                truncated: false,
                received: 0,
            }),
            elapsed: Default::default(),
        }
    }

    fn result(name: &str, verdict: Verdict) -> TestResult {
        TestResult {
            name: name.into(),
            group: name.split("::").next().unwrap_or_default().into(),
            verdict,
            reason: None,
            findings: Vec::new(),
            passed: Vec::new(),
            exchanges: Vec::new(),
            requests: 0,
            duration: Default::default(),
            blocked_by: None,
            minimal: None,
            draws: None,
        }
    }

    fn failing_on_500(name: &str, url: &str) -> TestResult {
        let mut r = result(name, Verdict::Fail);
        r.exchanges = vec![exchange("POST", url, 500)];
        r.findings = vec![Finding::new(&NO_SERVER_ERROR, "500".into(), Some(0))];
        r
    }

    fn stopped(name: &str, verdict: Verdict, answer: &str, see: Option<&str>) -> TestResult {
        let mut r = result(name, verdict);
        r.blocked_by = Some(Blocker {
            needed: "the `workspace` fixture".into(),
            request: "POST /api/v2/organizations/conform-1-0012/workspaces".into(),
            answer: answer.into(),
            see: see.map(str::to_string),
            hint: None,
        });
        r
    }

    #[test]
    fn a_skip_points_at_the_test_that_failed_on_its_request_in_either_path_form() {
        let mut results = vec![
            failing_on_500(
                "sequences::workspaces",
                "http://h/organizations/conform-1-sq1/workspaces",
            ),
            stopped("variables::list::api-v2", Verdict::Skipped, "500", None),
        ];
        settle(&mut results, Profile::Core, "/");
        assert_eq!(results[1].verdict, Verdict::Blocked);
        assert_eq!(
            results[1].reason.as_deref(),
            Some("needs the `workspace` fixture: POST /api/v2/organizations/conform-1-0012/workspaces answered 500 (see sequences::workspaces)")
        );
    }

    #[test]
    fn another_answer_or_another_route_is_not_the_same_request() {
        let mut results = vec![
            failing_on_500(
                "runs::create::api-v2",
                "http://h/api/v2/workspaces/ws-1/runs",
            ),
            failing_on_500(
                "sequences::workspaces",
                "http://h/api/v2/organizations/conform-1-0013/workspaces",
            ),
            stopped("variables::list::api-v2", Verdict::Skipped, "422", None),
            stopped("teams::list::api-v2", Verdict::Blocked, "500", Some("x::y")),
        ];
        results[3].blocked_by.as_mut().unwrap().request = "POST /api/v2/organizations".into();
        settle(&mut results, Profile::Core, "/");
        assert_eq!(results[2].verdict, Verdict::Skipped);
        assert!(results[2]
            .reason
            .as_deref()
            .unwrap()
            .ends_with("answered 422 (no failing test is behind it)"));
        // the test it named is not in the run, and no test failed on its request
        assert_eq!(results[3].verdict, Verdict::Skipped);
    }

    #[test]
    fn a_block_naming_a_test_that_did_not_fail_is_settled_by_the_run() {
        let mut results = vec![
            result("organizations::create::api-v2", Verdict::Pass),
            result("agents::create", Verdict::Unsupported),
            stopped(
                "a::b",
                Verdict::Blocked,
                "404",
                Some("organizations::create::api-v2"),
            ),
            stopped("c::d", Verdict::Blocked, "404", Some("agents::create")),
        ];
        settle(&mut results, Profile::Core, "/");
        assert_eq!(results[2].verdict, Verdict::Skipped);
        assert!(results[2].reason.as_deref().unwrap().ends_with(
            "(no failing test is behind it: organizations::create::api-v2, which judges it, is `pass` in this run)"
        ));
        assert_eq!(results[3].verdict, Verdict::Skipped);
        assert!(results[3]
            .reason
            .as_deref()
            .unwrap()
            .ends_with("(agents::create, which judges it, is unsupported: its group is absent)"));
    }

    #[test]
    fn a_named_test_that_failed_stays_and_a_finding_above_the_profile_is_no_failure() {
        let mut tfe_only = failing_on_500(
            "organizations::create::api-v2",
            "http://h/tfe/api/v2/organizations/conform-1-0013/workspaces",
        );
        tfe_only.findings[0].level = crate::checks::Level::Tfe;
        let mut results = vec![
            tfe_only,
            result("runs::create::api-v2", Verdict::Fail),
            stopped(
                "a::b",
                Verdict::Blocked,
                "500",
                Some("runs::create::api-v2"),
            ),
            stopped("c::d", Verdict::Skipped, "500", None),
        ];
        settle(&mut results, Profile::Core, "/tfe");
        assert_eq!(results[2].verdict, Verdict::Blocked);
        assert_eq!(
            results[2].blocked_by.as_ref().unwrap().see.as_deref(),
            Some("runs::create::api-v2")
        );
        assert_eq!(
            results[3].verdict,
            Verdict::Skipped,
            "a tfe finding at core"
        );
        settle(&mut results, Profile::Tfe, "/tfe");
        assert_eq!(
            results[3].verdict,
            Verdict::Blocked,
            "the same finding at tfe"
        );
    }
}
