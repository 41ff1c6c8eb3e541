//! A suite run: settings -> target (or the embedded reference) -> preflight -> one
//! libtest-mimic trial per test -> teardown -> reports -> exit code.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use libtest_mimic::{Completion, Failed, Trial};
use reqwest::Method;
use serde_json::Value;
use url::Url;

use crate::catalog::families::model::Family;
use crate::catalog::{Catalog, TestCase};
use crate::checks::Schemas;
use crate::cli::RunArgs;
use crate::exit::ExitCodes;
use crate::fixtures::Fixtures;
use crate::partition::Partition;
use crate::report::{
    print_failures, print_summary, write_reports, Figures, Progress, ProgressMode, RunInfo,
    RunReport,
};
use crate::runner::Context;
use crate::sequences::{self, SequenceConfig};
use crate::settings::{ConfigError, Settings};
use crate::target::{join, Auth, PathForms, Request, Secret, Target, TargetConfig};
use crate::verdict::{Profile, TestResult, Verdict};
use crate::waivers::Waivers;

/// Runs the suite; returns the process exit code.
pub fn run(mut args: RunArgs) -> ExitCode {
    match run_inner(&mut args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(ExitCodes::CONFIG)
        }
    }
}

/// The catalog and schemas a run uses (embedded, or `--cases` / `--schemas`).
pub fn load_catalog(args: &RunArgs) -> Result<(Catalog, Schemas), ConfigError> {
    let catalog = match args.cases_dir() {
        Some(dir) => Catalog::from_dir(dir),
        None => Catalog::embedded(),
    }
    .map_err(|e| ConfigError(e.to_string()))?;
    let schemas = match &args.schemas {
        Some(dir) => Schemas::from_dir(dir),
        None => Schemas::embedded(),
    }
    .map_err(|e| ConfigError(e.to_string()))?;
    Ok((catalog, schemas))
}

/// The tests selected by `--group` (libtest filters apply later).
pub fn selected_tests(catalog: &Catalog, groups: &[String]) -> Result<Vec<TestCase>, ConfigError> {
    let known: BTreeSet<&str> = catalog.groups.iter().map(|g| g.group.as_str()).collect();
    for g in groups {
        if !known.contains(g.as_str()) && g != sequences::GROUP {
            let list: Vec<&str> = known.iter().copied().collect();
            return Err(ConfigError(format!(
                "--group `{g}` is not a group; choose from: {}",
                list.join(", ")
            )));
        }
    }
    Ok(catalog
        .tests()
        .into_iter()
        .filter(|t| groups.is_empty() || groups.contains(&t.group))
        .collect())
}

/// The sequence families of the catalog selected by `--group` (all, unless groups are named
/// without `sequences`).
pub fn selected_sequences(catalog: &Catalog, groups: &[String]) -> Vec<Arc<Family>> {
    if groups.is_empty() || groups.iter().any(|g| g == sequences::GROUP) {
        catalog.families.clone()
    } else {
        Vec::new()
    }
}

/// A connected run: the target (or the embedded reference service), the fixtures and the
/// shared test context. The CLI drives it through libtest-mimic; self-tests call
/// [`Session::run_direct`].
pub struct Session {
    /// The async runtime every request runs on.
    pub runtime: tokio::runtime::Runtime,
    /// What every test shares.
    pub ctx: Arc<Context>,
    /// The resolved configuration, for reports.
    pub info: RunInfo,
    /// The resolved settings.
    pub settings: Settings,
    /// How sequences are drawn (`--cases N`, `--seed`).
    pub sequences: SequenceConfig,
    /// What preflight found that a person should know; printed and in every report.
    pub warnings: Vec<String>,
    embedded: Option<conform_reference::Running>,
    started: Instant,
    deadline: Option<Instant>,
    /// How long past the deadline a test may still finish the request it has in flight (the
    /// target refuses new ones at the deadline), so that no create goes unrecorded.
    grace: std::time::Duration,
}

