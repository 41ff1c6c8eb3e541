//! `conform certify` and `conform verify` through the real binary against the embedded
//! reference, on one or two groups so each run takes a second: the reference is conformant
//! at core and tfe, a fault makes it not (with the reasons), and `verify` holds a bundle
//! untouched and names what changed in one tampered with (a results.json, a waiver's expiry,
//! the spec's hash); three shards merge into the unsharded run's verdicts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::harness;
use crate::support::processes::{scratch, text};

const BIN: &str = env!("CARGO_BIN_EXE_conform");
/// The token given on the command line, which no file of a bundle may hold.
const TOKEN: &str = "certify-token-never-written";

/// This file's tests.
pub fn tests() -> Vec<harness::Test> {
    vec![
        harness::test(
            "the_reference_is_certified_and_a_tampered_bundle_is_not",
            the_reference_is_certified_and_a_tampered_bundle_is_not,
        ),
        harness::test(
            "a_fault_is_not_conformant_and_says_why",
            a_fault_is_not_conformant_and_says_why,
        ),
        harness::test(
            "a_waiver_holds_until_it_expires",
            a_waiver_holds_until_it_expires,
        ),
        harness::test(
            "three_shards_merge_into_the_unsharded_verdicts",
            three_shards_merge_into_the_unsharded_verdicts,
        ),
    ]
}

/// Runs `conform ARGS` in `dir` (no stray conform.toml, no token of the environment).
fn conform(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .env_remove("TFE_TOKEN")
        .env_remove("CONFORM_TARGET")
        .output()
        .expect("conform runs")
}

fn certify(dir: &Path, bundle: &str, args: &[&str]) -> Output {
    let mut all = vec!["certify", "--bundle", bundle, "--reports", "reports", "-q"];
    all.extend(args);
    conform(dir, &all)
}

fn verify(dir: &Path, bundle: &str) -> Output {
    conform(dir, &["verify", bundle])
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("readable");
    serde_json::from_str(&text).expect("JSON")
}

/// Rewrites a JSON file with `change` applied, and answers its text before.
fn edit(path: &Path, change: impl FnOnce(&mut Value)) -> String {
    let before = std::fs::read_to_string(path).expect("readable");
    let mut doc: Value = serde_json::from_str(&before).expect("JSON");
    change(&mut doc);
    std::fs::write(path, serde_json::to_string_pretty(&doc).expect("JSON")).expect("written");
    before
}

fn verdicts(results: &Path) -> BTreeMap<String, String> {
    json(results)["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| {
            let text = |k: &str| t[k].as_str().unwrap_or_default().to_string();
            (text("name"), text("verdict"))
        })
        .collect()
}

