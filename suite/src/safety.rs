//! What the safety features need from the catalog: the path templates the blast-radius
//! guard matches requests against, and which tests change nothing (`--read-only`).

use crate::catalog::{Catalog, TestCase, Variant};

/// The guard's rules from a catalog: every path template (endpoints, their deprecated and
/// alias forms, the fixture recipes) and the literal values the catalog puts in params.
pub fn guard_rules(catalog: &Catalog) -> (Vec<String>, Vec<String>) {
    let mut templates = Vec::new();
    for (_, e) in catalog.endpoints() {
        templates.push(e.path.clone());
        templates.extend(e.deprecated.iter().map(|r| r.path.clone()));
        templates.extend(e.alias.iter().map(|r| r.path.clone()));
    }
    for def in catalog.graph.resources.values() {
        let routes = def
            .create
            .iter()
            .chain(def.delete.iter())
            .chain(&def.before)
            .chain(&def.after)
            .chain(&def.release);
        templates.extend(routes.map(|r| r.path.clone()));
        templates.extend(def.find.iter().map(|f| f.path.clone()));
    }
    let params = catalog
        .graph
        .params
        .values()
        .chain(catalog.endpoints().flat_map(|(_, e)| e.params.values()));
    let fixed = params
        .filter_map(|v| v.strip_prefix('='))
        .map(str::to_string)
        .collect();
    (templates, fixed)
}

/// True when a test changes nothing on the target: a read (show, list, read, download) by
/// GET, without set-up or restore steps. `--read-only` runs only these.
pub fn changes_nothing(case: &TestCase) -> bool {
    let e = &case.endpoint;
    e.kind.is_read_only()
        && case.method == "GET"
        && case.variant != Variant::Upload
        && e.before.is_empty()
        && e.after.is_empty()
}