impl Session {
    /// Resolves the settings, starts the embedded reference service when no target is given,
    /// checks the target answers (exit 2 otherwise) and finds the registry.
    pub fn open(args: &RunArgs, catalog: Catalog, schemas: Schemas) -> Result<Self, ConfigError> {
        let started = Instant::now();
        let mut settings = Settings::resolve(args)?;
        for group in &settings.require {
            if group != "all" && !catalog.groups.iter().any(|g| &g.group == group) {
                let names: Vec<&str> = catalog.groups.iter().map(|g| g.group.as_str()).collect();
                return Err(ConfigError(format!(
                    "--require `{group}` is not a group; choose from: all, {}",
                    names.join(", ")
                )));
            }
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| ConfigError(format!("cannot start the async runtime: {e}")))?;
        let mut embedded = None;
        let root = match &settings.target {
            Some(url) => url.clone(),
            None => {
                let mut config = conform_reference::Config::default();
                for fault in &args.reference_fault {
                    config.faults.push(
                        fault
                            .parse()
                            .map_err(|e| ConfigError(format!("--reference-fault: {e}")))?,
                    );
                }
                for shape in &args.reference_shape {
                    config.shapes.push(
                        shape
                            .parse()
                            .map_err(|e| ConfigError(format!("--reference-shape: {e}")))?,
                    );
                }
                settings
                    .token
                    .get_or_insert_with(|| Secret::new(config.token.clone()));
                settings
                    .admin_token
                    .get_or_insert_with(|| Secret::new(config.admin_token.clone()));
                settings
                    .fixtures
                    .entry("account_password".into())
                    .or_insert_with(|| config.password.clone());
                let running = runtime
                    .block_on(conform_reference::start(config))
                    .map_err(|e| {
                        ConfigError(format!("cannot start the embedded reference service: {e}"))
                    })?;
                // What a shape seeds (its organization, its module) is given the way a user
                // gives it (--organization, --module), not taken behind the run's back.
                for (kind, id) in running.seeded() {
                    if !matches!(kind.as_str(), "organization" | "registry_module") {
                        settings.fixtures.entry(kind).or_insert(id);
                    }
                }
                let root =
                    Url::parse(&running.root_url()).map_err(|e| ConfigError(e.to_string()))?;
                // the embedded service is ours, on loopback: notifications may point at it
                settings
                    .fixtures
                    .entry("notification_url".into())
                    .or_insert_with(|| format!("{}notification-sink", root));
                embedded = Some(running);
                root
            }
        };
        let mut target_config = TargetConfig {
            root: root.clone(),
            registry: join(&root, "/api/registry/v1/modules/"),
            token: settings.token.clone(),
            admin_token: settings.admin_token.clone(),
            auth_header: settings.auth_header.clone(),
            auth_scheme: settings.auth_scheme.clone(),
            timeout: settings.timeout,
            max_body: settings.max_body,
            ca_cert: settings.ca_cert.clone(),
            insecure: settings.insecure,
            rate: settings.rate,
            max_retries: crate::target::MAX_RETRIES,
            forms: PathForms::default(),
        };
        let probe_target = Target::new(TargetConfig {
            max_retries: 0,
            ..target_config.clone()
        })
        .map_err(|e| ConfigError(e.to_string()))?;
        let learned = runtime.block_on(preflight(&probe_target, &settings))?;
        target_config.forms = learned.forms;
        target_config.registry = match &settings.registry_url {
            Some(url) => with_trailing_slash(url.clone()),
            None => runtime.block_on(discover_registry(&probe_target)),
        };
        let target = Arc::new(
            probe_target
                .succeeded_by(target_config.clone())
                .map_err(|e| ConfigError(e.to_string()))?,
        );
        let info = RunInfo {
            config: settings.describe(&root, &target_config.registry),
            secrets: target.secrets().into_iter().cloned().collect(),
        };
        let (templates, fixed) = crate::safety::guard_rules(&catalog);
        target.guard().arm(
            templates,
            fixed,
            settings.fixtures.values().cloned(),
            settings.read_only,
        );
        let deadline = settings.deadline.map(|d| started + d);
        let grace = settings.timeout + std::time::Duration::from_secs(2);
        target.set_deadline(deadline);
        let catalog = Arc::new(catalog);
        let mut fixtures = Fixtures::new(
            target.clone(),
            catalog.clone(),
            settings.prefix.clone(),
            settings.fixtures.clone(),
        )
        .read_only(settings.read_only)
        .give_module(settings.module.as_ref());
        // The embedded service forgets everything when the run ends: nothing to sweep.
        if embedded.is_none() {
            let ledger =
                crate::ledger::Ledger::open(&settings.ledger, &settings.prefix).map_err(|e| {
                    ConfigError(format!(
                        "cannot open the ledger {}: {e}",
                        settings.ledger.display()
                    ))
                })?;
            fixtures = fixtures.with_ledger(Arc::new(ledger));
        }
        let fixtures = Arc::new(fixtures);
        let ctx = Arc::new(Context::new(
            target,
            catalog,
            Arc::new(schemas),
            fixtures,
            settings.profile,
            settings.require.iter().cloned().collect(),
        ));
        let sequences = SequenceConfig {
            organization: settings.organization.clone(),
            cases: args.sequence_cases().unwrap_or(sequences::DEFAULT_CASES),
            seed: args.seed,
            ..SequenceConfig::default()
        };
        Ok(Self {
            runtime,
            ctx,
            info,
            settings,
            sequences,
            warnings: learned.warnings,
            embedded,
            started,
            deadline,
            grace,
        })
    }

