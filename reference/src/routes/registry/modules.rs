//! The organization-scoped management of private registry modules and their versions.
//! Spec: Endpoints > Registry modules (organization-scoped).

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{delete, get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, no_content, ok, paginate, resource, Body, Ctx, Doc};
use crate::shared::org;
use crate::shared::uploads::module_version_uploaded;
use crate::state::AppState;
use crate::store::{now, Record, Store};

/// The organization-scoped management routes.
pub(super) fn router() -> Router<AppState> {
    let base = "/organizations/{org}/registry-modules";
    Router::new()
        .route(base, get(list).post(create))
        .route(&format!("{base}/vcs"), post(create_vcs))
        .route(
            &format!("{base}/{{reg}}/{{ns}}/{{name}}/{{provider}}"),
            get(show).delete(delete_provider).patch(update),
        )
        .route(
            &format!("{base}/{{reg}}/{{ns}}/{{name}}/{{provider}}/versions"),
            post(create_version),
        )
        .route(
            &format!("{base}/{{reg}}/{{ns}}/{{name}}/{{provider}}/{{version}}"),
            delete(delete_version).get(read_version),
        )
        .route(
            &format!("{base}/{{reg}}/{{ns}}/{{name}}"),
            delete(delete_name),
        )
}

/// A semantic version with optional prerelease and build metadata.
fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let rest_ok = v[core.len()..]
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && rest_ok
        && (core.len() == v.len() || v.len() > core.len() + 1)
}

/// The id of a module, 404 when the organization or the module is unknown.
pub(super) fn module_id(
    store: &Store,
    org_name: &str,
    reg: &str,
    ns: &str,
    name: &str,
    provider: &str,
) -> ApiResult<String> {
    org(store, org_name)?;
    store
        .list("registry-modules", Some(org_name))
        .iter()
        .find(|m| {
            m.str("registry-name") == reg
                && m.str("namespace") == ns
                && m.str("name") == name
                && m.str("provider") == provider
        })
        .map(|m| m.id.clone())
        .ok_or_else(|| ApiError::not_found("registry module", &format!("{ns}/{name}/{provider}")))
}

/// A module with its versions' statuses and its own address.
pub(super) fn render_module(store: &Store, m: &Record) -> Value {
    let mut doc = m.render();
    let statuses: Vec<Value> = store
        .list("registry-module-versions", Some(&m.id))
        .iter()
        .map(|v| json!({"version": v.str("version"), "status": v.str("status")}))
        .collect();
    doc["attributes"]["version-statuses"] = json!(statuses);
    // TFE leaves vcs-repo out of a module published without VCS (SDKs read it as an object).
    if store.tfe && doc["attributes"]["vcs-repo"].is_null() {
        if let Some(attrs) = doc["attributes"].as_object_mut() {
            attrs.remove("vcs-repo");
        }
    }
    doc["links"]["self"] = json!(format!(
        "/api/v2/organizations/{}/registry-modules/{}/{}/{}/{}",
        m.owner.clone().unwrap_or_default(),
        m.str("registry-name"),
        m.str("namespace"),
        m.str("name"),
        m.str("provider")
    ));
    doc
}

