//! `cases/sequences/`: every family file loads, every family the harness names has one, and
//! a broken file is refused with an error that names the file and what is wrong.

use std::path::{Path, PathBuf};

use conform::catalog::families::{file, FAMILIES};
use conform::catalog::Catalog;

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")
}

fn family_files() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(cases().join("sequences"))
        .expect("cases/sequences/ exists")
        .map(|e| e.expect("a directory entry").path())
        .map(|p| {
            assert_eq!(
                p.extension().and_then(|e| e.to_str()),
                Some("toml"),
                "{} is not a .toml file",
                p.display()
            );
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn every_file_under_cases_sequences_loads() {
    let files = family_files();
    assert!(!files.is_empty());
    for (name, text) in &files {
        let family =
            file::parse(name, text).unwrap_or_else(|e| panic!("cases/sequences/{name}.toml: {e}"));
        assert_eq!(&family.name, name);
        assert!(!family.colls.is_empty());
    }
    let catalog = Catalog::from_dir(&cases()).expect("cases/ loads");
    assert_eq!(catalog.families.len(), files.len());
}

fn every_family_the_harness_names_has_a_file_and_runs_in_report_order() {
    let files: Vec<String> = family_files().into_iter().map(|(n, _)| n).collect();
    for name in FAMILIES {
        assert!(
            files.iter().any(|f| f == name),
            "family `{name}` has no cases/sequences/{name}.toml"
        );
    }
    let embedded = Catalog::embedded().expect("the embedded catalog loads");
    let names: Vec<&str> = embedded.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, FAMILIES);
    let loaded: Vec<&str> = conform::sequences::families()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(loaded, FAMILIES);
}

/// TFE routes the spec's tables do not list that the families use (tfe-api-facts: a
/// workspace's, and a policy set's delete at TFE's path): the engine judges them as what the
/// family file says they are, at TFE's status for that kind.
const BEYOND_THE_CATALOG: &[&str] = &[
    "POST /organizations/{org}/workspaces",
    "GET /organizations/{org}/workspaces",
    "GET /workspaces/{id}",
    "PATCH /workspaces/{id}",
    "DELETE /workspaces/{id}",
    "DELETE /policy-sets/{id}",
];

/// Every request a family file writes is an endpoint of the catalog, or one of the few TFE
/// routes beyond it: the engine judges each answer by the endpoint `Catalog::find` matches it
/// to (its statuses, kind and schemas), so that a route the catalog knows is never judged by
/// another rule.
fn every_route_of_every_family_file_matches_a_catalog_endpoint() {
    use conform::catalog::families::model::{get, Route};
    let catalog = Catalog::embedded().expect("the embedded catalog loads");
    // `{org}`, `{id}`, `{ns}-t{unique}`…: any value stands for a template's placeholder
    let filled = |template: &str| {
        let mut out = String::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            out.push('x');
            rest = rest[open..].split_once('}').map_or("", |(_, after)| after);
        }
        out + rest
    };
    let mut beyond = std::collections::BTreeSet::new();
    let mut matched = 0;
    for family in &catalog.families {
        for coll in &family.colls {
            let registry = coll.list_read.as_ref().is_some_and(|r| r.registry);
            let mut routes: Vec<(&str, Route)> = vec![("create", coll.create.clone())];
            routes.extend(coll.create_alt.clone().map(|r| ("create_alt", r)));
            routes.extend(coll.show.as_deref().map(|p| ("show", get(p))));
            routes.extend(coll.show_alt.as_deref().map(|p| ("show_alt", get(p))));
            routes.extend(coll.list.as_deref().map(|p| ("list", get(p))));
            routes.extend(coll.update.as_ref().map(|u| ("update", u.route.clone())));
            routes.extend(coll.delete.clone().map(|r| ("delete", r)));
            routes.extend(
                coll.delete_alt
                    .iter()
                    .map(|d| ("delete_alt", d.route.clone())),
            );
            routes.extend(coll.cleanup.clone().map(|r| ("cleanup", r)));
            for action in coll.state.iter().flat_map(|s| &s.actions) {
                // an upload goes to the address the create answered
                if !action.upload {
                    routes.push(("action", action.route.clone()));
                }
            }
            for (what, route) in routes {
                let path = filled(&route.path);
                let path = if registry && what == "list" {
                    let at = conform::catalog::REGISTRY_DEFAULT.trim_end_matches('/');
                    format!("{at}/{path}")
                } else {
                    path
                };
                let written = format!("{} {}", route.method.as_str(), route.path);
                if catalog.find(route.method.as_str(), &path).is_some() {
                    matched += 1;
                    continue;
                }
                assert!(
                    BEYOND_THE_CATALOG.contains(&written.as_str()),
                    "cases/sequences/{}.toml, {} `{what}`: {written} matches no endpoint of the catalog",
                    family.name,
                    coll.kind,
                );
                beyond.insert(written);
            }
        }
    }
    assert!(matched > 50, "{matched} routes matched");
    let listed: std::collections::BTreeSet<String> =
        BEYOND_THE_CATALOG.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        beyond, listed,
        "BEYOND_THE_CATALOG lists only routes the families use"
    );
    // a team create is the catalog's, with TFE's documented 200 beside 201
    let team = catalog
        .find("POST", "/api/v2/organizations/x/teams")
        .unwrap();
    assert_eq!(team.endpoint, "teams::create");
    assert_eq!(team.row.expect.status, [200, 201]);
}

