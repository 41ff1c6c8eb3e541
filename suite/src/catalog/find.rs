//! The one matcher: which catalog endpoint, path form and parameter values a request (method
//! and path) is. `conform proxy` judges what it sees by it, the sequence engine judges its
//! requests by it, the runner its tests' answers ([`Catalog::matched_test`]), and [`Catalog::test_for`], [`Catalog::forms_of`] and
//! [`Catalog::show_path_for`] are built on it.

use super::paths::{path_for, API_PREFIX, REGISTRY, REGISTRY_DEFAULT, UPLOAD};
use super::{Catalog, Endpoint, HttpMethod, Kind, Variant};

/// Where an upload address's path points (Versioning 2: `/v1/object/<object_id>`).
const UPLOAD_PATH: &str = "/v1/object/:object_id";

/// The endpoint a request was matched to by [`Catalog::find`].
#[derive(Debug, Clone)]
pub struct Matched {
    /// `group::id`.
    pub endpoint: String,
    /// The path form the request used (`bare`, `api-v2`, `deprecated`, `registry`, `upload`...).
    pub variant: Variant,
    /// The endpoint's catalog row.
    pub row: Endpoint,
    /// The values of the path's parameters, by name, in path order (as sent: percent-encoded).
    pub params: Vec<(String, String)>,
    /// The row's resource kind takes an upload (the catalog has an upload endpoint for it), so
    /// that its create answers an upload address.
    pub takes_upload: bool,
    /// The value (as sent) of the path parameter that carries the id of the row's resource
    /// ([`super::ResourceGraph::own_id_param`]); `None` where the path does not name it.
    pub own_id: Option<String>,
}

impl Matched {
    /// The name of the path form (`api-v2`).
    pub fn form(&self) -> &'static str {
        self.variant.as_str()
    }

    /// The test name of this endpoint and form (`group::id::form`).
    pub fn test_name(&self) -> String {
        format!("{}::{}", self.endpoint, self.form())
    }

    /// True for a form of the service's own API (not the registry's read address, nor an
    /// upload address).
    pub fn on_api(&self) -> bool {
        !matches!(self.variant, Variant::Registry | Variant::Upload)
    }

    /// A request no catalog endpoint is (a TFE route the spec's tables do not list, which a
    /// sequence family uses: a workspace's), judged as what its sender says it is: an
    /// endpoint of `kind` with no expectation beyond the kind's (TFE's status for it), on the
    /// administrator API or not.
    pub fn beyond_catalog(method: HttpMethod, path: &str, kind: Kind, admin: bool) -> Self {
        let path = path.split('?').next().unwrap_or_default();
        let row = Endpoint {
            admin,
            ..Endpoint::synthetic(method, path, kind)
        };
        Matched {
            endpoint: format!("{} {}", row.method.as_str(), row.path),
            variant: Variant::Bare,
            row,
            params: Vec::new(),
            takes_upload: false,
            own_id: None,
        }
    }

    /// `template` in its bare form, filled with the request's values; `None` when it names
    /// a parameter the request does not hold.
    pub(super) fn fill(&self, template: &str) -> Option<String> {
        let segments: Option<Vec<String>> = path_for(template, Variant::Bare)
            .split('/')
            .map(|seg| match seg.strip_prefix(':') {
                Some(name) => self
                    .params
                    .iter()
                    .find(|(p, _)| p == name)
                    .map(|(_, v)| v.clone()),
                None => Some(seg.to_string()),
            })
            .collect();
        Some(segments?.join("/"))
    }
}

/// The server a path form is served by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    Api,
    Registry,
    Upload,
}

