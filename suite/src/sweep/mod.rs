//! `conform sweep`: deletes what runs left behind. From the ledger: every resource created and
//! not recorded as deleted, newest first (children before their parents). Each is shown first,
//! in a dry run and a sweep alike: what its show no longer finds (on a route seen answering,
//! or inside something recorded gone or about to be deleted) is already gone; the rest is
//! removed as teardown removes it ([`crate::removal`]: every delete form the catalog knows,
//! counted only when shown gone), and what could not be deleted itself but lived in
//! something the sweep deleted, and is no longer shown, went along. So `--dry-run` lists what
//! the sweep will do. By prefix (`--older-than`, `--prefix`): organizations whose name
//! starts with the prefix, for runs whose ledger is lost. Each failure is reported and the
//! sweep goes on; the exit code is 1 when something could not be deleted.

use std::collections::HashSet;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

use reqwest::Method;
use url::Url;

use crate::catalog::Catalog;
use crate::cli::{RunArgs, SweepArgs};
use crate::clock::parse_duration;
use crate::exit::ExitCodes;
use crate::ledger::{self, Entry, Event, Ledger};
use crate::removal::{Lineage, Reads, Recheck, Removed, Remover};
use crate::settings::{ConfigError, Settings};
use named::{organizations, sweep_named, users};

mod named;
use crate::target::{Auth, Target, TargetConfig};

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
        consistency_window: args.consistency_window.clone(),
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
    target.set_consistency_window(settings.consistency_window);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ConfigError(format!("cannot start the async runtime: {e}")))?;
    let mut tally = Tally::default();
    let catalog = Catalog::embedded().map_err(|e| ConfigError(e.to_string()))?;
    // one remover for the whole sweep: a show route proven in one pass counts in the next
    let mut remover = Remover::new(&target, &catalog);
    let have_ledger = args.ledger.exists();
    // a ledger named on the command line that is not there is a mistake, not "nothing to do"
    // (unless the sweep looks for organizations by name, the way to sweep a lost ledger)
    let by_name = older_than.is_some() || args.prefix.is_some();
    if !have_ledger && !by_name && args.ledger != std::path::Path::new(crate::cli::DEFAULT_LEDGER) {
        return Err(ConfigError(format!(
            "--ledger {}: no such file",
            args.ledger.display()
        )));
    }
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
        // users need the administrator API
        let mut named = vec![organizations(&catalog)];
        named.extend(settings.admin_token.is_some().then(users));
        for named in &named {
            let prefix = (prefix.as_str(), older_than);
            let sweep = sweep_named(args, &target, &mut remover, prefix, &mut tally, named);
            runtime.block_on(sweep);
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
    let (outstanding, mut lineage, answering, kept) = outstanding(args)?;
    remover.trust(answering);
    let journal =
        if args.dry_run {
            None
        } else {
            Some(Ledger::open(&args.ledger, "").map_err(|e| {
                ConfigError(format!("cannot append to {}: {e}", args.ledger.display()))
            })?)
        };
    let sweeps = sweeps_of(outstanding, target, remover.catalog(), &mut lineage, tally);
    let seen = look_first(&sweeps, remover).await;
    let (going, absent) = prospects(&sweeps, &seen, &lineage, remover);
    let mut piles = Piles::default();
    let mut books = Books {
        journal: journal.as_ref(),
        tally,
        lineage,
        swept: Lineage::default(),
    };
    let mut deferred = Vec::new();
    for (sweep, seen) in sweeps.into_iter().zip(seen) {
        let removed = if gone_already(&sweep, seen, (&going, &absent)) {
            Removed::Gone
        } else if args.dry_run {
            let kept = kept.contains(&(sweep.entry.kind.clone(), sweep.entry.id.clone()));
            // no read sees it, but it lives in something the sweep deletes: it goes along
            let along = seen
                .is_none()
                .then(|| going.gone_parent(&sweep.entry.parents).cloned())
                .flatten();
            would_delete(&sweep, (seen, along), kept, books.tally);
            continue;
        } else {
            let parent_gone = books.lineage.gone_parent(&sweep.entry.parents).is_some();
            // once a wait was in vain (deletes that do nothing), the rest are read again
            // together, within one window, after the pass
            let defer = remover.waiting_is_in_vain();
            let (kind, reads) = (&sweep.entry.kind, sweep.reads());
            match remover
                .remove_in_pass(kind, &sweep.delete, reads, parent_gone, defer)
                .await
            {
                (_, Some(recheck)) => {
                    deferred.push((sweep, seen, recheck));
                    continue;
                }
                (removed, None) => removed,
            }
        };
        piles.file(&mut books, sweep, seen, removed);
    }
    let batch: Vec<Recheck> = deferred.iter().map(|(_, _, r)| r.clone()).collect();
    let judged = remover.recheck(&batch, RECHECK_WIDTH).await;
    for ((sweep, seen, _), removed) in deferred.into_iter().zip(judged) {
        piles.file(&mut books, sweep, seen, removed);
    }
    let Piles {
        unconfirmed,
        mut leftovers,
    } = piles;
    for (sweep, seen, removed) in unconfirmed {
        match remover.settle(sweep.show.as_ref(), removed) {
            Removed::Left(why) => leftovers.push((sweep, why)),
            removed => {
                let removed = as_seen(removed, seen);
                books.settle(&sweep, removed);
            }
        }
    }
    // what could not be deleted by itself, but lived in something this sweep deleted (and
    // a read no longer shows it), or in something found gone already
    for (sweep, why) in leftovers {
        let removed = match books.swept.gone_parent(&sweep.entry.parents).cloned() {
            Some((kind, id)) if remover.went_along(sweep.reads()).await => {
                Removed::Deleted(format!("went with its {kind} {id}"))
            }
            Some(_) => Removed::Left(why),
            None if books.lineage.gone_parent(&sweep.entry.parents).is_some() => Removed::Gone,
            None => Removed::Left(why),
        };
        books.settle(&sweep, removed);
    }
    Ok(())
}

