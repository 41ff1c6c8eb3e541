//! A connected run of a [`Plan`]: the target (or the embedded reference service), preflight,
//! the shared test context, and the one way a plan item becomes its final result
//! ([`ItemRunner::run`]), for the CLI's trials and in-process runs alike.

use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

use super::cancel::{self, Cancel, Interrupt};
use super::preflight::{
    discover_registry, module_listed, preflight, served_at_tfe_paths, with_trailing_slash,
};
use crate::fixtures::Fixtures;
use crate::plan::{Item, Plan};
use crate::report::{Figures, RunInfo};
use crate::runner::Context;
use crate::sequences::{self, SequenceConfig};
use crate::settings::{ConfigError, Settings};
use crate::slots::Slots;
use crate::target::{Secret, Target, TargetConfig};
use crate::verdict::{TestResult, Verdict};
use crate::waivers::Waivers;

/// A connected run: the target (or the embedded reference service), the fixtures and the
/// shared test context.
pub struct Session {
    /// The async runtime every request runs on.
    pub runtime: tokio::runtime::Runtime,
    /// What every test shares.
    pub ctx: Arc<Context>,
    /// The resolved configuration, for reports.
    pub info: RunInfo,
    /// What preflight found that a person should know; printed and in every report.
    pub warnings: Vec<String>,
    /// Runs one plan item to its final result.
    pub runner: ItemRunner,
    concurrency: usize,
    embedded: Option<conform_reference::Running>,
    started: Instant,
    ledger: Option<std::path::PathBuf>,
    /// The options that reach this run's target again (`Settings::reach_options`).
    settings_reach: String,
    /// Set when teardown begins: a signal then no longer stops the target's requests.
    tearing_down: Arc<std::sync::Mutex<bool>>,
}

