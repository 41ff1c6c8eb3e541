//! `conform` itself: a plan's items as libtest-mimic trials, with the progress line, the
//! console summary, the report files and the exit code.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use super::cancel::{self, Interrupt};
use super::session::Session;
use crate::exit::ExitCodes;
use crate::plan::Plan;
use crate::report::{
    print_failures, print_summary, write_reports, Progress, ProgressMode, RunInfo, RunReport,
};
use crate::settings::ConfigError;
use crate::verdict::{Profile, TestResult, Verdict};

/// Runs the plan's items as libtest-mimic trials (`libtest`: its filters, `--list`, output
/// format and log file); returns the exit code.
pub fn run_trials(plan: Plan, mut libtest: Arguments) -> Result<u8, ConfigError> {
    libtest.test_threads = Some(plan.concurrency);
    if libtest.list {
        let trials = plan
            .names()
            .into_iter()
            .map(|name| Trial::test(name, || Ok(())))
            .collect();
        let _ = libtest_mimic::run(&libtest, trials);
        return Ok(ExitCodes::OK);
    }
    // a reader of standard output that goes away cancels the run (see relay.rs)
    let closed = Arc::new(ClosedOutput::default());
    let relay = super::relay::Relay::install({
        let closed = closed.clone();
        move || closed.fire()
    });
    let json = libtest.format == Some(libtest_mimic::FormatSetting::Json);
    let machine = json
        .then(super::relay::MachineOutput::human_to_stderr)
        .flatten();
    let outcome = run_session(plan, libtest, &closed, machine.as_ref());
    drop(machine);
    if let Some(relay) = relay {
        relay.finish();
    }
    outcome
}

/// The standard output relay's word that its reader went away, passed on to the run's
/// cancel once the run listens for it.
#[derive(Default)]
struct ClosedOutput {
    seen: std::sync::atomic::AtomicBool,
    injector: std::sync::OnceLock<super::cancel::Injector>,
}

impl ClosedOutput {
    fn fire(&self) {
        self.seen.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(injector) = self.injector.get() {
            injector.fire(super::cancel::Signal::ClosedOutput);
        }
    }

    fn listen(&self, injector: super::cancel::Injector) {
        if self.seen.load(std::sync::atomic::Ordering::SeqCst) {
            injector.fire(super::cancel::Signal::ClosedOutput);
        }
        let _ = self.injector.set(injector);
    }
}

fn run_session(
    plan: Plan,
    mut libtest: Arguments,
    closed: &ClosedOutput,
    machine: Option<&super::relay::MachineOutput>,
) -> Result<u8, ConfigError> {
    let reports = plan.settings.reports.clone();
    writable_folder(&reports)?;
    crate::verdict::set_rerun_options(plan.settings.rerun_options());
    logfile_opens(&libtest)?;
    let session = Session::open(&plan)?;
    let mut info = announce(&plan, &session);
    let preflight_warnings = session.warnings.clone();
    let profile = plan.settings.profile;
    let mode = progress_mode(&mut libtest, &reports);
    let progress = {
        let target = session.ctx.target.clone();
        Progress::start(mode, 0, move || target.request_count())
    };
    let finisher = Finisher {
        info: info.clone(),
        progress: progress.clone(),
        results: Arc::new(Mutex::new(Vec::new())),
    };
    let sweep = session.sweep_command();
    let injector = session
        .cancel_on_signals(notice_interrupt, move |interrupt| {
            eprintln!("{}", stopped_at_once(interrupt, sweep.as_deref()));
        })
        .map_err(|e| ConfigError(format!("cannot listen for SIGINT and SIGTERM: {e}")))?;
    closed.listen(injector);
    let mut trials = trials_of(&plan, &session, &finisher);
    trials.retain(|t| !libtest.is_filtered_out(t));
    progress.set_total(trials.len());
    let _ = match machine {
        Some(machine) => machine.machine(|| libtest_mimic::run(&libtest, trials)),
        None => libtest_mimic::run(&libtest, trials),
    };
    progress.finish();
    let interrupted = session.interrupted();
    let sweep = session.sweep_command();
    let ledger_failure = session.ctx.fixtures.ledger_failure();
    let printed = [preflight_warnings, session.ctx.target.elsewhere_warnings()].concat();
    let mut results = finisher
        .results
        .lock()
        .map(|r| r.clone())
        .unwrap_or_default();
    results.sort_by(|a, b| a.name.cmp(&b.name));
    session.settle(&mut results);
    let (leftovers, figures) = session.close();
    if let Some(interrupt) = interrupted {
        info.config
            .push(("interrupted".into(), interrupted_how(interrupt, &results)));
    }
    if mode == ProgressMode::Live {
        print_failures(&results, &info);
    }
    print_summary(&results, profile, &figures, &leftovers, &info);
    let warnings = run_warnings(&plan, printed, ledger_failure, &info);
    let changes = changes_since_baseline(&plan, &results, &info);
    let report = RunReport {
        results: &results,
        info: &info,
        profile,
        figures: &figures,
        leftovers: &leftovers,
        warnings: &warnings,
        changes: changes.as_ref().map(|(source, c)| (source.as_str(), c)),
    };
    let unwritten = write_all(&reports, &report, libtest.logfile.as_ref());
    if let Some(interrupt) = interrupted {
        let line = interrupted_line(interrupt, &results, &leftovers, unwritten, sweep.as_deref());
        // with standard output gone, the way to sweep must reach the one stream left
        match interrupt.signal {
            cancel::Signal::ClosedOutput => eprintln!("{line}"),
            _ => println!("{line}"),
        }
        return Ok(interrupt.signal.exit_code());
    }
    if unwritten > 0 {
        eprintln!(
            "error: {unwritten} of the reports could not be written (exit code {})",
            ExitCodes::REPORTS_UNWRITTEN
        );
        return Ok(ExitCodes::REPORTS_UNWRITTEN);
    }
    Ok(judged_code(&plan, &results, changes.as_ref()))
}

