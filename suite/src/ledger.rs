//! The crash-safe ledger: one JSON line per resource the run created, appended and synced to
//! disk as soon as the create answers, one `deleted` line when teardown (or `conform sweep`)
//! removed it and a read showed it gone, and one `kept` line when teardown left it. A killed run leaves `created` lines without `deleted` lines; `conform
//! sweep` deletes those. The file holds no credential: only kinds, ids, URLs and times.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::clock::rfc3339;
use crate::target::Auth;

/// One resource made by the run, for teardown.
#[derive(Debug, Clone)]
pub struct Made {
    /// Its kind.
    pub kind: String,
    /// Its id.
    pub id: String,
    /// The request that deletes it.
    pub delete: Option<(reqwest::Method, url::Url, Auth)>,
    /// The request that shows it, to tell whether it is gone.
    pub show: Option<(url::Url, Auth)>,
    /// For a kind without a show, the list that holds it (its first page, with the filters
    /// that narrow it): where it is looked for after its delete.
    pub list: Option<(url::Url, Auth)>,
    /// The resources it lives in (its kind's `parents`, as made): it goes with them, and
    /// teardown removes it before them.
    pub parents: Vec<(String, String)>,
    /// Resources teardown removes before it besides what lives in it: for one of its kind's
    /// `leaves`, the resource whose create brought it into being.
    pub after: Vec<(String, String)>,
}

/// What a line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// The run created the resource.
    Created,
    /// The resource is gone (deleted, or found already gone), as a read showed.
    Deleted,
    /// A removal left it: a read still showed it (its delete answered 2xx or not), or no read
    /// could tell. It is still outstanding.
    Kept,
    /// A route the run saw answer 2xx (`kind` is `route`, `id` the catalog test that judges
    /// it, a show or a delete): a sweep takes its 404 as "not there" even when nothing it
    /// shows is left.
    RouteAnswers,
}

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Created or deleted.
    pub event: Event,
    /// The prefix of the run that made it.
    pub prefix: String,
    /// Resource kind (`workspace`, ...).
    pub kind: String,
    /// Its id.
    pub id: String,
    /// The method that deletes it; none when it goes with its parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The URL that deletes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The credential the delete needs: `user`, `admin` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// The URL that shows it, to tell whether it is gone (with the delete's credential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show: Option<String>,
    /// For a kind without a show, the list that holds it (with the delete's credential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<String>,
    /// What it lives in, `[kind, id]` each (its kind's `parents`, as made): when the sweep
    /// deleted one of them and its own show no longer finds it, it went along.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<(String, String)>,
    /// When (RFC 3339, UTC).
    pub time: String,
}

impl Entry {
    /// What identifies the resource across lines.
    pub fn key(&self) -> (String, String, String, Option<String>) {
        (
            self.prefix.clone(),
            self.kind.clone(),
            self.id.clone(),
            self.url.clone(),
        )
    }

    /// The credential named by `auth`.
    pub fn auth(&self) -> Auth {
        match self.auth.as_deref() {
            Some("admin") => Auth::Admin,
            Some("none") => Auth::None,
            _ => Auth::User,
        }
    }
}

fn entry(event: Event, prefix: &str, made: &Made) -> Entry {
    let (method, url, auth) = match &made.delete {
        Some((method, url, auth)) => {
            let mut url = url.clone();
            let _ = url.set_username("");
            let _ = url.set_password(None);
            let auth = match auth {
                Auth::User => "user",
                Auth::Admin => "admin",
                Auth::None => "none",
            };
            (
                Some(method.to_string()),
                Some(url.to_string()),
                Some(auth.to_string()),
            )
        }
        None => (None, None, None),
    };
    let bare = |(url, _): &(url::Url, Auth)| {
        let mut url = url.clone();
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.to_string()
    };
    let (show, list) = (made.show.as_ref().map(bare), made.list.as_ref().map(bare));
    Entry {
        event,
        prefix: prefix.to_string(),
        kind: made.kind.clone(),
        id: made.id.clone(),
        method,
        url,
        auth,
        show,
        list,
        parents: made.parents.clone(),
        time: rfc3339(SystemTime::now()),
    }
}