impl Session {
    /// Starts the embedded reference service when the plan names no target, checks the target
    /// answers (exit 2 otherwise) and finds the registry.
    pub fn open(plan: &Plan) -> Result<Self, ConfigError> {
        let started = Instant::now();
        let mut settings = plan.settings.clone();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| ConfigError(format!("cannot start the async runtime: {e}")))?;
        let mut warnings = Vec::new();
        let (root, embedded) = match &settings.target {
            Some(url) => (url.clone(), None),
            None => {
                let (root, running, warning) = embedded_root(&runtime, &mut settings)?;
                warnings.extend(warning);
                (root, Some(running))
            }
        };
        let mut target_config = settings.target_config(&root);
        let probe_target = Target::new(TargetConfig {
            max_retries: 0,
            ..target_config.clone()
        })
        .map_err(|e| ConfigError(e.to_string()))?;
        let learned = runtime.block_on(patient_preflight(&probe_target, &settings, plan))?;
        target_config.forms = learned.forms;
        let deadline = settings.deadline.map(|d| started + d);
        warnings.extend(runtime.block_on(learn_the_target(
            &probe_target,
            &settings,
            plan,
            &mut target_config,
            deadline,
        ))?);
        let target = Arc::new(
            probe_target
                .succeeded_by(target_config.clone())
                .map_err(|e| ConfigError(e.to_string()))?,
        );
        let info = run_info(&settings, &root, &target_config, &target);
        warn_of_short_secrets(&target_config);
        arm_guard(&target, &settings, plan);
        target.set_deadline(deadline);
        target.set_consistency_window(settings.consistency_window);
        let fixtures = fixtures(&settings, &target, plan, embedded.is_none())?;
        warnings.extend(runtime.block_on(fixtures.read_every_given()));
        let mut ctx = Context::new(
            target,
            plan.catalog.clone(),
            plan.schemas.clone(),
            fixtures,
            settings.profile,
            settings.require.iter().cloned().collect(),
        );
        if let Some(budget) = plan.poll_budget {
            ctx.poll_budget = budget;
        }
        ctx.waivers = plan.waivers.is_some();
        let runner = ItemRunner {
            ctx: Arc::new(ctx),
            sequences: SequenceConfig {
                organization: settings.organization.clone(),
                cases: settings.sequence_cases.unwrap_or(sequences::DEFAULT_CASES),
                seed: settings.seed,
                ..SequenceConfig::default()
            },
            deadline,
            grace: settings.timeout + Duration::from_secs(2),
            test_timeout: settings.test_timeout,
            waivers: plan.waivers.clone(),
            cancel: Cancel::default(),
            slots: Slots::new(plan.concurrency),
        };
        Ok(Self {
            runtime,
            ctx: runner.ctx.clone(),
            info,
            warnings: warnings.into_iter().chain(learned.warnings).collect(),
            runner,
            concurrency: plan.concurrency,
            ledger: embedded.is_none().then(|| settings.ledger.clone()),
            settings_reach: plan.settings.reach_options(),
            tearing_down: Arc::default(),
            embedded,
            started,
        })
    }

    /// Cancels the run on SIGINT and SIGTERM ([`cancel`]), from now until the process ends:
    /// at the first signal no new test starts, the target stops sending new requests after
    /// [`cancel::GRACE`] (unless teardown has begun) and `notice` is called (with whether
    /// teardown has begun); at the next,
    /// `again` is called, the ledger is synced and held whole, and the process ends at once
    /// with the first signal's code.
    pub fn cancel_on_signals(
        &self,
        notice: impl Fn(Interrupt, bool) + Send + 'static,
        again: impl Fn(Interrupt) + Send + 'static,
    ) -> std::io::Result<cancel::Injector> {
        let target = self.ctx.target.clone();
        let deadline = self.runner.deadline;
        let fixtures = self.ctx.fixtures.clone();
        let tearing_down = self.tearing_down.clone();
        cancel::listen(
            self.runner.cancel.clone(),
            move |interrupt| {
                let tearing_down = tearing_down.lock().unwrap_or_else(|p| p.into_inner());
                if !*tearing_down {
                    let stop = interrupt.stop_sending();
                    target.set_deadline(Some(deadline.map_or(stop, |d| d.min(stop))));
                }
                notice(interrupt, *tearing_down);
            },
            move |interrupt| {
                again(interrupt);
                // no line is half written when the process ends, and every line is on disk
                let _held = fixtures.ledger().map(|ledger| ledger.hold());
                std::process::exit(i32::from(interrupt.signal.exit_code()));
            },
        )
    }

    /// The interrupt, when a signal cancelled the run.
    pub fn interrupted(&self) -> Option<Interrupt> {
        self.runner.cancel.interrupted()
    }

    /// The command that removes what an interrupted run may have left on the target; `None`
    /// for the embedded service, which forgets everything when the run ends.
    pub fn sweep_command(&self) -> Option<String> {
        self.ledger.as_ref().map(|ledger| {
            let reach = self.settings_reach.clone();
            format!(
                "conform sweep {reach} --ledger {}",
                crate::settings::shell_word(&ledger.display().to_string())
            )
        })
    }

    /// Runs the items in this process, at most the plan's concurrency at once: the tests
    /// first, then the sequence families; each part's results in name order.
    pub fn run(&self, items: &[Item]) -> Vec<TestResult> {
        let (tests, families): (Vec<&Item>, Vec<&Item>) =
            items.iter().partition(|item| matches!(item, Item::Test(_)));
        let mut results = self.run_together(tests);
        results.extend(self.run_together(families));
        self.settle(&mut results);
        results
    }

    /// Runs items concurrently; their results in name order.
    fn run_together(&self, items: Vec<&Item>) -> Vec<TestResult> {
        let semaphore = Arc::new(tokio::sync::Semaphore::new(self.concurrency.max(1)));
        let mut results = self.runtime.block_on(async {
            let handles: Vec<_> = items
                .into_iter()
                .map(|item| {
                    let (runner, semaphore, owned) =
                        (self.runner.clone(), semaphore.clone(), item.clone());
                    let task = tokio::spawn(async move {
                        let _permit = semaphore.acquire_owned().await;
                        runner.run(&owned).await
                    });
                    (item, task)
                })
                .collect();
            let mut results = Vec::new();
            for (item, task) in handles {
                results.push(task.await.unwrap_or_else(|e| {
                    broken(
                        item,
                        format!("the harness broke while running this test: {e}"),
                        Duration::ZERO,
                    )
                }));
            }
            results
        });
        results.sort_by(|a, b| a.name.cmp(&b.name));
        results
    }

    /// Settles which failing test each stopped test points at, once every test is over
    /// ([`crate::attribution::settle`]).
    pub fn settle(&self, results: &mut [TestResult]) {
        let root = self.ctx.target.config.root.path().to_string();
        crate::attribution::settle(results, self.ctx.profile, &root);
    }

    /// Deletes what the run made and stops the embedded service; returns what could not be
    /// deleted, one line each, and the run's figures.
    pub fn close(self) -> (Vec<String>, Figures) {
        // Teardown runs whatever the deadline or a signal: what the run made must go.
        let mut tearing_down = self.tearing_down.lock().unwrap_or_else(|p| p.into_inner());
        *tearing_down = true;
        self.ctx.target.set_deadline(None);
        drop(tearing_down);
        let leftovers = self
            .runtime
            .block_on(self.ctx.fixtures.teardown(self.concurrency));
        let lines = leftovers
            .iter()
            .map(|(m, why)| format!("{} {}: {why}", m.kind, m.id))
            .collect();
        let figures = Figures {
            requests: self.ctx.target.request_count(),
            wall: self.started.elapsed(),
            throttle: self.ctx.target.throttle_stats(),
            lags: self.ctx.target.lag_stats(),
            kept_in_place: self.ctx.fixtures.kept_in_place(),
            waits: self.ctx.wait_log(),
            latency: crate::report::Latency {
                answering: self.ctx.target.answering_time(),
                threads: self.concurrency,
            },
        };
        if let Some(running) = self.embedded {
            running.shutdown();
        }
        (lines, figures)
    }
}