/// The sweeps of the outstanding entries, newest first, each noted in the lineage; an entry
/// that cannot be swept is a failed line.
fn sweeps_of(
    outstanding: Vec<Entry>,
    target: &Target,
    catalog: &Catalog,
    lineage: &mut Lineage,
    tally: &mut Tally,
) -> Vec<Sweep> {
    let mut sweeps = Vec::new();
    for entry in outstanding.into_iter().rev() {
        match Sweep::of(entry, target, catalog) {
            Ok(Some(sweep)) => {
                lineage.note(&sweep.entry.kind, &sweep.entry.id, &sweep.entry.parents);
                sweeps.push(sweep);
            }
            Ok(None) => {}
            Err(why) => tally.failed.push(why),
        }
    }
    sweeps
}

/// From what the first look saw: what the sweep will delete (`going`: what lives in it goes
/// along), and what a read proved not there (`absent`: a show route seen answering 404, a
/// list without it, and what lives in those), in a dry run and a sweep alike.
fn prospects(
    sweeps: &[Sweep],
    seen: &[Option<bool>],
    lineage: &Lineage,
    remover: &Remover<'_>,
) -> (Lineage, Lineage) {
    let (mut going, mut absent) = (lineage.clone(), lineage.clone());
    for (sweep, seen) in sweeps.iter().zip(seen) {
        let (kind, id) = (&sweep.entry.kind, &sweep.entry.id);
        let proved = sweep.list.is_some()
            || sweep
                .show
                .as_ref()
                .is_some_and(|show| remover.route_answers(show));
        match seen {
            Some(false) if proved => absent.mark_gone(kind, id),
            Some(false) => {}
            _ => going.mark_gone(kind, id),
        }
    }
    (going, absent)
}

/// The ledger's entries created and not deleted (under `--prefix`), said on the console,
/// what the ledger says is gone, and the routes the runs saw answer (a 404 there means "not
/// there"); a warning for lines that are not whole entries.
#[allow(clippy::type_complexity)]
fn outstanding(
    args: &SweepArgs,
) -> Result<(Vec<Entry>, Lineage, Vec<String>, HashSet<(String, String)>), ConfigError> {
    let contents = ledger::read(&args.ledger)
        .map_err(|e| ConfigError(format!("cannot read {}: {e}", args.ledger.display())))?;
    if contents.not_a_ledger() {
        return Err(ConfigError(format!(
            "{} is not a ledger: none of its {} line(s) is an entry a run writes; name a run's \
             ledger (REPORTS/ledger.jsonl, or the run's --ledger FILE) with --ledger",
            args.ledger.display(),
            contents.skipped.len()
        )));
    }
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
    let mut lineage = Lineage::default();
    for (kind, id) in contents.gone() {
        lineage.mark_gone(&kind, &id);
    }
    let kept = contents
        .entries
        .iter()
        .filter(|e| e.event == Event::Kept)
        .map(|e| (e.kind.clone(), e.id.clone()))
        .collect();
    Ok((outstanding, lineage, contents.answering_routes(), kept))
}