/// An open ledger file (append only). A line is on disk before [`Ledger::append`] returns,
/// by group commit: one `fsync` covers every line written while the previous one ran, so
/// that concurrent tests share syncs instead of queueing one each.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    prefix: String,
    file: Mutex<File>,
    /// A second handle on the file, for syncing without holding the writers' lock.
    syncer: File,
    commits: Mutex<Commits>,
    committed: Condvar,
    warned: std::sync::atomic::AtomicBool,
}

/// Where the group commit stands: lines are numbered as they are written.
#[derive(Debug, Default)]
struct Commits {
    /// Lines written to the file so far.
    written: u64,
    /// Lines known to be on disk.
    synced: u64,
    /// A sync is under way.
    syncing: bool,
    /// The last sync failed.
    failed: Option<String>,
}

impl Ledger {
    /// Opens (creating it and its folder) the ledger at `path` for a run with `prefix`.
    pub fn open(path: &Path, prefix: &str) -> io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let syncer = file.try_clone()?;
        Ok(Self {
            path: path.to_path_buf(),
            prefix: prefix.to_string(),
            file: Mutex::new(file),
            syncer,
            commits: Mutex::new(Commits::default()),
            committed: Condvar::new(),
            warned: Default::default(),
        })
    }

    /// Where the ledger is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a resource the run made; returns once the line is on disk, or why it is not.
    pub fn created(&self, made: &Made) -> io::Result<()> {
        let entry = entry(Event::Created, &self.prefix, made);
        self.write(std::slice::from_ref(&entry))
            .and_then(|line| self.commit(line))
            .inspect_err(|e| self.warn(e))
    }

    /// Waits for the write under way, takes every line to disk and keeps every other writer
    /// out while the guard lives: the file is whole when the process ends holding it.
    pub fn hold(&self) -> Option<std::sync::MutexGuard<'_, File>> {
        let file = self.file.lock().ok()?;
        let _ = file.sync_data();
        Some(file)
    }

    /// Records that a resource is gone. The line is written, not waited for: the next
    /// create's sync (or [`Ledger::sync`] at the end) takes it to disk, and a crash that
    /// loses it only makes `conform sweep` look at the resource again.
    pub fn deleted(&self, made: &Made) {
        self.all_deleted(std::slice::from_ref(made));
    }

    /// Records that several resources are gone, in one write: a kill cannot keep some of
    /// the lines and lose others (an invited user's membership and account go together).
    pub fn all_deleted(&self, made: &[Made]) {
        let entries: Vec<Entry> = made
            .iter()
            .map(|m| entry(Event::Deleted, &self.prefix, m))
            .collect();
        self.append_all(&entries, false);
    }

    /// Records that removals left these resources (a read still showed them, or none could
    /// tell): written, not waited for, as a delete is; they stay outstanding for a sweep.
    pub fn all_kept(&self, made: &[Made]) {
        let entries: Vec<Entry> = made
            .iter()
            .map(|m| entry(Event::Kept, &self.prefix, m))
            .collect();
        self.append_all(&entries, false);
    }

    /// Records that a route answered 2xx in the run (`route`: the catalog test that
    /// judges it). Written, not waited for, as a delete is.
    pub fn route_answers(&self, route: &str) {
        let entry = Entry {
            event: Event::RouteAnswers,
            prefix: self.prefix.clone(),
            kind: "route".into(),
            id: route.to_string(),
            method: None,
            url: None,
            auth: None,
            show: None,
            list: None,
            parents: Vec::new(),
            time: rfc3339(SystemTime::now()),
        };
        self.append_all(std::slice::from_ref(&entry), false);
    }

    /// Appends a line as it is (sweep marks entries of other runs with their own prefix);
    /// returns once it is on disk.
    pub fn append(&self, entry: &Entry) {
        self.append_all(std::slice::from_ref(entry), true);
    }

    /// Takes every line written so far to disk.
    pub fn sync(&self) {
        let written = self.lock_commits().map(|c| c.written).unwrap_or(0);
        if let Err(e) = self.commit(written) {
            self.warn(&e);
        }
    }

    /// Appends lines in one write; with `wait`, returns once they are on disk.
    fn append_all(&self, entries: &[Entry], wait: bool) {
        if entries.is_empty() {
            return;
        }
        let result = self
            .write(entries)
            .and_then(|line| if wait { self.commit(line) } else { Ok(()) });
        if let Err(e) = result {
            self.warn(&e);
        }
    }

    fn warn(&self, e: &io::Error) {
        if !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!(
                "warning: cannot write the ledger {}: {e}",
                self.path.display()
            );
        }
    }

    /// Writes lines (whole, in one write under the writers' lock); answers the number of
    /// the last.
    fn write(&self, entries: &[Entry]) -> io::Result<u64> {
        let mut text = String::new();
        for entry in entries {
            text.push_str(&serde_json::to_string(entry).map_err(io::Error::other)?);
            text.push('\n');
        }
        let mut file = self
            .file
            .lock()
            .map_err(|_| io::Error::other("ledger lock poisoned"))?;
        file.write_all(text.as_bytes())?;
        let mut commits = self.lock_commits()?;
        commits.written += entries.len() as u64;
        Ok(commits.written)
    }

    /// Waits until line `line` is on disk: syncs when no sync is under way (covering every
    /// line written so far), else waits for the one that is and looks again.
    fn commit(&self, line: u64) -> io::Result<()> {
        let mut commits = self.lock_commits()?;
        loop {
            if commits.synced >= line {
                return Ok(());
            }
            if let Some(e) = commits.failed.take() {
                return Err(io::Error::other(e));
            }
            if commits.syncing {
                commits = self
                    .committed
                    .wait(commits)
                    .map_err(|_| io::Error::other("ledger lock poisoned"))?;
                continue;
            }
            commits.syncing = true;
            let covers = commits.written;
            drop(commits);
            let synced = self.syncer.sync_data();
            commits = self.lock_commits()?;
            commits.syncing = false;
            match synced {
                Ok(()) => commits.synced = commits.synced.max(covers),
                Err(e) => commits.failed = Some(e.to_string()),
            }
            self.committed.notify_all();
        }
    }

    fn lock_commits(&self) -> io::Result<std::sync::MutexGuard<'_, Commits>> {
        self.commits
            .lock()
            .map_err(|_| io::Error::other("ledger lock poisoned"))
    }
}