/// The forms of one endpoint: server, method, path template (relative to that server) and the
/// variants for a request without and with `/api/v2`.
fn forms(e: &Endpoint) -> Vec<(Server, &str, String, (Variant, Variant))> {
    if let Some(rest) = e.path.strip_prefix(REGISTRY) {
        let pair = (Variant::Registry, Variant::Registry);
        return vec![(Server::Registry, e.method.as_str(), rest.to_string(), pair)];
    }
    if e.path.starts_with(UPLOAD) {
        let pair = (Variant::Upload, Variant::Upload);
        return vec![(Server::Upload, e.method.as_str(), UPLOAD_PATH.into(), pair)];
    }
    let mut out = vec![(
        Server::Api,
        e.method.as_str(),
        path_for(&e.path, Variant::Bare),
        (Variant::Bare, Variant::ApiV2),
    )];
    if let Some(d) = &e.deprecated {
        let pair = (Variant::Deprecated, Variant::DeprecatedApiV2);
        out.push((
            Server::Api,
            d.method.as_str(),
            path_for(&d.path, Variant::Bare),
            pair,
        ));
    }
    if let Some(a) = &e.alias {
        let pair = (Variant::Alias, Variant::AliasApiV2);
        out.push((
            Server::Api,
            a.method.as_str(),
            path_for(&a.path, Variant::Bare),
            pair,
        ));
    }
    out
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// The values of a template's `:param` segments in a path's segments, in path order.
fn params_of(template: &[&str], path: &[&str]) -> Vec<(String, String)> {
    template
        .iter()
        .zip(path)
        .filter_map(|(t, s)| Some((t.strip_prefix(':')?.to_string(), s.to_string())))
        .collect()
}

impl Catalog {
    /// The endpoint, path form and parameter values of a request: `method` and `path` (its
    /// query, if any, is ignored) relative to the service root, where the registry's read
    /// protocol is at its default address ([`REGISTRY_DEFAULT`]) and an upload address is
    /// `/v1/object/<object_id>`. The form with the most literal segments wins.
    pub fn find(&self, method: &str, path: &str) -> Option<Matched> {
        self.find_with_registry(REGISTRY_DEFAULT, method, path)
    }

    /// [`Catalog::find`] with the registry's read protocol at `registry` (a path relative to
    /// the service root, such as `--registry-url` gives `conform proxy`).
    pub fn find_with_registry(&self, registry: &str, method: &str, path: &str) -> Option<Matched> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let registry = format!("/{}", registry.trim_matches('/'));
        let under = |prefix: &str| {
            path.strip_prefix(prefix)
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        let (server, rest, prefixed) = if let Some(rest) = under(&registry) {
            (Server::Registry, rest, false)
        } else if path.starts_with("/v1/object/") {
            (Server::Upload, path, false)
        } else if let Some(rest) = under(API_PREFIX) {
            (Server::Api, rest, true)
        } else {
            (Server::Api, path, false)
        };
        let segs = segments(rest);
        let mut best = None;
        for (g, e) in self.endpoints() {
            for (on, m, template, variants) in forms(e) {
                if on != server || !m.eq_ignore_ascii_case(method) {
                    continue;
                }
                let t = segments(&template);
                let fits = t.len() == segs.len()
                    && t.iter()
                        .zip(&segs)
                        .all(|(t, s)| t.starts_with(':') || t == s);
                let literals = t.iter().filter(|t| !t.starts_with(':')).count();
                if !fits || best.as_ref().is_some_and(|(n, _)| literals <= *n) {
                    continue;
                }
                let params = params_of(&t, &segs);
                let variant = if prefixed { variants.1 } else { variants.0 };
                best = Some((
                    literals,
                    (format!("{}::{}", g.group, e.id), variant, e, params),
                ));
            }
        }
        let (endpoint, variant, row, params) = best?.1;
        Some(self.matched(endpoint, variant, row, params))
    }

    /// The [`Matched`] of a test's own request: its endpoint `row` (`group::id`) in the path
    /// form `variant`, its path `template` filled as `path` (whatever precedes the template's
    /// segments, such as the target's base path, aside).
    pub fn matched_test(
        &self,
        group: &str,
        row: &Endpoint,
        variant: Variant,
        template: &str,
        path: &str,
    ) -> Matched {
        let t = segments(template);
        let segs = segments(path);
        let tail = &segs[segs.len().saturating_sub(t.len())..];
        let params = params_of(&t, tail);
        self.matched(format!("{group}::{}", row.id), variant, row, params)
    }

    fn matched(
        &self,
        endpoint: String,
        variant: Variant,
        row: &Endpoint,
        params: Vec<(String, String)>,
    ) -> Matched {
        let takes_upload = row.resource.is_some()
            && self
                .endpoints()
                .any(|(_, u)| u.path.starts_with(UPLOAD) && u.resource == row.resource);
        let own_id = params
            .iter()
            .rev()
            .find(|(name, _)| self.graph.carries_own_id(row, name))
            .map(|(_, value)| value.clone());
        Matched {
            endpoint,
            variant,
            row: row.clone(),
            params,
            takes_upload,
            own_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_matched_to_their_endpoint_and_path_form() {
        let catalog = Catalog::embedded().unwrap();
        let m = catalog.find("POST", "/api/v2/organizations").unwrap();
        assert_eq!(m.test_name(), "organizations::create::api-v2");
        let m = catalog.find("GET", "/organizations/acme?page=2").unwrap();
        assert_eq!(m.test_name(), "organizations::show::bare");
        assert_eq!(
            m.params,
            vec![("organization_name".to_string(), "acme".to_string())]
        );
        let m = catalog
            .find("GET", "/api/registry/v1/modules/acme/net/aws/versions")
            .unwrap();
        assert_eq!(m.form(), "registry");
        assert!(!m.on_api());
        let m = catalog
            .find_with_registry("/registry/", "GET", "/registry/acme/net/aws/versions")
            .unwrap();
        assert_eq!(m.variant, Variant::Registry);
        let m = catalog.find("PUT", "/v1/object/obj-1").unwrap();
        assert_eq!(m.form(), "upload");
        assert!(catalog.find("GET", "/api/v2/no-such-route").is_none());
        let m = catalog.find("post", "/api/v2/workspaces/ws-1/configuration-versions");
        assert!(m.is_some_and(|m| m.takes_upload));
        let m = catalog.find("POST", "/api/v2/organizations").unwrap();
        assert!(!m.takes_upload);
    }

    #[test]
    fn every_test_path_is_matched_back_to_its_test() {
        let catalog = Catalog::embedded().unwrap();
        for case in catalog.tests() {
            // a registry test's path is relative to the registry's address
            let path = match case.variant {
                Variant::Registry => {
                    format!("{}{}", REGISTRY_DEFAULT.trim_end_matches('/'), case.path)
                }
                _ => case.path.replace(UPLOAD, UPLOAD_PATH),
            };
            let filled: String = path
                .split('/')
                .map(|s| if s.starts_with(':') { "x" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            let found = catalog.find(&case.method, &filled);
            let name = found.map(|m| m.test_name()).unwrap_or_default();
            if case.variant == Variant::Upload {
                assert!(name.ends_with("::upload::upload"), "{}: {name}", case.name);
            } else {
                assert_eq!(name, case.name, "{} {filled}", case.method);
            }
        }
    }
}
