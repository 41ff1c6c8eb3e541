//! The console summary: a table per group and the run's figures.

use std::time::Duration;

use crate::target::ThrottleStats;
use crate::verdict::{Profile, TestResult, Verdict};

/// Root-cause lines the console prints at most.
const MAX_CAUSES: usize = 12;

/// Figures of the run.
#[derive(Debug, Clone)]
pub struct Figures {
    /// Requests sent (fixtures, checks, teardown).
    pub requests: u64,
    /// Wall time of the whole run.
    pub wall: Duration,
    /// Rate limiting: 429s, time held back by them (in all and by route) and by `--rate`,
    /// connection retries, requests sent again after an unavailable answer.
    pub throttle: ThrottleStats,
    /// The consistency window: what held only after waiting, what never held.
    pub lags: crate::patience::LagStats,
    /// What the run made that no API request deletes, where it stays (a configuration
    /// version in a given workspace), one line per kind and place
    /// ([`crate::fixtures::Fixtures::kept_in_place`]).
    pub kept_in_place: Vec<String>,
    /// What each test waited for (a state, a list, its turn at a lock), by test, longest
    /// first: the slowest tests say it ([`super::slowest_tests`]).
    pub waits: std::collections::BTreeMap<String, Vec<String>>,
    /// What the requests took to be answered, in all, and the threads that sent them.
    pub latency: Latency,
}

/// What the run's requests took to be answered, added up, and how many were sent at once
/// at most (`--test-threads`): the least a run of so many requests at that latency takes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Sending to the answer's body read, summed over the requests.
    pub answering: Duration,
    /// The run's sending budget (`--test-threads`).
    pub threads: usize,
}

/// The least a run can take at the latency it met: requests x mean latency / threads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyBound {
    /// The requests sent.
    pub requests: u64,
    /// Their mean time to an answer.
    pub mean: Duration,
    /// The run's sending budget.
    pub threads: usize,
    /// `requests` x `mean` / `threads`.
    pub seconds: f64,
}

impl LatencyBound {
    /// `latency bound 33.2 s (5312 requests x 100.2 ms / 16 threads)`.
    pub fn words(&self) -> String {
        format!(
            "latency bound {:.1} s ({} requests x {:.1} ms / {} threads)",
            self.seconds,
            self.requests,
            self.mean.as_secs_f64() * 1000.0,
            self.threads
        )
    }
}

/// The least a run can take at the rate limit it met: the requests the target took (those
/// not answered 429) at the limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateBound {
    /// The limit, requests per second: the one learned of the target, or `--rate` where
    /// that is lower.
    pub limit: f64,
    /// The requests not answered 429.
    pub taken: u64,
    /// `taken` / `limit`.
    pub seconds: f64,
    /// True when the limit is `--rate`'s, false when the target's.
    pub ceiling: bool,
}

impl RateBound {
    /// `bound 107.6 s (3229 requests taken at the target's 30/s)`.
    pub fn words(&self) -> String {
        let whose = if self.ceiling {
            "--rate's"
        } else {
            "the target's"
        };
        format!(
            "bound {:.1} s ({} requests taken at {whose} {}/s)",
            self.seconds,
            self.taken,
            rounded(self.limit)
        )
    }
}

/// A rate as said: whole when it is, else to one decimal.
fn rounded(rate: f64) -> String {
    if (rate - rate.round()).abs() < 0.05 {
        format!("{:.0}", rate)
    } else {
        format!("{rate:.1}")
    }
}

impl Figures {
    /// The run's bound at the latency it met: requests x mean latency / threads.
    pub fn latency_bound(&self) -> Option<LatencyBound> {
        let Latency { answering, threads } = self.latency;
        (self.requests > 0 && threads > 0).then(|| LatencyBound {
            requests: self.requests,
            mean: answering / u32::try_from(self.requests).unwrap_or(u32::MAX),
            threads,
            seconds: answering.as_secs_f64() / threads as f64,
        })
    }

    /// The run's bound where it met a rate limit (learned of the target, or `--rate`).
    pub fn rate_bound(&self) -> Option<RateBound> {
        let t = &self.throttle;
        let (limit, ceiling) = match (t.learned_limit, t.ceiling) {
            (Some(learned), Some(ceiling)) if ceiling < learned => (ceiling, true),
            (Some(learned), _) => (learned, false),
            (None, Some(ceiling)) => (ceiling, true),
            (None, None) => return None,
        };
        let taken = self.requests.saturating_sub(t.rate_limited);
        (limit > 0.0).then(|| RateBound {
            limit,
            taken,
            seconds: taken as f64 / limit,
            ceiling,
        })
    }
}