/// A ledger as read back: its whole entries, and what was skipped.
#[derive(Debug, Default)]
pub struct Contents {
    /// Every line that parsed, in file order.
    pub entries: Vec<Entry>,
    /// Lines that did not parse (a half-written last line, or damage), with their numbers.
    pub skipped: Vec<usize>,
    /// How many of the skipped lines do not even start as an entry does (`{`): no run wrote
    /// them.
    pub foreign: usize,
}

impl Contents {
    /// True when the file is no ledger at all: not one whole entry, and what is there is
    /// not one torn entry (a run killed while writing its first) but lines no run writes.
    pub fn not_a_ledger(&self) -> bool {
        self.entries.is_empty() && (self.foreign > 0 || self.skipped.len() > 1)
    }

    /// Entries created but not (yet) recorded as deleted, that have a delete request,
    /// oldest first.
    pub fn outstanding(&self) -> Vec<Entry> {
        let gone: HashSet<_> = self
            .entries
            .iter()
            .filter(|e| e.event == Event::Deleted)
            .map(Entry::key)
            .collect();
        let mut seen = HashSet::new();
        self.entries
            .iter()
            .filter(|e| e.event == Event::Created && e.url.is_some())
            .filter(|e| !gone.contains(&e.key()))
            .filter(|e| seen.insert(e.key()))
            .cloned()
            .collect()
    }

    /// The routes the runs saw answer 2xx (the catalog tests that judge them).
    pub fn answering_routes(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.event == Event::RouteAnswers)
            .map(|e| e.id.clone())
            .collect()
    }

    /// The resources recorded as gone, `(kind, id)` each: what lives in them went along.
    pub fn gone(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .filter(|e| e.event == Event::Deleted)
            .map(|e| (e.kind.clone(), e.id.clone()))
            .collect()
    }
}

