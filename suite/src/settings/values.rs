//! Each setting from its flag, its environment variable and the config file (`load_file`),
//! checked as it is read, and the words a printed command is made of.

use super::*;

/// The first token given: the flag, then each environment variable, then the config file. A
/// flag given empty (or blank) is an error naming it: `--token ""` is a command line whose
/// variable was not set, never a wish for the environment's token.
pub(super) fn token_from(
    flag: (Option<&String>, &'static str),
    variables: &[&'static str],
    file: Option<&String>,
) -> Result<Option<(Secret, TokenSource)>, ConfigError> {
    if let Some(token) = flag.0 {
        if token.trim().is_empty() {
            return Err(ConfigError(format!(
                "{} was given empty (a variable in the command line that is not set?): give the token, or leave {} out to take it from {} or the config file",
                flag.1,
                flag.1,
                variables.join(", ")
            )));
        }
        return Ok(Some((
            Secret::new(token.clone()),
            TokenSource::Flag(flag.1),
        )));
    }
    for name in variables {
        if let Some(token) = env(name) {
            return Ok(Some((Secret::new(token), TokenSource::Environment(name))));
        }
    }
    Ok(file.map(|token| (Secret::new(token.clone()), TokenSource::ConfigFile)))
}

/// Reads an environment variable, treating empty as unset.
pub(super) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A duration option: the flag's value, else the config file's, parsed.
/// A URL option: the flag's value, else the first of `vars` set in the environment, else the
/// config file's.
pub(super) fn url_from(
    flag: &str,
    given: Option<&String>,
    vars: &[&str],
    file: Option<&String>,
) -> Result<Option<Url>, ConfigError> {
    given
        .cloned()
        .or_else(|| vars.iter().find_map(|var| env(var)))
        .or(file.cloned())
        .map(|text| parse_url(flag, &text))
        .transpose()
}

/// `--deadline` and `--test-timeout` (else the file's); a test timeout of 0 is refused.
/// `--rate` (or the file's `rate`): requests per second, parsed.
pub(super) fn rate_of(args: &RunArgs, file: &FileConfig) -> Result<Option<f64>, ConfigError> {
    args.rate
        .as_deref()
        .or(file.rate.as_deref())
        .map(crate::target::parse_rate)
        .transpose()
        .map_err(ConfigError)
}

/// `--module` (or the file's `module`): a published module to read instead of publishing.
pub(super) fn module_of(
    args: &RunArgs,
    file: &FileConfig,
) -> Result<Option<PublishedModule>, ConfigError> {
    args.module
        .as_deref()
        .or(file.module.as_deref())
        .map(PublishedModule::parse)
        .transpose()
}

pub(super) fn deadlines_of(
    args: &RunArgs,
    file: &FileConfig,
) -> Result<(Option<Duration>, Option<Duration>), ConfigError> {
    let deadline = duration("--deadline", &args.deadline, &file.deadline)?;
    let test_timeout = duration("--test-timeout", &args.test_timeout, &file.test_timeout)?;
    if test_timeout.is_some_and(|t| t.is_zero()) {
        return Err(ConfigError(
            "--test-timeout 0 would end every test at once: give a duration such as 2m".into(),
        ));
    }
    Ok((deadline, test_timeout))
}

/// `--consistency-window` (else [`crate::patience::DEFAULT_WINDOW`]); more than 10 minutes is
/// refused, since every observation that does not hold waits that long.
pub(super) fn consistency_window_of(
    args: &RunArgs,
    file: &FileConfig,
) -> Result<Duration, ConfigError> {
    let window = duration(
        "--consistency-window",
        &args.consistency_window,
        &file.consistency_window,
    )?
    .unwrap_or(crate::patience::DEFAULT_WINDOW);
    if window > Duration::from_secs(600) {
        return Err(ConfigError(
            "--consistency-window: at most 10m (each observation that does not hold waits that long)"
                .into(),
        ));
    }
    Ok(window)
}

/// `--max-body` (else 8 MiB); 0 is refused.
pub(super) fn max_body_of(args: &RunArgs) -> Result<usize, ConfigError> {
    if args.max_body == Some(0) {
        return Err(ConfigError(
            "--max-body 0 would cut every answer: give a size in bytes (default 8388608)".into(),
        ));
    }
    Ok(args.max_body.unwrap_or(8 * 1024 * 1024))
}

/// The authorities `--ca-cert` names, read.
pub(super) fn read_ca_cert(path: &Path) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path)
        .map_err(|e| ConfigError(format!("cannot read --ca-cert {}: {e}", path.display())))
}

