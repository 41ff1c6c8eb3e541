//! Embeds the spec the suite was written against (`../shared/spec/`, beside the clone), so
//! that `conform certify` states its SHA-256 and `conform verify` compares with it: the spec
//! is copied into `OUT_DIR/spec.txt`; where it is not beside the clone, the file is empty and
//! `CONFORM_SPEC_EMBEDDED` says `no` (the build goes on; a certificate then says so).
//! The source commit a certificate names is `CONFORM_SOURCE_COMMIT` when the build is given
//! it, else the checkout's own (`git rev-parse HEAD`, `-modified` when the tree differs from
//! it), else none (`unknown`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The spec's file, as `suite/tests/catalog.rs` finds it.
const SPEC: &str = "../../shared/spec/000_02ffe03873a68711.txt";

fn main() {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let spec = PathBuf::from(manifest_dir).join(SPEC);
    println!("cargo:rerun-if-changed={}", spec.display());
    println!("cargo:rerun-if-changed=build.rs");
    let (bytes, embedded) = match std::fs::read(&spec) {
        Ok(bytes) => (bytes, "yes"),
        Err(_) => (Vec::new(), "no"),
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("spec.txt");
    if let Err(e) = std::fs::write(&out, bytes) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
    println!("cargo:rustc-env=CONFORM_SPEC_EMBEDDED={embedded}");
    println!("cargo:rerun-if-env-changed=CONFORM_SOURCE_COMMIT");
    if std::env::var_os("CONFORM_SOURCE_COMMIT").is_none() {
        if let Some(commit) = checkout_commit(Path::new(".")) {
            println!("cargo:rustc-env=CONFORM_SOURCE_COMMIT={commit}");
        }
    }
}

/// The commit the checkout holding `dir` is at, `-modified` when its tracked files differ
/// from it; `None` outside a git checkout or without git. The build runs again when HEAD, the
/// branch it names or the index moves, or a file of what the binary is built from changes.
fn checkout_commit(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .current_dir(dir)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"])?;
    for source in ["src", "../cases", "../schemas", "../reference/src"] {
        println!("cargo:rerun-if-changed={source}");
    }
    for moving in ["HEAD", "index"] {
        if let Some(path) = git(&["rev-parse", "--git-path", moving]) {
            println!("cargo:rerun-if-changed={}", dir.join(path).display());
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git(&["rev-parse", "--git-path", &branch]) {
            println!("cargo:rerun-if-changed={}", dir.join(path).display());
        }
    }
    let modified = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|changes| !changes.is_empty());
    Some(if modified {
        format!("{commit}-modified")
    } else {
        commit
    })
}
