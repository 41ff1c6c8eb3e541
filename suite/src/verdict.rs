//! Verdicts and per-test results: data, not errors.

use std::time::Duration;

use crate::checks::{Finding, Level};
use crate::target::Exchange;

/// The outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Every check that applies passed (at the profile's level).
    Pass,
    /// A known deviation listed in a waiver file.
    Waived,
    /// Excluded by filter, profile, credentials or a missing fixture, with the reason.
    Skipped,
    /// The target lacks the endpoint's whole group; the evidence is kept.
    Unsupported,
    /// Could not be judged because something it needs failed elsewhere (a fixture, a set-up
    /// step, a state the target never reached); [`TestResult::blocked_by`] names it.
    Blocked,
    /// A check failed: the target is wrong.
    Fail,
    /// The harness or the connection broke, not the target's behaviour.
    Error,
}

impl Verdict {
    /// Every verdict, in the order every report lists them.
    pub const ALL: [Verdict; 7] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Blocked,
        Verdict::Unsupported,
        Verdict::Skipped,
        Verdict::Waived,
        Verdict::Error,
    ];

    /// True for the verdicts that fail the run (exit 1, a failed libtest trial, a failure in
    /// every report, a new failure in `compare`): `fail` and `error`. The one place that
    /// decides it.
    pub fn fails_run(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Error)
    }

    /// The verdict of a lower-case name ([`Verdict::as_str`]), as `results.json` writes it.
    pub fn named(name: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Waived => "waived",
            Verdict::Skipped => "skipped",
            Verdict::Unsupported => "unsupported",
            Verdict::Blocked => "blocked",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
    }
}

/// Which levels fail the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Only core checks fail the run.
    Core,
    /// Core and TFE-convention checks fail the run.
    Tfe,
}

impl Profile {
    /// True when a finding at `level` fails a test under this profile.
    pub fn fails_on(self, level: Level) -> bool {
        match self {
            Profile::Core => level == Level::Core,
            Profile::Tfe => level != Level::Info,
        }
    }

    /// `core` or `tfe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Core => "core",
            Profile::Tfe => "tfe",
        }
    }
}

/// Everything one test produced.
#[derive(Debug, Clone)]
pub struct TestResult {
    /// `group::endpoint::variant`.
    pub name: String,
    /// The group.
    pub group: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why skipped, unsupported or errored.
    pub reason: Option<String>,
    /// Failed checks (including those below the profile's level).
    pub findings: Vec<Finding>,
    /// Ids of the checks that ran and passed.
    pub passed: Vec<&'static str>,
    /// The requests and answers kept as evidence, in order (a sequence family keeps those
    /// of the sequence it reports).
    pub exchanges: Vec<Exchange>,
    /// Requests the test sent in all (a sequence family sends many sequences).
    pub requests: usize,
    /// Wall time of the test.
    pub duration: Duration,
    /// The request that stopped a `blocked` test (or a `skipped` one, when no failing test
    /// is behind it), and where that request is judged.
    pub blocked_by: Option<Blocker>,
    /// A failing sequence family: the minimal sequence it reports, as data.
    pub minimal: Option<Minimal>,
    /// A sequence family that passed or failed: where its cases' seeds came from and how many
    /// held, so that a verdict that depends on the draw says so.
    pub draws: Option<Draws>,
}

/// A sequence family's draws: case `k`'s seed is the `k`-th of the chain that starts at
/// `base` (`--seed BASE` draws them all again), and the cases before the reported one held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draws {
    /// The seed of case 0.
    pub base: u64,
    /// The cases that ran and held: all of them when none failed, else those before the
    /// reported (lowest failing) case, which all ran.
    pub held: u32,
}

/// The minimal sequence a failing sequence family reports (its text is in the reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minimal {
    /// The case's seed: `--seed` runs exactly this case again.
    pub seed: u64,
    /// Steps of the minimal sequence.
    pub steps: usize,
    /// Steps of the sequence shrinking started from.
    pub shrunk_from: usize,
    /// Shrinking stopped at its time bound: the sequence may not be minimal.
    pub timed_out: bool,
}

/// Why a test is `blocked`: the thing it needed, the request that did not give it, and the
/// test where that request is itself judged (its root cause, reported once, there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocker {
    /// What the test needed: "the `workspace` fixture", "the run to await confirmation".
    pub needed: String,
    /// The request that failed to give it: `POST /api/v2/organizations`.
    pub request: String,
    /// What it answered: `404`, `409`, `last state seen: pending`, a transport error.
    pub answer: String,
    /// The test that judges that request, where the root cause is reported: while the run
    /// goes on, the test of the request's catalog endpoint; once it is over, a test that
    /// failed on it ([`crate::attribution::settle`]).
    pub see: Option<String>,
    /// What the user can do to have the test judged all the same ("give --module ...").
    pub hint: Option<String>,
}