/// `--timeout` (else the file's, else 10 s), in seconds: above 0, at most an hour.
pub(super) fn timeout_of(
    conn: &crate::cli::ConnectionArgs,
    file: &FileConfig,
) -> Result<f64, ConfigError> {
    let timeout = conn.timeout.or(file.timeout).unwrap_or(10.0);
    if !(timeout > 0.0 && timeout <= 3600.0) {
        return Err(ConfigError(format!(
            "--timeout must be above 0 and at most 3600 seconds, not {timeout}"
        )));
    }
    Ok(timeout)
}

/// `--profile`, else the file's (`core` or `tfe`), else core.
pub(super) fn profile_of(args: &RunArgs, file: &FileConfig) -> Result<Profile, ConfigError> {
    match (args.profile, file.profile.as_deref()) {
        (Some(profile), _) => Ok(profile.into()),
        (None, None | Some("core")) => Ok(Profile::Core),
        (None, Some("tfe")) => Ok(Profile::Tfe),
        (None, Some(other)) => Err(ConfigError(format!(
            "profile `{other}` in the config file is not one of: core, tfe"
        ))),
    }
}

/// The fixtures the file gives, then each `--fixture KIND=ID`.
pub(super) fn given_fixtures(
    args: &RunArgs,
    file: &FileConfig,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut fixtures = file.fixtures.clone();
    for entry in &args.fixture {
        let (kind, id) = kind_and_id("--fixture", entry)?;
        fixtures.insert(kind.to_string(), id.to_string());
    }
    Ok(fixtures)
}

/// A `KIND=ID` value of `flag`, both sides non-empty.
fn kind_and_id<'a>(flag: &str, entry: &'a str) -> Result<(&'a str, &'a str), ConfigError> {
    entry
        .split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| ConfigError(format!("{flag} `{entry}` is not KIND=ID")))
}

/// Each `--scratch KIND=ID`: put among the fixtures, and its kind returned as one the run may
/// change.
pub(super) fn scratch_fixtures(
    args: &RunArgs,
    fixtures: &mut BTreeMap<String, String>,
) -> Result<BTreeSet<String>, ConfigError> {
    let mut kinds = BTreeSet::new();
    for entry in &args.scratch {
        let (kind, id) = kind_and_id("--scratch", entry)?;
        fixtures.insert(kind.to_string(), id.to_string());
        kinds.insert(kind.to_string());
    }
    Ok(kinds)
}

/// The run's name prefix: `--prefix`, else the file's, else one made for the run; letters,
/// digits, `-` and `_` only.
pub(super) fn prefix_of(args: &RunArgs, file: &FileConfig) -> Result<String, ConfigError> {
    let prefix = args
        .prefix
        .clone()
        .or(file.prefix.clone())
        .unwrap_or_else(default_prefix);
    if prefix.is_empty()
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ConfigError(format!(
            "--prefix `{prefix}` may hold only letters, digits, `-` and `_`"
        )));
    }
    Ok(prefix)
}

/// The fixtures a run's own options make: the given organization (the run's `organization`
/// fixture), `--notification-url`, `--allow-instance-changes`.
pub(super) fn add_run_fixtures(
    args: &RunArgs,
    file: &FileConfig,
    organization: Option<&str>,
    fixtures: &mut BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    if let Some(org) = organization {
        fixtures.insert("organization".into(), org.to_string());
    }
    if let Some(url) = args
        .notification_url
        .as_deref()
        .or(file.notification_url.as_deref())
    {
        let url = parse_url("--notification-url", url)?;
        fixtures.insert("notification_url".into(), url.to_string());
    }
    if args.allow_instance_changes {
        fixtures.insert(INSTANCE_CHANGES.into(), "allowed".into());
    }
    Ok(())
}

