//! `conform certify` and `conform verify`: a run (or its shards' reports) made into one bundle
//! a third party can check offline, and that check.
//!
//! `contract` (the spec's, the catalog's and the schemas' SHA-256, conform's version and
//! commit), `statement` (the plain-words verdict, decided from `results.json`, the waivers and
//! the date: `certify` writes it, `verify` decides it again), `bundle` (the folder, its
//! `manifest.json` and its tar), `merge` (`--from`: shards into one `results.json`), `badge`
//! (the SVG, its markdown snippet, `certificate.md`), `verify`.

mod badge;
mod bundle;
mod contract;
mod merge;
mod statement;
mod verify;

pub use bundle::{read, tar_path, Manifest};
pub use contract::{sha256_hex, Build, Contract};
pub use statement::{Statement, WaiverEntry};
pub use verify::{verify, Verification};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

use crate::cli::{CertifyArgs, ProfileArg, VerifyArgs};
use crate::exit::ExitCodes;

/// The report files a run writes that a bundle holds as they are.
const REPORTS: [&str; 4] = ["results.json", "junit.xml", "summary.md", "report.html"];

/// The run configuration lines a bundle keeps as what the run recorded of the target.
const TARGET_LINES: [&str; 4] = ["target", "registry-url", "no-route answer", "organization"];

/// `conform certify`: runs the suite (or reads its shards' reports) and writes the bundle;
/// exit 0 when the statement says conformant at the run's profile, 1 when not, 2 when the
/// configuration or the shards are wrong, 4 when the bundle cannot be written, the run's own
/// code when it ended early.
pub fn command(args: CertifyArgs, argv: &[OsString]) -> ExitCode {
    let command_line = command_line(argv);
    let made = if args.from.is_empty() {
        from_a_run(args, command_line)
    } else {
        from_shards(&args, command_line)
    };
    let (bundle_dir, files, manifest) = match made {
        Ok(made) => made,
        Err((code, why)) => {
            eprintln!("error: {why}");
            return ExitCode::from(code);
        }
    };
    let conformant = match manifest.profile.as_str() {
        "tfe" => manifest.statement.core && manifest.statement.tfe == Some(true),
        _ => manifest.statement.core,
    };
    let statement = manifest.statement.clone();
    if let Err(e) = bundle::write(&bundle_dir, &files, manifest) {
        eprintln!("error: the bundle could not be written: {e}");
        return ExitCode::from(ExitCodes::REPORTS_UNWRITTEN);
    }
    println!("\n{}", crate::target::visible(&statement.text));
    for why in &statement.reasons {
        println!("  {}", crate::target::visible(why));
    }
    println!(
        "bundle: {} and {} (check it with `conform verify {}`)",
        bundle_dir.display(),
        tar_path(&bundle_dir).display(),
        tar_path(&bundle_dir).display()
    );
    ExitCode::from(if conformant {
        ExitCodes::OK
    } else {
        ExitCodes::FAILED
    })
}

/// What a bundle is made of before it is written: its folder, its files, its manifest.
type Made = (PathBuf, bundle::Files, Manifest);

/// Runs the suite with `--require all` (at `--profile tfe` unless another is given), then
/// bundles its reports.
fn from_a_run(mut args: CertifyArgs, command: String) -> Result<Made, (u8, String)> {
    if args.run.cases_dir().is_some() || args.run.schemas.is_some() {
        return Err((
            ExitCodes::CONFIG,
            "certify judges against the embedded catalog and schemas, whose hashes it states: leave out --cases DIR and --schemas".into(),
        ));
    }
    let waivers = waiver_entries(args.run.waivers.as_deref())?;
    let faults = args.run.reference_fault.clone();
    args.run.require = vec!["all".into()];
    args.run.profile.get_or_insert(ProfileArg::Tfe);
    let reports = args.run.reports.clone();
    let code = crate::harness::run_code(args.run);
    if ![ExitCodes::OK, ExitCodes::FAILED, ExitCodes::NOTHING_JUDGED].contains(&code) {
        return Err((
            code,
            format!("no bundle: the run ended with exit code {code}"),
        ));
    }
    let mut files = bundle::Files::new();
    for name in REPORTS {
        let bytes = std::fs::read(reports.join(name)).map_err(|e| {
            (
                ExitCodes::REPORTS_UNWRITTEN,
                format!("{}: {e}", reports.join(name).display()),
            )
        })?;
        files.insert(name.to_string(), bytes);
    }
    let doc = results_of(&files)?;
    let mut manifest = manifest_of(&doc, waivers, command, Vec::new())?;
    if !faults.is_empty() {
        manifest
            .target
            .insert("reference faults".into(), faults.join(", "));
    }
    peer_results(&reports, &mut files, &mut manifest);
    add_words(&mut files, &manifest);
    Ok((args.bundle, files, manifest))
}

/// Merges the shards' reports (`--from`) into one bundle; exit 2 naming the shard that differs.
fn from_shards(args: &CertifyArgs, command: String) -> Result<Made, (u8, String)> {
    let shards = args
        .from
        .iter()
        .map(|dir| merge::Shard::read(dir))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| (ExitCodes::CONFIG, e))?;
    let reasons = merge::check(&shards);
    if !reasons.is_empty() {
        return Err((
            ExitCodes::CONFIG,
            format!("the shards are not one run:\n  {}", reasons.join("\n  ")),
        ));
    }
    let doc = merge::merged(&shards);
    let waivers_file = args.run.waivers.clone().or_else(|| {
        let line = doc["config"]["waivers"].as_str()?;
        Some(PathBuf::from(
            line.rsplit_once(" (").map_or(line, |(path, _)| path),
        ))
    });
    let waivers = waiver_entries(waivers_file.as_deref())?;
    let described = shards.iter().map(merge::Shard::describe).collect();
    let mut manifest = manifest_of(&doc, waivers, command, described)?;
    let mut files = bundle::Files::new();
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    files.insert("results.json".into(), text.into_bytes());
    let summary = merge::summary(&doc, &manifest.statement.text);
    files.insert(
        "summary.md".into(),
        crate::target::visible(&summary).into_owned().into_bytes(),
    );
    for (i, shard) in shards.iter().enumerate() {
        for name in ["junit.xml", "report.html"] {
            if let Ok(bytes) = std::fs::read(shard.dir.join(name)) {
                files.insert(format!("shards/{}/{name}", i + 1), bytes);
            }
        }
        peer_results(&shard.dir, &mut files, &mut manifest);
    }
    add_words(&mut files, &manifest);
    Ok((args.bundle.clone(), files, manifest))
}

