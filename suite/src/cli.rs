//! The command line: the options of a run and of every subcommand (the subcommands' modules
//! take them from here; this module knows none of them). House style: `long` flags, an upper-case value name on every option,
//! a doc line on every flag. Tokens are never given clap `env` support, so `--help` cannot
//! print them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod certify;
mod libtest;

pub use certify::{CertifyArgs, VerifyArgs};

/// Conformance suite and contract checker for the Infrastructure Automation Service API.
#[derive(Debug, Parser)]
#[command(name = "conform", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do (default: run the suite).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of a suite run.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands besides running the suite.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every check with its id, level and spec citation.
    Checks(ChecksArgs),
    /// Run the embedded reference service standalone.
    Serve(ServeArgs),
    /// Self-validation: the suite against the reference, unbroken and with each fault.
    Selftest(SelftestArgs),
    /// Delete what runs left behind: the ledger's leftovers, and old `conform-` organizations.
    Sweep(SweepArgs),
    /// Write the contract the suite checks as an OpenAPI 3.1 document.
    Openapi(OpenapiArgs),
    /// A reverse proxy that judges real clients' traffic against the contract.
    Proxy(ProxyArgs),
    /// The same tests against two targets: where their answers differ in verdict or shape.
    Diff(DiffArgs),
    /// The API vendor's own integration tests (go-tfe's) against a target, through the proxy.
    Peer(PeerArgs),
    /// Print a shell completion script (`conform completions bash > /etc/bash_completion.d/conform`).
    Completions(CompletionsArgs),
    /// Print the manual page (roff: `conform manpage > conform.1; man ./conform.1`).
    Manpage,
    /// What changed between two runs' results.json: new failures, fixed tests, moved verdicts.
    Compare(CompareArgs),
    /// A run (or its shards' reports) made into a bundle anyone can check: reports, contract
    /// hashes, waivers, the statement of conformance.
    Certify(Box<CertifyArgs>),
    /// Check a bundle of `conform certify` offline: its files, its statement, its contract.
    Verify(VerifyArgs),
}

/// Options of `conform compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The earlier run's results.json.
    #[arg(value_name = "BASELINE")]
    pub baseline: PathBuf,
    /// The later run's results.json.
    #[arg(value_name = "CURRENT")]
    pub current: PathBuf,
    /// Write the comparison as markdown to this file too.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

/// Options of `conform completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// The peers `conform peer` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeerName {
    /// go-tfe's integration tests (the pinned version of cases/peers/go-tfe.toml; needs Go).
    GoTfe,
}

/// Options of `conform peer`.
#[derive(Debug, Args)]
pub struct PeerArgs {
    /// The peer to run.
    #[arg(value_enum, value_name = "PEER")]
    pub peer: PeerName,
    /// The service root. Without it, the embedded reference service (as TFE answers) is
    /// started, and every result is compared with cases/peers/go-tfe.toml (exit 1 on a difference).
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// A token that is also a site administrator's (else CONFORM_TOKEN, then TFE_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Extra CA certificate (PEM) to trust for the target (a self-signed server certificate
    /// named here is trusted as itself).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate from the target.
    #[arg(long)]
    pub insecure: bool,
    /// Run the tests that change instance-wide settings (SAML, SCIM) or the caller's account.
    #[arg(long)]
    pub allow_instance_changes: bool,
    /// Run only the tests whose names contain this text.
    #[arg(value_name = "FILTER")]
    pub filter: Option<String>,
    /// Test processes at once [default: the machine's cores + 1].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// A test still running after this many seconds is ended and fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub test_timeout: u64,
    /// Which levels of the suite's checks count as failing deviations of go-tfe's exchanges.
    #[arg(long, value_enum, value_name = "PROFILE", default_value = "tfe")]
    pub profile: ProfileArg,
    /// A suite run's results.json against the same target: its verdicts go beside go-tfe's
    /// [default: the results.json beside the reports folder, when it judged the same target].
    #[arg(long, value_name = "FILE")]
    pub suite_results: Option<PathBuf>,
    /// Folder the reports are written to.
    #[arg(long, value_name = "DIR", default_value = "reports/go-tfe")]
    pub reports: PathBuf,
    /// After the run against the embedded reference, run the set again with each fault of
    /// selftest/faults.toml: which faults go-tfe's tests catch, beside which the suite catches
    /// (faults.md, faults.json). Takes a long while: filter it to one group while working.
    #[arg(long, conflicts_with = "target")]
    pub faults: bool,
    /// With --faults: only the faults whose text contains this (repeatable).
    #[arg(long, value_name = "TEXT", requires = "faults")]
    pub fault_only: Vec<String>,
    /// Read the peer's data from this file instead of the embedded cases/peers/go-tfe.toml.
    #[arg(long, value_name = "FILE")]
    pub peer_file: Option<PathBuf>,
}

