//! Findings into a verdict at a profile, in one place, for a test's finish and for results made
//! elsewhere (sequences): an answer that cannot judge the target (a request conform refused,
//! or one the target kept rate-limiting) makes a failure an `error`.

use crate::checks::Finding;
use crate::target::Exchange;
use crate::verdict::{Profile, TestResult, Verdict};

/// Turns a failed result into an `error` when a failing finding rests on an exchange that
/// cannot judge the target (throttled or refused by conform itself); for results made outside [`super::Context::run`]
/// (sequences).
pub fn not_judged(result: &mut TestResult, profile: Profile) {
    if result.verdict != Verdict::Fail {
        return;
    }
    if let (Verdict::Error, why) =
        judge(&result.findings, &result.passed, &result.exchanges, profile)
    {
        result.verdict = Verdict::Error;
        result.reason = why;
    }
}

/// The effect checks of `passed` when every one of them counts only above `profile` (a run
/// action's state TFE names, which the spec does not): then nothing the profile counts saw
/// the endpoint do its job, and a pass there would be one a server that did nothing earns.
/// `None` when one counts at `profile`, or none observed anything.
pub fn observed_only_above(passed: &[&'static str], profile: Profile) -> Option<Vec<&'static str>> {
    let effects: Vec<&crate::checks::Check> = crate::checks::EFFECTS
        .iter()
        .copied()
        .filter(|c| passed.contains(&c.id))
        .collect();
    let above = !effects.is_empty() && effects.iter().all(|c| !profile.fails_on(c.level));
    above.then(|| effects.iter().map(|c| c.id).collect())
}

/// The one place findings become a verdict at a profile: `Pass` when none fails at it and at
/// least one check at a level the profile fails on passed (`passed`: the ids of the checks that
/// passed); `Skipped` (with why) when none fails but none such passed either: a test that judged
/// nothing the profile counts cannot pass. Else `Fail`, or `Error` (with why) when a failing
/// finding rests on an exchange that cannot judge the target: a request conform refused, or one
/// the target would not serve for rate limiting says nothing about conformance.
pub fn judge(
    findings: &[Finding],
    passed: &[&'static str],
    exchanges: &[Exchange],
    profile: Profile,
) -> (Verdict, Option<String>) {
    let mut failing = findings
        .iter()
        .filter(|f| profile.fails_on(f.level))
        .peekable();
    if failing.peek().is_none() {
        let counted = passed
            .iter()
            .any(|id| crate::checks::by_id(id).is_some_and(|check| profile.fails_on(check.level)));
        if counted {
            return (Verdict::Pass, None);
        }
        return (
            Verdict::Skipped,
            Some(nothing_judged(findings, passed, profile)),
        );
    }
    let unjudged = failing
        .filter_map(|f| f.exchange.and_then(|i| exchanges.get(i)))
        .find_map(unjudgeable);
    match unjudged {
        Some(why) => (Verdict::Error, Some(why)),
        None => (Verdict::Fail, None),
    }
}

/// Why a test that failed nothing did not pass: no check at a level the profile fails on passed.
fn nothing_judged(findings: &[Finding], passed: &[&'static str], profile: Profile) -> String {
    let mut seen: Vec<String> = passed.iter().map(|id| format!("{id} (passed)")).collect();
    seen.extend(
        findings
            .iter()
            .map(|f| format!("{} ({}: {})", f.check.id, f.level.as_str(), f.message)),
    );
    let seen = if seen.is_empty() {
        "no check was evaluated".to_string()
    } else {
        format!("only {}", seen.join("; "))
    };
    format!("{NOTHING_JUDGED} at --profile {}: {seen}", profile.as_str())
}

/// How the reason of a test begins when it failed nothing and passed no check at a level the
/// profile fails on: it is `skipped`, never passed.
pub const NOTHING_JUDGED: &str = "no check the profile counts was evaluated";

/// Why an exchange cannot judge the target: conform refused to send it, no answer came (a
/// timeout, a broken connection: README's `error`), or the target kept rate-limiting it or
/// stayed unavailable (502, 503, 504).
pub(super) fn unjudgeable(ex: &Exchange) -> Option<String> {
    match &ex.response {
        Err(e @ crate::target::TransportError::Refused(_)) => Some(e.to_string()),
        Err(e) => Some(format!(
            "{} {}: {e}; the connection did not give an answer to judge",
            ex.request.method, ex.request.url
        )),
        Ok(r) if r.status == 429 => Some(format!(
            "{} {}: the target still answered 429 Too Many Requests after conform waited as asked (bounded retries{}); the test could not run",
            ex.request.method,
            ex.request.url,
            ex.header("retry-after")
                .map(|v| format!(", Retry-After: {v}"))
                .unwrap_or_default()
        )),
        Ok(r) if matches!(r.status, 502..=504) => Some(format!(
            "{} {}: the target answered {} (unavailable) and went on doing so after conform sent the request again as far as it safely could; the test could not run",
            ex.request.method, ex.request.url, r.status
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::checks as c;
    use crate::target::{RequestRecord, ResponseRecord, TransportError};

    fn answered(status: u16, headers: &[(&str, &str)]) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "GET".into(),
                url: "http://t/runs".into(),
                headers: vec![],
                body: None,
            },
            response: Ok(ResponseRecord {
                status,
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: Vec::new(),
                truncated: false,
                received: 0,
            }),
            elapsed: Duration::ZERO,
        }
    }

    fn failed_on(ex: Exchange) -> TestResult {
        TestResult {
            name: "runs::list::bare".into(),
            group: "runs".into(),
            verdict: Verdict::Fail,
            reason: None,
            findings: vec![Finding::new(
                &c::ENDPOINT_SUCCEEDS,
                "expected success".into(),
                Some(0),
            )],
            passed: Vec::new(),
            exchanges: vec![ex],
            requests: 1,
            duration: Duration::ZERO,
            blocked_by: None,
            minimal: None,
            draws: None,
        }
    }

    #[test]
    fn a_429_or_a_refusal_of_conform_cannot_judge_the_target() {
        let throttled = answered(429, &[("retry-after", "3")]);
        assert!(unjudgeable(&throttled).unwrap().contains("Retry-After: 3"));
        assert_eq!(unjudgeable(&answered(500, &[])), None);
        let mut refused = answered(200, &[]);
        refused.response = Err(TransportError::Refused("read-only".into()));
        assert!(unjudgeable(&refused).is_some());
        let mut silent = answered(200, &[]);
        silent.response = Err(TransportError::Timeout(Duration::from_secs(2)));
        assert!(unjudgeable(&silent).unwrap().contains("2 s"));
    }

    #[test]
    fn findings_become_a_verdict_at_the_profile() {
        let result = failed_on(answered(500, &[]));
        let tfe_only = vec![Finding::new(&c::TFE_STATUS, "expected 201".into(), Some(0))];
        let core_passed = [c::ENDPOINT_SUCCEEDS.id];
        assert_eq!(
            judge(&tfe_only, &core_passed, &result.exchanges, Profile::Core).0,
            Verdict::Pass
        );
        assert_eq!(
            judge(&tfe_only, &core_passed, &result.exchanges, Profile::Tfe).0,
            Verdict::Fail
        );
        assert_eq!(
            judge(&[], &core_passed, &result.exchanges, Profile::Tfe).0,
            Verdict::Pass
        );
        let throttled = failed_on(answered(429, &[]));
        assert_eq!(
            judge(
                &throttled.findings,
                &[],
                &throttled.exchanges,
                Profile::Core
            )
            .0,
            Verdict::Error
        );
    }

    #[test]
    fn a_test_that_judged_nothing_the_profile_counts_is_skipped_never_passed() {
        let result = failed_on(answered(404, &[]));
        let info_only = vec![Finding::new(&c::ALIAS_EXISTS, "no route".into(), Some(0))];
        for profile in [Profile::Core, Profile::Tfe] {
            let (verdict, why) = judge(&info_only, &[], &result.exchanges, profile);
            assert_eq!(verdict, Verdict::Skipped);
            let why = why.unwrap();
            assert!(why.starts_with(NOTHING_JUDGED) && why.contains("alias.exists"));
            assert_eq!(
                judge(&[], &[], &result.exchanges, profile).0,
                Verdict::Skipped
            );
        }
        let tfe_passed = [c::TFE_STATUS.id];
        assert_eq!(
            judge(&[], &tfe_passed, &result.exchanges, Profile::Core).0,
            Verdict::Skipped
        );
        assert_eq!(
            judge(&[], &tfe_passed, &result.exchanges, Profile::Tfe).0,
            Verdict::Pass
        );
    }

    #[test]
    fn a_failure_that_rests_on_a_throttled_answer_is_an_error_not_a_fail() {
        let mut result = failed_on(answered(429, &[]));
        not_judged(&mut result, Profile::Core);
        assert_eq!(result.verdict, Verdict::Error);
        assert!(result.reason.unwrap().contains("429"));
        let mut result = failed_on(answered(500, &[]));
        not_judged(&mut result, Profile::Core);
        assert_eq!(result.verdict, Verdict::Fail);
    }
}