/// Starts the embedded reference service with the plan's faults and shapes, and gives the
/// run its tokens and what its shape seeds, the way a user gives them.
/// Starts the embedded reference: its root, the running service and a warning of its start.
/// The service is the run's own, on loopback: notifications may point at it, and it forgets
/// everything when the run ends, so its settings may change.
fn embedded_root(
    runtime: &tokio::runtime::Runtime,
    settings: &mut Settings,
) -> Result<(Url, conform_reference::Running, Option<String>), ConfigError> {
    let (running, warning) = start_reference(runtime, settings)?;
    let root = Url::parse(&running.root_url()).map_err(|e| ConfigError(e.to_string()))?;
    settings
        .fixtures
        .entry("notification_url".into())
        .or_insert_with(|| format!("{}notification-sink", root));
    settings
        .fixtures
        .insert(crate::settings::INSTANCE_CHANGES.into(), "allowed".into());
    Ok((root, running, warning))
}

/// Preflight, saying every 3 s what the run waits for while a slow target says nothing.
/// What the run learns of the target after preflight, into `config`: the groups served only at
/// TFE's path, the registry's address, the no-route answer (asked as the run asks: a 429 waited
/// out within the run's `deadline`, so a rate limit leaves it calibrated), and `--module` looked
/// up in the registry (exit 2 when it is not listed). Warnings for the reports.
async fn learn_the_target(
    probe_target: &Target,
    settings: &Settings,
    plan: &Plan,
    config: &mut TargetConfig,
    deadline: Option<Instant>,
) -> Result<Vec<String>, ConfigError> {
    config.served_at_tfe_path =
        served_at_tfe_paths(probe_target, &plan.catalog, config.forms).await;
    config.registry = match &settings.registry_url {
        Some(url) => with_trailing_slash(url.clone()),
        None => discover_registry(probe_target).await,
    };
    probe_target.set_deadline(deadline);
    let calibrating = probe_target
        .succeeded_by(config.clone())
        .map_err(|e| ConfigError(e.to_string()))?;
    config.no_route =
        super::calibrate::no_route(&calibrating, &config.registry, settings.read_only).await;
    match &settings.module {
        Some(module) => Ok(module_listed(probe_target, &config.registry, module)
            .await?
            .into_iter()
            .collect()),
        None => Ok(Vec::new()),
    }
}

