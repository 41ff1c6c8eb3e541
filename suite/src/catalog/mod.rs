//! The catalog: every documented endpoint, read from `cases/` (embedded, or `--cases DIR`),
//! checked for consistency, and expanded into one test per endpoint and path variant.

pub mod families;
mod find;
mod model;
mod paths;
mod variants;

pub use find::Matched;
pub use model::*;
pub use paths::{
    encode_segment, fill_params, path_for, path_params, Organizations, ParamSource, API_PREFIX,
    REGISTRY, REGISTRY_DEFAULT, UPLOAD,
};
pub use variants::{TestCase, Variant};

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use include_dir::{include_dir, Dir};

static EMBEDDED: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../cases");

/// A catalog file that could not be read or does not fit the format.
#[derive(Debug, thiserror::Error)]
#[error("catalog `{path}`: {message}")]
pub struct CatalogError {
    /// The file (relative to the cases folder) at fault.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl CatalogError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// The whole catalog: groups, the resource graph, the payload templates and the sequence
/// families.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Endpoint groups, sorted by name.
    pub groups: Vec<Group>,
    /// How resources are made and found.
    pub graph: ResourceGraph,
    payloads: BTreeMap<String, String>,
    /// The sequence families (`sequences/<name>.toml`), in report order.
    pub families: Vec<Arc<families::model::Family>>,
    /// Where the catalog came from (`embedded` or a folder).
    pub origin: String,
    /// Input that must be refused (`refuse.toml`), in file order.
    pub refusals: Vec<Refusal>,
    /// Input TFE takes (`accept.toml`), in file order.
    pub acceptances: Vec<Acceptance>,
}

impl Catalog {
    /// The catalog built into the binary.
    pub fn embedded() -> Result<Self, CatalogError> {
        let mut files = Vec::new();
        collect_embedded(&EMBEDDED, &mut files);
        Self::from_files(files, "embedded".to_string())
    }

    /// Every file of the embedded `cases/` with its path, as built into the binary (what
    /// `conform certify` hashes).
    pub fn embedded_files() -> Vec<(String, &'static [u8])> {
        every_file(&EMBEDDED)
    }

    /// A catalog read from a folder laid out like `cases/`.
    pub fn from_dir(dir: &Path) -> Result<Self, CatalogError> {
        let mut files = Vec::new();
        collect_dir(dir, dir, &mut files)?;
        Self::from_files(files, dir.display().to_string())
    }

    fn from_files(files: Vec<(String, String)>, origin: String) -> Result<Self, CatalogError> {
        let mut groups = Vec::new();
        let mut graph = None;
        let mut payloads = BTreeMap::new();
        let mut families = Vec::new();
        let mut refusals = Vec::new();
        let mut acceptances = Vec::new();
        for (path, text) in files {
            if let Some(name) = path.strip_prefix("payloads/") {
                serde_json::from_str::<serde_json::Value>(&text)
                    .map_err(|e| CatalogError::new(&path, format!("not JSON: {e}")))?;
                payloads.insert(name.to_string(), text);
            } else if path.starts_with("groups/") && path.ends_with(".toml") {
                let group: Group =
                    toml::from_str(&text).map_err(|e| CatalogError::new(&path, e.to_string()))?;
                groups.push(group);
            } else if let Some(name) = path
                .strip_prefix("sequences/")
                .and_then(|p| p.strip_suffix(".toml"))
            {
                let family =
                    families::file::parse(name, &text).map_err(|e| CatalogError::new(&path, e))?;
                families.push(Arc::new(family));
            } else if path == "refuse.toml" {
                let file: RefuseFile =
                    toml::from_str(&text).map_err(|e| CatalogError::new(&path, e.to_string()))?;
                refusals = file.refuse;
            } else if path == "accept.toml" {
                let file: AcceptFile =
                    toml::from_str(&text).map_err(|e| CatalogError::new(&path, e.to_string()))?;
                acceptances = file.accept;
            } else if path == "resources.toml" {
                graph = Some(
                    toml::from_str(&text).map_err(|e| CatalogError::new(&path, e.to_string()))?,
                );
            }
        }
        groups.sort_by(|a, b| a.group.cmp(&b.group));
        families::sort(&mut families);
        let graph = graph.ok_or_else(|| CatalogError::new("resources.toml", "missing"))?;
        let catalog = Self {
            groups,
            graph,
            payloads,
            families,
            origin,
            refusals,
            acceptances,
        };
        catalog.validate()?;
        Ok(catalog)
    }

