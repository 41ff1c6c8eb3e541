//! Getting the peer's test binary: Go on PATH, the pinned module from the Go module proxy into
//! the module cache (`go mod download`), a writable copy of it and its test binary in the
//! conform cache, built once per module version and Go version.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the machine needs, said when Go is missing.
pub const INSTALL_GO: &str = "`go` is not on PATH: install Go 1.25 or newer (https://go.dev/dl/, \
     or your system's package of it), then run this again";

/// A built test binary and the folder its tests run in.
#[derive(Debug, Clone)]
pub struct Built {
    /// The test binary (`go test -c`).
    pub binary: PathBuf,
    /// The module's writable copy: some tests write into `test-fixtures/`.
    pub workdir: PathBuf,
    /// The Go that built it (`go1.26.8`).
    pub go_version: String,
}

/// Why there is no binary.
#[derive(Debug)]
pub enum BuildError {
    /// `go` cannot be started.
    NoGo,
    /// Anything else, with what went wrong.
    Failed(String),
}

/// The conform cache: `$CONFORM_CACHE`, else `$XDG_CACHE_HOME/conform`, else
/// `$HOME/.cache/conform`, else the system's temporary folder.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("CONFORM_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("conform");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cache").join("conform"),
        None => std::env::temp_dir().join("conform-cache"),
    }
}

fn go(args: &[&str], dir: Option<&Path>) -> Result<String, BuildError> {
    let mut cmd = Command::new("go");
    cmd.args(args);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => BuildError::NoGo,
        _ => BuildError::Failed(format!("cannot start go: {e}")),
    })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: String = err
            .lines()
            .rev()
            .take(15)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(BuildError::Failed(format!(
            "`go {}` failed ({}):\n{tail}",
            args.join(" "),
            out.status
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The Go version on PATH (`go1.26.8`).
pub fn go_version() -> Result<String, BuildError> {
    Ok(go(&["env", "GOVERSION"], None)?.trim().to_string())
}

/// The test binary of `module@version`, from the cache or built now.
pub fn test_binary(module: &str, version: &str, say: &dyn Fn(&str)) -> Result<Built, BuildError> {
    let go_version = go_version()?;
    let name = module.rsplit('/').next().unwrap_or(module);
    let home = cache_root().join(name).join(version).join(&go_version);
    let binary = home.join(format!("{name}.test"));
    let workdir = home.join("src");
    if binary.is_file() && workdir.is_dir() {
        return Ok(Built {
            binary,
            workdir,
            go_version,
        });
    }
    say(&format!(
        "fetching {module}@{version} from the Go module proxy and building its tests with {go_version} (once; cached in {})",
        home.display()
    ));
    let listing = go(
        &["mod", "download", "-json", &format!("{module}@{version}")],
        None,
    )?;
    let dir = serde_json::from_str::<serde_json::Value>(&listing)
        .ok()
        .and_then(|v| v["Dir"].as_str().map(PathBuf::from))
        .ok_or_else(|| {
            BuildError::Failed(format!("`go mod download` named no folder: {listing}"))
        })?;
    let _ = std::fs::remove_dir_all(&workdir);
    copy_writable(&dir, &workdir).map_err(|e| {
        BuildError::Failed(format!(
            "cannot copy {} to {}: {e}",
            dir.display(),
            workdir.display()
        ))
    })?;
    // Built under a temporary name and renamed: a cut build never looks like a cached one.
    let partial = home.join(format!("{name}.test.partial"));
    let partial_arg = partial.to_string_lossy().into_owned();
    go(
        &["test", "-c", "-tags=integration", "-o", &partial_arg, "."],
        Some(&workdir),
    )?;
    std::fs::rename(&partial, &binary)
        .map_err(|e| BuildError::Failed(format!("cannot keep {}: {e}", binary.display())))?;
    Ok(Built {
        binary,
        workdir,
        go_version,
    })
}

/// Copies a folder (the module cache's copies are read-only) so that every file is writable.
fn copy_writable(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_writable(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
            let mut perms = std::fs::metadata(&target)?.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms)?;
        }
    }
    Ok(())
}

/// The top-level tests of a binary (`-test.list`).
pub fn list_tests(built: &Built) -> Result<Vec<String>, String> {
    let out = Command::new(&built.binary)
        .args(["-test.list", "."])
        .current_dir(&built.workdir)
        .output()
        .map_err(|e| format!("cannot start {}: {e}", built.binary.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} -test.list failed ({})",
            built.binary.display(),
            out.status
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("Test"))
        .map(str::to_string)
        .collect())
}
