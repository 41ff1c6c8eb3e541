//! Paths as the API writes them, said once: the prefix of Versioning 1, the placeholders of
//! the registry read address and the upload address, the registry's default address,
//! percent-encoding of a path segment, where a path parameter's value comes from (the
//! `[params]` of `resources.toml`), and where organizations live (the organization kind of
//! `resources.toml`).

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::{Catalog, Endpoint, ResourceGraph, Variant};

/// The prefix of Versioning 1.
pub const API_PREFIX: &str = "/api/v2";
/// The placeholder of the registry read address.
pub const REGISTRY: &str = "{registry_url}";
/// The placeholder of the upload address.
pub const UPLOAD: &str = "{upload_url}";
/// Where the registry read protocol is served when discovery does not say (TFE's address).
pub const REGISTRY_DEFAULT: &str = "/api/registry/v1/modules/";

/// The path of `template` under `variant` (the spec's path, normalised).
pub fn path_for(template: &str, variant: Variant) -> String {
    let bare = template.strip_prefix(API_PREFIX).unwrap_or(template);
    let bare = if bare.is_empty() { "/" } else { bare };
    if variant.has_prefix() {
        format!("{API_PREFIX}{bare}")
    } else {
        bare.to_string()
    }
}

/// What a path segment keeps as it is: the unreserved characters of RFC 3986.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes one path segment.
pub fn encode_segment(value: &str) -> String {
    utf8_percent_encode(value, SEGMENT).to_string()
}

/// The `:param` names of a path template.
pub fn path_params(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter_map(|s| s.strip_prefix(':'))
}

/// Where a path parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamSource {
    /// A fixed value.
    Literal(String),
    /// A field of a fixture: its kind and field (`id`, `name`).
    Field(String, String),
}

impl ResourceGraph {
    /// Where parameter `param` of a path of `endpoint` (if any) comes from: the endpoint's
    /// own `params`, else `resources.toml`'s `[params]` (never for a bare `:id`), else the id
    /// of the endpoint's resource (or of `own_kind`); `None` when nothing names it.
    pub fn param_source(
        &self,
        param: &str,
        endpoint: Option<&Endpoint>,
        own_kind: Option<&str>,
    ) -> Option<ParamSource> {
        let spec = endpoint
            .and_then(|e| e.params.get(param))
            .or_else(|| (param != "id").then(|| self.params.get(param)).flatten());
        if let Some(spec) = spec {
            return Some(match spec.strip_prefix('=') {
                Some(literal) => ParamSource::Literal(literal.to_string()),
                None => match spec.split_once('.') {
                    Some((kind, field)) => ParamSource::Field(kind.into(), field.into()),
                    None => ParamSource::Field(spec.to_string(), "id".to_string()),
                },
            });
        }
        let kind = endpoint.and_then(|e| e.resource.as_deref()).or(own_kind)?;
        Some(ParamSource::Field(kind.to_string(), "id".to_string()))
    }

    /// The last parameter of `template` (a path form of `endpoint`) that carries the id of
    /// the endpoint's own resource; `None` where it does not name it.
    pub fn own_id_param<'t>(&self, endpoint: &Endpoint, template: &'t str) -> Option<&'t str> {
        let params: Vec<&str> = path_params(template).collect();
        params
            .into_iter()
            .rev()
            .find(|p| self.carries_own_id(endpoint, p))
    }

    /// Whether parameter `param` of a path of `endpoint` carries the id of the endpoint's
    /// own resource, as the fixtures fill it.
    pub fn carries_own_id(&self, endpoint: &Endpoint, param: &str) -> bool {
        let Some(own) = endpoint.resource.as_deref() else {
            return false;
        };
        matches!(self.param_source(param, Some(endpoint), None),
            Some(ParamSource::Field(kind, field)) if kind == own && field == "id")
    }
}