/// Options of `conform checks`.
#[derive(Debug, Args)]
pub struct ChecksArgs {
    /// Print docs/CHECKS.md: every check with the faults that prove it can fail.
    #[arg(long)]
    pub markdown: bool,
}

/// Options of `conform selftest`.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// The fault list (default: the embedded selftest/faults.toml).
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// Baseline runs (no fault, every test must pass); 20 looks for flakes.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: usize,
    /// Fault runs at once.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub jobs: usize,
    /// Run only the faults whose text contains this (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub only: Vec<String>,
    /// Skip the baseline runs.
    #[arg(long)]
    pub no_baseline: bool,
}

/// Items run at once unless `--test-threads` says otherwise (the plan's concurrency).
pub const DEFAULT_CONCURRENCY: usize = 16;

/// The ledger `conform sweep` reads unless `--ledger` names another: a default run's.
pub const DEFAULT_LEDGER: &str = "reports/ledger.jsonl";

/// Options of `conform sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Where the target is and how to reach it.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The ledger to sweep.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_LEDGER)]
    pub ledger: PathBuf,
    /// Only what runs with this prefix made; with it, organizations named PREFIX... (and,
    /// with --admin-token, user accounts whose email starts with it) are deleted too, even
    /// without a ledger.
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Also delete organizations named `conform-...` (or --prefix) created longer ago than
    /// this (`24h`, `7d`): the debris of runs whose ledger is gone.
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<String>,
    /// Say what would be deleted, delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// How long a delete's effect (above all one answered 202) is waited for before the
    /// resource counts as not deleted (`5s`; `0` reads once) [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub consistency_window: Option<String>,
}

/// Options of `conform proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The service root the traffic goes to.
    #[arg(long, value_name = "URL")]
    pub target: String,
    /// Where to listen (loopback; port 0 picks a free one, printed at start).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8079")]
    pub listen: String,
    /// Folder the reports are written to.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
    /// Stop after this many seconds (else at SIGINT or SIGTERM).
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u64>,
    /// Which levels count as failing deviations.
    #[arg(long, value_enum, value_name = "PROFILE", default_value = "core")]
    pub profile: ProfileArg,
    /// The registry read address on the target (default `{target}/api/registry/v1/modules/`).
    #[arg(long, value_name = "URL")]
    pub registry_url: Option<String>,
    /// Largest part of an answer read for judging, in bytes; the rest passes unread.
    #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    pub max_body: usize,
    /// Largest request body passed on, in bytes (larger ones are answered 413 by the proxy).
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub max_request_body: usize,
    /// Timeout of one exchange with the target, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
    /// Extra CA certificate (PEM) to trust for the target (a self-signed server certificate
    /// named here is trusted as itself).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate from the target.
    #[arg(long)]
    pub insecure: bool,
    /// A certificate authority (PEM) to trust for the target, given in memory by the caller
    /// that started the target (the peer's embedded reference); not a flag.
    #[arg(skip)]
    pub ca_pem: Option<Vec<u8>>,
    /// Read the catalog from this folder instead of the embedded one.
    #[arg(long, value_name = "DIR")]
    pub cases: Option<PathBuf>,
    /// Read the schemas from this folder instead of the embedded ones.
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
}