    /// The payload template of that name.
    pub fn payload(&self, name: &str) -> Option<&str> {
        self.payloads.get(name).map(String::as_str)
    }

    /// The endpoint named `group::id`, or `id` within `default_group`.
    pub fn endpoint(&self, reference: &str, default_group: &str) -> Option<(&Group, &Endpoint)> {
        let (group, id) = reference
            .split_once("::")
            .unwrap_or((default_group, reference));
        let group = self.groups.iter().find(|g| g.group == group)?;
        group
            .endpoints
            .iter()
            .find(|e| e.id == id)
            .map(|e| (group, e))
    }

    /// The show endpoint of a resource kind, if the catalog has one.
    pub fn show_of(&self, kind: &str) -> Option<(&Group, &Endpoint)> {
        // Prefer a show that needs no administrator token.
        let mut shows: Vec<_> = self
            .endpoints()
            .filter(|(_, e)| e.kind == Kind::Show && e.resource.as_deref() == Some(kind))
            .collect();
        shows.sort_by_key(|(_, e)| e.admin);
        shows.into_iter().next()
    }

    /// Where to ask whether a `kind` resource exists, as a path template without the prefix:
    /// its own show (`show` in `resources.toml`), else a show endpoint that needs no
    /// administrator token. An administrator route answers for administrator tests only: a
    /// server without the admin API knows the resource all the same.
    pub fn existence_show(&self, kind: &str) -> Option<String> {
        let mut def = self.graph.resources.get(kind)?;
        while let Some(other) = def.same_as.as_deref() {
            def = self.graph.resources.get(other)?;
        }
        if let Some(own) = &def.show {
            return Some(own.path.clone());
        }
        let (_, show) = self.show_of(kind)?;
        (!show.admin).then(|| path_for(&show.path, Variant::Bare))
    }