/// A dry run's line for one entry: what the sweep would delete (what no read sees goes with
/// the thing it lives in that the sweep deletes, `along`), or why it would not be deleted, as
/// the sweep would class it: no read can see it, or an earlier removal's delete left it
/// (`kept` in the ledger), or its show's 404 proves nothing.
fn would_delete(
    sweep: &Sweep,
    (seen, along): (Option<bool>, Option<(String, String)>),
    kept: bool,
    tally: &mut Tally,
) {
    if let Some((kind, id)) = along {
        // as the sweep says it: what no read sees goes with what it lives in
        println!("would delete {}: goes with its {kind} {id}", sweep.what);
        tally.deleted += 1;
    } else if seen.is_none() {
        let by = match &sweep.list {
            Some((list, _)) => format!("its list GET {} did not answer a list", list.path()),
            None => format!("no read shows a {}", sweep.entry.kind),
        };
        tally
            .failed
            .push(format!("{}: {by}: not confirmed", sweep.what));
    } else if kept {
        tally.failed.push(format!(
            "{}: an earlier removal's delete left it (the ledger says kept), and it is still there",
            sweep.what
        ));
    } else if seen == Some(true) {
        println!(
            "would delete {}: {} {}",
            sweep.what, sweep.delete.0, sweep.delete.1
        );
        tally.deleted += 1;
    } else {
        tally.failed.push(format!(
            "{}: GET {} answers 404, and that route never answered for a {}: gone, or no such route here",
            sweep.what,
            sweep.show.as_ref().map(|(url, _)| url.path()).unwrap_or_default(),
            sweep.entry.kind
        ));
    }
}

/// Shows each entry before anything is deleted, in a dry run and a sweep alike: `Some(true)`
/// for what its show finds, `Some(false)` for what its show no longer finds, `None` for what
/// has no show to ask (it is taken as there to delete). So a dry run and a sweep tell them
/// apart by the same evidence.
async fn look_first(sweeps: &[Sweep], remover: &mut Remover<'_>) -> Vec<Option<bool>> {
    let mut seen = Vec::new();
    for sweep in sweeps {
        let found = match (&sweep.show, &sweep.list) {
            (Some(show), _) => Some(!matches!(remover.look(show).await, Some(404 | 410))),
            (None, Some(list)) => remover.listed(list, &sweep.entry.id).await,
            (None, None) => None,
        };
        seen.push(found);
    }
    seen
}

/// A removal as the sweep saw it: what its show found when the sweep looked and is gone now,
/// not by its own delete, went with what the sweep deleted before it (a module with its last
/// version): the sweep deleted it. What has no show is as gone as its delete says (already
/// gone when it was asked), never claimed deleted: nothing showed it there.
fn as_seen(removed: Removed, seen: Option<bool>) -> Removed {
    match removed {
        Removed::Gone if seen == Some(true) => {
            Removed::Deleted("no longer shown: it went with what this sweep deleted".into())
        }
        removed => removed,
    }
}

/// Not there by a read that proves it (a show route seen answering, a list that answered
/// without it), or inside something that is gone (`absent`) or going (`going`).
fn gone_already(sweep: &Sweep, seen: Option<bool>, (going, absent): (&Lineage, &Lineage)) -> bool {
    let own = [(sweep.entry.kind.clone(), sweep.entry.id.clone())];
    match seen {
        Some(true) => false,
        Some(false) => {
            going.gone_parent(&sweep.entry.parents).is_some() || absent.gone_parent(&own).is_some()
        }
        // no read sees it, but what it lives in was read gone
        None => absent.gone_parent(&sweep.entry.parents).is_some(),
    }
}

/// How many removals read again at once after the pass.
const RECHECK_WIDTH: usize = 8;

/// The removals not settled at once: unconfirmed (their show route never seen answering) and
/// left behind (each with why).
#[derive(Default)]
struct Piles {
    unconfirmed: Vec<(Sweep, Option<bool>, Removed)>,
    leftovers: Vec<(Sweep, String)>,
}

impl Piles {
    /// Settles a removal in the books, or keeps it for after the pass.
    fn file(&mut self, books: &mut Books<'_>, sweep: Sweep, seen: Option<bool>, removed: Removed) {
        match removed {
            Removed::Unconfirmed(_) => self.unconfirmed.push((sweep, seen, removed)),
            Removed::Left(why) | Removed::Unseen(why) => self.leftovers.push((sweep, why)),
            removed => books.settle(&sweep, as_seen(removed, seen)),
        }
    }
}