/// A ledger given by name goes into a folder that is there: a typo must not make one.
pub(super) fn ledger_folder_is_there(args: &RunArgs) -> Result<(), ConfigError> {
    match args
        .ledger
        .as_deref()
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        Some(dir) => Err(ConfigError(format!(
            "--ledger {}: the folder {} does not exist",
            args.ledger.as_deref().unwrap_or(dir).display(),
            dir.display()
        ))),
        None => Ok(()),
    }
}

/// The verdicts of `--baseline`, read.
pub(super) fn baseline_of(args: &RunArgs) -> Result<Option<crate::compare::Verdicts>, ConfigError> {
    args.baseline
        .as_deref()
        .map(crate::compare::Verdicts::read)
        .transpose()
        .map_err(|e| ConfigError(format!("--baseline {e}")))
}

pub(super) fn duration(
    flag: &str,
    given: &Option<String>,
    in_file: &Option<String>,
) -> Result<Option<Duration>, ConfigError> {
    given
        .as_deref()
        .or(in_file.as_deref())
        .map(crate::clock::parse_duration)
        .transpose()
        .map_err(|e| ConfigError(format!("{flag} {e}")))
}

pub(super) fn load_file(
    explicit: Option<&Path>,
) -> Result<(FileConfig, Option<PathBuf>), ConfigError> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => {
            let default = PathBuf::from("conform.toml");
            if !default.exists() {
                return Ok((FileConfig::default(), None));
            }
            default
        }
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ConfigError(format!("cannot read config file {}: {e}", path.display())))?;
    let file: FileConfig = toml::from_str(&text).map_err(|e| {
        ConfigError(format!(
            "config file {}: {}",
            path.display(),
            toml_error(&text, &e)
        ))
    })?;
    Ok((file, Some(path)))
}

/// A config file error without the file's text: where it is and what is wrong, with the
/// values of the credential lines scrubbed from the message (a TOML error quotes the line it
/// found, and a type error quotes the value: either may be a token).
pub(super) fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let place = error
        .span()
        .map(|span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: ")
        })
        .unwrap_or_default();
    let mut message = error.message().trim().to_string();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.to_ascii_lowercase().contains("token") {
            for secret in [value.trim(), value.trim().trim_matches(['"', '\''])] {
                message = crate::target::redact(&message, &[&Secret::new(secret)]);
            }
        }
    }
    format!("{place}{message}")
}

/// A command-line error's text with the values of the credential flags scrubbed (clap quotes
/// the argument it stumbled on, and that may be a token).
pub fn scrub_arguments(text: &str, argv: &[std::ffi::OsString]) -> String {
    let mut secrets = Vec::new();
    let mut args = argv.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = args.next() {
        let Some(flag) = arg.strip_prefix("--") else {
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (flag.to_string(), None),
        };
        if name.contains("token") {
            if let Some(value) = inline.or_else(|| args.next()) {
                secrets.push(value);
            }
        }
    }
    let secrets: Vec<Secret> = secrets.into_iter().map(Secret::new).collect();
    crate::target::redact(text, &secrets.iter().collect::<Vec<_>>())
}

pub(super) fn parse_url(flag: &str, text: &str) -> Result<Url, ConfigError> {
    let url =
        Url::parse(text).map_err(|e| ConfigError(format!("{flag} `{text}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ConfigError(format!(
            "{flag} `{text}` must be an http:// or https:// URL with a host"
        )));
    }
    Ok(url)
}

pub(super) fn default_prefix() -> String {
    format!("conform-{:06x}", crate::clock::random() & 0xff_ffff)
}

/// A word as a POSIX shell reads it back: bare when it holds only safe characters, else in
/// single quotes.
pub fn shell_word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