/// The run's configuration for every report (tokens redacted), with the no-route answer every
/// "route absent" rests on, and the secrets to scrub.
fn run_info(settings: &Settings, root: &Url, config: &TargetConfig, target: &Target) -> RunInfo {
    let mut lines = settings.describe(root, &config.registry);
    lines.extend(
        config
            .no_route
            .describe()
            .into_iter()
            .map(|line| ("no-route answer".to_string(), line)),
    );
    RunInfo {
        config: lines,
        secrets: target.secrets().into_iter().cloned().collect(),
    }
}

async fn patient_preflight(
    probe_target: &Target,
    settings: &Settings,
    plan: &Plan,
) -> Result<super::preflight::Preflight, ConfigError> {
    let root = probe_target.config.root.to_string();
    let timeout = settings.timeout.as_secs_f64();
    let patience = tokio::spawn(async move {
        let mut waited = 0;
        loop {
            tokio::time::sleep(Duration::from_secs(3)).await;
            waited += 3;
            eprintln!(
                "preflight: waiting for {root} to answer its first reads ({waited} s; each read waits up to {timeout} s, --timeout)"
            );
        }
    });
    let learned = preflight(
        probe_target,
        settings,
        &plan.catalog.organizations(),
        plan.catalog.admin_read().as_deref(),
    )
    .await;
    patience.abort();
    learned
}

/// The one-line warning (on stderr) about a token or administrator token too short to redact
/// wherever it occurs.
fn warn_of_short_secrets(config: &TargetConfig) {
    let named = [
        ("token", &config.token),
        ("administrator token", &config.admin_token),
    ];
    let named: Vec<(&str, &Secret)> = named
        .iter()
        .filter_map(|(n, s)| Some((*n, s.as_ref()?)))
        .collect();
    if let Some(line) = crate::target::short_secret_warning(&named) {
        eprintln!("{line}");
    }
}

fn start_reference(
    runtime: &tokio::runtime::Runtime,
    settings: &mut Settings,
) -> Result<(conform_reference::Running, Option<String>), ConfigError> {
    let mut config = conform_reference::Config::default();
    for fault in &settings.reference_faults {
        config.faults.push(
            fault
                .parse()
                .map_err(|e| ConfigError(format!("--reference-fault: {e}")))?,
        );
    }
    for shape in &settings.reference_shapes {
        config.shapes.push(
            shape
                .parse()
                .map_err(|e| ConfigError(format!("--reference-shape: {e}")))?,
        );
    }
    // the service it starts is the run's target: its own tokens, whatever was given for
    // --target runs (the sources say which was not used)
    let warning = settings.use_embedded_tokens(&config.token, &config.admin_token);
    settings
        .fixtures
        .entry("account_password".into())
        .or_insert_with(|| config.password.clone());
    let running = runtime
        .block_on(conform_reference::start(config))
        .map_err(|e| ConfigError(format!("cannot start the embedded reference service: {e}")))?;
    // What a shape seeds (its organization, its module) is given the way a user gives it
    // (--organization, --module), not taken behind the run's back.
    for (kind, id) in running.seeded() {
        if !matches!(kind.as_str(), "organization" | "registry_module") {
            settings.fixtures.entry(kind).or_insert(id);
        }
    }
    Ok((running, warning))
}

/// Arms the target's blast-radius guard: the catalog's path templates, the given resources
/// read-only, a `--scratch` one the run's to change as what it made (never to delete: no test
/// deletes what it did not make).
fn arm_guard(target: &Target, settings: &Settings, plan: &Plan) {
    let (templates, fixed) = crate::safety::guard_rules(&plan.catalog);
    let (scratch, given): (Vec<_>, Vec<_>) = settings
        .fixtures
        .iter()
        .partition(|(kind, _)| settings.scratch.contains(*kind));
    target.guard().arm(
        templates,
        fixed,
        given.into_iter().map(|(_, id)| id.clone()),
        settings.read_only,
    );
    for (_, id) in scratch {
        target.guard().allow(id);
    }
}