/// libtest opens `--logfile` itself and panics when it cannot: opened here first, a log that
/// cannot be written is a configuration error.
fn logfile_opens(libtest: &Arguments) -> Result<(), ConfigError> {
    if let Some(log) = &libtest.logfile {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| ConfigError(format!("--logfile {log}: {e}")))?;
    }
    Ok(())
}

/// Every warning of the run for the reports: those already `printed` (preflight's, before the
/// tests, and the uploads' to another origin, before the first of each), then the waivers' and
/// the ledger's, which are printed here.
fn run_warnings(
    plan: &Plan,
    printed: Vec<String>,
    ledger_failure: Option<String>,
    info: &RunInfo,
) -> Vec<String> {
    let mut warnings = printed;
    let printed = warnings.len();
    warnings.extend(
        plan.waivers
            .as_ref()
            .map(|w| w.warnings(&plan.names()))
            .unwrap_or_default(),
    );
    warnings.extend(ledger_failure);
    for w in &warnings[printed..] {
        eprintln!("warning: {}", info.shown(w));
    }
    warnings
}

/// The exit code of a run that ended and wrote its reports: its verdicts', what changed since
/// `--baseline` printed (and, with `--only-regressions-fail`, only a regression fails it).
fn judged_code(
    plan: &Plan,
    results: &[TestResult],
    changes: Option<&(String, crate::compare::Changes)>,
) -> u8 {
    let mut code = exit_code(results, plan.settings.profile);
    if let Some((source, changes)) = changes {
        print!("{}", changes.render(source, false));
        if plan.settings.only_regressions_fail && code == ExitCodes::FAILED {
            code = if changes.regressions.is_empty() {
                ExitCodes::OK
            } else {
                ExitCodes::FAILED
            };
        }
    }
    if code == ExitCodes::NOTHING_JUDGED {
        println!(
            "nothing was judged: {} test(s) selected, none passed or failed (exit code {code})",
            results.len(),
        );
    }
    code
}

/// Prints the run's opening lines (its version and target, the configuration, preflight's
/// warnings); answers what every report states about the run, the partition and the waivers
/// included.
fn announce(plan: &Plan, session: &Session) -> RunInfo {
    let mut info = session.info.clone();
    if let Some((partition, selected)) = &plan.partition {
        info.config.push((
            "partition".into(),
            format!("{partition}: {} of {selected} tests", plan.items.len()),
        ));
    }
    if let Some(w) = &plan.waivers {
        info.config.push((
            "waivers".into(),
            format!("{} ({} entries)", w.source, w.entries.len()),
        ));
    }
    println!(
        "conform {} against {}",
        env!("CARGO_PKG_VERSION"),
        session.ctx.target.config.root
    );
    for (k, v) in &info.config {
        println!("  {k:<16} {v}");
    }
    for w in &session.warnings {
        println!("  warning: {}", info.shown(w));
    }
    println!();
    info
}

