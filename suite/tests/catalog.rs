//! The catalog against the spec: every method + path row of the spec's Endpoints part is in
//! `cases/`, exactly once, and nothing else is. A dropped or mistyped row fails the tests.
//!
//! The spec is read at run time from `../shared/spec/` beside the clone (README says where
//! it lives). Without it, the tests that need it are reported `ignored` with that reason;
//! in CI (`CI` set) its absence is a failure. A libtest-mimic harness, so that a skip is
//! shown as one, not as `ok`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use conform::catalog::Catalog;

use crate::harness;

/// Where the spec lives: `../shared/spec/` beside the clone.
fn spec_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec/000_02ffe03873a68711.txt")
}

/// The spec's text, or why a test that needs it cannot run (in CI its absence fails).
fn spec() -> Result<String, String> {
    let path = spec_path();
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text),
        Err(e) if harness::in_ci() => panic!(
            "the spec is not at {} ({e}), and CI is set: CI needs it beside the clone",
            path.display()
        ),
        Err(_) => Err(format!(
            "skipped: the spec is not at {} (README: where the spec lives)",
            path.display()
        )),
    }
}

/// This file's tests.
pub fn tests() -> Vec<harness::Test> {
    vec![
        harness::needing("spec_parser_finds_183_rows", spec, |spec| {
            spec_parser_finds_183_rows(&spec)
        }),
        harness::needing("catalog_holds_every_spec_row_exactly_once", spec, |spec| {
            catalog_holds_every_spec_row_exactly_once(&spec)
        }),
        harness::test("catalog_keeps_the_quirks", catalog_keeps_the_quirks),
        harness::test(
            "a_delete_has_every_form_the_catalog_knows",
            a_delete_has_every_form_the_catalog_knows,
        ),
        harness::test(
            "every_endpoint_has_both_prefix_variants_and_names_are_unique",
            every_endpoint_has_both_prefix_variants_and_names_are_unique,
        ),
    ]
}

/// (method, path) rows of the Endpoints part, as the spec writes them.
fn spec_rows(spec: &str) -> Vec<(String, String)> {
    let endpoints = spec
        .split("## Endpoints")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the spec has an Endpoints part");
    let mut rows = Vec::new();
    let methods = ["GET", "POST", "PATCH", "DELETE", "PUT"];
    for line in endpoints.lines() {
        let line = line.trim();
        if let Some(row) = line.strip_prefix("| ") {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            if cells.len() >= 2 && methods.contains(&cells[0]) {
                let path = cells[1];
                if let Some((a, b)) = path.split_once(" and ") {
                    rows.push((cells[0].to_string(), a.trim().to_string()));
                    rows.push((cells[0].to_string(), b.trim().to_string()));
                } else {
                    rows.push((
                        cells[0].to_string(),
                        path.split(' ').next().unwrap_or(path).to_string(),
                    ));
                }
            }
        } else if let Some(item) = line.strip_prefix("- ") {
            let mut words = item.split_whitespace();
            if let (Some(method), Some(path)) = (words.next(), words.next()) {
                let path = path.trim_end_matches([',', '.']);
                if methods.contains(&method) && path.starts_with('/') {
                    if path.contains("/S-settings") {
                        for s in [
                            "general",
                            "cost-estimation",
                            "saml",
                            "smtp",
                            "twilio",
                            "customization",
                        ] {
                            rows.push((
                                method.to_string(),
                                path.replace("/S-settings", &format!("/{s}-settings")),
                            ));
                        }
                    } else {
                        rows.push((method.to_string(), path.to_string()));
                    }
                }
            }
        }
    }
    rows
}

fn catalog_rows(catalog: &Catalog) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for (_, e) in catalog.endpoints() {
        rows.push((e.method.to_string(), e.path.clone()));
        if let Some(d) = &e.deprecated {
            rows.push((d.method.to_string(), d.path.clone()));
        }
    }
    rows
}

fn spec_parser_finds_183_rows(spec: &str) {
    // Our own count of the Endpoints part: 162 table rows, one of which names two paths,
    // 6 deprecated forms, 12 settings reads and writes, 2 further settings operations.
    assert_eq!(spec_rows(spec).len(), 183);
}