/// Options of `conform diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The two service roots, A then B (`embedded`: a fresh embedded reference service).
    #[arg(long, value_name = "URL", num_args = 1, required = true)]
    pub target: Vec<String>,
    /// The API token of each target, in the same order (else CONFORM_TOKEN for both).
    #[arg(long, value_name = "TOKEN")]
    pub token: Vec<String>,
    /// The administrator token of each target, in the same order.
    #[arg(long, value_name = "TOKEN")]
    pub admin_token: Vec<String>,
    /// Which levels fail a test (the verdicts compared).
    #[arg(long, value_enum, value_name = "PROFILE", default_value = "tfe")]
    pub profile: ProfileArg,
    /// Run only these groups (comma-separated): the catalog's, and `sequences` for the
    /// sequence families.
    #[arg(long, value_name = "GROUPS", value_delimiter = ',')]
    pub group: Vec<String>,
    /// Run only the tests whose names contain this text.
    #[arg(value_name = "FILTER")]
    pub filter: Option<String>,
    /// Folder of the reports: `diff.json`, and each side's ledger under `a/` and `b/`.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
    /// Tests run at once on each side.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub test_threads: usize,
    /// Extra CA certificate (PEM) to trust for both targets (a self-signed server certificate
    /// named here is trusted as itself).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate from either target.
    #[arg(long)]
    pub insecure: bool,
    /// Faults of the embedded reference on side A (for self-tests).
    #[arg(long, value_name = "NAME[=ARG]", hide = true)]
    pub fault_a: Vec<String>,
    /// Faults of the embedded reference on side B (for self-tests).
    #[arg(long, value_name = "NAME[=ARG]", hide = true)]
    pub fault_b: Vec<String>,
}

/// Options of `conform openapi`.
#[derive(Debug, Args)]
pub struct OpenapiArgs {
    /// Write the document to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Read the catalog from this folder instead of the embedded one.
    #[arg(long, value_name = "DIR")]
    pub cases: Option<PathBuf>,
    /// Read the schemas from this folder instead of the embedded ones.
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
}

/// Options of `conform serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Port to listen on (loopback); 0 picks a free one.
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub port: u16,
    /// The user token the service accepts (else `CONFORM_TOKEN`, else `reference-token`).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CONFORM_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// The administrator token the service accepts (else `CONFORM_ADMIN_TOKEN`, else
    /// `reference-admin-token`).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CONFORM_ADMIN_TOKEN",
        hide_env_values = true
    )]
    pub admin_token: Option<String>,
    /// Serve HTTPS with a certificate made at start (for 127.0.0.1 and localhost); the file
    /// to trust is printed.
    #[arg(long)]
    pub tls: bool,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// The scheme and host every absolute URL the service hands out starts with (default:
    /// the ones the client used, `Forwarded`/`X-Forwarded-*` honoured).
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Whose words to follow where the spec and TFE disagree: `spec` (default) or `tfe`
    /// (for TFE SDKs: `force_canceled`, 415 without a JSON content type, trailing slashes).
    #[arg(long, value_name = "spec|tfe", default_value = "spec")]
    pub compat: String,
    /// A fault to switch on (repeatable; `conform serve --fault list` lists them).
    #[arg(long, value_name = "NAME[=ARG]")]
    pub fault: Vec<String>,
    /// Serve in the shape of a partial server (repeatable; `conform serve --shape list`).
    #[arg(long, value_name = "SHAPE")]
    pub shape: Vec<String>,
    /// Make this organization at start (printed in the banner): what terraform's `cloud`
    /// block and other clients expect to exist.
    #[arg(long, value_name = "NAME")]
    pub seed_organization: Option<String>,
    /// Make this workspace in --seed-organization at start, in local execution mode (the
    /// terraform CLI plans and applies, the service keeps the state).
    #[arg(long, value_name = "NAME", requires = "seed_organization")]
    pub seed_workspace: Option<String>,
}

