//! The rough edges a new user met (issue 44, item 4), each through the real binary: an
//! untrusted certificate said in plain words, a closed standard output that still tells how to
//! sweep and counts what ran, `--help` without libtest's leftovers, a waived failure that is
//! not `ok`, `--format json` failures as plain text, `sequences` among the groups, a file that
//! is no ledger, and `--timeout`'s real bounds.

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::processes::{text, Served};
use crate::support::scratch::Scratch;

const TOKEN: &str = "edges-token";
const ADMIN_TOKEN: &str = "edges-admin-token";
const RUN_SHOW: &str = "drop-route=GET /runs/:run_id";

/// `conform ARGS` with the tokens of [`Served::start`]'s service and nothing else from the
/// environment, in `dir` (so no stray conform.toml is read).
fn conform(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_conform"));
    command
        .current_dir(dir)
        .env("CI", "true")
        .env_remove("TFE_TOKEN")
        .env_remove("TFE_ADDRESS")
        .env_remove("CONFORM_TARGET")
        .env("CONFORM_TOKEN", TOKEN)
        .env("CONFORM_ADMIN_TOKEN", ADMIN_TOKEN);
    command
}

fn run(dir: &Path, args: &[&str]) -> Output {
    conform(dir).args(args).output().expect("conform runs")
}

/// Without `--ca-cert`, a certificate from an authority nobody named and one that is its own
/// authority are both said to be not trusted, with the flag to give, by a run and by sweep;
/// never rustls' debug text.
fn an_untrusted_certificate_says_so_and_names_ca_cert() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let dir = Scratch::new("edges", "tls");
    let mut params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".into()]).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("a self-signed certificate");
    let (cert_file, key_file) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_file, cert.pem()).expect("write");
    std::fs::write(&key_file, key.serialize_pem()).expect("write");
    let self_signed = Served::with_args(&[
        "--tls-cert",
        cert_file.to_str().unwrap_or_default(),
        "--tls-key",
        key_file.to_str().unwrap_or_default(),
        "--token",
        TOKEN,
    ]);
    let private_authority = Served::with_args(&["--tls", "--token", TOKEN]);
    let reports = dir.join("reports");
    let reports = reports.to_str().unwrap_or_default();
    for service in [&self_signed, &private_authority] {
        let root = format!("https://127.0.0.1:{}", service.port());
        for args in [
            vec!["--target", &root, "--reports", reports, "account::details"],
            vec!["sweep", "--target", &root, "--prefix", "none-", "--dry-run"],
        ] {
            let out = run(&dir, &args);
            let said = text(&out);
            assert_ne!(out.status.code(), Some(0), "{args:?}: {said}");
            assert!(
                said.contains("TLS certificate is not trusted")
                    && said.contains("give --ca-cert FILE")
                    && said.contains("--insecure"),
                "{args:?}: {said}"
            );
            assert!(!said.contains("Other(OtherError"), "{args:?}: {said}");
        }
    }
}