fn catalog_holds_every_spec_row_exactly_once(spec_text: &str) {
    let catalog = Catalog::embedded().expect("the embedded catalog loads");
    let spec: Vec<(String, String)> = spec_rows(spec_text);
    let mine = catalog_rows(&catalog);
    assert_eq!(catalog.row_count(), mine.len());
    let spec_set: BTreeSet<_> = spec.iter().cloned().collect();
    let mine_set: BTreeSet<_> = mine.iter().cloned().collect();
    // The three upload rows share one (method, path): count them separately.
    let uploads = mine
        .iter()
        .filter(|(m, p)| m == "PUT" && p == "{upload_url}")
        .count();
    assert_eq!(uploads, 3, "the three PUT {{upload_url}} rows");
    let missing: Vec<_> = spec_set.difference(&mine_set).collect();
    let extra: Vec<_> = mine_set.difference(&spec_set).collect();
    assert!(
        missing.is_empty(),
        "rows of the spec missing from cases/: {missing:#?}"
    );
    assert!(
        extra.is_empty(),
        "rows in cases/ that the spec does not list: {extra:#?}"
    );
    assert_eq!(mine.len(), spec.len(), "a row is listed twice in cases/");
}

fn catalog_keeps_the_quirks() {
    let catalog = Catalog::embedded().expect("the embedded catalog loads");
    let rows: BTreeSet<_> = catalog_rows(&catalog).into_iter().collect();
    for (method, path) in [
        ("DELETE", "/policies/:policy_set_id"),
        ("POST", "/organizations/:organization_name/agent-pools"),
        ("GET", "{registry_url}/search"),
        (
            "GET",
            "/api/v2/assessment-results/:assessment_result_id/json-output",
        ),
        (
            "POST",
            "/registry-modules/actions/delete/:organization_name/:name/:provider/:version",
        ),
        ("POST", "/api/v2/admin/twilio-settings/verify"),
        (
            "GET",
            "/configuration-versions/:configuration-id/ingress-attributes",
        ),
    ] {
        assert!(
            rows.contains(&(method.to_string(), path.to_string())),
            "{method} {path}"
        );
    }
    let singular = catalog.endpoints().any(|(_, e)| {
        e.alias
            .as_ref()
            .is_some_and(|a| a.path.ends_with("/agent-pool"))
    });
    assert!(
        singular,
        "the agent-pool spelling is a variant of agent pool create"
    );
}

fn every_endpoint_has_both_prefix_variants_and_names_are_unique() {
    let catalog = Catalog::embedded().expect("the embedded catalog loads");
    let tests = catalog.tests();
    let names: BTreeSet<_> = tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), tests.len(), "test names are unique");
    assert!(names.contains("runs::show::api-v2") && names.contains("runs::show::bare"));
    assert!(names.contains("registry_modules::delete_version::deprecated"));
    assert!(
        names.contains("admin_settings::show_general::bare")
            || names
                .iter()
                .any(|n| n.starts_with("admin_settings::") && n.ends_with("::bare"))
    );
    assert!(
        (340..=370).contains(&tests.len()),
        "about 350 tests, found {}",
        tests.len()
    );
}

/// Teardown and sweep try every delete form: both prefixes and the deprecated form, filled
/// with the values of the recorded request.
fn a_delete_has_every_form_the_catalog_knows() {
    let catalog = Catalog::embedded().expect("the embedded catalog loads");
    let forms = catalog.forms_of(
        "DELETE",
        "/api/v2/organizations/acme/registry-modules/private/acme/net/aws",
    );
    let want = [
        (
            "DELETE",
            "/api/v2/organizations/acme/registry-modules/private/acme/net/aws",
        ),
        (
            "DELETE",
            "/organizations/acme/registry-modules/private/acme/net/aws",
        ),
        (
            "POST",
            "/api/v2/registry-modules/actions/delete/acme/net/aws",
        ),
        ("POST", "/registry-modules/actions/delete/acme/net/aws"),
    ];
    for (method, path) in want {
        assert!(
            forms.contains(&(method.to_string(), path.to_string())),
            "{method} {path} missing from {forms:?}"
        );
    }
    assert_eq!(forms[0].1, want[0].1, "the recorded form first");
    assert_eq!(
        catalog.show_path_for("team", "DELETE", "/api/v2/teams/team-1"),
        Some("/api/v2/teams/team-1".to_string())
    );
}
