//! `conform verify BUNDLE`, offline: every file the manifest lists is there with its SHA-256;
//! the verdicts of `results.json` support the statement (judged again, with the bundle's
//! waivers on the bundle's date); the bundle's spec, catalog and schemas are this conform's.

use std::path::Path;

use super::bundle::{self, Files, Manifest};
use super::contract::{catalog_names, sha256_hex, Contract};
use super::statement::{judge, tests_of};

/// The file whose verdicts the statement rests on.
pub const RESULTS: &str = "results.json";

/// What verifying a bundle found: the statement it holds, and each reason it does not hold.
#[derive(Debug)]
pub struct Verification {
    /// The bundle's statement, as written.
    pub statement: String,
    /// Why the bundle does not hold; empty when it does.
    pub reasons: Vec<String>,
}

/// Verifies the bundle at `path` (its folder or its tar); `Err` when it cannot be read.
pub fn verify(path: &Path) -> Result<Verification, String> {
    let (manifest, files) = bundle::read(path)?;
    let mut reasons = hashes(&manifest, &files);
    reasons.extend(statement_holds(&manifest, &files));
    reasons.extend(Contract::this_conform().differences(&manifest.contract));
    Ok(Verification {
        statement: manifest.statement.text.clone(),
        reasons,
    })
}

/// Each listed file missing, or changed since the manifest was written.
fn hashes(manifest: &Manifest, files: &Files) -> Vec<String> {
    let mut reasons = Vec::new();
    if !manifest.files.contains_key(RESULTS) {
        reasons.push(format!("the manifest lists no {RESULTS}"));
    }
    for (path, expected) in &manifest.files {
        match files.get(path) {
            None => reasons.push(format!("{path}: missing from the bundle")),
            Some(bytes) => {
                let actual = sha256_hex(bytes);
                if &actual != expected {
                    reasons.push(format!(
                        "{path}: changed since the bundle was made (its SHA-256 is {actual}, the manifest says {expected})"
                    ));
                }
            }
        }
    }
    reasons
}

/// The statement judged again from `results.json`: each way it differs from the manifest's.
fn statement_holds(manifest: &Manifest, files: &Files) -> Vec<String> {
    let Some(bytes) = files.get(RESULTS) else {
        return vec![format!("no {RESULTS}: the statement rests on nothing")];
    };
    let doc: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(doc) => doc,
        Err(e) => return vec![format!("{RESULTS} is not JSON: {e}")],
    };
    let tests = match tests_of(&doc) {
        Ok(tests) => tests,
        Err(e) => return vec![format!("{RESULTS}: {e}")],
    };
    let mut reasons = Vec::new();
    let run_profile = doc["profile"].as_str().unwrap_or_default();
    if run_profile != manifest.profile {
        reasons.push(format!(
            "{RESULTS} was run at --profile {run_profile}, the manifest says {}",
            manifest.profile
        ));
    }
    let again = judge(
        &tests,
        &manifest.profile,
        &manifest.waivers,
        manifest.day(),
        &catalog_names(),
    );
    if again != manifest.statement {
        reasons.push(format!(
            "the verdicts do not support the statement: it says `{}`; judged again on {} they say `{}`",
            manifest.statement.text,
            manifest.day(),
            again.text
        ));
        reasons.extend(
            again
                .reasons
                .iter()
                .filter(|r| !manifest.statement.reasons.contains(r))
                .map(|r| format!("judged again: {r}")),
        );
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_bundle_is_an_error_not_a_verdict() {
        let missing = std::env::temp_dir().join("conform-no-such-bundle.tar");
        assert!(verify(&missing).is_err());
        let dir = std::env::temp_dir().join(format!("conform-empty-bundle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("folder");
        let err = verify(&dir).expect_err("a folder without a manifest");
        assert!(err.contains("manifest.json"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
