//! `conform peer go-tfe`: the API vendor's own integration tests (go-tfe's, a Go module) run
//! beside the suite against a target, through the suite's proxy so that every exchange of
//! theirs is also judged against the contract (issue 29).
//!
//! `build` gets the pinned test binary (Go module proxy -> module cache -> conform cache),
//! `expect` reads `cases/peers/go-tfe.toml` (which tests run, their groups, the expectations
//! against the embedded reference), `gotest` runs one top-level test in its own process, and
//! `report` writes the JUnit suite `go-tfe`, `results.json`, `summary.md` and `report.html`
//! with go-tfe's results beside the suite's verdicts per group.

mod build;
mod expect;
mod faults;
mod gotest;
mod preflight;
mod report;

pub use expect::{Expected, PeerFile};
pub use gotest::{Outcome, Status};

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::{PeerArgs, ProxyArgs};
use crate::exit::ExitCodes;

/// A difference between what a test did and what the peer file expects of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The top-level test.
    pub test: String,
    /// What differs, in a sentence.
    pub message: String,
}

/// Every test that ran compared with its expectation, and every stale row of the file.
pub fn differences(file: &PeerFile, outcomes: &[Outcome], stale: &[String]) -> Vec<Difference> {
    let mut out: Vec<Difference> = stale
        .iter()
        .map(|glob| Difference {
            test: glob.clone(),
            message: "a row of cases/peers/go-tfe.toml matches no test of the pinned version"
                .into(),
        })
        .collect();
    for o in outcomes {
        let message = match (file.expected(&o.name), o.status) {
            (Expected::Pass, Status::Pass)
            | (Expected::Gap(_), Status::Fail)
            | (Expected::Skip(_), Status::Skipped) => continue,
            (Expected::Pass, Status::Fail) => format!("expected to pass, failed: {}", o.reason),
            (Expected::Pass, Status::Skipped) => {
                format!("expected to pass, judged nothing (skipped: {})", o.reason)
            }
            (Expected::Gap(why), Status::Pass) => format!(
                "passes now (expected to fail: {why}): promote it, delete it from its `gap` row"
            ),
            (Expected::Gap(why), Status::Skipped) => {
                format!("skipped ({}), expected to fail: {why}", o.reason)
            }
            (Expected::Skip(why), status) => format!(
                "expected to skip ({why}), {}: {}",
                status.as_str(),
                o.reason
            ),
        };
        out.push(Difference {
            test: o.name.clone(),
            message,
        });
    }
    out
}

/// `conform peer`.
pub fn command(args: &PeerArgs) -> ExitCode {
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(ExitCodes::CONFIG)
        }
    }
}

/// The token go-tfe's tests use: `--token`, else `CONFORM_TOKEN`, else `TFE_TOKEN`.
fn token_of(args: &PeerArgs) -> Option<(String, &'static str)> {
    if let Some(t) = args.token.clone().filter(|t| !t.is_empty()) {
        return Some((t, "--token"));
    }
    for var in ["CONFORM_TOKEN", "TFE_TOKEN"] {
        if let Some(t) = std::env::var(var).ok().filter(|t| !t.is_empty()) {
            return Some((t, var));
        }
    }
    None
}