/// One libtest trial per item of the plan: the session's runner takes it to its final result,
/// which the finisher records.
fn trials_of(plan: &Plan, session: &Session, finisher: &Finisher) -> Vec<Trial> {
    let handle = session.runtime.handle().clone();
    plan.items
        .iter()
        .map(|item| {
            let (runner, handle, finisher) =
                (session.runner.clone(), handle.clone(), finisher.clone());
            let item = item.clone();
            Trial::ignorable_test(item.name(), move || {
                finisher.progress.begin(&item.name());
                finisher.finish(handle.block_on(runner.run(&item)))
            })
        })
        .collect()
}

/// What changed since `--baseline` (with the baseline's source), for every report.
fn changes_since_baseline(
    plan: &Plan,
    results: &[TestResult],
    info: &RunInfo,
) -> Option<(String, crate::compare::Changes)> {
    plan.settings.baseline.as_ref().map(|baseline| {
        let now = crate::compare::Verdicts::of(
            results,
            &info.get("target").unwrap_or_default(),
            plan.settings.profile.as_str(),
        );
        (
            baseline.source.clone(),
            crate::compare::Changes::between(baseline, &now),
        )
    })
}

/// Writes every report file into `reports`, prints where they went (libtest's `logfile` among
/// them) and each that could not be written; answers how many could not.
fn write_all(reports: &Path, report: &RunReport, logfile: Option<&String>) -> usize {
    let mut written = Vec::new();
    let mut unwritten = Vec::new();
    for (path, outcome) in write_reports(reports, report) {
        match outcome {
            Ok(()) => written.push(path.display().to_string()),
            Err(e) => unwritten.push(format!("{}: {e}", path.display())),
        }
    }
    written.extend(logfile.cloned());
    println!("reports: {}", written.join(", "));
    for failure in &unwritten {
        eprintln!("error: cannot write the report {failure}");
    }
    unwritten.len()
}

/// What the first signal prints: what the run does now.
fn notice_interrupt(interrupt: Interrupt, tearing_down: bool) {
    let now = if tearing_down {
        "teardown and the reports go on".to_string()
    } else {
        format!(
            "no new test starts; the tests running get {} s to finish, then teardown and the reports",
            cancel::GRACE.as_secs()
        )
    };
    eprintln!(
        "\n{} received: {now} (a second signal stops at once)",
        interrupt.signal.name()
    );
}

/// What the second signal prints before the process ends.
fn stopped_at_once(interrupt: Interrupt, sweep: Option<&str>) -> String {
    let after = match sweep {
        Some(sweep) => format!("to remove what the run left: {sweep}"),
        None => "the embedded service kept nothing".into(),
    };
    format!(
        "interrupted again: stopped at once (exit code {}); teardown did not run, the ledger is whole; {after}",
        interrupt.signal.exit_code()
    )
}

/// How many tests the signal kept from running: `interrupted` in every report.
fn interrupted_how(interrupt: Interrupt, results: &[TestResult]) -> String {
    format!(
        "by {}: {} of {} tests not run or not finished (skipped), teardown ran",
        interrupt.signal.name(),
        not_run(results),
        results.len()
    )
}

/// The one line an interrupted run ends with: that it was, and how to sweep.
fn interrupted_line(
    interrupt: Interrupt,
    results: &[TestResult],
    leftovers: &[String],
    unwritten: usize,
    sweep: Option<&str>,
) -> String {
    let after = match (sweep, leftovers.len()) {
        (None, _) => "the embedded service kept nothing".to_string(),
        (Some(sweep), 0) => format!("to sweep what may be left: {sweep}"),
        (Some(sweep), left) => format!("{left} left on the target; to sweep it: {sweep}"),
    };
    let reports = match unwritten {
        0 => "reports written".to_string(),
        n => format!("{n} report(s) NOT written"),
    };
    format!(
        "interrupted by {}: {} of {} tests not run, teardown ran, {reports}; {after} (exit code {})",
        interrupt.signal.name(),
        not_run(results),
        results.len(),
        interrupt.signal.exit_code()
    )
}