/// The profile: which levels fail the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// Only checks the spec states.
    Core,
    /// Also the public TFE conventions.
    Tfe,
}

/// Where the target is and how to reach it: shared by a run and `conform sweep`
/// (flags > environment > config file).
#[derive(Debug, Clone, Default, Args)]
pub struct ConnectionArgs {
    /// The service root. A run without it starts the embedded reference service; `sweep`
    /// needs it.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// API token (else CONFORM_TOKEN, TFE_TOKEN, or the config file).
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Administrator token for the administrator endpoints (else CONFORM_ADMIN_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    pub admin_token: Option<String>,
    /// Header that carries the token.
    #[arg(long, value_name = "NAME")]
    pub auth_header: Option<String>,
    /// Scheme before the token in that header (`Bearer`; empty for none).
    #[arg(long, value_name = "SCHEME")]
    pub auth_scheme: Option<String>,
    /// Extra CA certificate (PEM) to trust (a self-signed server certificate named here is
    /// trusted as itself).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate.
    #[arg(long)]
    pub insecure: bool,
    /// Timeout of one request, in seconds [default: 10].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Config file (default ./conform.toml when present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// What `conform --help` says after the options: the exit codes of a run.
const EXIT_CODES: &str = "\
Exit codes:
  0    every selected test passed (or was skipped, unsupported, blocked or waived), and one was judged
  1    a test failed or errored
  2    the configuration is wrong, or the target cannot be reached or refuses the token
  3    nothing was judged (a filter that selects nothing, every test skipped)
  4    a report file could not be written
  130  interrupted by SIGINT (teardown ran, the reports say so); 143 by SIGTERM;
  141  stopped because the reader of standard output went away (`conform ... | head`)";

impl Cli {
    /// The command line's definition: clap's, with what the flattened libtest options take
    /// away given back (the program name and purpose in `--help`, `--version`/`-V`), their
    /// help in this tool's words and their meaningless flags hidden (`libtest`), and the exit
    /// codes after the options.
    pub fn command() -> clap::Command {
        // libtest's own template (flattened in with its options) names no program
        const HELP: &str =
            "{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}";
        let mut command = <Self as clap::CommandFactory>::command()
            .help_template(HELP)
            .disable_version_flag(false)
            .version(env!("CARGO_PKG_VERSION"))
            .after_help(EXIT_CODES);
        let threads = |a: clap::Arg| {
            a.value_name("N").help(format!(
                "Tests run at once [default: {}]",
                DEFAULT_CONCURRENCY
            ))
        };
        command = libtest::reworded(command).mut_arg("test_threads", threads);
        command.mut_subcommand("certify", |certify| {
            libtest::reworded(certify.help_template(HELP)).mut_arg("test_threads", threads)
        })
    }

    /// Parses a command line (the program name first) against [`Cli::command`].
    pub fn try_parse_from<I, T>(argv: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::FromArgMatches;
        let command = Self::command();
        let matches = command
            .clone()
            .try_get_matches_from(argv)
            .map_err(|e| libtest::suggest_visible(e, &command))?;
        Self::from_arg_matches(&matches)
    }
}

/// Options of a suite run (flags > environment > config file).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Where the target is and how to reach it.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The module registry read address (default: service discovery).
    #[arg(long, value_name = "URL")]
    pub registry_url: Option<String>,
    /// Largest response body read, in bytes; longer ones are cut and reported [default:
    /// 8388608, 8 MiB].
    #[arg(long, value_name = "BYTES")]
    pub max_body: Option<usize>,
    /// Which levels fail the run.
    #[arg(long, value_enum, value_name = "PROFILE")]
    pub profile: Option<ProfileArg>,
    /// Run only these groups (comma-separated): the catalog's (`conform --list` shows each
    /// test's group before `::`), and `sequences` for the sequence families.
    #[arg(long, value_name = "GROUPS", value_delimiter = ',')]
    pub group: Vec<String>,
    /// Groups whose absence fails the run instead of being unsupported (or `all`).
    #[arg(long, value_name = "GROUPS", value_delimiter = ',')]
    pub require: Vec<String>,
    /// A resource the API cannot create, as KIND=ID (repeatable).
    #[arg(long, value_name = "KIND=ID")]
    pub fixture: Vec<String>,
    /// A given resource the run may change, as KIND=ID (repeatable): like --fixture, but the
    /// run may lock it and push state, configuration versions and runs to it, as terraform
    /// does (never delete it). For a server where such a resource cannot be made through the
    /// API, such as a backend for terraform's cloud block: give a scratch workspace.
    #[arg(long, value_name = "KIND=ID")]
    pub scratch: Vec<String>,
    /// Prefix of every name the run creates (default `conform-<run id>`).
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Work inside this existing organization: organization-scoped tests and sequences use it,
    /// and the run never changes or deletes it.
    #[arg(long, value_name = "NAME")]
    pub organization: Option<String>,
    /// A URL of yours the target may call, for the notification verify test (skipped without).
    #[arg(long, value_name = "URL")]
    pub notification_url: Option<String>,
    /// Let the run change what it did not make, each value restored afterwards: instance-wide
    /// administrator settings (and their actions) and the caller's own account. Without it
    /// those tests are skipped against a target; the embedded reference always allows them.
    #[arg(long)]
    pub allow_instance_changes: bool,
    /// A module already published in the registry, for the registry read tests of a target
    /// the run cannot publish to: NAMESPACE/NAME/PROVIDER/VERSION.
    #[arg(long, value_name = "NS/NAME/PROVIDER/VERSION")]
    pub module: Option<String>,
    /// A number N: property-based sequences drawn per family (`sequences::*`, default 48;
    /// raise it for nightly runs). A folder DIR: read the catalog from it instead of the
    /// embedded one. Both may be given (`--cases 256 --cases ./cases`).
    #[arg(long, value_name = "N|DIR", value_parser = parse_cases)]
    pub cases: Vec<CasesArg>,
    /// Seed of the first sequence of every family (a failure prints the seed that reproduces it).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Read the schemas from this folder instead of the embedded ones.
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
    /// Folder the reports are written to.
    #[arg(long, value_name = "DIR", default_value_os_t = default_reports())]
    pub reports: PathBuf,
    /// Known deviations to waive: a TOML file of `[[waiver]]` entries (test, reason, link, expires).
    #[arg(long, value_name = "FILE")]
    pub waivers: Option<PathBuf>,
    /// Run one shard of the tests: hash:M/N (stable per test name) or count:M/N.
    #[arg(long, value_name = "KIND:M/N")]
    pub partition: Option<String>,
    /// The crash-safe ledger of what the run creates (default REPORTS/ledger.jsonl).
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// Run only the tests that change nothing, and create no fixtures.
    #[arg(long)]
    pub read_only: bool,
    /// A previous run's results.json: print and write (changes.md) what changed since it,
    /// new failures first.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: only new failures fail the run (exit 1); failures the baseline had
    /// already do not.
    #[arg(long, requires = "baseline")]
    pub only_regressions_fail: bool,
    /// Client-side rate limit shared by all requests (`30/s`, `600/m`): a ceiling the run
    /// never exceeds, also while it paces at the limit it learns of the target.
    #[arg(long, value_name = "N/s")]
    pub rate: Option<String>,
    /// Learn nothing of the target's rate limit: no pace from its 429s or its `RateLimit`
    /// headers, only each 429's wait (to compare, as bench/rate-limit.sh does).
    #[arg(long)]
    pub no_rate_learning: bool,
    /// Time limit of the whole run (`90s`, `10m`); unfinished tests end as errors, teardown still runs.
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,
    /// Time limit of one test (`30s`, `2m`); a test past it ends as an error and the run goes on.
    #[arg(long, value_name = "DURATION")]
    pub test_timeout: Option<String>,
    /// How long an observation the spec does not promise at once (an item in its list after
    /// the create, gone after the delete, a change after the update) is read again, with
    /// backoff, before it is a finding (`5s`, `500ms`; `0` reads once) [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub consistency_window: Option<String>,
    /// Faults to switch on in the embedded reference service (for self-tests).
    #[arg(long, value_name = "NAME[=ARG]", hide = true)]
    pub reference_fault: Vec<String>,
    /// Shapes of the embedded reference service (a partial server; for self-tests).
    #[arg(long, value_name = "SHAPE", hide = true)]
    pub reference_shape: Vec<String>,
    /// libtest options: FILTER, --exact, --skip, --list, --format, --test-threads, ...
    #[command(flatten)]
    pub libtest: libtest_mimic::Arguments,
}

/// The value of `--cases`: a count of sequences, or the catalog folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CasesArg {
    /// Sequences per family.
    Count(u32),
    /// The catalog folder.
    Dir(PathBuf),
}