fn run(args: &PeerArgs) -> Result<u8, String> {
    let file = match &args.peer_file {
        Some(path) => PeerFile::parse(
            &std::fs::read_to_string(path)
                .map_err(|e| format!("--peer-file {}: {e}", path.display()))?,
        )?,
        None => PeerFile::embedded()?,
    };
    // What a target run needs, checked before anything is fetched or built.
    let target = match &args.target {
        Some(url) => {
            let parsed = url::Url::parse(url).map_err(|e| format!("--target `{url}`: {e}"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(format!("--target `{url}` must be http or https"));
            }
            let (token, from) = token_of(args).ok_or(
                "a --target run needs a token that is also a site administrator: --token, CONFORM_TOKEN or TFE_TOKEN",
            )?;
            Some((url.trim_end_matches('/').to_string(), token, from))
        }
        None => {
            if args.token.is_some() {
                eprintln!(
                    "warning: --token without --target is not used: the embedded reference has its own (did you forget --target?)"
                );
            }
            None
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    if let Some((root, token, from)) = &target {
        runtime.block_on(preflight::check(
            root,
            token,
            from,
            args.ca_cert.as_deref(),
            args.insecure,
        ))?;
    }
    let say = |line: &str| eprintln!("conform peer: {line}");
    let built = match build::test_binary(&file.module, &file.version, &say) {
        Ok(b) => b,
        Err(build::BuildError::NoGo) => {
            eprintln!("error: {}", build::INSTALL_GO);
            return Ok(ExitCodes::CONFIG);
        }
        Err(build::BuildError::Failed(e)) => return Err(e),
    };
    let all = build::list_tests(&built)?;
    // A filtered run compares only what it ran.
    let stale = if args.filter.is_none() {
        file.stale_globs(&all)
    } else {
        Vec::new()
    };
    runtime.block_on(async {
        // The test processes run in process groups of their own (so that a timeout ends the
        // binary under test2json too): a signal to this process ends them as well.
        tokio::spawn(async {
            let code = crate::exit::stopped().await;
            gotest::kill_all();
            eprintln!("conform peer: interrupted; the running go-tfe tests were ended");
            std::process::exit(i32::from(code));
        });
        peer_run(args, &file, &built, &all, &stale, target).await
    })
}

/// A service that answers 200 to anything: go-tfe's `TFC_RUN_TASK_URL`, the notification
/// destination its tests verify. Loopback only.
async fn receiver() -> Result<String, String> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot listen on loopback: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let app = axum::Router::new().fallback(|| async { "" });
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(format!("http://{addr}/"))
}

/// The embedded reference serving, as `conform serve --tls --compat tfe` does.
pub(crate) struct Embedded {
    /// Its root (`https://127.0.0.1:PORT`).
    pub root: String,
    /// Its administrator token, which is also a user's.
    pub token: String,
    /// The certificate authority its certificate is signed by (PEM), for the proxy to trust;
    /// held in memory, so nothing is left on disk however the run ends.
    pub ca_pem: Vec<u8>,
}

/// Starts the embedded reference as TFE answers (`--compat tfe`), over TLS with a certificate
/// made now, with `faults`, on a loopback port.
async fn embedded_reference(faults: Vec<conform_reference::Fault>) -> Result<Embedded, String> {
    let config = conform_reference::Config {
        compat: conform_reference::Compat::Tfe,
        faults,
        ..Default::default()
    };
    let token = config.admin_token.clone();
    let certificate = conform_reference::generate_certificate()?;
    let prepared = conform_reference::Prepared::new(config);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot listen on loopback: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let (chain, key) = (certificate.chain_pem, certificate.key_pem);
    tokio::spawn(async move { prepared.serve_tls(listener, &chain, &key).await });
    Ok(Embedded {
        root: format!("https://{addr}"),
        token,
        ca_pem: certificate.ca_pem.into_bytes(),
    })
}

/// Where one pass of the set goes and how it runs.
pub(crate) struct SetRun<'a> {
    file: &'a PeerFile,
    built: &'a build::Built,
    args: &'a PeerArgs,
    root: String,
    token: String,
    /// The certificate authority of the embedded reference, when that is the target.
    ca_pem: Option<Vec<u8>>,
    /// Print a line as each test ends.
    verbose: bool,
    /// Seconds a test may run (`--test-timeout`, shorter for fault runs).
    timeout: u64,
    /// Start no further test once this many have not passed (a fault run needs only a few
    /// to know go-tfe caught it).
    enough_failures: Option<usize>,
}

/// One pass of the set: every test of `queue` through a fresh proxy in front of the target.
pub(crate) struct SetResult {
    outcomes: Vec<Outcome>,
    proxy: crate::proxy::Finished,
    seconds: f64,
}

impl SetRun<'_> {
    fn proxy_args(&self) -> ProxyArgs {
        ProxyArgs {
            target: self.root.clone(),
            listen: "127.0.0.1:0".into(),
            reports: self.args.reports.join("proxy"),
            duration: None,
            profile: self.args.profile,
            registry_url: None,
            max_body: 8 * 1024 * 1024,
            max_request_body: 64 * 1024 * 1024,
            timeout: 60.0,
            ca_cert: self.args.ca_cert.clone(),
            insecure: self.args.insecure,
            ca_pem: self.ca_pem.clone(),
            cases: None,
            schemas: None,
        }
    }

    /// Runs every test of `queue`, `--jobs` at a time, each alone in its process and behind a
    /// proxy of its own (so that each exchange is judged and known to be that test's); prints
    /// a line as each ends when `verbose`.
    async fn run(&self, queue: Vec<String>) -> Result<SetResult, String> {
        let notify = receiver().await?;
        let slots = Arc::new(tokio::sync::Semaphore::new(jobs(self.args)));
        let total = queue.len();
        let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        let mut running = tokio::task::JoinSet::new();
        let failures = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        // Tests that change instance-wide settings run one at a time: two of them flipping
        // the same setting (SCIM) at once would fail each other.
        let instance = Arc::new(tokio::sync::Mutex::new(()));
        for (index, name) in queue.into_iter().enumerate() {
            let permit = slots
                .clone()
                .acquire_owned()
                .await
                .map_err(|e| e.to_string())?;
            if self
                .enough_failures
                .is_some_and(|n| failures.load(std::sync::atomic::Ordering::SeqCst) >= n)
            {
                break;
            }
            let proxy = crate::proxy::start(&self.proxy_args()).await?;
            let mut env: Vec<(String, String)> = vec![
                ("TFE_ADDRESS".into(), proxy.url()),
                ("TFE_TOKEN".into(), self.token.clone()),
                ("ENABLE_TFE".into(), "1".into()),
                ("TFC_RUN_TASK_URL".into(), notify.clone()),
            ];
            env.extend(self.file.env_of(&name));
            let (binary, workdir) = (self.built.binary.clone(), self.built.workdir.clone());
            let skip = self.file.skip_pattern();
            let (token, timeout, verbose) = (self.token.clone(), self.timeout, self.verbose);
            let (done, failures) = (done.clone(), failures.clone());
            let instance = self.file.changes_instance(&name).then(|| instance.clone());
            running.spawn(async move {
                let _alone = match &instance {
                    Some(lock) => Some(lock.lock().await),
                    None => None,
                };
                let outcome = tokio::task::spawn_blocking(move || {
                    let how = gotest::Invocation {
                        binary: &binary,
                        workdir: &workdir,
                        skip: &skip,
                        env: &env,
                        timeout: Duration::from_secs(timeout),
                    };
                    run_redacted(&name, &how, &token)
                })
                .await
                .map_err(|e| format!("a test's runner ended badly: {e}"))?;
                drop(permit);
                let seen = proxy.finish().await?;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                if outcome.status != Status::Pass {
                    failures.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                if verbose {
                    eprintln!("{}", progress_line(n, total, &outcome));
                }
                Ok::<_, String>((index, outcome, seen))
            });
        }
        let (results, seen_all) = gather(running).await?;
        let proxy = match seen_all {
            Some(p) => p,
            // Nothing ran: an idle proxy's empty record.
            None => {
                crate::proxy::start(&self.proxy_args())
                    .await?
                    .finish()
                    .await?
            }
        };
        Ok(SetResult {
            outcomes: results.into_iter().map(|(_, o)| o).collect(),
            proxy,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// The tests' ends: every outcome in queue order, with the endpoints its proxy saw, and the
/// proxies' records absorbed into one (none when nothing ran).
async fn gather(
    mut running: tokio::task::JoinSet<Result<(usize, Outcome, crate::proxy::Finished), String>>,
) -> Result<(Vec<(usize, Outcome)>, Option<crate::proxy::Finished>), String> {
    let mut results = Vec::new();
    let mut seen_all: Option<crate::proxy::Finished> = None;
    while let Some(joined) = running.join_next().await {
        let (index, mut outcome, seen) =
            joined.map_err(|e| format!("a test's runner ended badly: {e}"))??;
        outcome.endpoints = seen.observed.endpoints().map(str::to_string).collect();
        match &mut seen_all {
            None => seen_all = Some(seen),
            Some(all) => all.absorb(seen),
        }
        results.push((index, outcome));
    }
    results.sort_by_key(|(i, _)| *i);
    Ok((results, seen_all))
}

/// Runs one test in its process; nothing it printed may carry the token.
fn run_redacted(name: &str, how: &gotest::Invocation, token: &str) -> Outcome {
    let mut outcome = gotest::run(name, how);
    let secret = [&crate::target::Secret::new(token)];
    outcome.output = crate::target::redact(&outcome.output, &secret);
    outcome.reason = crate::target::redact(&outcome.reason, &secret);
    outcome
}

/// The line printed as a test ends: its place, status, name, time and (unless it passed) why.
fn progress_line(n: usize, total: usize, outcome: &Outcome) -> String {
    format!(
        "go-tfe [{n:>3}/{total}] {:<7} {} ({:.1} s){}",
        outcome.status.as_str(),
        outcome.name,
        outcome.duration.as_secs_f64(),
        if outcome.status == Status::Pass {
            String::new()
        } else {
            format!(": {}", outcome.reason)
        }
    )
}

fn jobs(args: &PeerArgs) -> usize {
    args.jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()) + 1)
        .max(1)
}

async fn peer_run(
    args: &PeerArgs,
    file: &PeerFile,
    built: &build::Built,
    all: &[String],
    stale: &[String],
    target: Option<(String, String, &'static str)>,
) -> Result<u8, String> {
    let embedded = target.is_none();
    let (root, token, token_from, ca_pem) = match target {
        Some((root, token, from)) => (root, token, from, None),
        None => {
            let service = embedded_reference(Vec::new()).await?;
            (
                service.root,
                service.token,
                "the embedded service",
                Some(service.ca_pem),
            )
        }
    };
    let (queue, not_run) = choose(args, file, all, embedded);
    let target_name = if embedded {
        "the embedded reference (tls, compat tfe)".to_string()
    } else {
        root.clone()
    };
    eprintln!(
        "conform peer: go-tfe {} ({}) against {target_name}, token from {token_from}: {} tests, {} at a time ({} not run)",
        file.version,
        built.go_version,
        queue.len(),
        jobs(args),
        not_run.len()
    );
    let set = SetRun {
        file,
        built,
        args,
        root,
        token: token.clone(),
        ca_pem,
        verbose: true,
        timeout: args.test_timeout,
        enough_failures: None,
    };
    let result = set.run(queue.clone()).await?;
    let diffs = if embedded {
        differences(file, &result.outcomes, stale)
    } else {
        Vec::new()
    };
    let suite_results = suite_verdicts(args)?;
    let peer_report = report::PeerReport {
        file,
        version: &file.version,
        target: target_name,
        outcomes: &result.outcomes,
        not_run: &not_run,
        proxy: &result.proxy,
        suite: suite_results.as_ref(),
        differences: &diffs,
        seconds: result.seconds,
        token: &token,
    };
    peer_report
        .write(&args.reports)
        .map_err(|e| format!("cannot write reports to {}: {e}", args.reports.display()))?;
    print!("{}", peer_report.console());
    if embedded && args.faults {
        let table = faults::measure(&set, &result.outcomes).await?;
        table
            .write(&args.reports)
            .map_err(|e| format!("cannot write reports to {}: {e}", args.reports.display()))?;
        print!("{}", table.console());
        if !table.missed_by_suite().is_empty() {
            return Ok(ExitCodes::FAILED);
        }
    }
    Ok(exit_code(embedded, &diffs, &result.outcomes))
}

/// Which tests run (those `--filter` keeps), and why the others do not.
fn choose(
    args: &PeerArgs,
    file: &PeerFile,
    all: &[String],
    embedded: bool,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut not_run: Vec<(String, String)> = Vec::new();
    let mut queue: Vec<String> = Vec::new();
    for test in all {
        if let Some(filter) = &args.filter {
            if !test.contains(filter.as_str()) {
                continue;
            }
        }
        if let Some(reason) = file.excluded(test) {
            not_run.push((test.clone(), reason.to_string()));
        } else if !embedded && !args.allow_instance_changes && file.changes_instance(test) {
            not_run.push((
                test.clone(),
                format!(
                    "{}: run with --allow-instance-changes",
                    file.instance_changes.reason
                ),
            ));
        } else {
            queue.push(test.clone());
        }
    }
    (queue, not_run)
}

/// The suite's verdicts beside go-tfe's: the run named, else the suite run whose reports
/// folder holds ours (`reports/results.json` beside `reports/go-tfe/`) when it judged the
/// same target.
fn suite_verdicts(args: &PeerArgs) -> Result<Option<report::SuiteVerdicts>, String> {
    Ok(match &args.suite_results {
        Some(path) => Some(report::SuiteVerdicts::read(path)?),
        None => args
            .reports
            .parent()
            .map(|dir| dir.join("results.json"))
            .filter(|path| path.is_file())
            .and_then(|path| report::SuiteVerdicts::read(&path).ok())
            .filter(|v| v.judged(args.target.as_deref())),
    })
}

/// The exit code: against the embedded reference, whether anything differs from the peer
/// file; elsewhere, whether anything was judged and failed.
fn exit_code(embedded: bool, diffs: &[Difference], outcomes: &[Outcome]) -> u8 {
    let failed = outcomes.iter().filter(|o| o.status == Status::Fail).count();
    if embedded {
        if diffs.is_empty() {
            ExitCodes::OK
        } else {
            ExitCodes::FAILED
        }
    } else if outcomes.iter().all(|o| o.status == Status::Skipped) {
        ExitCodes::NOTHING_JUDGED
    } else if failed > 0 {
        ExitCodes::FAILED
    } else {
        ExitCodes::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(name: &str, status: Status) -> Outcome {
        Outcome {
            name: name.into(),
            status,
            panicked: false,
            reason: "why".into(),
            failed_subtests: Vec::new(),
            output: String::new(),
            duration: Duration::ZERO,
            endpoints: Vec::new(),
        }
    }

    #[test]
    fn a_change_in_either_direction_is_a_difference() {
        let file = PeerFile::parse(
            r#"module = "m"
version = "v1.0.0"
[groups]
[instance_changes]
reason = "r"
tests = []
[[gap]]
reason = "not yet"
tests = ["TestGap*"]
"#,
        )
        .unwrap();
        let outcomes = [
            outcome("TestA", Status::Pass),
            outcome("TestB", Status::Fail),
            outcome("TestC", Status::Skipped),
            outcome("TestGapOne", Status::Fail),
            outcome("TestGapTwo", Status::Pass),
        ];
        let diffs = differences(&file, &outcomes, &["TestGone".into()]);
        let named: Vec<&str> = diffs.iter().map(|d| d.test.as_str()).collect();
        assert_eq!(named, ["TestGone", "TestB", "TestC", "TestGapTwo"]);
        assert!(diffs[3].message.contains("promote"));
    }
}