/// Prints the summary table, the unsupported groups, the TFE-level findings below the
/// profile, leftovers, and the figures; what quotes the target as `info` shows it
/// ([`super::RunInfo::shown`]).
pub fn print_summary(
    results: &[TestResult],
    profile: Profile,
    figures: &Figures,
    leftovers: &[String],
    info: &super::RunInfo,
) {
    let (groups, total) = super::tally(results);
    println!();
    print!("{:<30}", "group");
    for v in Verdict::ALL {
        print!(" {:>w$}", v.as_str(), w = v.as_str().len().max(5));
    }
    println!();
    let row = |name: &str, counts: &super::Counts| {
        print!("{name:<30}");
        for (v, n) in Verdict::ALL.iter().zip(counts.0) {
            print!(" {n:>w$}", w = v.as_str().len().max(5));
        }
        println!();
    };
    for (group, counts) in &groups {
        row(group, counts);
    }
    row("total", &total);
    if let Some(line) = super::effects_line(results) {
        println!("\n{line}");
    }
    // a group none of whose tests found a route (sequences are families of groups, not one)
    let unsupported: Vec<&str> = groups
        .iter()
        .filter(|(g, _)| **g != "sequences")
        .filter(|(_, c)| {
            c.of(Verdict::Unsupported) > 0 && c.of(Verdict::Pass) + c.of(Verdict::Fail) == 0
        })
        .map(|(g, _)| *g)
        .collect();
    if !unsupported.is_empty() {
        println!("\nunsupported groups (their routes are absent; --require GROUP makes that a failure): {}", unsupported.join(", "));
    }
    let causes = super::cause_groups(results, profile);
    if !causes.is_empty() {
        println!("\nroot causes (each reported at its own test; the others are blocked by it or share it):");
        for group in causes.iter().take(MAX_CAUSES) {
            println!("  {}", info.shown(&group.line()));
        }
        if causes.len() > MAX_CAUSES {
            println!("  ... {} more (see summary.md)", causes.len() - MAX_CAUSES);
        }
    }
    let below: usize = results
        .iter()
        .filter(|r| r.verdict == Verdict::Pass)
        .map(|r| r.findings.len())
        .sum();
    if below > 0 && profile == Profile::Core {
        println!("\n{below} TFE-convention finding(s) in passing tests (reported, not failing under --profile core; see the reports)");
    }
    print_left(leftovers, &figures.kept_in_place, info);
    print_figures(figures, &super::slowest_tests(results, figures), info);
}

/// What the run made and could not delete, and what the API cannot delete where it stays.
fn print_left(leftovers: &[String], kept_in_place: &[String], info: &super::RunInfo) {
    if !leftovers.is_empty() {
        println!(
            "\ncould not delete {} resource(s) this run made:",
            leftovers.len()
        );
        for l in leftovers {
            println!("  {}", info.shown(l));
        }
    }
    if !kept_in_place.is_empty() {
        println!("\nmade, and not deletable through the API (it stays where the run put it):");
        for l in kept_in_place {
            println!("  {}", info.shown(l));
        }
    }
}

/// The run's figures: requests, wall time and its bound, the slowest tests with what each
/// waited for, what held the run back, the lags.
fn print_figures(figures: &Figures, slowest: &[String], info: &super::RunInfo) {
    let secs = figures.wall.as_secs_f64();
    let rate = if secs > 0.0 {
        figures.requests as f64 / secs
    } else {
        0.0
    };
    let bound = bounds_words(figures, "  ");
    println!(
        "\nrequests: {}  wall time: {:.2} s  requests/s: {:.0}{bound}",
        figures.requests, secs, rate
    );
    if !slowest.is_empty() {
        println!("slowest tests (what each waited for):");
        for line in slowest {
            println!("  {}", info.shown(line));
        }
    }
    let t = &figures.throttle;
    if t.rate_limited > 0
        || t.paced > Duration::ZERO
        || t.learned > Duration::ZERO
        || t.retried > 0
        || t.unavailable > 0
    {
        println!(
            "throttled: {} answer(s) 429, {} waiting as the target asked, {} paced at its learned limit, {} paced by --rate, {} connection retr{}, {} request(s) sent again after the target was unavailable (502/503/504)",
            t.rate_limited,
            crate::clock::human(t.throttled),
            crate::clock::human(t.learned),
            crate::clock::human(t.paced),
            t.retried,
            if t.retried == 1 { "y" } else { "ies" },
            t.unavailable
        );
        if let Some(line) = super::route_waits_line(t) {
            println!("{line}");
        }
    }
    if let Some(line) = figures.lags.line() {
        println!("{line}");
    }
}