/// One outstanding ledger entry, ready to be swept: its delete and its show on the target.
struct Sweep {
    /// The entry, for the `deleted` line.
    entry: Entry,
    /// What it is, for messages: kind, id and run.
    what: String,
    /// The request that deletes it.
    delete: (Method, Url, Auth),
    /// The request that shows it, where one is known.
    show: Option<(Url, Auth)>,
    /// The list that holds it, for a kind without a show.
    list: Option<(Url, Auth)>,
}

impl Sweep {
    /// The sweep of an entry; `None` when it has no delete (it goes with its parent), an
    /// error line when its requests are not valid or not the target's.
    fn of(entry: Entry, target: &Target, catalog: &Catalog) -> Result<Option<Self>, String> {
        let what = format!("{} {} (run {})", entry.kind, entry.id, entry.prefix);
        let (Some(method), Some(url)) = (entry.method.as_deref(), entry.url.as_deref()) else {
            return Ok(None);
        };
        let (Ok(method), Ok(url)) = (Method::from_bytes(method.as_bytes()), Url::parse(url)) else {
            return Err(format!("{what}: the ledger's delete request is not valid"));
        };
        if !target.same_origin(&url) {
            return Err(format!(
                "{what}: it lives on {}, not on the target {}; sweep with --target {0}",
                url.origin().ascii_serialization(),
                target.config.root
            ));
        }
        let show = entry
            .show
            .as_deref()
            .and_then(|s| Url::parse(s).ok())
            .or_else(|| {
                // a ledger written before shows were recorded: the catalog's show of the kind
                let root = target.config.root.path().trim_end_matches('/');
                let relative = url.path().strip_prefix(root)?;
                let path = catalog.show_path_for(&entry.kind, method.as_str(), relative)?;
                Some(target.url(&path))
            })
            .filter(|s| target.same_origin(s))
            .map(|s| (s, entry.auth()));
        let auth = entry.auth();
        let list = entry
            .list
            .as_deref()
            .and_then(|s| Url::parse(s).ok())
            .filter(|l| show.is_none() && target.same_origin(l))
            .map(|l| (l, auth));
        Ok(Some(Self {
            entry,
            what,
            delete: (method, url, auth),
            show,
            list,
        }))
    }

    /// What tells whether it is there: its show, else its list.
    fn reads(&self) -> Reads<'_> {
        Reads::of(self.show.as_ref(), self.list.as_ref(), &self.entry.id)
    }
}

/// Counts one removal of the ledger's, records in the ledger what is gone, and notes it
/// gone in the lineage (what lives in it went along).
/// What a sweep keeps while it goes: the ledger it appends to, its counts, what it knows
/// gone, and what its own deletes removed (a read confirmed: what lived there went along).
struct Books<'a> {
    journal: Option<&'a Ledger>,
    tally: &'a mut Tally,
    lineage: Lineage,
    swept: Lineage,
}

impl Books<'_> {
    /// Prints, counts and records one removal.
    fn settle(&mut self, sweep: &Sweep, removed: Removed) {
        let (kind, id, parents) = (&sweep.entry.kind, &sweep.entry.id, &sweep.entry.parents);
        self.lineage.note(kind, id, parents);
        self.swept.note(kind, id, parents);
        if matches!(removed, Removed::Deleted(_)) {
            self.swept.mark_gone(kind, id);
        }
        if report(&sweep.what, removed, self.tally) {
            self.lineage.mark_gone(kind, id);
            if let Some(journal) = self.journal {
                journal.append(&Entry {
                    event: Event::Deleted,
                    time: crate::clock::rfc3339(SystemTime::now()),
                    ..sweep.entry.clone()
                });
            }
        }
    }
}

/// Prints and counts one removal; true when the resource is gone.
fn report(what: &str, removed: Removed, tally: &mut Tally) -> bool {
    match removed {
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
        Removed::Left(why) | Removed::Unconfirmed(why) | Removed::Unseen(why) => {
            tally.failed.push(format!("{what}: {why}"));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_show_found_is_claimed_deleted_when_its_delete_finds_it_gone() {
        let went = as_seen(Removed::Gone, Some(true));
        assert!(matches!(went, Removed::Deleted(_)), "{went:?}");
        // a kind without a show: nothing showed it there, so it is already gone, not deleted
        assert_eq!(as_seen(Removed::Gone, None), Removed::Gone);
        assert_eq!(as_seen(Removed::Gone, Some(false)), Removed::Gone);
        let deleted = Removed::Deleted("204".into());
        assert_eq!(as_seen(deleted.clone(), None), deleted);
    }
}