    /// The shows of top-level items (`/workspaces/:workspace_id`: a collection and one id),
    /// that need no administrator token, as bare path templates in catalog order, each once.
    pub fn top_level_shows(&self) -> impl Iterator<Item = String> + '_ {
        let mut seen = std::collections::BTreeSet::new();
        self.endpoints()
            .filter(|(_, e)| e.kind == Kind::Show && !e.admin && e.method.as_str() == "GET")
            .map(|(_, e)| path_for(&e.path, Variant::Bare))
            .filter(|path| {
                let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
                matches!(segments.as_slice(), [collection, id]
                    if !collection.starts_with(':') && id.starts_with(':'))
            })
            .filter(move |path| seen.insert(path.clone()))
    }

    /// A cheap administrator read (a GET whose path names nothing, the first in catalog
    /// order): preflight checks the administrator token with it.
    pub fn admin_read(&self) -> Option<String> {
        self.endpoints()
            .find(|(_, e)| {
                e.admin
                    && e.method.as_str() == "GET"
                    && matches!(e.kind, Kind::List | Kind::Show | Kind::Read)
                    && !e.path.contains([':', '{'])
            })
            .map(|(_, e)| e.path.clone())
    }

    /// The list that holds resources of `kind` (a list endpoint whose `contains` names it;
    /// one that needs no administrator token first): where a kind without a show is seen.
    pub fn list_of(&self, kind: &str) -> Option<(&Group, &Endpoint)> {
        let mut lists: Vec<_> = self
            .endpoints()
            .filter(|(_, e)| e.kind == Kind::List && e.expect.contains.as_deref() == Some(kind))
            .collect();
        lists.sort_by_key(|(_, e)| e.admin);
        lists.into_iter().next()
    }

    /// The test that judges a request to the service's API (method and URL path relative to
    /// the service root): its endpoint and path form, [`Catalog::find`]. A failed fixture
    /// request is reported there, once; the tests it blocks point to it. The registry's
    /// address is the target's to say and an upload address does not say whose upload it is:
    /// a request there is judged by the test that sent it.
    pub fn test_for(&self, method: &str, path: &str) -> Option<String> {
        self.api_endpoint(method, path).map(|m| m.test_name())
    }

    /// Every form the catalog knows of the request `method path` (relative to the service
    /// root): the endpoint's path, its other spelling and its deprecated form, and for a
    /// delete the other delete endpoints of the same resource (a registry module's per-module
    /// delete beside its per-provider one), each with and without `/api/v2`, filled with the
    /// values the request's path holds. The request's own form comes first. A form that names
    /// a parameter the request does not hold is left out.
    pub fn forms_of(&self, method: &str, path: &str) -> Vec<(String, String)> {
        let Some(found) = self.api_endpoint(method, path) else {
            return vec![(method.to_string(), path.to_string())];
        };
        let e = &found.row;
        let siblings = self.endpoints().filter_map(|(g, other)| {
            let sibling = e.kind == Kind::Delete
                && other.kind == Kind::Delete
                && other.resource.is_some()
                && other.resource == e.resource
                && format!("{}::{}", g.group, other.id) != found.endpoint;
            sibling.then_some(other)
        });
        let templates = std::iter::once(e)
            .chain(siblings)
            .flat_map(|e| {
                [
                    Some((e.method.as_str(), e.path.as_str())),
                    e.alias
                        .as_ref()
                        .map(|a| (e.method.as_str(), a.path.as_str())),
                    e.deprecated
                        .as_ref()
                        .map(|d| (d.method.as_str(), d.path.as_str())),
                ]
            })
            .collect::<Vec<_>>();
        let mut forms = vec![(method.to_string(), path.to_string())];
        for (m, template) in templates.into_iter().flatten() {
            let Some(bare) = found.fill(template) else {
                continue;
            };
            for candidate in [format!("{}{bare}", API_PREFIX), bare.clone()] {
                let form = (m.to_string(), candidate);
                if !forms.contains(&form) {
                    forms.push(form);
                }
            }
        }
        forms
    }

    /// The path of the show of a `kind` resource, filled from the path of a request about it
    /// (its delete): a GET of the delete's own path, where the catalog or a kind's own show
    /// has one, shows what the delete removes (an invited user's membership, a workspace);
    /// else the kind's show (the catalog's, else its own).
    pub fn show_path_for(&self, kind: &str, method: &str, path: &str) -> Option<String> {
        // the GET of the delete's own path, where the catalog has one, or where some kind's
        // own show (`show` in resources.toml: TFE's workspace and policy shows) is that route
        let bare = path.strip_prefix(API_PREFIX).unwrap_or(path);
        let own_show = |def: &ResourceDef| {
            def.show.as_ref().is_some_and(|show| {
                show.method.method() == reqwest::Method::GET && same_shape(&show.path, bare)
            })
        };
        if method != "GET"
            && (self.api_endpoint("GET", path).is_some()
                || self.graph.resources.values().any(own_show))
        {
            return Some(path.to_string());
        }
        let found = self.api_endpoint(method, path)?;
        let template = match self.show_of(kind) {
            Some((_, show)) => show.path.clone(),
            None => self.existence_show(kind)?,
        };
        let bare = found.fill(&template)?;
        Some(if found.variant.has_prefix() {
            format!("{}{bare}", API_PREFIX)
        } else {
            bare
        })
    }

    /// [`Catalog::find`] among the forms of the service's own API.
    fn api_endpoint(&self, method: &str, path: &str) -> Option<Matched> {
        self.find(method, path).filter(Matched::on_api)
    }

    /// The create test of a resource kind in the canonical path form, where its creation is
    /// judged (and `create.then-show` with it).
    pub fn create_test_of(&self, kind: &str, prefixed: bool) -> Option<String> {
        let variant = if prefixed {
            Variant::ApiV2
        } else {
            Variant::Bare
        };
        self.endpoints()
            .find(|(_, e)| e.kind == Kind::Create && e.resource.as_deref() == Some(kind))
            .map(|(g, e)| format!("{}::{}::{}", g.group, e.id, variant.as_str()))
    }

    /// The upload test of a resource kind (`configuration_versions::upload::upload`).
    pub fn upload_test_of(&self, kind: &str) -> Option<String> {
        self.upload_endpoint(kind)
            .map(|(g, e)| format!("{}::{}::{}", g.group, e.id, Variant::Upload.as_str()))
    }

    /// The upload endpoint of a resource kind (a PUT to the address its create answers).
    pub fn upload_of(&self, kind: &str) -> Option<&Endpoint> {
        self.upload_endpoint(kind).map(|(_, e)| e)
    }

    fn upload_endpoint(&self, kind: &str) -> Option<(&Group, &Endpoint)> {
        self.endpoints()
            .find(|(_, e)| e.path.starts_with(UPLOAD) && e.resource.as_deref() == Some(kind))
    }

    /// The refusal cases the test of `group::id` sends.
    pub fn refusals_for<'a>(
        &'a self,
        group: &'a str,
        id: &'a str,
    ) -> impl Iterator<Item = &'a Refusal> {
        self.refusals
            .iter()
            .filter(move |r| r.endpoint.split_once("::") == Some((group, id)))
    }

    /// The cases of input TFE takes that the test of `group::id` sends.
    pub fn acceptances_for<'a>(
        &'a self,
        group: &'a str,
        id: &'a str,
    ) -> impl Iterator<Item = &'a Acceptance> {
        self.acceptances
            .iter()
            .filter(move |r| r.endpoint.split_once("::") == Some((group, id)))
    }

    /// Every endpoint with its group.
    pub fn endpoints(&self) -> impl Iterator<Item = (&Group, &Endpoint)> {
        self.groups
            .iter()
            .flat_map(|g| g.endpoints.iter().map(move |e| (g, e)))
    }

    /// Number of method + path rows: endpoints plus their deprecated forms.
    pub fn row_count(&self) -> usize {
        self.endpoints()
            .map(|(_, e)| 1 + usize::from(e.deprecated.is_some()))
            .sum()
    }

    /// Every test: one per endpoint and path variant, sorted by name.
    pub fn tests(&self) -> Vec<TestCase> {
        let mut tests: Vec<TestCase> = self
            .endpoints()
            .flat_map(|(g, e)| variants::expand(g, e))
            .collect();
        tests.sort_by(|a, b| a.name.cmp(&b.name));
        tests
    }

    fn validate(&self) -> Result<(), CatalogError> {
        let kinds: BTreeSet<&str> = self.graph.resources.keys().map(String::as_str).collect();
        self.validate_groups(&kinds)?;
        self.validate_resources(&kinds)?;
        self.validate_cases(&kinds)
    }

    /// Each group's endpoints: ids once, payloads, kinds and `before`/`after` endpoints that
    /// exist, the group's probe.
    fn validate_groups(&self, kinds: &BTreeSet<&str>) -> Result<(), CatalogError> {
        let mut names = BTreeSet::new();
        for group in &self.groups {
            let file = format!("groups/{}.toml", group.group);
            if !names.insert(&group.group) {
                return Err(CatalogError::new(file, "group defined twice"));
            }
            let mut ids = BTreeSet::new();
            for e in &group.endpoints {
                let at = |m: String| CatalogError::new(&file, format!("endpoint `{}`: {m}", e.id));
                if !ids.insert(&e.id) {
                    return Err(at("id used twice".into()));
                }
                if let Some(p) = &e.payload {
                    if !self.payloads.contains_key(p) {
                        return Err(at(format!("payload `{p}` not found under payloads/")));
                    }
                }
                let mut used: Vec<&String> = e.fresh.iter().collect();
                used.extend(e.resource.iter());
                used.extend(e.expect.contains.iter());
                used.extend(e.expect.shows.iter());
                for kind in used {
                    if !kinds.contains(kind.as_str()) {
                        return Err(at(format!("unknown resource kind `{kind}`")));
                    }
                }
                for before in e.before.iter().chain(e.after.iter()) {
                    if self.endpoint(before, &group.group).is_none() {
                        return Err(at(format!("`before` names unknown endpoint `{before}`")));
                    }
                }
                if let Some(probe) = &group.probe {
                    if self.endpoint(probe, &group.group).is_none() {
                        return Err(CatalogError::new(&file, format!("unknown probe `{probe}`")));
                    }
                }
            }
        }
        Ok(())
    }

    /// `resources.toml`: parents, `from` kinds and payloads that exist.
    fn validate_resources(&self, kinds: &BTreeSet<&str>) -> Result<(), CatalogError> {
        for (kind, def) in &self.graph.resources {
            let at = |m: String| CatalogError::new("resources.toml", format!("`{kind}`: {m}"));
            for parent in def.parents.iter().chain(def.same_as.iter()) {
                if !kinds.contains(parent.as_str()) {
                    return Err(at(format!("unknown kind `{parent}`")));
                }
            }
            if let Some(changed) = def.changes.iter().find(|c| !def.parents.contains(c)) {
                return Err(at(format!(
                    "`changes` names `{changed}`, which is no parent"
                )));
            }
            if let Some(from) = &def.from {
                if !kinds.contains(from.resource.as_str()) {
                    return Err(at(format!("unknown kind `{}`", from.resource)));
                }
            }
            for route in def
                .create
                .iter()
                .chain(def.before.iter())
                .chain(def.after.iter())
            {
                if let Some(p) = &route.payload {
                    if !self.payloads.contains_key(p) {
                        return Err(at(format!("payload `{p}` not found under payloads/")));
                    }
                }
            }
        }
        Ok(())
    }

    /// `refuse.toml`, `accept.toml` and the parameters' kinds.
    fn validate_cases(&self, kinds: &BTreeSet<&str>) -> Result<(), CatalogError> {
        for (i, r) in self.refusals.iter().enumerate() {
            let at = |m: String| CatalogError::new("refuse.toml", format!("case {}: {m}", i + 1));
            if !r.endpoint.contains("::") || self.endpoint(&r.endpoint, "").is_none() {
                return Err(at(format!("unknown endpoint `{}` (group::id)", r.endpoint)));
            }
            if r.absent.is_some() == r.unchanged.is_some() {
                return Err(at(
                    "give exactly one proof that nothing was stored: `absent` or `unchanged`"
                        .into(),
                ));
            }
            if let Some(kind) = &r.kind {
                if !kinds.contains(kind.as_str()) {
                    return Err(at(format!("unknown resource kind `{kind}`")));
                }
            }
        }
        for (i, a) in self.acceptances.iter().enumerate() {
            if !a.endpoint.contains("::") || self.endpoint(&a.endpoint, "").is_none() {
                return Err(CatalogError::new(
                    "accept.toml",
                    format!(
                        "case {}: unknown endpoint `{}` (group::id)",
                        i + 1,
                        a.endpoint
                    ),
                ));
            }
        }
        for (param, target) in &self.graph.params {
            if let Some((kind, _)) = target.split_once('.') {
                if !target.starts_with('=') && !kinds.contains(kind) {
                    return Err(CatalogError::new(
                        "resources.toml",
                        format!("param `{param}` maps to unknown kind `{kind}`"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Every file under an embedded folder, with its path inside it, sorted by path.
pub fn every_file(dir: &'static Dir<'static>) -> Vec<(String, &'static [u8])> {
    fn walk(dir: &'static Dir<'static>, out: &mut Vec<(String, &'static [u8])>) {
        for file in dir.files() {
            out.push((
                file.path().to_string_lossy().replace('\\', "/"),
                file.contents(),
            ));
        }
        for sub in dir.dirs() {
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

fn collect_embedded(dir: &Dir<'_>, out: &mut Vec<(String, String)>) {
    for file in dir.files() {
        if let Some(text) = file.contents_utf8() {
            out.push((
                file.path().to_string_lossy().replace('\\', "/"),
                text.to_string(),
            ));
        }
    }
    for sub in dir.dirs() {
        collect_embedded(sub, out);
    }
}

fn collect_dir(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, String)>,
) -> Result<(), CatalogError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CatalogError::new(dir.display().to_string(), e.to_string()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| CatalogError::new(dir.display().to_string(), e.to_string()))?
            .path();
        if path.is_dir() {
            collect_dir(root, &path, out)?;
        } else {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let rel = rel.to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CatalogError::new(&rel, e.to_string()))?;
            out.push((rel, text));
        }
    }
    Ok(())
}

/// True when a path template (`/workspaces/:workspace_id`) has the shape of a path: as many
/// segments, each a parameter or the same text.
fn same_shape(template: &str, path: &str) -> bool {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len()
        && t.iter()
            .zip(&p)
            .all(|(t, p)| t.starts_with(':') && !p.is_empty() || t == p)
}
