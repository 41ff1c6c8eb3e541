//! Root causes: the tests one deviation accounts for. Blocked tests are grouped by the request
//! that blocked them and the test where it is judged ("142 blocked: POST
//! /api/v2/organizations answered 404, see organizations::create::api-v2"); failing tests by
//! the check that failed first (for `endpoint.exists`, per path form, so that "the bare forms
//! are not served" is one line). Every report lists these groups before the single tests.

use std::collections::BTreeMap;

use crate::verdict::{Profile, TestResult, Verdict};

/// Tests that share one cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseGroup {
    /// `blocked` or `fail`.
    pub verdict: Verdict,
    /// The cause, one line.
    pub cause: String,
    /// The test where the cause is itself judged, for blocked tests.
    pub see: Option<String>,
    /// The tests it accounts for, by name.
    pub tests: Vec<String>,
}

impl CauseGroup {
    /// "142 blocked: POST /api/v2/organizations answered 404, see organizations::create::api-v2".
    pub fn line(&self) -> String {
        let n = self.tests.len();
        match self.verdict {
            Verdict::Blocked => format!("{n} blocked: {}", self.cause),
            _ => format!(
                "{n} failing test{}: {}",
                if n == 1 { "" } else { "s" },
                self.cause
            ),
        }
    }
}

/// The route of a request line (`POST /api/v2/organizations/conform-1-0007/workspaces`), its
/// ids and names masked as the throttle masks them (`POST /organizations/:id/workspaces`,
/// [`crate::target::route_key`]): the same failing request made under several organizations, or
/// in both path forms, is one cause.
fn route_of(request: &str) -> String {
    let (method, path) = request.split_once(' ').unwrap_or(("", request));
    crate::target::route_key(method, path)
}

/// The root-cause groups of a run, largest first: blocked tests by their blocker, then failing
/// tests by their first failing check (at the profile's level).
pub fn cause_groups(results: &[TestResult], profile: Profile) -> Vec<CauseGroup> {
    let mut blocked: BTreeMap<(String, String), CauseGroup> = BTreeMap::new();
    let mut failing: BTreeMap<String, CauseGroup> = BTreeMap::new();
    for r in results {
        match (r.verdict, &r.blocked_by) {
            (Verdict::Blocked, Some(b)) => {
                let key = (
                    b.see.clone().unwrap_or_else(|| route_of(&b.request)),
                    b.answer.clone(),
                );
                blocked
                    .entry(key)
                    .or_insert_with(|| CauseGroup {
                        verdict: Verdict::Blocked,
                        cause: b.root(),
                        see: b.see.clone(),
                        tests: Vec::new(),
                    })
                    .tests
                    .push(r.name.clone());
            }
            (Verdict::Fail, _) => {
                let Some(first) = r.failing(profile).next() else {
                    continue;
                };
                let form = if first.check.id == crate::checks::ENDPOINT_EXISTS.id {
                    r.name.rsplit("::").next().unwrap_or("")
                } else {
                    ""
                };
                let key = format!("{}|{form}", first.check.id);
                let cause = if form.is_empty() {
                    format!("{} ({})", first.check.id, first.check.cites)
                } else {
                    format!(
                        "{} ({}) on the `::{form}` path form",
                        first.check.id, first.check.cites
                    )
                };
                failing
                    .entry(key)
                    .or_insert_with(|| CauseGroup {
                        verdict: Verdict::Fail,
                        cause,
                        see: None,
                        tests: Vec::new(),
                    })
                    .tests
                    .push(r.name.clone());
            }
            _ => {}
        }
    }
    let mut groups: Vec<CauseGroup> = blocked.into_values().collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.tests.len()));
    let mut fails: Vec<CauseGroup> = failing.into_values().collect();
    fails.sort_by_key(|g| std::cmp::Reverse(g.tests.len()));
    groups.extend(fails);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Blocker;

    #[test]
    fn one_request_under_several_organizations_is_one_route() {
        let a = route_of("POST /api/v2/organizations/conform-1-0007/workspaces");
        let b = route_of("POST /api/v2/organizations/conform-1-0012/workspaces?x=1");
        assert_eq!(a, b);
        assert_eq!(a, "POST /organizations/:id/workspaces");
        assert_ne!(
            a,
            route_of("GET /api/v2/organizations/conform-1-0007/workspaces")
        );
        assert_eq!(
            route_of("DELETE /workspaces/ws-Zq8hb8iSVjALYast"),
            "DELETE /workspaces/:id"
        );
    }

    fn blocked(name: &str, see: &str, answer: &str) -> TestResult {
        TestResult {
            name: name.into(),
            group: "g".into(),
            verdict: Verdict::Blocked,
            reason: None,
            findings: Vec::new(),
            passed: Vec::new(),
            exchanges: Vec::new(),
            requests: 0,
            duration: Default::default(),
            blocked_by: Some(Blocker {
                needed: "the `workspace` fixture".into(),
                request: "POST /api/v2/organizations".into(),
                answer: answer.into(),
                see: Some(see.into()),
                hint: None,
            }),
            minimal: None,
            draws: None,
        }
    }

    #[test]
    fn blocked_tests_group_by_root_cause() {
        let results = vec![
            blocked("a::x::bare", "organizations::create::api-v2", "404"),
            blocked("b::y::bare", "organizations::create::api-v2", "404"),
            blocked("c::z::bare", "runs::create::api-v2", "500"),
        ];
        let groups = cause_groups(&results, Profile::Core);
        assert_eq!(groups.len(), 2);
        assert_eq!(
            groups[0].line(),
            "2 blocked: POST /api/v2/organizations answered 404, see organizations::create::api-v2"
        );
        assert_eq!(groups[1].tests, vec!["c::z::bare".to_string()]);
    }
}
