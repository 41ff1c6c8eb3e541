//! Embeds the spec the suite was written against (`../shared/spec/`, beside the clone), so
//! that `conform certify` states its SHA-256 and `conform verify` compares with it: the spec
//! is copied into `OUT_DIR/spec.txt`; where it is not beside the clone, the file is empty and
//! `CONFORM_SPEC_EMBEDDED` says `no` (the build goes on; a certificate then says so).

use std::path::PathBuf;

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
}
