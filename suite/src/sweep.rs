//! `conform sweep`: deletes what runs left behind. From the ledger: every resource created and
//! not recorded as deleted, newest first (children before their parents), each removed as
//! teardown removes it ([`crate::removal`]: every delete form the catalog knows, and counted
//! only when shown gone). By prefix (`--older-than`, `--prefix`): organizations whose name
//! starts with the prefix, for runs whose ledger is lost. Each failure is reported and the
//! sweep goes on; the exit code is 1 when something could not be deleted.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::Method;
use serde_json::Value;
use url::Url;

use crate::catalog::{fill_params, path_for, Catalog, Variant};
use crate::cli::{RunArgs, SweepArgs};
use crate::clock::{parse_duration, parse_rfc3339};
use crate::exit::ExitCodes;
use crate::ledger::{self, Entry, Event, Ledger};
use crate::pages::{Paging, Walk};
use crate::removal::{Removed, Remover};
use crate::settings::{ConfigError, Settings};
use crate::target::{Auth, Request, Target, TargetConfig};

/// What a sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Deleted now.
    pub deleted: usize,
    /// Already gone (404/410).
    pub gone: usize,
    /// Could not be deleted, one line each.
    pub failed: Vec<String>,
}

/// Runs `conform sweep`; returns the exit code.
pub fn sweep(args: SweepArgs) -> ExitCode {
    match sweep_inner(&args) {
        Ok(tally) if tally.failed.is_empty() => ExitCode::from(ExitCodes::OK),
        Ok(_) => ExitCode::from(ExitCodes::FAILED),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(ExitCodes::CONFIG)
        }
    }
}

/// The run settings sweep shares with a run: target, tokens, TLS, timeout, config file.
fn settings(args: &SweepArgs) -> Result<Settings, ConfigError> {
    Settings::resolve(&RunArgs {
        connection: args.connection.clone(),
        ..RunArgs::default()
    })
}

fn sweep_inner(args: &SweepArgs) -> Result<Tally, ConfigError> {
    let older_than = args
        .older_than
        .as_deref()
        .map(|t| parse_duration(t).map_err(|e| ConfigError(format!("--older-than {e}"))))
        .transpose()?;
    let settings = settings(args)?;
    let root = settings.target.clone().ok_or_else(|| {
        ConfigError("sweep needs the target: --target URL (or CONFORM_TARGET)".into())
    })?;
    let target = Arc::new(
        Target::new(TargetConfig {
            rate: None,
            ..settings.target_config(&root)
        })
        .map_err(|e| ConfigError(e.to_string()))?,
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ConfigError(format!("cannot start the async runtime: {e}")))?;
    let mut tally = Tally::default();
    let catalog = Catalog::embedded().map_err(|e| ConfigError(e.to_string()))?;
    // one remover for the whole sweep: a show route proven in one pass counts in the next
    let mut remover = Remover::new(&target, &catalog);
    let have_ledger = args.ledger.exists();
    if have_ledger {
        runtime.block_on(sweep_ledger(args, &target, &mut remover, &mut tally))?;
    } else if older_than.is_none() && args.prefix.is_none() {
        println!(
            "nothing to sweep: no ledger at {} (give --older-than or --prefix to look for organizations by name)",
            args.ledger.display()
        );
    }
    if older_than.is_some() || args.prefix.is_some() {
        let prefix = args.prefix.clone().unwrap_or_else(|| "conform-".into());
        runtime.block_on(sweep_named(
            args,
            &target,
            &mut remover,
            (&prefix, older_than),
            &mut tally,
            &organizations(&catalog),
        ));
        // users need the administrator API
        if settings.admin_token.is_some() {
            runtime.block_on(sweep_named(
                args,
                &target,
                &mut remover,
                (&prefix, older_than),
                &mut tally,
                &users(),
            ));
        }
    }
    let verb = if args.dry_run {
        "would delete"
    } else {
        "deleted"
    };
    println!(
        "sweep: {} {verb}, {} already gone, {} could not be deleted",
        tally.deleted,
        tally.gone,
        tally.failed.len()
    );
    for line in &tally.failed {
        println!("  not deleted: {line}");
    }
    Ok(tally)
}

