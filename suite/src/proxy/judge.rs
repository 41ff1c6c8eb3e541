//! Which catalog endpoint and path form an exchange is, and the single-exchange checks a test
//! would run on it.

use serde_json::Value;

use crate::catalog::{path_for, Catalog, Endpoint, Kind, Variant, REGISTRY, UPLOAD};
use crate::checks::{self as c, Check, Schemas};
use crate::target::Exchange;

/// Where a form is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    Api,
    Registry,
    Upload,
}

/// One path form of one endpoint.
#[derive(Debug, Clone)]
struct Form {
    server: Server,
    method: String,
    segments: Vec<String>,
    /// The variant for a request without and with `/api/v2`.
    variants: (Variant, Variant),
    group: String,
    endpoint: Endpoint,
}

/// The endpoint an exchange was matched to.
#[derive(Debug, Clone)]
pub struct Matched {
    /// `group::id`.
    pub endpoint: String,
    /// The path form (`bare`, `api-v2`, `deprecated`, `registry`, `upload`...).
    pub form: &'static str,
    /// The endpoint's catalog row.
    pub row: Endpoint,
    /// The values of the path's parameters, by name.
    pub params: Vec<(String, String)>,
}

impl Matched {
    /// The test name of this endpoint and form (`group::id::form`).
    pub fn test_name(&self) -> String {
        format!("{}::{}", self.endpoint, self.form)
    }
}

/// Matches requests to the catalog's endpoints.
#[derive(Debug, Clone)]
pub struct Matcher {
    forms: Vec<Form>,
    registry_path: String,
}

impl Matcher {
    /// The forms of every endpoint of `catalog`; `registry_path` is the path of the registry
    /// read address on the target (`/api/registry/v1/modules/`).
    pub fn new(catalog: &Catalog, registry_path: &str) -> Self {
        let mut forms = Vec::new();
        for (g, e) in catalog.endpoints() {
            let mut push = |server, method: &str, template: &str, variants| {
                forms.push(Form {
                    server,
                    method: method.to_string(),
                    segments: split(template),
                    variants,
                    group: g.group.clone(),
                    endpoint: e.clone(),
                });
            };
            if let Some(rest) = e.path.strip_prefix(REGISTRY) {
                push(
                    Server::Registry,
                    &e.method,
                    rest,
                    (Variant::Registry, Variant::Registry),
                );
                continue;
            }
            if e.path.starts_with(UPLOAD) {
                push(
                    Server::Upload,
                    &e.method,
                    "/v1/object/:object_id",
                    (Variant::Upload, Variant::Upload),
                );
                continue;
            }
            push(
                Server::Api,
                &e.method,
                &path_for(&e.path, Variant::Bare),
                (Variant::Bare, Variant::ApiV2),
            );
            if let Some(d) = &e.deprecated {
                push(
                    Server::Api,
                    &d.method,
                    &path_for(&d.path, Variant::Bare),
                    (Variant::Deprecated, Variant::DeprecatedApiV2),
                );
            }
            if let Some(a) = &e.alias {
                push(
                    Server::Api,
                    &a.method,
                    &path_for(&a.path, Variant::Bare),
                    (Variant::Alias, Variant::AliasApiV2),
                );
            }
        }
        Self {
            forms,
            registry_path: format!("/{}", registry_path.trim_matches('/')),
        }
    }

