//! The resolved configuration of a run: flags > environment > config file > defaults.
//! Everything is validated here, before any request is sent. `values` reads each setting
//! from its flag, its environment variable and the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use crate::cli::{ProfileArg, RunArgs};
use crate::target::{PathForms, Secret, TargetConfig};
use crate::verdict::Profile;

mod values;

use values::*;
pub use values::{scrub_arguments, shell_word};

/// A configuration that cannot be used (exit code 2). It displays its message through
/// [`crate::target::visible`]: a message that quotes a target's answer (preflight's) reaches
/// the terminal without the answer's control characters.
#[derive(Debug, thiserror::Error)]
#[error("{}", crate::target::visible(.0))]
pub struct ConfigError(pub String);

/// The config file (`conform.toml`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    /// The service root.
    pub target: Option<String>,
    /// API token.
    pub token: Option<String>,
    /// Administrator token.
    pub admin_token: Option<String>,
    /// Header that carries the token.
    pub auth_header: Option<String>,
    /// Scheme before the token.
    pub auth_scheme: Option<String>,
    /// Registry read address.
    pub registry_url: Option<String>,
    /// CA certificate file.
    pub ca_cert: Option<PathBuf>,
    /// Accept any certificate.
    pub insecure: Option<bool>,
    /// Request timeout in seconds.
    pub timeout: Option<f64>,
    /// Profile name.
    pub profile: Option<String>,
    /// Name prefix.
    pub prefix: Option<String>,
    /// Required groups.
    #[serde(default)]
    pub require: Vec<String>,
    /// Fixtures by kind.
    #[serde(default)]
    pub fixtures: BTreeMap<String, String>,
    /// Client-side rate limit (`30/s`).
    pub rate: Option<String>,
    /// Time limit of the whole run (`50m`).
    pub deadline: Option<String>,
    /// Time limit of one test (`2m`).
    pub test_timeout: Option<String>,
    /// The consistency window (`5s`; `0` reads every observation once).
    pub consistency_window: Option<String>,
    /// Run only the tests that change nothing.
    pub read_only: Option<bool>,
    /// The existing organization to work in.
    pub organization: Option<String>,
    /// A published module: `NS/NAME/PROVIDER/VERSION`.
    pub module: Option<String>,
    /// A destination of the user's for notification verification.
    pub notification_url: Option<String>,
}

/// The value a test of something the run did not make `requires` (`--allow-instance-changes`).
pub const INSTANCE_CHANGES: &str = "instance_changes";

/// The fixture kinds the run's own flags set (`--notification-url`, `--allow-instance-changes`):
/// values, not resources.
pub const FLAG_FIXTURES: [&str; 2] = ["notification_url", INSTANCE_CHANGES];

/// Where a token came from: said in the configuration lines and in preflight's messages,
/// never the token itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// A command-line flag (`--token`, `--admin-token`).
    Flag(&'static str),
    /// An environment variable (`CONFORM_TOKEN`, `TFE_TOKEN`, `CONFORM_ADMIN_TOKEN`).
    Environment(&'static str),
    /// The config file.
    ConfigFile,
    /// The embedded reference service the run started; `instead_of` names a token given
    /// for `--target` runs that this run does not use.
    Embedded {
        /// Where the token not used came from.
        instead_of: Option<Box<TokenSource>>,
    },
}

impl std::fmt::Display for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenSource::Flag(flag) => write!(f, "{flag}"),
            TokenSource::Environment(name) => write!(f, "the environment variable {name}"),
            TokenSource::ConfigFile => write!(f, "the config file"),
            TokenSource::Embedded { instead_of: None } => {
                write!(f, "the embedded reference service")
            }
            TokenSource::Embedded {
                instead_of: Some(ignored),
            } => write!(
                f,
                "the embedded reference service (the token of {ignored} is for --target runs, not used)"
            ),
        }
    }
}