/// The manifest of a run's `results.json` (its statement judged now), its files not yet hashed.
fn manifest_of(
    doc: &Value,
    waivers: Vec<WaiverEntry>,
    command: String,
    shards: Vec<String>,
) -> Result<Manifest, (u8, String)> {
    let tests = statement::tests_of(doc).map_err(|e| (ExitCodes::CONFIG, e))?;
    let profile = doc["profile"].as_str().unwrap_or("core").to_string();
    let date = crate::clock::rfc3339(std::time::SystemTime::now());
    let day = date.get(..10).unwrap_or(&date).to_string();
    let statement = statement::judge(&tests, &profile, &waivers, &day, &contract::catalog_names());
    let mut target: BTreeMap<String, String> = TARGET_LINES
        .iter()
        .filter_map(|k| Some((k.to_string(), doc["config"][*k].as_str()?.to_string())))
        .collect();
    target.insert(
        "said of itself".into(),
        "not recorded: the run's preflight keeps no ping or entitlement answer".into(),
    );
    Ok(Manifest {
        format: 1,
        date,
        conform: Build::this_conform(),
        contract: Contract::this_conform(),
        profile,
        command,
        target,
        waivers,
        shards,
        statement,
        files: BTreeMap::new(),
    })
}

fn results_of(files: &bundle::Files) -> Result<Value, (u8, String)> {
    let bytes = files
        .get("results.json")
        .map(Vec::as_slice)
        .unwrap_or_default();
    serde_json::from_slice(bytes).map_err(|e| (ExitCodes::CONFIG, format!("results.json: {e}")))
}

/// go-tfe's verdicts beside the suite's, where `conform peer go-tfe` wrote them into the
/// reports folder (`go-tfe/`).
fn peer_results(reports: &Path, files: &mut bundle::Files, manifest: &mut Manifest) {
    let peer = reports.join("go-tfe");
    let Ok(bytes) = std::fs::read(peer.join("results.json")) else {
        return;
    };
    if let Ok(doc) = serde_json::from_slice::<Value>(&bytes) {
        let c = &doc["counts"];
        manifest.target.insert(
            "go-tfe peer".into(),
            format!(
                "{} pass, {} fail, {} skipped against {}",
                c["pass"],
                c["fail"],
                c["skipped"],
                doc["target"].as_str().unwrap_or("?")
            ),
        );
    }
    files.insert("peer/go-tfe/results.json".into(), bytes);
    if let Ok(summary) = std::fs::read(peer.join("summary.md")) {
        files.insert("peer/go-tfe/summary.md".into(), summary);
    }
}

/// The files a person reads: `certificate.md`, `badge.svg`, `badge.md`.
fn add_words(files: &mut bundle::Files, manifest: &Manifest) {
    let shown = |text: String| crate::target::visible(&text).into_owned().into_bytes();
    files.insert("certificate.md".into(), shown(badge::certificate(manifest)));
    files.insert("badge.svg".into(), badge::svg(manifest).into_bytes());
    files.insert("badge.md".into(), shown(badge::snippet(manifest)));
}

/// The waivers of `--waivers FILE`, each with its expiry.
fn waiver_entries(path: Option<&Path>) -> Result<Vec<WaiverEntry>, (u8, String)> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let waivers = crate::waivers::Waivers::load(path).map_err(|e| (ExitCodes::CONFIG, e.0))?;
    Ok(waivers
        .entries
        .iter()
        .map(|w| WaiverEntry {
            test: w.pattern.as_str().to_string(),
            reason: w.reason.clone(),
            link: w.link.clone(),
            expires: w.expires.to_string(),
            checks: w.checks.clone(),
        })
        .collect())
}

/// The command line as typed (each word quoted where a shell would need it), its tokens
/// replaced by `(redacted)`.
fn command_line(argv: &[OsString]) -> String {
    let words: Vec<String> = argv
        .iter()
        .map(|w| {
            let w = w.to_string_lossy();
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
            if plain {
                w.into_owned()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    crate::settings::scrub_arguments(&words.join(" "), argv)
}

/// `conform verify BUNDLE`: 0 when the bundle holds, 1 with the reasons, 2 when it cannot be
/// read.
pub fn verify_command(args: &VerifyArgs) -> ExitCode {
    match verify(&args.bundle) {
        Err(e) => {
            eprintln!("error: cannot read the bundle: {e}");
            ExitCode::from(ExitCodes::CONFIG)
        }
        Ok(v) if v.reasons.is_empty() => {
            println!("verified: {}", crate::target::visible(&v.statement));
            ExitCode::SUCCESS
        }
        Ok(v) => {
            println!("NOT verified ({} reason(s)):", v.reasons.len());
            for why in &v.reasons {
                println!("  - {}", crate::target::visible(why));
            }
            ExitCode::from(ExitCodes::FAILED)
        }
    }
}