async fn sweep_ledger(
    args: &SweepArgs,
    target: &Target,
    remover: &mut Remover<'_>,
    tally: &mut Tally,
) -> Result<(), ConfigError> {
    let contents = ledger::read(&args.ledger)
        .map_err(|e| ConfigError(format!("cannot read {}: {e}", args.ledger.display())))?;
    if !contents.skipped.is_empty() {
        eprintln!(
            "warning: {}: skipped {} line(s) that are not whole entries (line {}); a run killed mid-write leaves one",
            args.ledger.display(),
            contents.skipped.len(),
            contents
                .skipped
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut outstanding = contents.outstanding();
    if let Some(prefix) = &args.prefix {
        outstanding.retain(|e| e.prefix.starts_with(prefix.as_str()));
    }
    println!(
        "{}: {} resource(s) created and not deleted",
        args.ledger.display(),
        outstanding.len()
    );
    let journal =
        if args.dry_run {
            None
        } else {
            Some(Ledger::open(&args.ledger, "").map_err(|e| {
                ConfigError(format!("cannot append to {}: {e}", args.ledger.display()))
            })?)
        };
    let mut unconfirmed = Vec::new();
    for entry in outstanding.into_iter().rev() {
        let what = format!("{} {} (run {})", entry.kind, entry.id, entry.prefix);
        let (Some(method), Some(url)) = (entry.method.as_deref(), entry.url.as_deref()) else {
            continue;
        };
        let (Ok(method), Ok(url)) = (Method::from_bytes(method.as_bytes()), Url::parse(url)) else {
            tally
                .failed
                .push(format!("{what}: the ledger's delete request is not valid"));
            continue;
        };
        if !target.same_origin(&url) {
            tally.failed.push(format!(
                "{what}: it lives on {}, not on the target {}; sweep with --target {0}",
                url.origin().ascii_serialization(),
                target.config.root
            ));
            continue;
        }
        if args.dry_run {
            println!("would delete {what}: {method} {url}");
            tally.deleted += 1;
            continue;
        }
        let show = entry
            .show
            .as_deref()
            .and_then(|s| Url::parse(s).ok())
            .or_else(|| {
                // a ledger written before shows were recorded: the catalog's show of the kind
                let root = target.config.root.path().trim_end_matches('/');
                let relative = url.path().strip_prefix(root)?;
                let path =
                    remover
                        .catalog()
                        .show_path_for(&entry.kind, method.as_str(), relative)?;
                Some(target.url(&path))
            })
            .filter(|s| target.same_origin(s))
            .map(|s| (s, entry.auth()));
        let removed = remover
            .remove(
                &entry.kind,
                &(method, url, entry.auth()),
                show.as_ref(),
                false,
            )
            .await;
        if matches!(removed, Removed::Unconfirmed(_)) {
            unconfirmed.push((what, entry, show, removed));
            continue;
        }
        settle(&what, removed, entry, journal.as_ref(), tally);
    }
    for (what, entry, show, removed) in unconfirmed {
        let removed = remover.settle(show.as_ref(), removed);
        settle(&what, removed, entry, journal.as_ref(), tally);
    }
    Ok(())
}

/// Counts one removal, and records in the ledger what is gone.
fn settle(what: &str, removed: Removed, entry: Entry, journal: Option<&Ledger>, tally: &mut Tally) {
    let gone = match removed {
        Removed::Deleted(by) => {
            println!("deleted {what}: {by}");
            tally.deleted += 1;
            true
        }
        Removed::Gone => {
            println!("already gone: {what}");
            tally.gone += 1;
            true
        }
        Removed::Left(why) | Removed::Unconfirmed(why) => {
            tally.failed.push(format!("{what}: {why}"));
            false
        }
    };
    if let (true, Some(journal)) = (gone, journal) {
        journal.append(&Entry {
            event: Event::Deleted,
            time: crate::clock::rfc3339(SystemTime::now()),
            ..entry
        });
    }
}

/// A collection swept by name: what the run's prefix names in it is the run's.
struct Named {
    /// The kind, for messages.
    kind: &'static str,
    /// The list, `{prefix}` filled in, without paging parameters.
    list: String,
    /// Where an item's name is.
    name: &'static str,
    /// The delete (and show) path, its `:param` filled with the id.
    item: String,
    /// The credential.
    auth: Auth,
    /// Whether the item can be shown after its delete (`item` is also its show).
    shown: bool,
}

/// Organizations named with the prefix, where the catalog says organizations live.
fn organizations(catalog: &Catalog) -> Named {
    let orgs = catalog.organizations();
    Named {
        kind: "organization",
        list: format!("{}?", path_for(&orgs.collection, Variant::ApiV2)),
        name: "/attributes/name",
        item: path_for(&orgs.item, Variant::ApiV2),
        auth: Auth::User,
        shown: true,
    }
}

/// User accounts whose email starts with the prefix (an invitation in flight at a kill makes
/// one the ledger never saw); administrator API.
fn users() -> Named {
    Named {
        kind: "user",
        list: path_for("/admin/users?q={prefix}&", Variant::ApiV2),
        name: "/attributes/email",
        item: path_for("/admin/users/:id", Variant::ApiV2),
        auth: Auth::Admin,
        shown: false,
    }
}

async fn sweep_named(
    args: &SweepArgs,
    target: &Target,
    remover: &mut Remover<'_>,
    (prefix, older_than): (&str, Option<Duration>),
    tally: &mut Tally,
    named: &Named,
) {
    let now = SystemTime::now();
    let mut found = Vec::new();
    let list = named
        .list
        .replace("{prefix}", &crate::catalog::encode_segment(prefix));
    let mut walk = Walk::new(100, 1000);
    while let Some(page) = walk.next_page() {
        let query = Paging::Tfe.query(page, walk.size());
        let url = target.url(&format!("{list}{query}"));
        let ex = target
            .send(Request::new(Method::GET, url, named.auth))
            .await;
        let doc = match (ex.is_success(), ex.json()) {
            (true, Ok(doc)) => doc,
            _ => {
                tally.failed.push(format!(
                    "{}s named {prefix}...: listing them failed ({})",
                    named.kind,
                    ex.status()
                        .map(|s| format!("status {s}"))
                        .or_else(|| ex.response.as_ref().err().map(ToString::to_string))
                        .unwrap_or_default()
                ));
                return;
            }
        };
        for item in &walk.read(&doc) {
            let name = item
                .pointer(named.name)
                .or_else(|| item.get("id"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let id = item.get("id").and_then(Value::as_str).unwrap_or(name);
            if name.starts_with(prefix) {
                let created = item
                    .pointer("/attributes/created-at")
                    .and_then(Value::as_str)
                    .and_then(parse_rfc3339);
                found.push((name.to_string(), id.to_string(), created));
            }
        }
    }
    for (name, id, created) in found {
        let what = format!("{} {name}", named.kind);
        if let Some(age) = older_than {
            match created.map(|c| now.duration_since(c).unwrap_or_default()) {
                Some(actual) if actual >= age => {}
                Some(_) => continue,
                None => {
                    println!("left alone: {what} (no created-at, so its age is unknown)");
                    continue;
                }
            }
        }
        if args.dry_run {
            println!("would delete {what}");
            tally.deleted += 1;
            continue;
        }
        let url = target.url(&fill_params(&named.item, &id));
        // listed a moment ago: a 404 to its delete is a missing route, not "gone"
        let show = (url.clone(), named.auth);
        let show = named.shown.then_some(&show);
        let removed = remover
            .remove(named.kind, &(Method::DELETE, url, named.auth), show, false)
            .await;
        match remover.settle(show, removed) {
            Removed::Deleted(by) => {
                println!("deleted {what}: {by}");
                tally.deleted += 1;
            }
            Removed::Gone => {
                println!("already gone: {what}");
                tally.gone += 1;
            }
            Removed::Left(why) | Removed::Unconfirmed(why) => {
                tally.failed.push(format!("{what}: {why}"));
            }
        }
    }
}