const MINIMAL: &str = r#"
family = "things"

[[collections]]
kind = "thing"
create = { method = "POST", path = "/organizations/{org}/things", body = '{"data":{"type":"things"}}' }
show = "/things/{id}"
"#;

fn parse_err(text: &str) -> String {
    file::parse("things", text).expect_err("refused")
}

fn a_minimal_family_takes_the_defaults() {
    let f = file::parse("things", MINIMAL).unwrap();
    assert!(f.namespace);
    let c = &f.colls[0];
    assert_eq!(c.unknown_id, "conform-unknown-0000");
    assert_eq!(c.id_pointer, "/data/id");
    assert_eq!(c.weight, 0);
    assert!(c.state.is_none() && c.parent.is_none() && c.delete.is_none());
}

fn broken_files_are_refused_with_the_field_and_the_valid_names() {
    let e = parse_err(&format!("{MINIMAL}colour = \"red\"\n"));
    assert!(e.contains("unknown field `colour`"), "{e}");

    let e = file::parse("other", MINIMAL).unwrap_err();
    assert!(e.contains("file name `other`"), "{e}");

    let e = parse_err(&format!("{MINIMAL}parent = \"widget\"\n"));
    assert!(
        e.contains("`parent = \"widget\"`") && e.contains("kinds: thing"),
        "{e}"
    );

    let e = parse_err(&MINIMAL.replace("\"POST\"", "\"FETCH\""));
    assert!(
        e.contains("`FETCH` is no HTTP method") && e.contains("create = {"),
        "{e}"
    );

    let e = parse_err(&MINIMAL.replace(r#"'{"data":{"type":"things"}}'"#, "'{\"data\":'"));
    assert!(e.contains("body is not JSON"), "{e}");

    let state = "[collections.state]\npointer = \"/attributes/status\"\ninitial = \"a\"\n\n\
                 [[collections.state.actions]]\nname = \"poke\"\npath = \"/things/{id}/poke\"\n";
    let e = parse_err(&format!("{MINIMAL}{state}transition = \"poke\"\n"));
    assert!(
        e.contains("action `poke`: unknown transition function `poke`; valid names: suspend, unsuspend, grant_admin, revoke_admin"),
        "{e}"
    );
    let e = parse_err(&format!(
        "{MINIMAL}{state}transition = \"suspend\"\nto = \"b\"\n"
    ));
    assert!(e.contains("not both"), "{e}");

    let e = parse_err(&format!(
        "{MINIMAL}[collections.state]\npointer = \"/p\"\nread = \"flags\"\n"
    ));
    assert!(
        e.contains("unknown state.read function `flags`; valid names: user"),
        "{e}"
    );

    let e = parse_err(&format!(
        "{MINIMAL}[collections.state]\npointer = \"/p\"\ninitial_from = \"run\"\n"
    ));
    assert!(e.contains("`configuration version`"), "{e}");
}

fn a_cases_folder_overrides_the_families_and_its_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("conform-seqfiles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&cases(), &dir);
    let agents = dir.join("sequences/agents.toml");
    let text = std::fs::read_to_string(&agents).unwrap();
    std::fs::write(
        &agents,
        text.replace("apool-conformunknow", "apool-elsewhere"),
    )
    .unwrap();
    let catalog = Catalog::from_dir(&dir).expect("the copy loads");
    let family = catalog
        .families
        .iter()
        .find(|f| f.name == "agents")
        .unwrap();
    assert_eq!(family.colls[0].unknown_id, "apool-elsewhere");

    std::fs::write(&agents, format!("{text}\nshout = true\n")).unwrap();
    let e = Catalog::from_dir(&dir).unwrap_err().to_string();
    assert!(e.starts_with("catalog `sequences/agents.toml`: "), "{e}");
    assert!(e.contains("unknown field `shout`"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![
        every_file_under_cases_sequences_loads,
        every_family_the_harness_names_has_a_file_and_runs_in_report_order,
        every_route_of_every_family_file_matches_a_catalog_endpoint,
        a_minimal_family_takes_the_defaults,
        broken_files_are_refused_with_the_field_and_the_valid_names,
        a_cases_folder_overrides_the_families_and_its_errors_name_the_file
    ]
}
