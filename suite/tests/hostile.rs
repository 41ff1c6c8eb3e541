//! A target's answer that holds terminal control sequences: the run shows them escaped on the
//! terminal (preflight's error, libtest's lines, the summary, the warnings) and in
//! `summary.md`, never raw.

use crate::support::processes::text;
use crate::support::scratch::Scratch;

use std::path::Path;
use std::process::{Command, Output};

use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// What a hostile target answers: an OSC that sets the window title (ended by BEL), a CSI that
/// clears the screen, a NUL and a C1 CSI (U+009B).
const HOSTILE: &str = "<p>\u{1b}]0;pwned\u{7}\u{1b}[2J\0\u{9b}31mred</p>";

/// The body's first control sequence as the run shows it.
const SHOWN: &str = "\\u{1b}]0;pwned\\u{7}";

/// Serves, on a loopback port, a target that answers [`HOSTILE`] as HTML to every request of
/// the organizations' paths, except (when `speaks`) an empty organization list, so that
/// preflight lets the run go on; any other path is not found (its router's text 404).
fn hostile_target(speaks: bool) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind loopback");
            tx.send(listener.local_addr().expect("address")).ok();
            let app = axum::Router::new().fallback(move |method, uri| answer(speaks, method, uri));
            axum::serve(listener, app).await.ok();
        });
    });
    format!("http://{}", rx.recv().expect("target started"))
}

async fn answer(speaks: bool, method: Method, uri: Uri) -> Response {
    // a router that knows its routes: a path outside the organizations is not found
    let routed = ["/api/v2/organizations", "/organizations"]
        .iter()
        .any(|p| uri.path().starts_with(p));
    if !routed {
        return (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
    }
    if speaks && method == Method::GET && uri.path() == "/api/v2/organizations" {
        let list = r#"{"data":[],"meta":{"pagination":{"current-page":1,"total-pages":1,"total-count":0}}}"#;
        return (
            [("content-type", "application/vnd.api+json")],
            list.to_string(),
        )
            .into_response();
    }
    let status = if method == Method::GET {
        StatusCode::OK
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    (status, [("content-type", "text/html")], HOSTILE).into_response()
}

fn conform(args: &[&str], reports: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(args)
        .arg("--reports")
        .arg(reports)
        .env_remove("CONFORM_TOKEN")
        .env_remove("TFE_TOKEN")
        .env_remove("CONFORM_TARGET")
        .output()
        .expect("conform runs")
}

/// The control characters of `text` a terminal would act on (a line's end and a tab aside).
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        .collect()
}

/// Preflight's error quotes what the target answered: escaped, on one line.
fn a_preflight_error_shows_the_answers_control_characters_escaped() {
    let reports = Scratch::new("test", "hostile-preflight");
    let target = hostile_target(false);
    let out = conform(
        &["--target", &target, "--token", "hostile-token-123"],
        &reports,
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("does not answer like this API"), "{said}");
    assert!(
        said.contains(SHOWN),
        "the body is quoted, escaped: {said:?}"
    );
    assert_eq!(raw_controls(&said), Vec::<char>::new(), "{said:?}");
}

/// A run whose tests meet the body: libtest's lines, the summary and `summary.md` show it
/// escaped.
fn a_runs_console_and_summary_md_show_the_answers_control_characters_escaped() {
    let reports = Scratch::new("test", "hostile-run");
    let target = hostile_target(true);
    let out = conform(
        &[
            "--target",
            &target,
            "--token",
            "hostile-token-123",
            "--organization",
            "given",
            "--group",
            "organizations",
            "--timeout",
            "3",
            "--consistency-window",
            "0",
        ],
        &reports,
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(SHOWN), "a failure quotes the body: {said:?}");
    assert_eq!(raw_controls(&said), Vec::<char>::new(), "{said:?}");
    let md = std::fs::read_to_string(reports.join("summary.md")).expect("summary.md");
    assert!(md.contains(SHOWN), "summary.md quotes the body: {md:?}");
    assert_eq!(raw_controls(&md), Vec::<char>::new(), "{md:?}");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        a_preflight_error_shows_the_answers_control_characters_escaped,
        a_runs_console_and_summary_md_show_the_answers_control_characters_escaped
    ]
}