    /// The endpoint and form of a request (method, URL path relative to the target's root),
    /// the form with the most literal segments winning.
    pub fn find(&self, method: &str, path: &str) -> Option<Matched> {
        let (server, rest, prefixed) = if let Some(rest) = path
            .strip_prefix(&self.registry_path)
            .filter(|r| r.is_empty() || r.starts_with('/'))
        {
            (Server::Registry, rest, false)
        } else if path.starts_with("/v1/object/") {
            (Server::Upload, path, false)
        } else if let Some(rest) = path
            .strip_prefix(crate::catalog::API_PREFIX)
            .filter(|r| r.is_empty() || r.starts_with('/'))
        {
            (Server::Api, rest, true)
        } else {
            (Server::Api, path, false)
        };
        let segs = split(rest);
        let mut best: Option<(usize, &Form)> = None;
        for form in self
            .forms
            .iter()
            .filter(|f| f.server == server && f.method.eq_ignore_ascii_case(method))
        {
            if form.segments.len() != segs.len() {
                continue;
            }
            let fits = form
                .segments
                .iter()
                .zip(&segs)
                .all(|(t, s)| t.starts_with(':') || t == s);
            let literals = form.segments.iter().filter(|t| !t.starts_with(':')).count();
            if fits && best.is_none_or(|(n, _)| literals > n) {
                best = Some((literals, form));
            }
        }
        let (_, form) = best?;
        let variant = if prefixed {
            form.variants.1
        } else {
            form.variants.0
        };
        let params = form
            .segments
            .iter()
            .zip(&segs)
            .filter_map(|(t, s)| t.strip_prefix(':').map(|p| (p.to_string(), s.clone())))
            .collect();
        Some(Matched {
            endpoint: format!("{}::{}", form.group, form.endpoint.id),
            form: variant.as_str(),
            row: form.endpoint.clone(),
            params,
        })
    }
}