/// Why a test (or a sequence family) that `requires` a value the user did not give is skipped.
pub fn requirement_missing(requirement: &str) -> String {
    if requirement == INSTANCE_CHANGES {
        return "changes what the run did not make (an instance-wide setting or action, the caller's account): runs against the embedded reference, or with --allow-instance-changes (each value is restored afterwards)".into();
    }
    let flag = format!("--{}", requirement.replace('_', "-"));
    format!(
        "needs {flag} URL: a destination of yours the target will call (conform never points it at a third party)"
    )
}

/// Where the run goes and how.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The service root, or `None` for the embedded reference service.
    pub target: Option<Url>,
    /// API token.
    pub token: Option<Secret>,
    /// Administrator token.
    pub admin_token: Option<Secret>,
    /// Where the API token came from.
    pub token_source: Option<TokenSource>,
    /// Where the administrator token came from.
    pub admin_token_source: Option<TokenSource>,
    /// Header that carries the token.
    pub auth_header: String,
    /// Scheme before the token.
    pub auth_scheme: String,
    /// Registry read address, if given.
    pub registry_url: Option<Url>,
    /// CA certificate (PEM bytes).
    pub ca_cert: Option<Vec<u8>>,
    /// The file `ca_cert` was read from.
    pub ca_cert_path: Option<PathBuf>,
    /// A previous run's verdicts to compare with (`--baseline`).
    pub baseline: Option<crate::compare::Verdicts>,
    /// Only new failures fail the run (`--only-regressions-fail`).
    pub only_regressions_fail: bool,
    /// Accept any certificate.
    pub insecure: bool,
    /// Request timeout.
    pub timeout: Duration,
    /// Response size cap.
    pub max_body: usize,
    /// Profile.
    pub profile: Profile,
    /// Name prefix.
    pub prefix: String,
    /// Required groups.
    pub require: Vec<String>,
    /// Given fixtures.
    pub fixtures: BTreeMap<String, String>,
    /// The kinds of the given fixtures the run may change (`--scratch KIND=ID`; their ids are
    /// in `fixtures`).
    pub scratch: BTreeSet<String>,
    /// Where the config file came from, if any.
    pub config_file: Option<PathBuf>,
    /// Run only the tests that change nothing (`--read-only`).
    pub read_only: bool,
    /// Client-side rate limit, requests per second (`--rate`).
    pub rate: Option<f64>,
    /// Whether the target's rate limit is learned (not `--no-rate-learning`).
    pub rate_learning: bool,
    /// Time limit of the whole run (`--deadline`).
    pub deadline: Option<Duration>,
    /// Time limit of one test (`--test-timeout`).
    pub test_timeout: Option<Duration>,
    /// How long an observation the spec does not promise at once is read again before it is
    /// a finding (`--consistency-window`; `crate::patience`).
    pub consistency_window: Duration,
    /// The ledger file.
    pub ledger: PathBuf,
    /// The existing organization the run works in (`--organization`); read-only to the run.
    pub organization: Option<String>,
    /// A module already published in the registry (`--module`).
    pub module: Option<PublishedModule>,
    /// The catalog folder (`--cases DIR`), else the embedded catalog.
    pub cases_dir: Option<PathBuf>,
    /// The schemas folder (`--schemas`), else the embedded schemas.
    pub schemas_dir: Option<PathBuf>,
    /// The folder the reports go to (`--reports`).
    pub reports: PathBuf,
    /// Sequences drawn per family (`--cases N`), else the sequences' default.
    pub sequence_cases: Option<u32>,
    /// Seed of the first sequence of every family (`--seed`).
    pub seed: Option<u64>,
    /// Faults of the embedded reference service, as `--reference-fault` takes them.
    pub reference_faults: Vec<String>,
    /// Shapes of the embedded reference service, as `--reference-shape` takes them.
    pub reference_shapes: Vec<String>,
}

impl From<ProfileArg> for Profile {
    fn from(arg: ProfileArg) -> Self {
        match arg {
            ProfileArg::Core => Profile::Core,
            ProfileArg::Tfe => Profile::Tfe,
        }
    }
}