    /// The instant the run's `--deadline` passes, if one was given.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Runs tests concurrently without libtest-mimic's output (for self-tests).
    pub fn run_direct(&self, tests: &[TestCase], concurrency: usize) -> Vec<TestResult> {
        let semaphore = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
        let mut results = self.runtime.block_on(async {
            let mut handles = Vec::new();
            for case in tests {
                let (ctx, semaphore, case) = (self.ctx.clone(), semaphore.clone(), case.clone());
                let (deadline, grace) = (self.deadline, self.grace);
                let (name, group) = (case.name.clone(), case.group.clone());
                handles.push((
                    name,
                    group,
                    tokio::spawn(async move {
                        let started = Instant::now();
                        let run = async {
                            let _permit = semaphore.acquire_owned().await;
                            ctx.run(&case).await
                        };
                        within_deadline(&case.name, &case.group, deadline, grace, started, run)
                            .await
                    }),
                ));
            }
            let mut results = Vec::new();
            for (name, group, handle) in handles {
                results.push(joined(&name, &group, handle.await));
            }
            results
        });
        results.sort_by(|a, b| a.name.cmp(&b.name));
        results
    }

    /// Runs sequence families concurrently (for self-tests), one result per family.
    pub fn run_sequences(&self, families: &[Arc<Family>]) -> Vec<TestResult> {
        let mut results = self.runtime.block_on(async {
            let mut handles = Vec::new();
            for family in families {
                let family = Arc::clone(family);
                let (ctx, config) = (self.ctx.clone(), self.sequences.clone());
                let name = sequences::test_name(&family);
                handles.push((
                    name,
                    tokio::spawn(async move {
                        let mut result = sequences::run_family(&ctx, &family, &config).await;
                        crate::runner::not_judged(&mut result, ctx.profile);
                        result
                    }),
                ));
            }
            let mut results = Vec::new();
            for (name, handle) in handles {
                results.push(joined(&name, sequences::GROUP, handle.await));
            }
            results
        });
        results.sort_by(|a, b| a.name.cmp(&b.name));
        results
    }

    /// Deletes what the run made and stops the embedded service; returns what could not be
    /// deleted, one line each, and the run's figures.
    pub fn close(self) -> (Vec<String>, Figures) {
        // Teardown runs whatever the deadline: what the run made must go.
        self.ctx.target.set_deadline(None);
        let leftovers = self.runtime.block_on(self.ctx.fixtures.teardown());
        let lines = leftovers
            .iter()
            .map(|(m, why)| format!("{} {}: {why}", m.kind, m.id))
            .collect();
        let figures = Figures {
            requests: self.ctx.target.request_count(),
            wall: self.started.elapsed(),
            throttle: self.ctx.target.throttle_stats(),
        };
        if let Some(running) = self.embedded {
            running.shutdown();
        }
        (lines, figures)
    }
}