/// The run's fixtures, with the crash-safe ledger when the target outlives the run.
fn fixtures(
    settings: &Settings,
    target: &Arc<Target>,
    plan: &Plan,
    with_ledger: bool,
) -> Result<Arc<Fixtures>, ConfigError> {
    let mut fixtures = Fixtures::new(
        target.clone(),
        plan.catalog.clone(),
        settings.prefix.clone(),
        settings.fixtures.clone(),
    )
    .read_only(settings.read_only)
    .scratch(settings.scratch.clone())
    .give_module(settings.module.as_ref());
    // The embedded service forgets everything when the run ends: nothing to sweep.
    if with_ledger {
        let ledger =
            crate::ledger::Ledger::open(&settings.ledger, &settings.prefix).map_err(|e| {
                ConfigError(format!(
                    "cannot open the ledger {}: {e}",
                    settings.ledger.display()
                ))
            })?;
        fixtures = fixtures.with_ledger(Arc::new(ledger));
    }
    Ok(Arc::new(fixtures))
}

/// Runs one plan item to its final result: the CLI's trials and every in-process run go
/// through [`ItemRunner::run`].
#[derive(Clone)]
pub struct ItemRunner {
    ctx: Arc<Context>,
    sequences: SequenceConfig,
    deadline: Option<Instant>,
    /// How long past the deadline a test may still finish the request it has in flight (the
    /// target refuses new ones at the deadline), so that no create goes unrecorded.
    grace: Duration,
    /// `--test-timeout`: how long one test may run.
    test_timeout: Option<Duration>,
    waivers: Option<Arc<Waivers>>,
    /// Set by the first SIGINT or SIGTERM.
    cancel: Cancel,
    /// The run's sending budget (the plan's concurrency), shared by tests and sequence cases.
    slots: Slots,
}

impl ItemRunner {
    /// The item's final result: run within the run's deadline, judged (a failure resting on
    /// an answer that cannot judge the target is an error), then waived when a waiver
    /// covers it.
    pub async fn run(&self, item: &Item) -> TestResult {
        // A test sends in one of the run's slots, taken before its clock starts; a family
        // takes one for each case it runs (`sequences::run_family`).
        let _slot = match item {
            Item::Test(_) => Some(self.slots.take().await),
            Item::Family(_) => None,
        };
        let started = Instant::now();
        if let Some(interrupt) = self.cancel.interrupted() {
            return interrupted(item, interrupt, "before it ran", Duration::ZERO);
        }
        // on the heap: the bounds below wrap it, and a test's future is large (in a debug
        // build each wrapper would copy it again on the thread's stack)
        let judged = Box::pin(async {
            match item {
                Item::Test(case) => self.ctx.run(case).await,
                Item::Family(family) => {
                    let mut result =
                        sequences::run_family(&self.ctx, family, &self.sequences, &self.slots)
                            .await;
                    crate::runner::not_judged(&mut result, self.ctx.profile);
                    result
                }
            }
        });
        let limited = self.within_test_timeout(item, started, judged);
        let bounded = self.within_deadline(item, started, limited);
        let mut result = self.until_interrupted(item, started, bounded).await;
        if let Some(why) = self.ctx.fixtures.ledger_failure() {
            unrecorded_is_error(&mut result, &why);
        }
        if let Some(waivers) = &self.waivers {
            waivers.apply(&mut result, self.ctx.profile);
        }
        result
    }

    /// Runs an item to its result, or ends it as `error` when it runs past `--test-timeout`:
    /// at the limit the target refuses the test's new requests, and the test ends by itself;
    /// one still stuck `grace` later is cut off.
    async fn within_test_timeout(
        &self,
        item: &Item,
        started: Instant,
        run: impl std::future::Future<Output = TestResult>,
    ) -> TestResult {
        let Some(limit) = self.test_timeout else {
            return run.await;
        };
        let stop = started + limit;
        let ran_past = |elapsed: Duration| {
            format!(
                "the test ran past --test-timeout {} (it ran {}); requests after the limit were not sent, and the run went on",
                crate::clock::human(limit),
                crate::clock::human(elapsed)
            )
        };
        let run = crate::target::stop_sending_at(stop, run);
        match tokio::time::timeout_at((stop + self.grace).into(), run).await {
            Ok(result) if started.elapsed() <= limit => result,
            Ok(mut result) => {
                result.verdict = Verdict::Error;
                result.reason = Some(ran_past(started.elapsed()));
                result
            }
            Err(_) => broken(item, ran_past(started.elapsed()), started.elapsed()),
        }
    }