/// A published module version given with `--module NS/NAME/PROVIDER/VERSION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedModule {
    /// Namespace (the organization, in a private registry).
    pub namespace: String,
    /// Module name.
    pub name: String,
    /// Provider.
    pub provider: String,
    /// Version.
    pub version: String,
}

impl PublishedModule {
    /// Parses `NS/NAME/PROVIDER/VERSION`.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts.as_slice() {
            [ns, name, provider, version] if parts.iter().all(|p| !p.is_empty()) => Ok(Self {
                namespace: ns.to_string(),
                name: name.to_string(),
                provider: provider.to_string(),
                version: version.to_string(),
            }),
            _ => Err(ConfigError(format!(
                "--module `{text}` is not NAMESPACE/NAME/PROVIDER/VERSION"
            ))),
        }
    }
}

impl std::fmt::Display for PublishedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}",
            self.namespace, self.name, self.provider, self.version
        )
    }
}

impl Settings {
    /// The options a printed command needs to reach the same target as this run (`rerun:`,
    /// a sequence's `reproduce with:`, the sweep hint), pasteable in the shell the run was
    /// started from: a token given by flag is written as its environment variable, one from
    /// the environment or the config file is found there again.
    pub fn reach_options(&self) -> String {
        let mut words = Vec::new();
        if let Some(target) = &self.target {
            words.push(format!("--target {}", shell_word(target.as_str())));
        }
        if let Some(file) = &self.config_file {
            words.push(format!(
                "--config {}",
                shell_word(&file.display().to_string())
            ));
        }
        if matches!(self.token_source, Some(TokenSource::Flag(_))) {
            words.push("--token \"$CONFORM_TOKEN\"".into());
        }
        if matches!(self.admin_token_source, Some(TokenSource::Flag(_))) {
            words.push("--admin-token \"$CONFORM_ADMIN_TOKEN\"".into());
        }
        if let Some(file) = &self.ca_cert_path {
            words.push(format!(
                "--ca-cert {}",
                shell_word(&file.display().to_string())
            ));
        }
        if self.insecure {
            words.push("--insecure".into());
        }
        words.join(" ")
    }

    /// [`Settings::reach_options`], and what decides the verdicts: the profile and the
    /// organization and module the run was given.
    pub fn rerun_options(&self) -> String {
        let mut words = vec![self.reach_options()];
        if self.profile == Profile::Tfe {
            words.push("--profile tfe".into());
        }
        if let Some(org) = &self.organization {
            words.push(format!("--organization {}", shell_word(org)));
        }
        if let Some(module) = &self.module {
            words.push(format!("--module {}", shell_word(&module.to_string())));
        }
        let own: Vec<&str> = std::iter::once("organization")
            .chain(FLAG_FIXTURES)
            .collect();
        for (kind, id) in self
            .fixtures
            .iter()
            .filter(|(k, _)| !own.contains(&k.as_str()))
        {
            let flag = match self.scratch.contains(kind) {
                true => "--scratch",
                false => "--fixture",
            };
            words.push(format!("{flag} {}", shell_word(&format!("{kind}={id}"))));
        }
        words.retain(|w| !w.is_empty());
        words.join(" ")
    }