/// Creates a private module (422 for an invalid or taken name or provider); answers it.
fn insert_module(
    store: &mut Store,
    org_name: &str,
    name: &str,
    provider: &str,
    extra: &Map<String, Value>,
    vcs: Option<Value>,
) -> ApiResult<Value> {
    org(store, org_name)?;
    let valid = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if !valid(name) {
        return Err(ApiError::attribute("name", "Name is invalid"));
    }
    if !valid(provider)
        || provider
            .chars()
            .any(|c| c.is_ascii_uppercase() || c == '-' || c == '_')
    {
        return Err(ApiError::attribute(
            "provider",
            "Provider must be lowercase alphanumeric",
        ));
    }
    if module_id(store, org_name, "private", org_name, name, provider).is_ok() {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    let mut attrs: Map<String, Value> = json!({
        "name": name, "provider": provider, "namespace": org_name, "registry-name": "private",
        "status": "pending", "no-code": false, "version-statuses": [],
        "created-at": now(), "updated-at": now(), "vcs-repo": vcs,
        "permissions": {"can-delete": true, "can-resync": true, "can-retry": true},
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    for (k, v) in extra {
        if !matches!(
            k.as_str(),
            "name" | "provider" | "namespace" | "registry-name" | "vcs-repo"
        ) {
            attrs.insert(k.clone(), v.clone());
        }
    }
    let id = store.insert(
        "registry-modules",
        "mod-",
        Some(org_name),
        attrs,
        Map::new(),
    );
    let m = store.find_mut("registry-modules", &id)?;
    m.set_rel("organization", "organizations", org_name);
    let m = store.find("registry-modules", &id)?;
    Ok(render_module(store, m))
}

// GET /organizations/:organization_name/registry-modules
async fn list(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &o)?;
    let q = ctx.q("q").map(str::to_lowercase);
    let provider = ctx.q("filter[provider]").or(ctx.q("provider"));
    let reg = ctx.q("filter[registry_name]");
    let items: Vec<Value> = store
        .list("registry-modules", Some(&o))
        .into_iter()
        .filter(|m| {
            q.as_ref()
                .is_none_or(|q| m.str("name").to_lowercase().contains(q))
        })
        .filter(|m| provider.is_none_or(|p| m.str("provider") == p))
        .filter(|m| reg.is_none_or(|r| m.str("registry-name") == r))
        .map(|m| render_module(&store, m))
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/registry-modules
async fn create(ctx: Ctx, Path(o): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["registry-modules"])?;
    let name = doc.required("name")?;
    let provider = doc.required("provider")?;
    if let Some(reg) = doc.opt("registry-name") {
        if reg != "private" && reg != "public" {
            return Err(ApiError::attribute(
                "registry-name",
                "Registry name must be private or public",
            ));
        }
        if reg == "private" && doc.opt("namespace").is_some_and(|n| n != o) {
            return Err(ApiError::attribute(
                "namespace",
                "A private module takes no namespace",
            ));
        }
    }
    let mut store = ctx.state.write();
    let module = insert_module(&mut store, &o, &name, &provider, &doc.attributes, None)?;
    created(module)
}

/// Reads `vcs-repo.identifier` = `owner/terraform-<provider>-<name>`.
pub(super) fn from_vcs(doc: &Doc) -> ApiResult<(String, String, Value)> {
    let vcs = doc
        .attributes
        .get("vcs-repo")
        .and_then(Value::as_object)
        .ok_or_else(|| ApiError::attribute("vcs-repo", "vcs-repo is required"))?;
    let identifier = vcs.get("identifier").and_then(Value::as_str).unwrap_or("");
    let repo = identifier.rsplit('/').next().unwrap_or("");
    let Some(rest) = repo.strip_prefix("terraform-") else {
        return Err(ApiError::attribute(
            "vcs-repo",
            "the repository must be named terraform-<provider>-<name>",
        ));
    };
    let Some((provider, name)) = rest.split_once('-') else {
        return Err(ApiError::attribute(
            "vcs-repo",
            "the repository must be named terraform-<provider>-<name>",
        ));
    };
    if !identifier.contains('/') || name.is_empty() {
        return Err(ApiError::attribute(
            "vcs-repo",
            "identifier must be owner/repository",
        ));
    }
    Ok((
        name.to_string(),
        provider.to_string(),
        Value::Object(vcs.clone()),
    ))
}

// POST /organizations/:organization_name/registry-modules/vcs
async fn create_vcs(ctx: Ctx, Path(o): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["registry-modules"])?;
    let repo = from_vcs(&doc)?;
    created_from_vcs(&mut ctx.state.write(), &o, repo)
}

/// Answers a module made from its VCS repository (what [`from_vcs`] read).
pub(super) fn created_from_vcs(
    store: &mut Store,
    o: &str,
    (name, provider, vcs): (String, String, Value),
) -> ApiResult<Response> {
    let module = insert_module(store, o, &name, &provider, &Map::new(), Some(vcs))?;
    created(module)
}

/// `.../:registry_name/:namespace/:name/:provider`.
type ModulePath = (String, String, String, String, String);

async fn show(
    ctx: Ctx,
    Path((o, reg, ns, name, provider)): Path<ModulePath>,
) -> ApiResult<Response> {
    let store = ctx.state.read();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    ok(render_module(&store, store.find("registry-modules", &id)?))
}

async fn update(
    ctx: Ctx,
    Path((o, reg, ns, name, provider)): Path<ModulePath>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["registry-modules"])?;
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    let m = store.find_mut("registry-modules", &id)?;
    for (k, v) in doc.attributes {
        if !matches!(
            k.as_str(),
            "name" | "provider" | "namespace" | "registry-name"
        ) {
            m.attributes.insert(k, v);
        }
    }
    let m = store.find("registry-modules", &id)?;
    ok(render_module(&store, m))
}

/// Creates a version from a request body; answers it with its upload link.
pub(super) fn new_version(
    ctx: &Ctx,
    store: &mut Store,
    module: &str,
    body: &Value,
) -> ApiResult<Value> {
    let doc = resource(body, &["registry-module-versions"])?;
    let version = doc.required("version")?;
    let (id, object) = insert_version(store, module, &version, doc.opt("commit-sha"))?;
    let mut rendered = store.find("registry-module-versions", &id)?.render();
    rendered["links"]["upload"] = json!(ctx.object_url(&object));
    Ok(rendered)
}