/// A reader of standard output gone mid-run (against a target, so there is something to
/// sweep): the sweep line reaches standard error, and the last progress line counts only the
/// tests that ran, the others as not run.
fn a_closed_stdout_sends_the_sweep_hint_to_stderr_and_counts_what_ran() {
    let dir = Scratch::new("edges", "epipe");
    let service = Served::start(TOKEN, ADMIN_TOKEN, &[]);
    let mut child = conform(&dir)
        .args(["--target", &service.url, "--reports"])
        .arg(dir.join("reports"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("conform starts");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(first.starts_with("conform "), "{first}");
    drop(stdout);
    let out = child.wait_with_output().expect("conform ends");
    let errors = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{errors}");
    assert!(
        errors.lines().any(|l| l.starts_with("interrupted by EPIPE")
            && l.contains("conform sweep")
            && l.contains("--ledger")),
        "the sweep line is not on stderr: {errors}"
    );
    let progress = errors
        .lines()
        .rfind(|l| l.starts_with("progress: "))
        .unwrap_or_else(|| panic!("no progress line: {errors}"));
    let counts = progress
        .trim_start_matches("progress: ")
        .split(' ')
        .next()
        .unwrap_or_default();
    let (done, total) = counts.split_once('/').expect("done/total");
    let (done, total): (usize, usize) =
        (done.parse().expect("done"), total.parse().expect("total"));
    assert!(done < total, "{progress}");
    assert!(progress.contains("not run (interrupted)"), "{progress}");
}

/// `--help` has none of libtest's texts (a typo, benchmarks, two flags both "Run ignored
/// tests"), and a mistyped flag is answered with a flag of ours, never a hidden one.
fn help_and_a_mistyped_flag_speak_for_this_tool() {
    let dir = Scratch::new("edges", "help");
    let help = run(&dir, &["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = String::from_utf8_lossy(&help.stdout);
    for leftover in [
        "Usefull",
        "Run ignored tests",
        "benchmarks",
        "--ignored",
        "If this is set",
    ] {
        assert!(!help.contains(leftover), "{leftover}:\n{help}");
    }
    let typo = run(&dir, &["--nosuch"]);
    assert_eq!(typo.status.code(), Some(2));
    let said = text(&typo);
    assert!(!said.contains("--bench"), "{said}");
    let near = text(&run(&dir, &["--skp", "x"]));
    assert!(near.contains("'--skip'"), "{near}");
}

/// A failing test a waiver covers is `ignored` with the waiver's words on its libtest line,
/// not `ok` (the run's exit is 0), and under `--format json` a failure's detail is the plain
/// text, not libtest-mimic's `Error: "…"`.
fn a_waived_failure_is_not_ok_and_a_json_failure_is_plain_text() {
    let dir = Scratch::new("edges", "waived");
    let waivers = dir.join("waivers.toml");
    std::fs::write(
        &waivers,
        "[[waiver]]\ntest = \"runs::show::api-v2\"\nreason = \"staging lacks it\"\nexpires = \"2999-12-31\"\n",
    )
    .expect("waivers");
    let reports = dir.join("reports");
    let (reports, waivers) = (
        reports.to_str().unwrap_or_default(),
        waivers.to_str().unwrap_or_default(),
    );
    let base = [
        "--reference-fault",
        RUN_SHOW,
        "--reports",
        reports,
        "--exact",
    ];
    let waived = run(
        &dir,
        &[&base[..], &["--waivers", waivers, "runs::show::api-v2"]].concat(),
    );
    let said = text(&waived);
    assert_eq!(waived.status.code(), Some(0), "{said}");
    let line = said
        .lines()
        .find(|l| l.starts_with("test runs::show::api-v2 ..."))
        .unwrap_or_else(|| panic!("no libtest line: {said}"));
    assert!(
        line.contains("ignored (waived by `runs::show::api-v2` until 2999-12-31"),
        "{line}"
    );
    let json = run(
        &dir,
        &[&base[..], &["--format", "json", "runs::show::api-v2"]].concat(),
    );
    assert_eq!(json.status.code(), Some(1), "{}", text(&json));
    let stdout = String::from_utf8_lossy(&json.stdout);
    let failed: serde_json::Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["event"] == "failed")
        .unwrap_or_else(|| panic!("no failed event: {stdout}"));
    let detail = failed["stdout"].as_str().unwrap_or_default();
    assert!(detail.starts_with("fail:\n"), "{detail}");
    assert!(!detail.contains("Error: \""), "{detail}");
}

/// `--group`'s help and its error for an unknown group both name `sequences`.
fn the_groups_named_include_sequences() {
    let dir = Scratch::new("edges", "groups");
    let out = run(&dir, &["--group", "workspaces"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out);
    assert!(said.contains("choose from: account,"), "{said}");
    assert!(said.contains(", sequences"), "{said}");
    let help = String::from_utf8_lossy(&run(&dir, &["--help"]).stdout).to_string();
    let group = help
        .split("--group <GROUPS>")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_default()
        .to_string();
    assert!(group.contains("`sequences`"), "{group}");
}

/// A file that is no ledger is a clear error naming it (exit 2), not one torn line.
fn a_file_that_is_no_ledger_is_an_error_naming_it() {
    let dir = Scratch::new("edges", "ledger");
    let garbage = dir.join("notes.txt");
    std::fs::write(&garbage, "shopping list\neggs\nmilk\n").expect("write");
    let out = run(
        &dir,
        &[
            "sweep",
            "--target",
            "http://127.0.0.1:9",
            "--ledger",
            garbage.to_str().unwrap_or_default(),
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("notes.txt is not a ledger"), "{said}");
    assert!(
        !said.contains("torn") && !said.contains("skipped"),
        "{said}"
    );
}

/// `--timeout 0` states the real bounds.
fn timeout_zero_states_the_real_bounds() {
    let dir = Scratch::new("edges", "timeout");
    for value in ["0", "3601"] {
        let out = run(&dir, &["--timeout", value, "--list"]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(
            said.contains("--timeout must be above 0 and at most 3600 seconds"),
            "{said}"
        );
    }
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        an_untrusted_certificate_says_so_and_names_ca_cert,
        a_closed_stdout_sends_the_sweep_hint_to_stderr_and_counts_what_ran,
        help_and_a_mistyped_flag_speak_for_this_tool,
        a_waived_failure_is_not_ok_and_a_json_failure_is_plain_text,
        the_groups_named_include_sequences,
        a_file_that_is_no_ledger_is_an_error_naming_it,
        timeout_zero_states_the_real_bounds,
    ]
}