/// The tests a signal kept from running or finishing.
fn not_run(results: &[TestResult]) -> usize {
    results.iter().filter(|r| kept_from_running(r)).count()
}

/// True for a test a signal kept from running or finishing.
fn kept_from_running(result: &TestResult) -> bool {
    result.verdict == Verdict::Skipped
        && result
            .reason
            .as_deref()
            .is_some_and(|why| why.starts_with(cancel::INTERRUPTED))
}

/// What every trial does with its final result: the progress line, the run's list, and
/// libtest's outcome.
#[derive(Clone)]
struct Finisher {
    info: RunInfo,
    progress: Arc<Progress>,
    results: Arc<Mutex<Vec<TestResult>>>,
}

impl Finisher {
    fn finish(&self, result: TestResult) -> Result<Completion, Failed> {
        let outcome = completion(&result, &self.info);
        if kept_from_running(&result) {
            self.progress.not_run(&result.name);
        } else {
            self.progress.record(&result.name, result.verdict);
        }
        if let Ok(mut all) = self.results.lock() {
            all.push(result);
        }
        outcome
    }
}

/// Fails (exit 2, before any request) unless the reports folder exists or can be made, and
/// a file can be written in it: a CI job must not pass with an empty artifact.
fn writable_folder(dir: &Path) -> Result<(), ConfigError> {
    let shown = dir.display();
    if dir.exists() && !dir.is_dir() {
        return Err(ConfigError(format!(
            "--reports {shown} is a file, not a folder: name a folder the reports go to"
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| ConfigError(format!("--reports {shown}: cannot make the folder: {e}")))?;
    let probe = dir.join(format!(".conform-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| ConfigError(format!("--reports {shown}: cannot write there: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Live progress on a terminal sends libtest's own lines to `reports/libtest.log`, unless
/// the user chose a libtest format or log file (then plain progress lines).
fn progress_mode(libtest: &mut Arguments, reports: &Path) -> ProgressMode {
    let mode = ProgressMode::detect();
    let chosen =
        libtest.logfile.is_some() || libtest.quiet || libtest.format.is_some() || libtest.nocapture;
    if mode != ProgressMode::Live || chosen {
        return match mode {
            ProgressMode::Live => ProgressMode::Lines {
                every: Duration::from_secs(10),
            },
            lines => lines,
        };
    }
    let log = reports.join("libtest.log");
    if std::fs::create_dir_all(reports).is_err() {
        return ProgressMode::Lines {
            every: Duration::from_secs(10),
        };
    }
    libtest.logfile = Some(log.display().to_string());
    mode
}

/// libtest's outcome of a final result: pass, ignored with the verdict and reason (a waived
/// failure with its waiver), or failed with the failure text.
fn completion(result: &TestResult, info: &RunInfo) -> Result<Completion, Failed> {
    match result.verdict {
        verdict if verdict.fails_run() => Err(Failed::from(info.shown(&format!(
            "{}:\n{}",
            verdict.as_str(),
            result.failure_text()
        )))),
        Verdict::Pass => Ok(Completion::Completed),
        // a failure a waiver covers: not `ok`, and not counted failed (the run's exit is 0);
        // libtest's `ignored` with the waiver's word (`waived by PATTERN until DATE: why`)
        Verdict::Waived => Ok(Completion::ignored_with(
            info.shown(
                result
                    .reason
                    .as_deref()
                    .and_then(|why| why.lines().next())
                    .unwrap_or("waived"),
            ),
        )),
        verdict => Ok(Completion::ignored_with(format!(
            "{}: {}",
            verdict.as_str(),
            info.shown(result.reason.as_deref().unwrap_or(""))
        ))),
    }
}

/// 1 when a test failed or errored, 3 when nothing was judged, else 0.
pub fn exit_code(results: &[TestResult], _profile: Profile) -> u8 {
    if results.iter().any(|r| r.verdict.fails_run()) {
        ExitCodes::FAILED
    } else if nothing_judged(results) {
        ExitCodes::NOTHING_JUDGED
    } else {
        ExitCodes::OK
    }
}

/// True when no test was judged: none passed, failed or was waived.
pub fn nothing_judged(results: &[TestResult]) -> bool {
    !results
        .iter()
        .any(|r| matches!(r.verdict, Verdict::Pass | Verdict::Fail | Verdict::Waived))
}