impl Blocker {
    /// One line: "needs the `workspace` fixture: POST /api/v2/organizations answered 404 (see organizations::create::api-v2)".
    pub fn line(&self) -> String {
        let see = self.see.as_deref().map(|t| format!("see {t}"));
        self.said(see.as_deref())
    }

    /// The line of a test no failing test is behind: the request, its answer and why
    /// (`no failing test is behind it`), then the hint.
    pub fn line_unjudged(&self, why: &str) -> String {
        self.said(Some(why))
    }

    fn said(&self, aside: Option<&str>) -> String {
        let aside = aside.map(|a| format!(" ({a})")).unwrap_or_default();
        let hint = self
            .hint
            .as_deref()
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        format!(
            "needs {}: {} answered {}{aside}{hint}",
            self.needed, self.request, self.answer
        )
    }

    /// The root cause, shared by every test it blocks: the request and answer, and the test
    /// that judges them.
    pub fn root(&self) -> String {
        let see = self
            .see
            .as_deref()
            .map(|t| format!(", see {t}"))
            .unwrap_or_default();
        format!("{} answered {}{see}", self.request, self.answer)
    }
}

/// How the reason of a test begins when its endpoint answered as documented but does nothing
/// the run can see (`unobservable` in `cases/`): it is `skipped`, never passed.
pub const UNOBSERVABLE: &str = "answered as documented, but what it does cannot be observed";

impl TestResult {
    /// Skipped because all it could show was its answer: its endpoint's effect is out of the
    /// run's sight ([`UNOBSERVABLE`]). Against the reference this is the best a test can do.
    pub fn unobservable(&self) -> bool {
        self.verdict == Verdict::Skipped
            && self
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(UNOBSERVABLE))
    }

    /// The checks it passed that observe an effect ([`crate::checks::EFFECTS`]).
    pub fn observed(&self) -> Vec<&'static str> {
        self.passed
            .iter()
            .copied()
            .filter(|id| crate::checks::observes_effect(id))
            .collect()
    }

    /// The findings that fail the test under `profile` (the others are only reported).
    pub fn failing(&self, profile: Profile) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(move |f| profile.fails_on(f.level))
    }

    /// The first line of what went wrong: the first finding as `say` puts it, else the
    /// reason.
    pub fn first_line(&self, say: impl Fn(&Finding) -> String) -> String {
        self.findings
            .first()
            .map(say)
            .or_else(|| self.reason.clone())
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    }

    /// Keeps of each exchange only what a report shows: called when the test is over.
    pub fn keep_evidence(mut self) -> Self {
        self.exchanges.iter_mut().for_each(Exchange::keep_evidence);
        self
    }

    /// The failure text: each finding with the exchange that shows it.
    pub fn failure_text(&self) -> String {
        let mut out = String::new();
        if let Some(reason) = &self.reason {
            out.push_str(reason);
            out.push('\n');
        }
        if !self.exchanges.is_empty() && !self.findings.is_empty() {
            out.push_str("requests of this test:\n");
            for (i, ex) in self.exchanges.iter().enumerate() {
                let answer = match &ex.response {
                    Ok(r) => r.status.to_string(),
                    Err(e) => e.to_string(),
                };
                out.push_str(&format!(
                    "  {}. {} {} -> {answer}\n",
                    i + 1,
                    ex.request.method,
                    ex.request.url
                ));
            }
        }
        for finding in &self.findings {
            out.push_str(&format!(
                "[{}] {} ({}; {})\n  {}\n",
                finding.level,
                finding.check.id,
                finding.check.title,
                finding.check.cites,
                finding.message
            ));
            if let Some(ex) = finding.exchange.and_then(|i| self.exchanges.get(i)) {
                for line in ex.transcript().lines() {
                    out.push_str("    ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        if !self.findings.is_empty() {
            out.push_str(&format!("rerun: {}\n", rerun_command(&self.name)));
        }
        out
    }
}

/// The options of the run this process makes (`conform` runs one plan), for the commands it
/// prints to be pasteable: see [`crate::settings::Settings::rerun_options`].
static RERUN_OPTIONS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Records the run's options for the printed commands (once; the CLI's run does it).
pub fn set_rerun_options(options: String) {
    let _ = RERUN_OPTIONS.set(options);
}

/// `conform --exact NAME` with the run's options, or, in a process that runs several plans
/// (the selftest, the project's tests), with a note that they are the run's own.
pub fn rerun_command(name: &str) -> String {
    match RERUN_OPTIONS.get() {
        Some(options) if options.is_empty() => format!("conform --exact {name}"),
        Some(options) => format!("conform {options} --exact {name}"),
        None => format!("conform --exact {name} (with this run's --target and tokens)"),
    }
}

/// The run's options for a printed command, when the CLI recorded them.
pub fn rerun_options() -> Option<&'static str> {
    RERUN_OPTIONS.get().map(String::as_str)
}