fn run_inner(args: &mut RunArgs) -> Result<ExitCode, ConfigError> {
    let (catalog, schemas) = load_catalog(args)?;
    let partition = args
        .partition
        .as_deref()
        .map(Partition::parse)
        .transpose()?;
    let waivers = args.waivers.as_deref().map(Waivers::load).transpose()?;
    let mut tests = selected_tests(&catalog, &args.group)?;
    let mut families = selected_sequences(&catalog, &args.group);
    // `read-only = true` in the config file selects as the flag does
    if Settings::resolve(args)?.read_only {
        // --read-only: only what changes nothing (sequences create and delete)
        tests.retain(crate::safety::changes_nothing);
        families.clear();
    }
    let selected = tests.len() + families.len();
    if let Some(partition) = partition {
        tests = partition.select(tests, |t| t.name.as_str());
        let names: Vec<String> = families.iter().map(|f| sequences::test_name(f)).collect();
        let kept = partition.select(names, |n| n.as_str());
        families.retain(|f| kept.contains(&sequences::test_name(f)));
    }
    match args.libtest.test_threads {
        None => args.libtest.test_threads = Some(16),
        Some(0) => {
            return Err(ConfigError(
                "--test-threads 0 would run nothing: give at least 1".into(),
            ))
        }
        Some(_) => {}
    }
    if args.max_body == Some(0) {
        return Err(ConfigError(
            "--max-body 0 would cut every answer: give a size in bytes (default 8388608)".into(),
        ));
    }
    if args.libtest.list {
        let trials = tests
            .iter()
            .map(|t| t.name.clone())
            .chain(families.iter().map(|f| sequences::test_name(f)))
            .map(|name| Trial::test(name, || Ok(())))
            .collect();
        let _ = libtest_mimic::run(&args.libtest, trials);
        return Ok(ExitCode::SUCCESS);
    }
    writable_folder(&args.reports)?;
    let session = Session::open(args, catalog, schemas)?;
    let mut info = session.info.clone();
    if let Some(partition) = partition {
        info.config.push((
            "partition".into(),
            format!("{partition}: {} of {selected} tests", tests.len()),
        ));
    }
    if let Some(w) = &waivers {
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
    let preflight_warnings = session.warnings.clone();
    for w in &preflight_warnings {
        println!("  warning: {}", info.scrub(w));
    }
    println!();
    let profile = session.settings.profile;
    let waivers = waivers.map(Arc::new);
    let results: Arc<Mutex<Vec<TestResult>>> = Arc::new(Mutex::new(Vec::new()));
    let handle = session.runtime.handle().clone();
    let names: Vec<String> = tests
        .iter()
        .map(|t| t.name.clone())
        .chain(families.iter().map(|f| sequences::test_name(f)))
        .collect();
    let mode = progress_mode(args);
    let progress = {
        let target = session.ctx.target.clone();
        Progress::start(mode, 0, move || target.request_count())
    };
    let finisher = Finisher {
        waivers: waivers.clone(),
        profile,
        info: info.clone(),
        progress: progress.clone(),
        results: results.clone(),
    };
    let (deadline, grace) = (session.deadline, session.grace);
    let mut trials: Vec<Trial> = tests
        .into_iter()
        .map(|case| {
            let (ctx, handle, finisher) = (session.ctx.clone(), handle.clone(), finisher.clone());
            Trial::ignorable_test(case.name.clone(), move || {
                let started = Instant::now();
                let result = handle.block_on(within_deadline(
                    &case.name,
                    &case.group,
                    deadline,
                    grace,
                    started,
                    ctx.run(&case),
                ));
                finisher.finish(result)
            })
        })
        .collect();
    for family in families {
        let (ctx, handle, finisher) = (session.ctx.clone(), handle.clone(), finisher.clone());
        let config = session.sequences.clone();
        let name = sequences::test_name(&family);
        trials.push(Trial::ignorable_test(name.clone(), move || {
            let started = Instant::now();
            let mut result = handle.block_on(within_deadline(
                &name,
                sequences::GROUP,
                deadline,
                grace,
                started,
                sequences::run_family(&ctx, &family, &config),
            ));
            crate::runner::not_judged(&mut result, finisher.profile);
            finisher.finish(result)
        }));
    }
    trials.retain(|t| !args.libtest.is_filtered_out(t));
    progress.set_total(trials.len());
    let _ = libtest_mimic::run(&args.libtest, trials);
    progress.finish();
    let (leftovers, figures) = session.close();
    let mut results = results.lock().map(|r| r.clone()).unwrap_or_default();
    results.sort_by(|a, b| a.name.cmp(&b.name));
    if mode == ProgressMode::Live {
        print_failures(&results, &info);
    }
    print_summary(&results, profile, figures, &leftovers);
    let mut warnings = preflight_warnings.clone();
    warnings.extend(
        waivers
            .as_ref()
            .map(|w| w.warnings(&names))
            .unwrap_or_default(),
    );
    // preflight's warnings were printed before the tests; these are the run's own
    for w in &warnings[preflight_warnings.len()..] {
        eprintln!("warning: {}", info.scrub(w));
    }
    let report = RunReport {
        results: &results,
        info: &info,
        profile,
        figures,
        leftovers: &leftovers,
        warnings: &warnings,
    };
    let mut written = Vec::new();
    for (path, outcome) in write_reports(&args.reports, &report) {
        match outcome {
            Ok(()) => written.push(path.display().to_string()),
            Err(e) => eprintln!("warning: cannot write {}: {e}", path.display()),
        }
    }
    if let Some(log) = &args.libtest.logfile {
        written.push(log.clone());
    }
    println!("reports: {}", written.join(", "));
    if nothing_judged(&results) {
        println!(
            "nothing was judged: {} test(s) selected, none passed or failed (exit code {})",
            results.len(),
            ExitCodes::NOTHING_JUDGED
        );
    }
    Ok(ExitCode::from(exit_code(&results, profile)))
}

/// What every trial does with its result: the waivers, the progress line, the run's list,
/// and libtest's outcome.
#[derive(Clone)]
struct Finisher {
    waivers: Option<Arc<Waivers>>,
    profile: Profile,
    info: RunInfo,
    progress: Arc<Progress>,
    results: Arc<Mutex<Vec<TestResult>>>,
}

impl Finisher {
    fn finish(&self, mut result: TestResult) -> Result<Completion, Failed> {
        if let Some(waivers) = &self.waivers {
            waivers.apply(&mut result, self.profile);
        }
        let outcome = completion(&result, &self.info);
        self.progress.record(result.verdict);
        if let Ok(mut all) = self.results.lock() {
            all.push(result);
        }
        outcome
    }
}

/// Fails (exit 2, before any request) unless the reports folder exists or can be made, and
/// a file can be written in it: a CI job must not pass with an empty artifact.
fn writable_folder(dir: &std::path::Path) -> Result<(), ConfigError> {
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

/// A test task's result; a task that panicked is an `error` result, never a lost test.
fn joined(
    name: &str,
    group: &str,
    outcome: Result<TestResult, tokio::task::JoinError>,
) -> TestResult {
    outcome.unwrap_or_else(|e| TestResult {
        name: name.to_string(),
        group: group.to_string(),
        verdict: Verdict::Error,
        reason: Some(format!("the harness broke while running this test: {e}")),
        findings: Vec::new(),
        passed: Vec::new(),
        exchanges: Vec::new(),
        requests: 0,
        duration: std::time::Duration::ZERO,
        blocked_by: None,
    })
}

/// Live progress on a terminal sends libtest's own lines to `reports/libtest.log`, unless
/// the user chose a libtest format or log file (then plain progress lines).
fn progress_mode(args: &mut RunArgs) -> ProgressMode {
    let mode = ProgressMode::detect();
    let chosen = args.libtest.logfile.is_some()
        || args.libtest.quiet
        || args.libtest.format.is_some()
        || args.libtest.nocapture;
    if mode != ProgressMode::Live || chosen {
        return match mode {
            ProgressMode::Live => ProgressMode::Lines {
                every: std::time::Duration::from_secs(10),
            },
            lines => lines,
        };
    }
    let log = args.reports.join("libtest.log");
    if std::fs::create_dir_all(&args.reports).is_err() {
        return ProgressMode::Lines {
            every: std::time::Duration::from_secs(10),
        };
    }
    args.libtest.logfile = Some(log.display().to_string());
    mode
}

/// Runs a test to its result, or ends it as `error` when the run's deadline passes first. At
/// the deadline the target refuses new requests, and the test ends by itself; only a test
/// still stuck `grace` later is cut off.
pub async fn within_deadline(
    name: &str,
    group: &str,
    deadline: Option<Instant>,
    grace: std::time::Duration,
    started: Instant,
    run: impl std::future::Future<Output = TestResult>,
) -> TestResult {
    let Some(deadline) = deadline else {
        return run.await;
    };
    let cut = |reason: String| TestResult {
        name: name.to_string(),
        group: group.to_string(),
        verdict: Verdict::Error,
        reason: Some(reason),
        findings: Vec::new(),
        passed: Vec::new(),
        exchanges: Vec::new(),
        requests: 0,
        duration: started.elapsed(),
        blocked_by: None,
    };
    if Instant::now() >= deadline {
        return cut(
            "the run's --deadline passed before this test could start; teardown still ran".into(),
        );
    }
    match tokio::time::timeout_at((deadline + grace).into(), run).await {
        Ok(result) => result,
        Err(_) => cut(format!(
            "the run's --deadline passed before this test finished (it ran {}); teardown still ran",
            crate::clock::human(started.elapsed())
        )),
    }
}

fn completion(result: &TestResult, info: &RunInfo) -> Result<Completion, Failed> {
    match result.verdict {
        Verdict::Pass | Verdict::Waived => Ok(Completion::Completed),
        Verdict::Skipped | Verdict::Unsupported | Verdict::Blocked => {
            Ok(Completion::ignored_with(format!(
                "{}: {}",
                result.verdict.as_str(),
                info.scrub(result.reason.as_deref().unwrap_or(""))
            )))
        }
        Verdict::Fail | Verdict::Error => Err(Failed::from(info.scrub(&format!(
            "{}:\n{}",
            result.verdict.as_str(),
            result.failure_text()
        )))),
    }
}

/// 1 when a test failed or errored, 3 when nothing was judged, else 0.
pub fn exit_code(results: &[TestResult], _profile: Profile) -> u8 {
    if results
        .iter()
        .any(|r| matches!(r.verdict, Verdict::Fail | Verdict::Error))
    {
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

/// What preflight learned: the path forms the target serves, and what a person should know
/// (a target that rate-limits already, one that is only a registry).
#[derive(Debug)]
pub struct Preflight {
    /// The path forms served.
    pub forms: PathForms,
    /// Warnings for the console and every report.
    pub warnings: Vec<String>,
}

/// Fails fast (exit 2) when the target cannot be reached, refuses the token, or does not
/// speak the API, and learns which path forms it serves.
///
/// Speaking the API is proven by a JSON document with `data` from a read every
/// implementation has (the organization list, the account, `--organization`'s show), or,
/// for a registry without the rest of the API, by registry discovery (`modules.v1`) or a
/// JSON answer from `--registry-url`. A form is served when one of the reads answers it
/// with a route (not 404, 405 or 501).
async fn preflight(target: &Target, settings: &Settings) -> Result<Preflight, ConfigError> {
    let mut reads = vec!["/organizations".to_string(), "/account/details".to_string()];
    if let Some(org) = &settings.organization {
        reads.insert(
            0,
            format!("/organizations/{}", crate::catalog::encode_segment(org)),
        );
    }
    // a form counts only once a read shows it served
    let mut found = Preflight {
        forms: PathForms {
            bare: false,
            api_v2: false,
        },
        warnings: Vec::new(),
    };
    let mut proven = false;
    let mut rate_limited = false;
    let mut answers = Vec::new();
    for prefix in ["/api/v2", ""] {
        for read in &reads {
            let path = format!("{prefix}{read}");
            let ex = target
                .send(Request::new(Method::GET, target.url(&path), Auth::User))
                .await;
            let status = match &ex.response {
                Err(e) => {
                    return Err(ConfigError(format!(
                        "cannot reach the target {}: {e}",
                        target.config.root
                    )));
                }
                Ok(r) => r.status,
            };
            if status == 401 || status == 403 {
                let hint = if settings.token.is_some() {
                    "the token was refused"
                } else {
                    "no token was given (--token, CONFORM_TOKEN or TFE_TOKEN)"
                };
                return Err(ConfigError(format!(
                    "the target answered {status} to GET {path}: {hint}"
                )));
            }
            rate_limited |= status == 429;
            let document = (200..300)
                .contains(&status)
                .then(|| ex.json().ok())
                .flatten()
                .filter(|doc| doc.get("data").is_some());
            proven |= document.is_some();
            let served = status == 429
                || document.is_some()
                || (status >= 400 && !matches!(status, 404 | 405 | 501) && status < 500);
            answers.push(format!("GET {path} answered {}", describe_answer(&ex)));
            if served {
                match prefix {
                    "" => found.forms.bare = true,
                    _ => found.forms.api_v2 = true,
                }
                break;
            }
        }
    }
    if rate_limited {
        found.warnings.push(
            "the target rate-limits already (429 in preflight); conform waits as it asks (Retry-After), bounded".into(),
        );
    }
    if !proven {
        match registry_proof(target, settings).await {
            Some(proof) => found.warnings.push(format!(
                "no API read answered a JSON document with `data` ({}); {proof}: the run goes on, and a registry-only target is judged by its registry tests",
                answers.join("; ")
            )),
            None if rate_limited => {}
            None => {
                return Err(ConfigError(format!(
                    "the target at {} does not answer like this API: no read answered a JSON document with `data` ({}), and it has no registry discovery (/.well-known/terraform.json with modules.v1). Is --target the service root?",
                    target.config.root,
                    answers.join("; ")
                )))
            }
        }
    }
    Ok(found)
}

/// What an answer was, in a few words: its status and, when it is not a JSON document with
/// `data`, what it is instead.
fn describe_answer(ex: &crate::target::Exchange) -> String {
    let Some(status) = ex.status() else {
        return "nothing".into();
    };
    if !(200..300).contains(&status) {
        return format!("{status}");
    }
    let kind = ex.header("content-type").unwrap_or("no content type");
    match ex.json() {
        Ok(doc) if doc.get("data").is_some() => format!("{status}"),
        Ok(_) => format!("{status} ({kind}, JSON without `data`)"),
        Err(why) => format!("{status} ({kind}: {why})"),
    }
}

/// Proof that a target without the rest of the API is a module registry: its discovery
/// names `modules.v1`, or `--registry-url` answers JSON.
async fn registry_proof(target: &Target, settings: &Settings) -> Option<String> {
    let discovery = target.url("/.well-known/terraform.json");
    let ex = target
        .send(Request::new(Method::GET, discovery, Auth::None))
        .await;
    if ex
        .json()
        .ok()
        .is_some_and(|doc| doc.get("modules.v1").is_some_and(Value::is_string))
    {
        return Some("its registry discovery names modules.v1".into());
    }
    let registry = settings.registry_url.clone()?;
    let ex = target
        .send(Request::new(Method::GET, registry.clone(), Auth::User))
        .await;
    (ex.is_success() && ex.json().is_ok_and(|doc| doc.is_object()))
        .then(|| format!("--registry-url {registry} answers JSON"))
}

/// Service discovery: `/.well-known/terraform.json`, key `modules.v1`; else the TFE default.
async fn discover_registry(target: &Target) -> Url {
    let fallback = join(&target.config.root, "/api/registry/v1/modules/");
    let discovery = target.url("/.well-known/terraform.json");
    let ex = target
        .send(Request::new(Method::GET, discovery.clone(), Auth::None))
        .await;
    let found = ex
        .json()
        .ok()
        .and_then(|doc| {
            doc.get("modules.v1")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .and_then(|v| discovery.join(&v).ok());
    with_trailing_slash(found.unwrap_or(fallback))
}

fn with_trailing_slash(mut url: Url) -> Url {
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url
}