fn the_reference_is_certified_and_a_tampered_bundle_is_not() {
    let dir = scratch("certify", "reference");
    let out = certify(
        &dir,
        "cert",
        &["--group", "organizations", "--token", TOKEN],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let manifest = dir.join("cert/manifest.json");
    let statement = &json(&manifest)["statement"];
    assert_eq!(statement["core"], true, "{said}");
    assert_eq!(statement["tfe"], true, "{said}");
    assert!(
        statement["text"].as_str().unwrap_or_default().starts_with(
            "conformant at core: yes; at tfe: yes; groups not implemented: none; waived: none;"
        ),
        "{statement}"
    );
    let doc = json(&manifest);
    // the commit the binary was built from, as the checkout it was built in names it
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = doc["conform"]["commit"].as_str().unwrap_or_default();
    if let (Some(head), None) = (head, std::env::var_os("CONFORM_SOURCE_COMMIT")) {
        assert!(commit.starts_with(&head), "{commit} is not {head}");
    }
    assert!(
        doc["command"]
            .as_str()
            .unwrap_or_default()
            .contains("--token (redacted)"),
        "{doc}"
    );
    for entry in [
        "results.json",
        "junit.xml",
        "summary.md",
        "report.html",
        "badge.svg",
        "badge.md",
    ] {
        assert!(
            doc["files"][entry].is_string(),
            "{entry} is not in the manifest: {doc}"
        );
    }
    for file in walk(&dir.join("cert"))
        .into_iter()
        .chain([dir.join("cert.tar")])
    {
        let bytes = std::fs::read(&file).expect("readable");
        let shown = String::from_utf8_lossy(&bytes);
        assert!(!shown.contains(TOKEN), "{} holds the token", file.display());
    }
    for bundle in ["cert", "cert.tar"] {
        let out = verify(&dir, bundle);
        assert_eq!(out.status.code(), Some(0), "{bundle}: {}", text(&out));
    }
    // a verdict changed in results.json: its hash and the statement both say so
    let results = dir.join("cert/results.json");
    let before = std::fs::read_to_string(&results).expect("readable");
    std::fs::write(
        &results,
        before.replacen("\"verdict\": \"pass\"", "\"verdict\": \"fail\"", 1),
    )
    .expect("written");
    let out = verify(&dir, "cert");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("results.json: changed since the bundle was made"),
        "{said}"
    );
    assert!(
        said.contains("the verdicts do not support the statement"),
        "{said}"
    );
    std::fs::write(&results, before).expect("restored");
    // a bundle made against another spec (or catalog) names the difference
    let original = edit(&manifest, |m| {
        m["contract"]["spec_sha256"] = Value::from("0".repeat(64));
        m["contract"]["catalog_sha256"] = Value::from("1".repeat(64));
    });
    let out = verify(&dir, "cert");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "the spec differs: the bundle's SHA-256 is {}",
            "0".repeat(64)
        )),
        "{said}"
    );
    assert!(said.contains("the catalog (cases/) differs"), "{said}");
    std::fs::write(&manifest, original).expect("restored");
    assert_eq!(verify(&dir, "cert").status.code(), Some(0));
    // a bundle that cannot be read is exit 2
    std::fs::write(&manifest, "not json").expect("written");
    assert_eq!(verify(&dir, "cert").status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn a_fault_is_not_conformant_and_says_why() {
    let dir = scratch("certify", "fault");
    // an organization that names no default project: TFE-level findings only, so core holds
    let out = certify(
        &dir,
        "tfe",
        &[
            "--group",
            "organizations",
            "--reference-fault",
            "no-default-project",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let statement = json(&dir.join("tfe/manifest.json"))["statement"].clone();
    assert_eq!(statement["core"], true, "{statement}");
    assert_eq!(statement["tfe"], false, "{statement}");
    let reasons = statement["reasons"].to_string();
    assert!(
        reasons.contains("at tfe: organizations::list::"),
        "{reasons}"
    );
    // a show that answers another id: core fails too, and the bundle still verifies (it says no, truly)
    let out = certify(
        &dir,
        "core",
        &[
            "--group",
            "organizations",
            "--reference-fault",
            "show-wrong-id",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("conformant at core: no; at tfe: no"),
        "{said}"
    );
    assert!(said.contains("at core: organizations::show::"), "{said}");
    assert_eq!(verify(&dir, "core.tar").status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

fn a_waiver_holds_until_it_expires() {
    let dir = scratch("certify", "waiver");
    std::fs::write(
        dir.join("waivers.toml"),
        "[[waiver]]\ntest = \"organizations::*\"\nreason = \"known\"\nexpires = \"2099-12-31\"\n",
    )
    .expect("written");
    let out = certify(
        &dir,
        "cert",
        &[
            "--group",
            "organizations",
            "--reference-fault",
            "no-default-project",
            "--waivers",
            "waivers.toml",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("waived: organizations::"), "{said}");
    assert!(
        said.contains("(by `organizations::*` until 2099-12-31)"),
        "{said}"
    );
    assert_eq!(
        verify(&dir, "cert").status.code(),
        Some(0),
        "{}",
        text(&verify(&dir, "cert"))
    );
    // the same bundle, its waiver expired before the bundle's date: the statement no longer holds
    edit(&dir.join("cert/manifest.json"), |m| {
        m["waivers"][0]["expires"] = Value::from("2000-01-01");
    });
    let out = verify(&dir, "cert");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("the verdicts do not support the statement"),
        "{said}"
    );
    assert!(
        said.contains("`organizations::*` expired on 2000-01-01"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn three_shards_merge_into_the_unsharded_verdicts() {
    let dir = scratch("certify", "shards");
    let groups = ["--group", "organizations,teams"];
    for m in 1..=3 {
        let partition = format!("hash:{m}/3");
        let reports = format!("shard{m}");
        let mut args = vec!["--require", "all", "--profile", "tfe", "-q"];
        args.extend(groups);
        args.extend(["--partition", &partition, "--reports", &reports]);
        let out = conform(&dir, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let out = conform(
        &dir,
        &[
            "certify", "--from", "shard1", "shard2", "shard3", "--bundle", "merged",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = certify(&dir, "whole", &groups);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let merged = verdicts(&dir.join("merged/results.json"));
    assert!(merged.len() > 40, "{merged:?}");
    assert_eq!(merged, verdicts(&dir.join("whole/results.json")));
    let statement = |b: &str| json(&dir.join(b).join("manifest.json"))["statement"]["text"].clone();
    assert_eq!(statement("merged"), statement("whole"));
    let out = verify(&dir, "merged.tar");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // a shard given twice and one missing: said, no bundle
    let out = conform(
        &dir,
        &[
            "certify", "--from", "shard1", "shard2", "shard2", "--bundle", "bad",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("shard hash:2/3 is given twice"), "{said}");
    assert!(said.contains("shard hash:3/3 is missing"), "{said}");
    // a shard of another profile is named
    let out = conform(
        &dir,
        &[
            "--require",
            "all",
            "--profile",
            "core",
            "-q",
            "--group",
            "organizations,teams",
            "--partition",
            "hash:3/3",
            "--reports",
            "core3",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = conform(
        &dir,
        &[
            "certify", "--from", "shard1", "shard2", "core3", "--bundle", "bad",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("core3 (hash:3/3) differs: its profile is `core`, shard1 (hash:1/3)'s `tfe`"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
