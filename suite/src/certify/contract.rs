//! What this conform judges against, in hashes anyone can compare: the spec it was built
//! with, the catalog (`cases/`) and the schemas embedded in it, its version and its source
//! commit (`CONFORM_SOURCE_COMMIT`: given to the build, else the checkout's, by `suite/build.rs`).

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::checks::Schemas;

/// The spec's bytes as the build found them beside the clone (`build.rs`); empty when it was
/// not there.
const SPEC: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/spec.txt"));

/// The contract's fingerprints: each a SHA-256 in lower-case hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contract {
    /// The spec's text; `None` when this conform was built without it.
    pub spec_sha256: Option<String>,
    /// The catalog: every file of `cases/`, by path (see `tree_sha256`).
    pub catalog_sha256: String,
    /// The schemas: every file of `schemas/`, by path.
    pub schemas_sha256: String,
}

impl Contract {
    /// This conform's.
    pub fn this_conform() -> Self {
        Self {
            spec_sha256: (env!("CONFORM_SPEC_EMBEDDED") == "yes").then(|| sha256_hex(SPEC)),
            catalog_sha256: tree_sha256(&Catalog::embedded_files()),
            schemas_sha256: tree_sha256(&Schemas::embedded_files()),
        }
    }

    /// How `other` (a bundle's) differs from this one: one line per fingerprint.
    pub fn differences(&self, other: &Contract) -> Vec<String> {
        let shown = |h: &Option<String>| {
            h.clone()
                .unwrap_or_else(|| "none (built without the spec)".into())
        };
        let mut out = Vec::new();
        if self.spec_sha256 != other.spec_sha256 {
            out.push(format!(
                "the spec differs: the bundle's SHA-256 is {}, this conform's {}",
                shown(&other.spec_sha256),
                shown(&self.spec_sha256)
            ));
        }
        for (what, mine, theirs) in [
            (
                "catalog (cases/)",
                &self.catalog_sha256,
                &other.catalog_sha256,
            ),
            ("schemas", &self.schemas_sha256, &other.schemas_sha256),
        ] {
            if mine != theirs {
                out.push(format!(
                    "the {what} differs: the bundle's SHA-256 is {theirs}, this conform's {mine}"
                ));
            }
        }
        out
    }
}

/// This conform's version and the commit it was built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The crate's version.
    pub version: String,
    /// `CONFORM_SOURCE_COMMIT` at build time, or `unknown`.
    pub commit: String,
}

impl Build {
    /// This conform's.
    pub fn this_conform() -> Self {
        Self {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: option_env!("CONFORM_SOURCE_COMMIT")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .unwrap_or("unknown (the build was not given CONFORM_SOURCE_COMMIT)")
                .to_string(),
        }
    }
}

/// The name of every test and sequence family of the embedded catalog.
pub fn catalog_names() -> Vec<String> {
    match Catalog::embedded() {
        Ok(catalog) => catalog
            .tests()
            .into_iter()
            .map(|case| case.name)
            .chain(
                catalog
                    .families
                    .iter()
                    .map(|f| crate::sequences::test_name(f)),
            )
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// SHA-256 of bytes, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, bytes).as_ref())
}

/// SHA-256 of a tree of files, independent of the order they are given in: for each file by
/// path, its path, a zero byte, its length (8 bytes, big-endian) and its bytes.
pub fn tree_sha256(files: &[(String, &[u8])]) -> String {
    let mut sorted: Vec<&(String, &[u8])> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    for (path, bytes) in sorted {
        context.update(path.as_bytes());
        context.update(&[0]);
        context.update(&(bytes.len() as u64).to_be_bytes());
        context.update(bytes);
    }
    hex(context.finish().as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_abc_is_the_standard_one() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_tree_hash_sees_a_changed_byte_and_a_moved_file_but_not_the_order() {
        let a = [("a".to_string(), &b"1"[..]), ("b".to_string(), &b"2"[..])];
        let reordered = [a[1].clone(), a[0].clone()];
        let changed = [a[0].clone(), ("b".to_string(), &b"3"[..])];
        let moved = [a[0].clone(), ("c".to_string(), &b"2"[..])];
        assert_eq!(tree_sha256(&a), tree_sha256(&reordered));
        assert_ne!(tree_sha256(&a), tree_sha256(&changed));
        assert_ne!(tree_sha256(&a), tree_sha256(&moved));
    }
}
