//! `conform openapi`: the document parses, is a valid OpenAPI 3.1 document (checked by
//! openapi-spec-validator), and a peer tool (schemathesis) runs against the reference with it
//! without a configuration error.
//!
//! The Python tools come from the project's virtual environment (`.venv`, made by `.ci/run`
//! from `clients/requirements.txt`). Outside CI (`CI` unset) a missing environment skips these
//! tests, saying so on standard error; with `CI=true` it fails them.

use crate::harness;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the suite crate is in the workspace")
        .to_path_buf()
}

/// A program of the project's virtual environment, or why the test cannot run here (it is
/// then reported `ignored`; in CI its absence fails the test).
fn venv_tool(name: &str) -> Result<PathBuf, String> {
    let path = repo_root().join(".venv").join("bin").join(name);
    if path.is_file() {
        return Ok(path);
    }
    assert!(
        !harness::in_ci(),
        "{} is missing; .ci/run makes it with `python3 -m venv .venv && .venv/bin/pip install -r clients/requirements.txt`",
        path.display()
    );
    Err(format!(
        "skipped: {} is missing (outside CI); make it with `python3 -m venv .venv && .venv/bin/pip install -r clients/requirements.txt`",
        path.display()
    ))
}

/// This file's tests.
pub fn tests() -> Vec<harness::Test> {
    vec![
        harness::test(
            "the_document_describes_the_catalog",
            the_document_describes_the_catalog,
        ),
        harness::needing(
            "the_document_is_valid_openapi_3_1",
            || venv_tool("python"),
            the_document_is_valid_openapi_3_1,
        ),
        harness::needing(
            "schemathesis_runs_against_the_reference_with_it",
            || venv_tool("schemathesis"),
            schemathesis_runs_against_the_reference_with_it,
        ),
    ]
}

fn generate(dir: &Path) -> (PathBuf, Value) {
    let file = dir.join("openapi.json");
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["openapi", "--output"])
        .arg(&file)
        .output()
        .expect("conform runs");
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("the file is written")).expect("JSON");
    (file, doc)
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("conform-openapi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            if method != "servers" && method != "parameters" {
                out.push((path.clone(), method.clone(), op));
            }
        }
    }
    out
}

fn the_document_describes_the_catalog() {
    let dir = temp_dir("shape");
    let (_, doc) = generate(&dir);
    assert_eq!(doc["openapi"], "3.1.0");
    let ops = operations(&doc);
    // Every endpoint under both path forms: far more than the ~180 rows of the catalog.
    assert!(ops.len() > 300, "{} operations", ops.len());
    let stdout = Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("openapi")
        .output()
        .expect("conform runs");
    assert!(stdout.status.success());
    let printed: Value = serde_json::from_slice(&stdout.stdout).expect("stdout is the document");
    assert_eq!(printed, doc, "stdout and --output give the same document");

    let mut ids = std::collections::BTreeSet::new();
    for (path, method, op) in &ops {
        let id = op["operationId"].as_str().expect("operationId");
        assert!(ids.insert(id.to_string()), "operationId {id} used twice");
        // Every `{param}` of the path is declared as a required path parameter.
        let declared: Vec<&str> = op["parameters"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .filter(|p| p["in"] == "path")
                    .filter_map(|p| p["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        for seg in path.split('/') {
            if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                assert!(
                    declared.contains(&name),
                    "{method} {path}: {name} undeclared"
                );
            }
        }
        assert!(op["responses"].is_object(), "{method} {path}: no responses");
    }
    // Both path forms, request bodies from the payload templates, paging, bearer auth.
    let org_create = &doc["paths"]["/api/v2/organizations"]["post"];
    assert_eq!(
        org_create["requestBody"]["content"]["application/vnd.api+json"]["schema"]["properties"]
            ["data"]["properties"]["type"]["const"],
        "organizations"
    );
    assert_eq!(
        org_create["responses"]["201"]["content"]["application/vnd.api+json"]["schema"]["$ref"],
        "#/components/schemas/envelope.single"
    );
    assert!(doc["paths"]["/organizations"]["post"].is_object());
    let paged: Vec<_> = ops
        .iter()
        .filter(|(_, _, op)| {
            op["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["name"] == "page[size]"))
        })
        .collect();
    assert!(paged.len() >= 10, "{} paged operations", paged.len());
    assert_eq!(
        doc["components"]["securitySchemes"]["bearerAuth"]["scheme"],
        "bearer"
    );
    // The registry protocol under its own server.
    let registry = &doc["paths"]["/{namespace}/{name}/{provider}/versions"];
    assert_eq!(registry["servers"][0]["url"], "/api/registry/v1/modules");
    let _ = std::fs::remove_dir_all(&dir);
}

fn the_document_is_valid_openapi_3_1(python: PathBuf) {
    let dir = temp_dir("validate");
    let (file, _) = generate(&dir);
    let script = "import json, sys\nfrom openapi_spec_validator import validate\nfrom openapi_spec_validator.validation.validators import OpenAPIV31SpecValidator\nvalidate(json.load(open(sys.argv[1])), cls=OpenAPIV31SpecValidator)\nprint('valid')\n";
    let out = Command::new(python)
        .args(["-c", script])
        .arg(&file)
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn schemathesis_runs_against_the_reference_with_it(schemathesis: PathBuf) {
    let dir = temp_dir("schemathesis");
    let (file, _) = generate(&dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let token = "openapi-test-token";
    let config = conform_reference::Config {
        token: token.into(),
        ..Default::default()
    };
    let running = runtime
        .block_on(conform_reference::start(config))
        .expect("the reference starts");
    // A few operations of each kind, bounded in examples, with a fixed seed; the whole run
    // within 120 s. (`negative_data_rejection` is not asked for: the reference takes a PATCH
    // without `data.attributes` and a body without `data.type`, which the document's inferred
    // schemas mark required and no fact states as refused.)
    let log = dir.join("schemathesis.log");
    let mut child = Command::new(schemathesis)
        .arg("run")
        .arg(&file)
        .args(["--url", &running.root_url()])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", "not_a_server_error"])
        .args(["--seed", "14"])
        .args(["--max-examples", "3"])
        .args(["--request-timeout", "5"])
        .args(["--phases", "examples,coverage,fuzzing,stateful"])
        .args(["--workers", "1"])
        .args([
            "--include-operation-id-regex",
            r"^(organizations\.(list|create|show|update|delete)|fixtures\.workspace\.create|teams\.(list|create)|variables\.list)\.api-v2$",
        ])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdout(std::fs::File::create(&log).expect("log"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("schemathesis runs");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    runtime.block_on(async { running.shutdown() });
    let report = std::fs::read_to_string(&log).unwrap_or_default();
    let status = status.unwrap_or_else(|| panic!("schemathesis ran over 120 s\n{report}"));
    assert!(status.success(), "{report}");
    assert!(report.contains("Tested:"), "{report}");
    assert!(!report.contains("Configuration error"), "{report}");
    // The stateful phase follows the create -> show links to real resources.
    assert!(report.contains("API Links:"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