fn split(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// One check's result on one exchange.
pub type Judgement = (&'static Check, Result<(), String>);

/// The single-exchange checks a test runs on an answer of this endpoint: no 5xx; for a
/// success, the JSON body, the one judgement of an answer of its kind ([`c::answer::judge`]:
/// media type, envelope, the resource's documented shape, the created id), the shown id, the
/// upload address form, and at TFE level the status code; for a 4xx, the
/// JSON:API error document (TFE level). A check that does not apply is not listed.
pub fn judge(
    schemas: &Schemas,
    m: &Matched,
    upload_kinds: &[String],
    ex: &Exchange,
) -> Vec<Judgement> {
    let mut out: Vec<Judgement> = Vec::new();
    let Some(status) = ex.status() else {
        return out;
    };
    out.push((&c::NO_SERVER_ERROR, c::no_server_error(ex)));
    let e = &m.row;
    let jsonapi = matches!(
        e.kind,
        Kind::Create | Kind::Show | Kind::List | Kind::Update
    );
    if (400..500).contains(&status) && status != 429 && m.form != "registry" && m.form != "upload" {
        out.push((&c::TFE_ERROR_DOCUMENT, c::tfe_error_document(schemas, ex)));
    }
    if !(200..300).contains(&status) {
        return out;
    }
    if let Some(result) = c::tfe_status(ex, e.kind, &e.expect.status) {
        out.push((&c::TFE_STATUS, result));
    }
    let wants_json = jsonapi || e.kind == Kind::Read;
    // A body over the proxy's cap was not read whole: its checks are not evaluated.
    let cut = ex.response.as_ref().is_ok_and(|r| r.truncated);
    if !wants_json || status == 204 || cut {
        return out;
    }
    let doc = match c::json_body(ex) {
        Ok(doc) => {
            out.push((&c::JSON_BODY, Ok(())));
            doc
        }
        Err(why) => {
            out.push((&c::JSON_BODY, Err(why)));
            return out;
        }
    };
    out.extend(c::answer::judge(schemas, e.kind, e.admin, ex, &doc));
    match e.kind {
        Kind::Create
            if e.resource
                .as_ref()
                .is_some_and(|r| upload_kinds.contains(r)) =>
        {
            if let Some((_, url)) = c::upload_candidates(&doc).into_iter().next() {
                out.push((&c::UPLOAD_URL_FORM, c::upload_url_form(&url)));
            }
        }
        Kind::Show | Kind::Update => {
            if let Some(result) = same_id(m, &doc, ex.request.body.as_deref()) {
                let check = if e.kind == Kind::Show {
                    &c::SHOW_SAME_ID
                } else {
                    &c::UPDATE_SAME_ID
                };
                out.push((check, result));
            }
        }
        Kind::List => {
            let paged = ex.request.url.contains("page%5Bsize%5D")
                || ex.request.url.contains("page[size]")
                || ex.request.url.contains("page%5Bnumber%5D")
                || ex.request.url.contains("page[number]");
            if paged {
                let meta = schemas
                    .validate("tfe/pagination", &doc)
                    .map_err(|e| format!("expected meta.pagination (schema tfe/pagination); {e}"));
                out.push((&c::TFE_PAGINATION_META, meta));
            }
        }
        _ => {}
    }
    out
}

/// `show.same-id` / `update.same-id` where the path's last parameter is the resource's id
/// (`…_id`, `id`, or an organization's name, which is its id); `None` where it is not known,
/// and where the path does not name what it answers (`expect.shows`: a workspace's current
/// state version is named by the workspace).
///
/// An organization's id is its name: an update that renames it (`data.attributes.name` in
/// the request) answers the new name (tfe-api-facts 0, item 10: the id is the name).
fn same_id(m: &Matched, doc: &Value, request: Option<&str>) -> Option<Result<(), String>> {
    m.row.resource.as_ref()?;
    if m.row.expect.shows.is_some() {
        return None;
    }
    let (name, value) = m.params.last()?;
    let organization =
        name == "organization_name" && m.row.resource.as_deref() == Some("organization");
    let is_id = name == "id" || name.ends_with("_id") || organization;
    if !is_id {
        return None;
    }
    let renamed = organization
        .then(|| request.and_then(|b| serde_json::from_str::<Value>(b).ok()))
        .flatten()
        .and_then(|b| {
            b.pointer("/data/attributes/name")?
                .as_str()
                .map(str::to_string)
        });
    let value = match renamed {
        Some(new_name) => new_name,
        None => percent_encoding::percent_decode_str(value)
            .decode_utf8_lossy()
            .into_owned(),
    };
    Some(c::lifecycle::same_id(doc, &value, "the answer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(path: &str) -> Matched {
        let catalog = Catalog::embedded().unwrap();
        Matcher::new(&catalog, crate::catalog::REGISTRY_DEFAULT)
            .find("GET", path)
            .unwrap()
    }

    #[test]
    fn same_id_compares_the_path_only_where_it_names_the_answer() {
        let doc = serde_json::json!({"data": {"id": "sv-1", "type": "state-versions"}});
        // A workspace's current state version is named by the workspace, not by its own id.
        let current = matched("/api/v2/workspaces/ws-1/current-state-version");
        assert_eq!(current.endpoint, "state_versions::current");
        assert_eq!(same_id(&current, &doc, None), None);
        // A show named by its own id still has to answer that id.
        let show = matched("/api/v2/state-versions/sv-2");
        assert!(matches!(same_id(&show, &doc, None), Some(Err(_))));
        let doc2 = serde_json::json!({"data": {"id": "sv-2", "type": "state-versions"}});
        assert_eq!(same_id(&show, &doc2, None), Some(Ok(())));
    }

    #[test]
    fn an_organization_renamed_by_its_update_answers_its_new_name() {
        let update = Matcher::new(
            &Catalog::embedded().unwrap(),
            crate::catalog::REGISTRY_DEFAULT,
        )
        .find("PATCH", "/api/v2/organizations/old-name")
        .unwrap();
        let renamed = serde_json::json!({"data": {"id": "new-name", "type": "organizations"}});
        let rename = r#"{"data":{"type":"organizations","attributes":{"name":"new-name"}}}"#;
        assert_eq!(same_id(&update, &renamed, Some(rename)), Some(Ok(())));
        // Without a rename, the path's name is still the id to answer.
        let other = r#"{"data":{"type":"organizations","attributes":{"email":"a@b.c"}}}"#;
        assert!(matches!(
            same_id(&update, &renamed, Some(other)),
            Some(Err(_))
        ));
    }
}