/// Creates a `pending` version of a module with its upload object; answers both ids.
fn insert_version(
    store: &mut Store,
    module: &str,
    version: &str,
    commit_sha: Option<String>,
) -> ApiResult<(String, String)> {
    if !is_semver(version) {
        return Err(ApiError::attribute(
            "version",
            "Version must be a semantic version",
        ));
    }
    if store
        .list("registry-module-versions", Some(module))
        .iter()
        .any(|v| v.str("version") == version)
    {
        return Err(ApiError::attribute(
            "version",
            "Version has already been taken",
        ));
    }
    let attrs = json!({"version": version, "status": "pending", "source": "tfe-api",
        "commit-sha": commit_sha, "created-at": now(), "updated-at": now()});
    let id = store.insert(
        "registry-module-versions",
        "modver-",
        Some(module),
        attrs.as_object().cloned().unwrap_or_default(),
        Map::new(),
    );
    let object = store.new_object("registry-module-versions", &id);
    let v = store.find_mut("registry-module-versions", &id)?;
    v.set_rel("registry-module", "registry-modules", module);
    Ok((id, object))
}

/// Publishes a private module version with its archive already uploaded, as creating the
/// module, creating the version and uploading the archive would (the `registry-only` seed).
pub(crate) fn seed_module_version(
    store: &mut Store,
    org_name: &str,
    name: &str,
    provider: &str,
    version: &str,
    archive: Vec<u8>,
) -> ApiResult<()> {
    insert_module(store, org_name, name, provider, &Map::new(), None)?;
    let module = module_id(store, org_name, "private", org_name, name, provider)?;
    let (id, object) = insert_version(store, &module, version, None)?;
    if let Some(o) = store.objects.get_mut(&object) {
        o.bytes = Some(archive);
    }
    module_version_uploaded(store, &id);
    Ok(())
}

async fn create_version(
    ctx: Ctx,
    Path((o, reg, ns, name, provider)): Path<ModulePath>,
    Body(body): Body,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    created(new_version(&ctx, &mut store, &id, &body)?)
}

/// A version of a module, published or not.
fn find_version<'a>(store: &'a Store, module: &str, version: &str) -> Option<&'a Record> {
    store
        .list("registry-module-versions", Some(module))
        .into_iter()
        .find(|v| v.str("version") == version)
}

/// Deletes a version of a module (the module with its last version).
pub(super) fn remove_version(store: &mut Store, module: &str, version: &str) -> ApiResult<()> {
    let id = find_version(store, module, version)
        .map(|v| v.id.clone())
        .ok_or_else(|| ApiError::not_found("registry module version", version))?;
    store.remove("registry-module-versions", &id);
    // Deleting the last version removes the provider (TFE).
    if store
        .list("registry-module-versions", Some(module))
        .is_empty()
    {
        store.remove("registry-modules", module);
    }
    Ok(())
}

/// Deletes every provider of a module name.
pub(super) fn remove_name(
    store: &mut Store,
    o: &str,
    reg: &str,
    ns: &str,
    name: &str,
) -> ApiResult<()> {
    org(store, o)?;
    let ids: Vec<String> = store
        .list("registry-modules", Some(o))
        .iter()
        .filter(|m| {
            m.str("registry-name") == reg && m.str("namespace") == ns && m.str("name") == name
        })
        .map(|m| m.id.clone())
        .collect();
    if ids.is_empty() {
        return Err(ApiError::not_found("registry module", name));
    }
    for id in ids {
        store.remove("registry-modules", &id);
    }
    Ok(())
}

/// `.../:registry_name/:namespace/:name/:provider/:version`.
type VersionPath = (String, String, String, String, String, String);

async fn delete_version(
    ctx: Ctx,
    Path((o, reg, ns, name, provider, version)): Path<VersionPath>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    if !ctx.state.fault(crate::faults::Kind::VersionDeleteNoop) {
        remove_version(&mut store, &id, &version)?;
    }
    no_content()
}

// GET .../:provider/version?module_version=X (go-tfe's and pytfe's module version read; TFE
// documents none) and GET .../:provider/:version.
async fn read_version(
    ctx: Ctx,
    Path((o, reg, ns, name, provider, version)): Path<VersionPath>,
) -> ApiResult<Response> {
    let version = match (version.as_str(), ctx.q("module_version")) {
        ("version", Some(v)) => v.to_string(),
        _ => version,
    };
    let store = ctx.state.read();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    let v = find_version(&store, &id, &version)
        .ok_or_else(|| ApiError::not_found("module version", &version))?;
    ok(v.render())
}

async fn delete_provider(
    ctx: Ctx,
    Path((o, reg, ns, name, provider)): Path<ModulePath>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    store.delete("registry-modules", &id)?;
    no_content()
}

async fn delete_name(
    ctx: Ctx,
    Path((o, reg, ns, name)): Path<(String, String, String, String)>,
) -> ApiResult<Response> {
    remove_name(&mut ctx.state.write(), &o, &reg, &ns, &name)?;
    no_content()
}