/// The run's bounds in words, each after `separator`: the rate limit's, where it met one,
/// and the latency's.
pub(super) fn bounds_words(figures: &Figures, separator: &str) -> String {
    let rate = figures.rate_bound().map(|b| b.words());
    let latency = figures.latency_bound().map(|b| b.words());
    rate.into_iter()
        .chain(latency)
        .map(|words| format!("{separator}{words}"))
        .collect()
}

/// The failing tests, one block each: the name, the reason, the failed checks (the
/// transcripts are in the reports) and the command that reruns the test. Printed when the
/// live progress line replaced libtest's own output.
pub fn print_failures(results: &[TestResult], info: &super::RunInfo) {
    print!("{}", failures_text(results, info));
}

/// What [`print_failures`] prints: nothing when no test fails the run.
fn failures_text(results: &[TestResult], info: &super::RunInfo) -> String {
    let failing: Vec<&TestResult> = results.iter().filter(|r| r.verdict.fails_run()).collect();
    if failing.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nfailures:\n");
    for r in failing {
        out.push_str(&format!("  {} ({})\n", r.name, r.verdict.as_str()));
        if let Some(reason) = &r.reason {
            for line in info.shown(reason).lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
        for f in &r.findings {
            out.push_str(&format!(
                "    [{}] {}: {}\n",
                f.level,
                f.check.id,
                info.shown(&f.message)
            ));
        }
        // where the person looks, not only in reports/libtest.log
        let rerun = crate::verdict::rerun_command(&r.name);
        out.push_str(&format!("    rerun: {}\n", info.shown(&rerun)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Finding, NO_SERVER_ERROR};
    use crate::report::RunInfo;

    fn result(name: &str, verdict: Verdict) -> TestResult {
        TestResult {
            name: name.into(),
            group: "runs".into(),
            verdict,
            reason: None,
            findings: vec![Finding::new(&NO_SERVER_ERROR, "500".into(), None)],
            passed: Vec::new(),
            exchanges: Vec::new(),
            requests: 1,
            duration: Default::default(),
            blocked_by: None,
            minimal: None,
            draws: None,
        }
    }

    /// On a terminal libtest's lines (and their rerun line) go to reports/libtest.log: the
    /// failures printed on screen name the command that reruns each failing test.
    #[test]
    fn each_failing_test_printed_names_its_rerun_command() {
        let info = RunInfo {
            config: Vec::new(),
            secrets: Vec::new(),
        };
        let results = [
            result("runs::show::api-v2", Verdict::Fail),
            result("runs::list::api-v2", Verdict::Pass),
        ];
        let text = failures_text(&results, &info);
        let rerun = crate::verdict::rerun_command("runs::show::api-v2");
        assert!(text.contains("  runs::show::api-v2 (fail)\n"), "{text}");
        assert!(text.contains(&format!("    rerun: {rerun}\n")), "{text}");
        assert!(!text.contains("runs::list"), "{text}");
        assert_eq!(failures_text(&results[1..], &info), "");
    }
}

#[cfg(test)]
mod bounds {
    use super::*;

    fn figures(requests: u64, throttle: ThrottleStats, latency: Latency) -> Figures {
        Figures {
            requests,
            wall: Duration::from_secs(40),
            throttle,
            lags: Default::default(),
            kept_in_place: Vec::new(),
            waits: Default::default(),
            latency,
        }
    }

    /// 6,000 requests answered 100 ms late each, 16 at a time, cannot take less than 37.5 s:
    /// the summary says so beside the wall, after the rate limit's bound where there is one.
    #[test]
    fn the_latency_bound_is_requests_by_mean_latency_over_threads() {
        let latency = Latency {
            answering: Duration::from_secs(600),
            threads: 16,
        };
        let run = figures(6000, ThrottleStats::default(), latency);
        let bound = run.latency_bound().expect("requests were sent");
        assert_eq!(bound.mean, Duration::from_millis(100));
        assert!((bound.seconds - 37.5).abs() < 1e-9, "{bound:?}");
        assert_eq!(
            bounds_words(&run, "  "),
            "  latency bound 37.5 s (6000 requests x 100.0 ms / 16 threads)"
        );
        let limited = ThrottleStats {
            learned_limit: Some(30.0),
            rate_limited: 30,
            ..Default::default()
        };
        assert_eq!(
            bounds_words(&figures(6000, limited, latency), " · "),
            " · bound 199.0 s (5970 requests taken at the target's 30/s) · latency bound 37.5 s (6000 requests x 100.0 ms / 16 threads)"
        );
        assert_eq!(
            figures(0, ThrottleStats::default(), latency).latency_bound(),
            None
        );
        assert_eq!(
            bounds_words(
                &figures(0, ThrottleStats::default(), Latency::default()),
                "  "
            ),
            ""
        );
    }
}