/// Reads a ledger; lines that are not whole JSON entries are skipped and counted.
pub fn read(path: &Path) -> io::Result<Contents> {
    let bytes = std::fs::read(path)?;
    Ok(parse(&bytes))
}

/// Parses ledger text (see [`read`]).
pub fn parse(bytes: &[u8]) -> Contents {
    let mut contents = Contents::default();
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Entry>(line) {
            Ok(e) => contents.entries.push(e),
            Err(_) => {
                contents.skipped.push(n + 1);
                if line.trim_ascii_start().first() != Some(&b'{') {
                    contents.foreign += 1;
                }
            }
        }
    }
    contents
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::Method;

    fn made(kind: &str, id: &str) -> Made {
        Made {
            kind: kind.into(),
            id: id.into(),
            delete: Some((
                Method::DELETE,
                url::Url::parse(&format!("http://user:pw@h:1/api/v2/{kind}s/{id}")).unwrap(),
                Auth::User,
            )),
            show: None,
            list: None,
            parents: Vec::new(),
            after: Vec::new(),
        }
    }

    #[test]
    fn concurrent_appends_are_all_on_disk_in_whole_lines() {
        let dir = std::env::temp_dir().join(format!("conform-ledger-gc-{}", std::process::id()));
        let path = dir.join("ledger.jsonl");
        let _ = std::fs::remove_file(&path);
        let ledger = std::sync::Arc::new(Ledger::open(&path, "conform-gc").unwrap());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let ledger = ledger.clone();
                std::thread::spawn(move || {
                    for i in 0..50 {
                        ledger
                            .created(&made("workspace", &format!("ws-{t}-{i}")))
                            .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let contents = read(&path).unwrap();
        assert_eq!(contents.entries.len(), 400);
        assert!(contents.skipped.is_empty());
        let commits = ledger.commits.lock().unwrap();
        assert_eq!(commits.synced, 400);
        assert!(!commits.syncing);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_half_written_ledger_reads_to_its_last_whole_entry() {
        let dir = std::env::temp_dir().join(format!("conform-ledger-{}", std::process::id()));
        let path = dir.join("ledger.jsonl");
        let _ = std::fs::remove_file(&path);
        let ledger = Ledger::open(&path, "conform-t1").unwrap();
        ledger
            .created(&made("organization", "conform-t1-0000"))
            .unwrap();
        ledger.created(&made("workspace", "ws-1")).unwrap();
        ledger.created(&made("workspace", "ws-2")).unwrap();
        ledger.deleted(&made("workspace", "ws-1"));
        ledger
            .created(&Made {
                kind: "run".into(),
                id: "run-1".into(),
                delete: None,
                show: None,
                list: None,
                parents: Vec::new(),
                after: Vec::new(),
            })
            .unwrap();
        let mut text = std::fs::read(&path).unwrap();
        assert!(!String::from_utf8_lossy(&text).contains("pw"));
        // a damaged line in the middle and a line cut by a kill at the end
        text.extend_from_slice(b"garbage\n{\"event\":\"created\",\"prefix\":\"conform-t1\",\"ki");
        std::fs::write(&path, &text).unwrap();
        let contents = read(&path).unwrap();
        assert_eq!(contents.entries.len(), 5);
        assert_eq!(contents.skipped, vec![6, 7]);
        let ids: Vec<String> = contents.outstanding().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, vec!["conform-t1-0000", "ws-2"]);
        assert!(
            !contents.not_a_ledger(),
            "damage in a ledger is still a ledger"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn garbage_is_no_ledger_and_one_torn_first_entry_is_one() {
        assert!(parse(b"hello world\nthis is not json\n").not_a_ledger());
        assert!(parse(b"PK\x03\x04 a zip").not_a_ledger());
        assert!(parse(b"{\"a\": 1}\n{\"b\": 2}\n").not_a_ledger());
        assert!(!parse(b"{\"event\":\"created\",\"prefix\":\"conform-t1\",\"ki").not_a_ledger());
        assert!(!parse(b"").not_a_ledger(), "an empty ledger is a ledger");
    }
}
