//! `conform diff`: the same tests against two targets (here two embedded references, one with
//! a fault) report where the answers differ in verdict and in shape, and nothing when they
//! agree.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn diff(name: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("conform-diff-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["diff", "--target", "embedded", "--target", "embedded"])
        .args(["--group", "organizations"])
        .arg("--reports")
        .arg(&dir)
        .args(extra)
        .output()
        .expect("conform runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("diff.json")).expect("diff.json is written"),
    )
    .expect("JSON");
    let _ = std::fs::remove_dir_all(&dir);
    (out.status.code(), doc, stdout)
}

fn difference<'a>(doc: &'a Value, test: &str) -> &'a Value {
    doc["differences"]
        .as_array()
        .expect("differences")
        .iter()
        .find(|d| d["test"] == test)
        .unwrap_or_else(|| panic!("no difference at {test}: {doc:#}"))
}

fn two_equal_targets_do_not_differ() {
    let (code, doc, stdout) = diff("same", &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(doc["compared"], 12);
    assert_eq!(doc["differences"], serde_json::json!([]));
    assert!(stdout.contains("12 tests compared, 0 differ"), "{stdout}");
}

fn a_target_answering_other_statuses_differs_in_verdict_and_shape() {
    let (code, doc, stdout) = diff("status", &["--fault-b", "wrong-status"]);
    assert_eq!(code, Some(1), "{stdout}");
    let create = difference(&doc, "organizations::create::api-v2");
    assert_eq!(create["verdict"]["a"], "pass");
    assert_eq!(create["verdict"]["b"], "fail");
    assert_eq!(
        create["fails_on_b_only"],
        serde_json::json!(["tfe.status-code"])
    );
    assert!(create["shape"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "status 201 (A) vs 200 (B)"));
    // Shows answer as before.
    assert!(doc["differences"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| !d["test"]
            .as_str()
            .unwrap()
            .starts_with("organizations::show::")));
}

fn a_target_with_other_attribute_names_differs_in_shape() {
    let (code, doc, _) = diff("names", &["--fault-b", "bare-snake-case"]);
    assert_eq!(code, Some(1));
    let show = difference(&doc, "organizations::show::bare");
    let shape = show["shape"][0].as_str().unwrap();
    assert!(shape.starts_with("attributes: only A has"), "{shape}");
    assert!(shape.contains("only B has") && shape.contains("cost_estimation_enabled"));
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        two_equal_targets_do_not_differ,
        a_target_answering_other_statuses_differs_in_verdict_and_shape,
        a_target_with_other_attribute_names_differs_in_shape
    ]
}
