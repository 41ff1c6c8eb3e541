//! `conform serve` prints what a run against it needs (issue 12): the tokens (from flags or
//! `CONFORM_TOKEN`/`CONFORM_ADMIN_TOKEN`), the password and the seeded things; with them a
//! run against the standalone service skips nothing.

use std::process::Command;

use crate::support::processes::Served;

fn a_run_against_a_standalone_service_skips_only_the_unobservable_with_what_its_banner_prints() {
    // the tokens in the environment
    let served = Served::with_env(
        &[],
        &[
            ("CONFORM_TOKEN", "banner-token"),
            ("CONFORM_ADMIN_TOKEN", "banner-admin-token"),
        ],
    );
    let url = served.url.clone();
    // the operator's own tokens are taken, and never printed (the run below proves them taken)
    assert_eq!(
        served.value("token:"),
        "(yours, from --token or CONFORM_TOKEN)"
    );
    assert_eq!(
        served.value("admin token:"),
        "(yours, from --admin-token or CONFORM_ADMIN_TOKEN)"
    );
    let password = served.value("password:").to_string();
    let result = served.value("seeded assessment_result:").to_string();
    assert!(served
        .value("seeded vcs_installation:")
        .starts_with("ghain-"));
    let dir = std::env::temp_dir().join(format!("conform-banner-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &url, "--profile", "tfe"])
        .args(["--fixture", &format!("assessment_result={result}")])
        .args(["--fixture", &format!("account_password={password}")])
        .args(["--notification-url", "https://hook.example.test/conform"])
        .args(
            served
                .value("settings:")
                .contains("--allow-instance-changes")
                .then_some("--allow-instance-changes"),
        )
        .args(["--reports", dir.to_str().unwrap_or_default()])
        .env("CONFORM_TOKEN", "banner-token")
        .env("CONFORM_ADMIN_TOKEN", "banner-admin-token")
        .output()
        .expect("conform runs");
    drop(served);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let total = stdout
        .lines()
        .find(|l| l.starts_with("total "))
        .unwrap_or_else(|| panic!("no total line:\n{stdout}"));
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
    )
    .expect("results.json parses");
    let skipped: Vec<&str> = results["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .filter(|t| t["verdict"] == "skipped")
        .filter(|t| {
            // what no run can see is skipped against any server (`unobservable` in cases/)
            !t["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with(conform::verdict::UNOBSERVABLE))
        })
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(skipped.is_empty(), "skipped: {skipped:?}\n{total}");
    assert_eq!(out.status.code(), Some(0), "{total}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--seed-organization` and `--seed-workspace` make what terraform's `cloud` block needs:
/// the banner names them and the matching cloud block, and the workspace is in local
/// execution mode. A name the API would refuse is a usage error.
fn seed_flags_make_an_organization_and_a_local_workspace_the_banner_names() {
    let served = Served::with_args(&["--seed-organization", "example", "--seed-workspace", "app"]);
    let banner = served.banner.join("\n");
    assert!(banner.contains("seeded organization: example"), "{banner}");
    assert!(banner.contains("seeded workspace: ws-"), "{banner}");
    // the guide's local TFE steps and their credentials block use (the certificate's name too)
    assert!(
        banner.contains(&format!(
            r#"cloud {{ hostname = "localhost:{}" organization = "example" workspaces {{ name = "app" }} }}"#,
            served.port()
        )),
        "{banner}"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let doc: serde_json::Value = rt.block_on(async {
        reqwest::Client::new()
            .get(format!(
                "{}/api/v2/organizations/example/workspaces/app",
                served.url.trim_end_matches('/')
            ))
            .bearer_auth("reference-token")
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("a document")
    });
    assert_eq!(
        doc.pointer("/data/attributes/execution-mode"),
        Some(&serde_json::json!("local")),
        "{doc}"
    );
    let refused = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["serve", "--port", "0", "--seed-organization", "no spaces"])
        .output()
        .expect("conform serve runs");
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
}

/// The `rerun:` line a failure prints is pasteable as printed: the target, the profile and the
/// token's variable are in it, and run in a shell it judges that one test again.
fn a_printed_rerun_command_reproduces_the_failure_when_pasted() {
    let served = Served::with_args(&["--token", "rerun-token", "--fault", "no-bare"]);
    let dir = std::env::temp_dir().join(format!("conform-rerun-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args([
            "--target",
            &served.url,
            "--token",
            "rerun-token",
            "--profile",
            "tfe",
        ])
        .args([
            "--reports",
            dir.to_str().unwrap_or_default(),
            "account::details",
        ])
        .env_remove("CONFORM_TOKEN")
        .output()
        .expect("conform runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rerun = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("rerun: "))
        .unwrap_or_else(|| panic!("no rerun line:\n{stdout}"))
        .to_string();
    assert!(
        rerun.contains("--token \"$CONFORM_TOKEN\"") && rerun.contains("--profile tfe"),
        "{rerun}"
    );
    assert!(!rerun.contains("rerun-token"), "{rerun}");
    let binary = env!("CARGO_BIN_EXE_conform");
    let pasted = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} --reports {}",
            rerun.replacen("conform", binary, 1),
            dir.join("again").display()
        ))
        .env("CONFORM_TOKEN", "rerun-token")
        .output()
        .expect("sh runs");
    let again = String::from_utf8_lossy(&pasted.stdout);
    assert_eq!(pasted.status.code(), Some(1), "{again}");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("again").join("results.json")).expect("results.json"),
    )
    .expect("results.json parses");
    let judged: Vec<(&str, &str)> = results["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or_default(),
                t["verdict"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(judged, [("account::details::bare", "fail")], "{again}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_run_against_a_standalone_service_skips_only_the_unobservable_with_what_its_banner_prints,
        seed_flags_make_an_organization_and_a_local_workspace_the_banner_names,
        a_printed_rerun_command_reproduces_the_failure_when_pasted
    ]
}
