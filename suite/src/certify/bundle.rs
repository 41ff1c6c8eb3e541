//! The bundle: a folder of files and `manifest.json`, which lists each file with its SHA-256
//! and states the rest (the contract, the build, the profile, the waivers, the command line,
//! the target, the date and the statement); `FOLDER.tar` holds the same files.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::contract::{sha256_hex, Build, Contract};
use super::statement::{Statement, WaiverEntry};

/// The manifest's own name in the bundle.
pub const MANIFEST: &str = "manifest.json";

/// The largest file a bundle read takes (a tar is read whole into memory).
const LARGEST_FILE: u64 = 256 * 1024 * 1024;

/// `manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// The manifest's format.
    pub format: u32,
    /// When the bundle was made (RFC 3339, UTC); waivers are judged on its day.
    pub date: String,
    /// The conform that made it.
    pub conform: Build,
    /// What it judged against.
    pub contract: Contract,
    /// The profile of the run.
    pub profile: String,
    /// The command line, its secrets replaced by `(redacted)`.
    pub command: String,
    /// What the run recorded of the target (its configuration lines: the target, its
    /// registry, its no-route answer), and what the target said of itself.
    pub target: BTreeMap<String, String>,
    /// The waivers, with their expiry.
    pub waivers: Vec<WaiverEntry>,
    /// The shards merged (`--from`), each folder with its partition; empty for one run.
    pub shards: Vec<String>,
    /// The statement.
    pub statement: Statement,
    /// Every other file of the bundle, by path, with its SHA-256.
    pub files: BTreeMap<String, String>,
}

impl Manifest {
    /// The day waivers are judged on: the date's `YYYY-MM-DD`.
    pub fn day(&self) -> &str {
        self.date.get(..10).unwrap_or(&self.date)
    }
}

/// A bundle's files in memory, by path.
pub type Files = BTreeMap<String, Vec<u8>>;

/// Writes `files` and the manifest (their hashes filled in) into `dir` (made or emptied: a
/// folder that holds anything but an earlier bundle is refused) and `dir.tar`.
pub fn write(dir: &Path, files: &Files, mut manifest: Manifest) -> Result<(), String> {
    manifest.files = files
        .iter()
        .map(|(path, bytes)| (path.clone(), sha256_hex(bytes)))
        .collect();
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    let mut all: Vec<(String, Vec<u8>)> = vec![(MANIFEST.to_string(), text.into_bytes())];
    all.extend(files.iter().map(|(p, b)| (p.clone(), b.clone())));
    emptied(dir)?;
    for (path, bytes) in &all {
        let to = dir.join(path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&to, bytes).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    let tar = crate::tarball::tar_of(&all).map_err(|e| e.to_string())?;
    let tar_path = tar_path(dir);
    std::fs::write(&tar_path, tar).map_err(|e| format!("{}: {e}", tar_path.display()))
}

/// `DIR.tar` beside the folder `DIR`.
pub fn tar_path(dir: &Path) -> std::path::PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".tar");
    dir.with_file_name(name)
}

/// Makes `dir`, or empties it when it holds an earlier bundle (its manifest) or nothing.
fn emptied(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .map_err(|e| format!("--bundle {shown}: {e}"))?
            .next()
            .is_none();
        if !empty && !dir.join(MANIFEST).is_file() {
            return Err(format!(
                "--bundle {shown} holds files but no {MANIFEST}: name a new folder (certify replaces only an earlier bundle)"
            ));
        }
        std::fs::remove_dir_all(dir).map_err(|e| format!("--bundle {shown}: {e}"))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("--bundle {shown}: {e}"))
}

/// Reads a bundle, a folder or a tar: its manifest and every file the manifest lists that is
/// there (a file missing is left out: `verify` names it).
pub fn read(path: &Path) -> Result<(Manifest, Files), String> {
    let mut files = if path.is_dir() {
        let mut files = Files::new();
        for name in std::iter::once(MANIFEST.to_string()).chain(listed(&path.join(MANIFEST))?) {
            if let Ok(bytes) = read_capped(&path.join(&name)) {
                files.insert(name, bytes);
            }
        }
        files
    } else {
        read_tar(path)?
    };
    let manifest = files
        .remove(MANIFEST)
        .ok_or_else(|| format!("{}: no {MANIFEST}", path.display()))?;
    let manifest: Manifest = serde_json::from_slice(&manifest).map_err(|e| {
        format!(
            "{}: {MANIFEST} is not a manifest of conform: {e}",
            path.display()
        )
    })?;
    Ok((manifest, files))
}

/// The paths a manifest file lists (safe ones: relative, without `..`).
fn listed(manifest: &Path) -> Result<Vec<String>, String> {
    let bytes = read_capped(manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let manifest: Manifest = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not a manifest of conform: {e}", manifest.display()))?;
    Ok(manifest.files.into_keys().filter(|p| safe(p)).collect())
}

/// A relative path that stays inside the bundle.
fn safe(path: &str) -> bool {
    !path.starts_with('/') && !path.split('/').any(|part| part == ".." || part.is_empty())
}

fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(LARGEST_FILE).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn read_tar(path: &Path) -> Result<Files, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut archive = tar::Archive::new(file);
    let mut files = Files::new();
    let entries = archive
        .entries()
        .map_err(|e| format!("{shown}: not a tar: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{shown}: not a tar: {e}"))?;
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| format!("{shown}: {e}"))?;
        if !safe(&name) || !entry.header().entry_type().is_file() {
            continue;
        }
        let mut bytes = Vec::new();
        entry
            .take(LARGEST_FILE)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{shown}: {name}: {e}"))?;
        files.insert(name, bytes);
    }
    Ok(files)
}