    /// Resolves flags, environment and the config file: once per run.
    pub fn resolve(args: &RunArgs) -> Result<Self, ConfigError> {
        let conn = &args.connection;
        let (file, config_file) = load_file(conn.config.as_deref())?;
        let target = url_from(
            "--target",
            conn.target.as_ref(),
            &["CONFORM_TARGET", "TFE_ADDRESS"],
            file.target.as_ref(),
        )?;
        let (token, token_source) = token_from(
            (conn.token.as_ref(), "--token"),
            &["CONFORM_TOKEN", "TFE_TOKEN"],
            file.token.as_ref(),
        )?
        .unzip();
        let (admin_token, admin_token_source) = token_from(
            (conn.admin_token.as_ref(), "--admin-token"),
            &["CONFORM_ADMIN_TOKEN"],
            file.admin_token.as_ref(),
        )?
        .unzip();
        let registry_url = url_from(
            "--registry-url",
            args.registry_url.as_ref(),
            &["CONFORM_REGISTRY_URL"],
            file.registry_url.as_ref(),
        )?;
        let ca_cert_path = conn.ca_cert.clone().or(file.ca_cert.clone());
        let ca_cert = ca_cert_path.as_deref().map(read_ca_cert).transpose()?;
        let timeout = timeout_of(conn, &file)?;
        let profile = profile_of(args, &file)?;
        let mut fixtures = given_fixtures(args, &file)?;
        let scratch = scratch_fixtures(args, &mut fixtures)?;
        let prefix = prefix_of(args, &file)?;
        let rate = rate_of(args, &file)?;
        let (deadline, test_timeout) = deadlines_of(args, &file)?;
        let consistency_window = consistency_window_of(args, &file)?;
        let organization = args
            .organization
            .clone()
            .or(file.organization.clone())
            .filter(|o| !o.is_empty());
        add_run_fixtures(args, &file, organization.as_deref(), &mut fixtures)?;
        let module = module_of(args, &file)?;
        let max_body = max_body_of(args)?;
        let mut require = args.require.clone();
        require.extend(file.require.iter().cloned());
        ledger_folder_is_there(args)?;
        Ok(Self {
            target,
            token,
            admin_token,
            token_source,
            admin_token_source,
            auth_header: (conn.auth_header.clone().or(file.auth_header.clone()))
                .unwrap_or_else(|| "Authorization".into()),
            auth_scheme: (conn.auth_scheme.clone().or(file.auth_scheme.clone()))
                .unwrap_or_else(|| "Bearer".into()),
            registry_url,
            ca_cert,
            ca_cert_path,
            baseline: baseline_of(args)?,
            only_regressions_fail: args.only_regressions_fail,
            insecure: conn.insecure || file.insecure.unwrap_or(false),
            timeout: Duration::from_secs_f64(timeout),
            max_body,
            profile,
            prefix,
            require,
            fixtures,
            scratch,
            config_file,
            read_only: args.read_only || file.read_only.unwrap_or(false),
            rate,
            rate_learning: !args.no_rate_learning,
            deadline,
            test_timeout,
            consistency_window,
            ledger: args
                .ledger
                .clone()
                .unwrap_or_else(|| args.reports.join("ledger.jsonl")),
            organization,
            module,
            cases_dir: args.cases_dir().map(Path::to_path_buf),
            schemas_dir: args.schemas.clone(),
            reports: args.reports.clone(),
            sequence_cases: args.sequence_cases(),
            seed: args.seed,
            reference_faults: args.reference_fault.clone(),
            reference_shapes: args.reference_shape.clone(),
        })
    }

    /// Takes the embedded reference service's tokens (a run without `--target`): a token
    /// given for `--target` runs is not used, and the sources say so. Answers a warning when
    /// that token was given by flag (a user who meant a target forgot `--target`).
    pub fn use_embedded_tokens(&mut self, token: &str, admin_token: &str) -> Option<String> {
        let mut flags = Vec::new();
        for (slot, source, given) in [
            (&mut self.token, &mut self.token_source, token),
            (
                &mut self.admin_token,
                &mut self.admin_token_source,
                admin_token,
            ),
        ] {
            let instead_of = source.take().map(Box::new);
            if let Some(TokenSource::Flag(flag)) = instead_of.as_deref() {
                flags.push(*flag);
            }
            *slot = Some(Secret::new(given.to_string()));
            *source = Some(TokenSource::Embedded { instead_of });
        }
        (!flags.is_empty()).then(|| {
            format!(
                "{} given without --target: the run uses the embedded reference service and its own tokens (give --target URL to use yours)",
                flags.join(" and ")
            )
        })
    }