    /// Runs an item to its result unless a signal interrupts the run: a test still running
    /// [`cancel::GRACE`] after the signal is not judged (its later requests were refused),
    /// and one still waiting for its request in flight [`cancel::IN_FLIGHT`] later is cut off.
    async fn until_interrupted(
        &self,
        item: &Item,
        started: Instant,
        run: impl std::future::Future<Output = TestResult>,
    ) -> TestResult {
        let cut_off = async {
            let interrupt = self.cancel.fired().await;
            tokio::time::sleep_until(interrupt.cut_off().into()).await;
            interrupt
        };
        tokio::select! {
            result = run => match self.cancel.interrupted() {
                Some(interrupt) if Instant::now() > interrupt.stop_sending() => {
                    interrupted(item, interrupt, "while it ran", started.elapsed())
                }
                _ => result,
            },
            interrupt = cut_off => interrupted(item, interrupt, "while it ran", started.elapsed()),
        }
    }

    /// Runs an item to its result, or ends it as `error` when the run's deadline passes
    /// first. At the deadline the target refuses new requests, and the item ends by itself;
    /// only one still stuck `grace` later is cut off.
    async fn within_deadline(
        &self,
        item: &Item,
        started: Instant,
        run: impl std::future::Future<Output = TestResult>,
    ) -> TestResult {
        let Some(deadline) = self.deadline else {
            return run.await;
        };
        if Instant::now() >= deadline {
            return broken(
                item,
                "the run's --deadline passed before this test could start; teardown still ran"
                    .into(),
                started.elapsed(),
            );
        }
        match tokio::time::timeout_at((deadline + self.grace).into(), run).await {
            Ok(result) => result,
            Err(_) => broken(
                item,
                format!(
                    "the run's --deadline passed before this test finished (it ran {}); teardown still ran",
                    crate::clock::human(started.elapsed())
                ),
                started.elapsed(),
            ),
        }
    }
}

/// An `error` result for an item the harness could not see through: never a lost test.
fn broken(item: &Item, reason: String, duration: Duration) -> TestResult {
    unfinished(item, Verdict::Error, reason, duration)
}

/// A `skipped` result for an item a signal kept from running or from finishing: not judged.
fn interrupted(item: &Item, interrupt: Interrupt, when: &str, duration: Duration) -> TestResult {
    unfinished(
        item,
        Verdict::Skipped,
        format!(
            "{} {} {when}; not judged",
            cancel::INTERRUPTED,
            interrupt.signal.name()
        ),
        duration,
    )
}

/// A test that the refusal of an unrecorded create kept from running ends `error`, with why.
fn unrecorded_is_error(result: &mut TestResult, why: &str) {
    let touched = result.reason.as_deref().is_some_and(|r| r.contains(why))
        || result.failure_text().contains(why)
        || result
            .exchanges
            .iter()
            .any(|ex| matches!(&ex.response, Err(e) if e.to_string().contains(why)));
    if touched && !matches!(result.verdict, Verdict::Pass | Verdict::Error) {
        result.verdict = Verdict::Error;
        result.reason = Some(why.to_string());
    }
}

/// A result with no findings: what the harness says of an item it did not judge.
fn unfinished(item: &Item, verdict: Verdict, reason: String, duration: Duration) -> TestResult {
    TestResult {
        name: item.name(),
        group: item.group().to_string(),
        verdict,
        reason: Some(reason),
        findings: Vec::new(),
        passed: Vec::new(),
        exchanges: Vec::new(),
        requests: 0,
        duration,
        blocked_by: None,
        minimal: None,
        draws: None,
    }
}