/// `template` with each of its `:param` segments filled with `value`, percent-encoded.
pub fn fill_params(template: &str, value: &str) -> String {
    template
        .split('/')
        .map(|segment| {
            if segment.starts_with(':') {
                encode_segment(value)
            } else {
                segment.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Where organizations live, as the organization kind of `resources.toml` names them: the one
/// place the organizations endpoint is written (sequences make their own organizations there,
/// `sweep` finds them by name).
#[derive(Debug, Clone)]
pub struct Organizations {
    /// The collection (its create's path): POST makes one, GET lists them.
    pub collection: String,
    /// One organization (its delete's path), with its `:param`.
    pub item: String,
}

impl Organizations {
    /// The path of the organization named `name`.
    pub fn named(&self, name: &str) -> String {
        fill_params(&self.item, name)
    }
}

impl Catalog {
    /// Where organizations live: the organization kind's create and delete; a catalog without
    /// them (a `--cases` folder of other groups) gets the spec's `/organizations`.
    pub fn organizations(&self) -> Organizations {
        let def = self.graph.resources.get("organization");
        let path = |route: Option<&super::Route>, default: &str| {
            path_for(route.map_or(default, |r| r.path.as_str()), Variant::Bare)
        };
        Organizations {
            collection: path(def.and_then(|d| d.create.as_ref()), "/organizations"),
            item: path(
                def.and_then(|d| d.delete.as_ref()),
                "/organizations/:organization_name",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn organizations_are_named_by_the_catalog() {
        let orgs = Catalog::embedded().unwrap().organizations();
        assert_eq!(orgs.collection, "/organizations");
        assert_eq!(orgs.named("a b"), "/organizations/a%20b");
        assert_eq!(fill_params("/x/:id/y", "1/2"), "/x/1%2F2/y");
        assert_eq!(path_for("/api/v2/runs", Variant::Bare), "/runs");
        assert_eq!(path_for("/runs", Variant::ApiV2), "/api/v2/runs");
    }

    #[test]
    fn parameters_name_a_literal_or_a_field_of_a_kind() {
        let catalog = Catalog::embedded().unwrap();
        let graph = &catalog.graph;
        let field = |k: &str, f: &str| Some(ParamSource::Field(k.into(), f.into()));
        let literal = Some(ParamSource::Literal("private".into()));
        assert_eq!(graph.param_source("registry_name", None, None), literal);
        assert_eq!(
            graph.param_source("name", None, None),
            field("registry_module", "name")
        );
        assert_eq!(
            graph.param_source("workspace_id", None, None),
            field("workspace", "id")
        );
        assert_eq!(
            graph.param_source("id", None, Some("tag")),
            field("tag", "id")
        );
        assert_eq!(graph.param_source("id", None, None), None);
        // an endpoint's own mapping comes first: an administrator's organization by its name
        let find = |m: &str, p: &str| catalog.find(m, p).unwrap().row;
        let admin = find("GET", "/api/v2/admin/organizations/acme");
        assert_eq!(
            graph.param_source("name", Some(&admin), None),
            field("organization", "id")
        );
        assert_eq!(graph.own_id_param(&admin, &admin.path), Some("name"));
        let version = find("GET", "/api/v2/configuration-versions/cv-1");
        assert_eq!(
            graph.own_id_param(&version, &version.path),
            Some("configuration-id")
        );
        let current = find("GET", "/api/v2/workspaces/ws-1/current-state-version");
        assert_eq!(graph.own_id_param(&current, &current.path), None);
    }

    #[test]
    fn a_segment_keeps_only_unreserved_characters() {
        assert_eq!(encode_segment("ws-1_a.b~c"), "ws-1_a.b~c");
        assert_eq!(encode_segment("a/b c?"), "a%2Fb%20c%3F");
        assert_eq!(encode_segment("é"), "%C3%A9");
        let spec = "workspaces/:workspace_id/runs";
        assert_eq!(path_params(spec).collect::<Vec<_>>(), vec!["workspace_id"]);
    }
}