    /// How to reach the target at `root`: tokens, TLS, timeout, body cap, rate; the registry
    /// at the TFE default and every path form until preflight says otherwise.
    pub fn target_config(&self, root: &Url) -> TargetConfig {
        TargetConfig {
            root: root.clone(),
            registry: crate::target::join(root, crate::catalog::REGISTRY_DEFAULT),
            token: self.token.clone(),
            admin_token: self.admin_token.clone(),
            auth_header: self.auth_header.clone(),
            auth_scheme: self.auth_scheme.clone(),
            timeout: self.timeout,
            max_body: self.max_body,
            ca_cert: self.ca_cert.clone(),
            insecure: self.insecure,
            rate: self.rate,
            learn_rate: self.rate_learning,
            max_retries: crate::target::MAX_RETRIES,
            forms: PathForms::default(),
            served_at_tfe_path: Vec::new(),
            no_route: Default::default(),
        }
    }

    /// The configuration as `key = value` lines, tokens redacted.
    pub fn describe(&self, target: &Url, registry: &Url) -> Vec<(String, String)> {
        let shown = |s: &Option<Secret>| {
            if s.is_some() {
                "(redacted)".to_string()
            } else {
                "(none)".to_string()
            }
        };
        // where each token came from, beside it (never the token)
        let source = |s: &Option<TokenSource>| {
            s.as_ref()
                .map(ToString::to_string)
                .unwrap_or_else(|| "(none)".into())
        };
        vec![
            (
                "target".into(),
                if self.target.is_some() {
                    target.to_string()
                } else {
                    format!("{target} (embedded reference service)")
                },
            ),
            ("registry-url".into(), registry.to_string()),
            ("profile".into(), self.profile.as_str().into()),
            ("token".into(), shown(&self.token)),
            ("token-from".into(), source(&self.token_source)),
            ("admin-token".into(), shown(&self.admin_token)),
            ("admin-token-from".into(), source(&self.admin_token_source)),
            (
                "auth".into(),
                format!("{}: {} <token>", self.auth_header, self.auth_scheme),
            ),
            (
                "timeout".into(),
                format!("{} s", self.timeout.as_secs_f64()),
            ),
            ("prefix".into(), self.prefix.clone()),
            (
                "organization".into(),
                self.organization
                    .clone()
                    .map(|o| format!("{o} (given: never changed or deleted)"))
                    .unwrap_or_else(|| "(the run makes its own)".into()),
            ),
            (
                "safety".into(),
                format!(
                    "{}guard on, rate {}, deadline {}, test timeout {}",
                    if self.read_only { "read-only, " } else { "" },
                    self.rate
                        .map(|r| format!("{r}/s"))
                        .unwrap_or_else(|| "unlimited".into()),
                    self.deadline
                        .map(crate::clock::human)
                        .unwrap_or_else(|| "none".into()),
                    self.test_timeout
                        .map(crate::clock::human)
                        .unwrap_or_else(|| "none".into())
                ),
            ),
            (
                "consistency-window".into(),
                if self.consistency_window.is_zero() {
                    "0 (every observation read once)".into()
                } else {
                    format!(
                        "{} (lists, shows and deletes read again until they hold)",
                        crate::clock::human(self.consistency_window)
                    )
                },
            ),
            (
                "config-file".into(),
                self.config_file
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "(none)".into()),
            ),
            ("conform-version".into(), env!("CARGO_PKG_VERSION").into()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short token in a command-line error is redacted where it is quoted, and the flags
    /// that merely hold its letters stay whole.
    #[test]
    fn a_short_token_in_a_command_line_error_leaves_the_flags_whole() {
        let argv: Vec<std::ffi::OsString> = ["conform", "--admin-token", "adm", "--bogus"]
            .iter()
            .map(Into::into)
            .collect();
        let text = scrub_arguments(
            "error: unexpected argument '--bogus' found after '--admin-token' 'adm'",
            &argv,
        );
        assert_eq!(
            text,
            "error: unexpected argument '--bogus' found after '--admin-token' '(redacted)'"
        );
    }
}