/// Digits are a count (unless a folder of that name exists); anything else is a folder.
fn parse_cases(text: &str) -> Result<CasesArg, String> {
    let is_number = !text.is_empty() && text.chars().all(|c| c.is_ascii_digit());
    if is_number && !std::path::Path::new(text).is_dir() {
        let n: u32 = text
            .parse()
            .map_err(|_| format!("`{text}` is too large a number of cases"))?;
        if n == 0 {
            return Err("--cases takes at least 1".into());
        }
        return Ok(CasesArg::Count(n));
    }
    Ok(CasesArg::Dir(PathBuf::from(text)))
}

/// Where a run's reports go unless `--reports` says otherwise.
fn default_reports() -> PathBuf {
    PathBuf::from("reports")
}

impl Default for RunArgs {
    /// The options of `conform` with no argument.
    fn default() -> Self {
        Self {
            connection: ConnectionArgs::default(),
            registry_url: None,
            max_body: None,
            profile: None,
            group: Vec::new(),
            require: Vec::new(),
            fixture: Vec::new(),
            scratch: Vec::new(),
            prefix: None,
            organization: None,
            notification_url: None,
            allow_instance_changes: false,
            module: None,
            cases: Vec::new(),
            seed: None,
            schemas: None,
            reports: default_reports(),
            waivers: None,
            partition: None,
            ledger: None,
            read_only: false,
            baseline: None,
            only_regressions_fail: false,
            rate: None,
            no_rate_learning: false,
            deadline: None,
            test_timeout: None,
            consistency_window: None,
            reference_fault: Vec::new(),
            reference_shape: Vec::new(),
            libtest: libtest_mimic::Arguments::default(),
        }
    }
}

impl RunArgs {
    /// The run options of `conform WORDS...` (the program name not included).
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Result<Self, clap::Error> {
        let argv = std::iter::once("conform").chain(words.iter().map(AsRef::as_ref));
        Cli::try_parse_from(argv).map(|cli| cli.run)
    }

    /// The catalog folder of `--cases DIR`, if given.
    pub fn cases_dir(&self) -> Option<&std::path::Path> {
        self.cases.iter().rev().find_map(|c| match c {
            CasesArg::Dir(d) => Some(d.as_path()),
            CasesArg::Count(_) => None,
        })
    }

    /// The sequences per family of `--cases N`, if given.
    pub fn sequence_cases(&self) -> Option<u32> {
        self.cases.iter().rev().find_map(|c| match c {
            CasesArg::Count(n) => Some(*n),
            CasesArg::Dir(_) => None,
        })
    }
}
