//! The private module registry: the organization-scoped management API, its deprecated
//! `/registry-modules/...` forms (same store), the read protocol under
//! `/api/registry/v1/modules/` and service discovery.
//! Spec: Endpoints > Registry modules (organization-scoped, read endpoints).

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use super::org;
use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::jsonapi::{
    created, no_content, ok, paginate, plain, resource, AppState, Body, Ctx, Doc,
};
use crate::shapes::Shape;
use crate::store::{now, Record, Store};

pub(crate) fn router() -> Router<AppState> {
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
        // Deprecated forms (Versioning 3), on the same store.
        .route("/registry-modules", post(create_vcs_deprecated))
        .route(
            "/registry-modules/actions/delete/{org}/{name}/{provider}/{version}",
            post(dep_delete_version),
        )
        .route(
            "/registry-modules/actions/delete/{org}/{name}/{provider}",
            post(dep_delete_provider),
        )
        .route(
            "/registry-modules/actions/delete/{org}/{name}",
            post(dep_delete_name),
        )
        .route(
            "/registry-modules/show/{org}/{name}/{provider}",
            get(dep_show),
        )
        .route(
            "/registry-modules/{org}/{name}/{provider}/versions",
            post(dep_create_version),
        )
        // The read protocol.
        .route("/.well-known/terraform.json", get(discovery))
        .route("/api/registry/v1/modules", get(proto_list))
        .route("/api/registry/v1/modules/", get(proto_list))
        .route("/api/registry/v1/modules/search", get(proto_search))
        .route("/api/registry/v1/modules/{ns}", get(proto_namespace))
        .route("/api/registry/v1/modules/{ns}/{name}", get(proto_name))
        .route(
            "/api/registry/v1/modules/{ns}/{name}/{provider}",
            get(proto_latest),
        )
        .route(
            "/api/registry/v1/modules/{ns}/{name}/{provider}/versions",
            get(proto_versions),
        )
        .route(
            "/api/registry/v1/modules/{ns}/{name}/{provider}/download",
            get(proto_download_latest),
        )
        .route(
            "/api/registry/v1/modules/{ns}/{name}/{provider}/{version}",
            get(proto_version),
        )
        .route(
            "/api/registry/v1/modules/{ns}/{name}/{provider}/{version}/download",
            get(proto_download),
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

fn version_key(v: &str) -> (Vec<u64>, bool) {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let nums = core.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    (nums, !v.contains('-'))
}

fn module_id(
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

fn render_module(store: &Store, m: &Record) -> Value {
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
    created(insert_module(
        &mut store,
        &o,
        &name,
        &provider,
        &doc.attributes,
        None,
    )?)
}

/// Reads `vcs-repo.identifier` = `owner/terraform-<provider>-<name>`.
fn from_vcs(doc: &Doc) -> ApiResult<(String, String, Value)> {
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
    let (name, provider, vcs) = from_vcs(&doc)?;
    let mut store = ctx.state.write();
    created(insert_module(
        &mut store,
        &o,
        &name,
        &provider,
        &Map::new(),
        Some(vcs),
    )?)
}

// POST /registry-modules (deprecated): the organization comes from the OAuth token.
async fn create_vcs_deprecated(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["registry-modules"])?;
    let (name, provider, vcs) = from_vcs(&doc)?;
    let mut store = ctx.state.write();
    let token = vcs
        .get("oauth-token-id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let from_token = store
        .get("oauth-tokens", token)
        .and_then(|t| t.owner.clone())
        .and_then(|c| store.get("oauth-clients", &c).and_then(|c| c.owner.clone()));
    let from_identifier = vcs
        .get("identifier")
        .and_then(Value::as_str)
        .and_then(|i| i.split('/').next())
        .filter(|o| store.get("organizations", o).is_some())
        .map(String::from);
    let o = doc
        .opt("organization")
        .or(from_token)
        .or(from_identifier)
        .ok_or_else(|| {
            ApiError::attribute(
                "vcs-repo",
                "the OAuth token does not belong to an organization",
            )
        })?;
    created(insert_module(
        &mut store,
        &o,
        &name,
        &provider,
        &Map::new(),
        Some(vcs),
    )?)
}

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

fn new_version(ctx: &Ctx, store: &mut Store, module: &str, body: &Value) -> ApiResult<Value> {
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
    version_uploaded(store, &id);
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

/// After the tarball PUT: the version is `ok` and the module set up.
pub(crate) fn version_uploaded(store: &mut Store, id: &str) {
    let Some(v) = store.get_mut("registry-module-versions", id) else {
        return;
    };
    v.attributes.insert("status".into(), json!("ok"));
    v.attributes.insert("updated-at".into(), json!(now()));
    let module = v.owner.clone().unwrap_or_default();
    if let Some(m) = store.get_mut("registry-modules", &module) {
        m.attributes
            .insert("status".into(), json!("setup_complete"));
        m.attributes.insert("updated-at".into(), json!(now()));
    }
}

fn remove_version(store: &mut Store, module: &str, version: &str) -> ApiResult<()> {
    let id = store
        .list("registry-module-versions", Some(module))
        .iter()
        .find(|v| v.str("version") == version)
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

fn remove_name(store: &mut Store, o: &str, reg: &str, ns: &str, name: &str) -> ApiResult<()> {
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

async fn delete_version(
    ctx: Ctx,
    Path((o, reg, ns, name, provider, version)): Path<(
        String,
        String,
        String,
        String,
        String,
        String,
    )>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    remove_version(&mut store, &id, &version)?;
    no_content()
}

// GET .../:provider/version?module_version=X (go-tfe's and pytfe's module version read; TFE
// documents none) and GET .../:provider/:version.
async fn read_version(
    ctx: Ctx,
    Path((o, reg, ns, name, provider, version)): Path<(
        String,
        String,
        String,
        String,
        String,
        String,
    )>,
) -> ApiResult<Response> {
    let version = match (version.as_str(), ctx.q("module_version")) {
        ("version", Some(v)) => v.to_string(),
        _ => version,
    };
    let store = ctx.state.read();
    let id = module_id(&store, &o, &reg, &ns, &name, &provider)?;
    let v = store
        .list("registry-module-versions", Some(&id))
        .into_iter()
        .find(|v| v.str("version") == version)
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

async fn dep_delete_version(
    ctx: Ctx,
    Path((o, name, provider, version)): Path<(String, String, String, String)>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    remove_version(&mut store, &id, &version)?;
    no_content()
}

async fn dep_delete_provider(
    ctx: Ctx,
    Path((o, name, provider)): Path<(String, String, String)>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    store.delete("registry-modules", &id)?;
    no_content()
}

async fn dep_delete_name(ctx: Ctx, Path((o, name)): Path<(String, String)>) -> ApiResult<Response> {
    remove_name(&mut ctx.state.write(), &o, "private", &o, &name)?;
    no_content()
}

async fn dep_show(
    ctx: Ctx,
    Path((o, name, provider)): Path<(String, String, String)>,
) -> ApiResult<Response> {
    let store = ctx.state.read();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    ok(render_module(&store, store.find("registry-modules", &id)?))
}

async fn dep_create_version(
    ctx: Ctx,
    Path((o, name, provider)): Path<(String, String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    created(new_version(&ctx, &mut store, &id, &body)?)
}

// ---- the read protocol (plain JSON) ----

// GET /.well-known/terraform.json (a registry-only service offers only the modules service)
async fn discovery(ctx: Ctx) -> Response {
    if ctx.state.shapes.has(Shape::RegistryOnly) {
        return plain(
            StatusCode::OK,
            json!({"modules.v1": "/api/registry/v1/modules/"}),
        );
    }
    plain(
        StatusCode::OK,
        json!({
            "modules.v1": "/api/registry/v1/modules/",
            "state.v2": "/api/v2/",
            "tfe.v2": "/api/v2/",
            "tfe.v2.1": "/api/v2/",
            "tfe.v2.2": "/api/v2/",
        }),
    )
}

fn proto_error(status: StatusCode, message: &str) -> Response {
    plain(status, json!({ "errors": [message] }))
}

/// A registry protocol answer (plain JSON); `registry-reshaped` wraps it in `data`.
fn proto_ok(ctx: &Ctx, doc: Value) -> Response {
    if ctx.state.fault(Kind::RegistryReshaped) {
        return plain(StatusCode::OK, json!({ "data": doc }));
    }
    plain(StatusCode::OK, doc)
}

/// `registry-query-refused`: a list or search sent a parameter of the spec's Query column.
fn query_refused(ctx: &Ctx) -> Option<Response> {
    let sent = ["offset", "limit", "provider", "verified"]
        .into_iter()
        .find(|n| ctx.query.contains_key(*n))?;
    ctx.state.fault(Kind::RegistryQueryRefused).then(|| {
        proto_error(
            StatusCode::BAD_REQUEST,
            &format!("unknown parameter {sent}"),
        )
    })
}

/// `registry-version-wrong`: the next patch release of a version.
fn next_version(version: &str) -> String {
    let core = version.split(['-', '+']).next().unwrap_or(version);
    match core.rsplit_once('.') {
        Some((head, last)) => match last.parse::<u64>() {
            Ok(n) => format!("{head}.{}", n + 1),
            Err(_) => format!("{core}.1"),
        },
        None => format!("{core}.1"),
    }
}

/// `registry-latest-other-provider`: a provider that is not this one.
fn other_provider(provider: &str) -> &'static str {
    if provider == "google" {
        "azurerm"
    } else {
        "google"
    }
}

/// Restates a module answer (summary or detail) under another provider.
fn under_other_provider(doc: &mut Value) {
    let provider = doc["provider"].as_str().unwrap_or_default().to_string();
    let other = other_provider(&provider);
    doc["provider"] = json!(other);
    if let Some(id) = doc["id"].as_str() {
        let parts: Vec<&str> = id.split('/').collect();
        if let [ns, name, _, version] = parts.as_slice() {
            doc["id"] = json!(format!("{ns}/{name}/{other}/{version}"));
        }
    }
    if doc.get("providers").is_some() {
        doc["providers"] = json!([other]);
    }
}

/// The bytes `GET /v1/object/<id>` serves for an object of `kind`: what was uploaded, except
/// that `registry-download-wrong-bytes` serves a module version's archive as other bytes.
pub(crate) fn served_object(ctx: &Ctx, kind: &str, bytes: Vec<u8>) -> Vec<u8> {
    if kind != "registry-module-versions" || !ctx.state.fault(Kind::RegistryDownloadWrongBytes) {
        return bytes;
    }
    let other = crate::shapes::seeded_archive();
    if bytes != other {
        other
    } else {
        bytes[..bytes.len() / 2].to_vec()
    }
}

/// Published (`ok`) versions of a module, oldest first by version.
fn published<'a>(store: &'a Store, module: &str) -> Vec<&'a Record> {
    let mut out: Vec<&Record> = store
        .list("registry-module-versions", Some(module))
        .into_iter()
        .filter(|v| v.str("status") == "ok")
        .collect();
    out.sort_by_key(|v| version_key(v.str("version")));
    out
}

fn summary(m: &Record, v: &Record) -> Value {
    let (ns, name, provider, version) = (
        m.str("namespace"),
        m.str("name"),
        m.str("provider"),
        v.str("version"),
    );
    json!({
        "id": format!("{ns}/{name}/{provider}/{version}"),
        "owner": "", "namespace": ns, "name": name, "version": version, "provider": provider,
        "provider_logo_url": "", "description": "", "source": "", "tag": "",
        "published_at": v.str("created-at"), "downloads": 0, "verified": false,
    })
}

fn detail(store: &Store, m: &Record, v: &Record) -> Value {
    let mut doc = summary(m, v);
    let versions: Vec<Value> = published(store, &m.id)
        .iter()
        .map(|v| json!(v.str("version")))
        .collect();
    doc["root"] = json!({"path": "", "name": m.str("name"), "readme": "", "empty": false,
        "inputs": [], "outputs": [], "dependencies": [], "provider_dependencies": [], "resources": []});
    doc["submodules"] = json!([]);
    doc["examples"] = json!([]);
    doc["providers"] = json!([m.str("provider")]);
    doc["versions"] = json!(versions);
    doc
}

/// Modules with at least one published version, with their latest version.
fn published_modules<'a>(store: &'a Store, ns: Option<&str>) -> Vec<(&'a Record, &'a Record)> {
    store
        .list("registry-modules", None)
        .into_iter()
        .filter(|m| m.str("registry-name") == "private")
        .filter(|m| ns.is_none_or(|n| m.str("namespace") == n))
        .filter_map(|m| published(store, &m.id).last().map(|v| (m, *v)))
        .collect()
}

fn proto_page(ctx: &Ctx, items: Vec<Value>) -> Response {
    let offset: usize = ctx.q("offset").and_then(|o| o.parse().ok()).unwrap_or(0);
    let limit: usize = ctx
        .q("limit")
        .filter(|_| !ctx.state.fault(Kind::RegistryLimitIgnored))
        .and_then(|l| l.parse().ok())
        .unwrap_or(15)
        .clamp(1, 100);
    let total = items.len();
    let page: Vec<Value> = items.into_iter().skip(offset).take(limit).collect();
    let mut meta = json!({"limit": limit, "current_offset": offset});
    if offset + limit < total {
        meta["next_offset"] = json!(offset + limit);
        meta["next_url"] = json!(format!(
            "{}?offset={}&limit={limit}",
            ctx.path,
            offset + limit
        ));
    }
    if offset > 0 {
        meta["prev_offset"] = json!(offset.saturating_sub(limit));
    }
    proto_ok(ctx, json!({"meta": meta, "modules": page}))
}

fn filtered(ctx: &Ctx, ns: Option<&str>, query: Option<&str>) -> Response {
    if let Some(refused) = query_refused(ctx) {
        return refused;
    }
    let store = ctx.state.read();
    let ignored = ctx.state.fault(Kind::RegistryFiltersIgnored);
    let provider = ctx.q("provider").filter(|_| !ignored);
    let verified = ctx.q("verified").filter(|_| !ignored).map(|v| v == "true");
    let query = query.map(str::to_lowercase);
    let items: Vec<Value> = published_modules(&store, ns)
        .into_iter()
        .filter(|(m, _)| provider.is_none_or(|p| m.str("provider") == p))
        .filter(|_| verified != Some(true))
        .filter(|(m, _)| {
            query.as_ref().is_none_or(|q| {
                m.str("name").to_lowercase().contains(q)
                    || m.str("namespace").to_lowercase().contains(q)
            })
        })
        .map(|(m, v)| summary(m, v))
        .collect();
    drop(store);
    proto_page(ctx, items)
}

async fn proto_list(ctx: Ctx) -> Response {
    filtered(&ctx, None, None)
}

async fn proto_search(ctx: Ctx) -> Response {
    let q = if ctx.state.fault(Kind::RegistrySearchQOnly) {
        Some(ctx.q("q").unwrap_or_default().to_string())
    } else {
        ctx.q("q").or(ctx.q("query")).map(String::from)
    };
    match q {
        Some(q) => filtered(&ctx, None, Some(&q)),
        None => proto_error(StatusCode::BAD_REQUEST, "q is required"),
    }
}

async fn proto_namespace(ctx: Ctx, Path(ns): Path<String>) -> Response {
    filtered(&ctx, Some(&ns), None)
}

async fn proto_name(ctx: Ctx, Path((ns, name)): Path<(String, String)>) -> Response {
    if let Some(refused) = query_refused(&ctx) {
        return refused;
    }
    let store = ctx.state.read();
    let items: Vec<Value> = published_modules(&store, Some(&ns))
        .into_iter()
        .filter(|(m, _)| m.str("name") == name)
        .map(|(m, v)| {
            let mut item = summary(m, v);
            if ctx.state.fault(Kind::RegistryLatestOtherProvider) {
                under_other_provider(&mut item);
            }
            item
        })
        .collect();
    drop(store);
    if items.is_empty() {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    }
    proto_page(&ctx, items)
}

fn find_published<'a>(
    store: &'a Store,
    ns: &str,
    name: &str,
    provider: &str,
) -> Option<&'a Record> {
    store.list("registry-modules", None).into_iter().find(|m| {
        m.str("registry-name") == "private"
            && m.str("namespace") == ns
            && m.str("name") == name
            && m.str("provider") == provider
    })
}

async fn proto_latest(
    ctx: Ctx,
    Path((ns, name, provider)): Path<(String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some(m) = find_published(&store, &ns, &name, &provider) else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    match published(&store, &m.id).last() {
        Some(v) => {
            let mut doc = detail(&store, m, v);
            if ctx.state.fault(Kind::RegistryLatestOtherProvider) {
                under_other_provider(&mut doc);
            }
            proto_ok(&ctx, doc)
        }
        None => proto_error(StatusCode::NOT_FOUND, "Not Found"),
    }
}

async fn proto_versions(
    ctx: Ctx,
    Path((ns, name, provider)): Path<(String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some(m) = find_published(&store, &ns, &name, &provider) else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    let versions: Vec<Value> = published(&store, &m.id)
        .iter()
        .filter(|_| !ctx.state.fault(Kind::RegistryVersionsEmpty))
        .map(|v| json!({"version": v.str("version"),
            "root": {"providers": [{"name": provider, "namespace": "", "source": "", "version": ""}], "dependencies": []},
            "submodules": []}))
        .collect();
    proto_ok(
        &ctx,
        json!({"modules": [{"source": format!("{ns}/{name}/{provider}"), "versions": versions}]}),
    )
}

async fn proto_version(
    ctx: Ctx,
    Path((ns, name, provider, version)): Path<(String, String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some(m) = find_published(&store, &ns, &name, &provider) else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    match published(&store, &m.id)
        .into_iter()
        .find(|v| v.str("version") == version)
    {
        Some(v) => {
            let mut doc = detail(&store, m, v);
            if ctx.state.fault(Kind::RegistryVersionWrong) {
                let other = next_version(&version);
                doc["id"] = json!(format!("{ns}/{name}/{provider}/{other}"));
                doc["version"] = json!(other);
            }
            proto_ok(&ctx, doc)
        }
        None => proto_error(StatusCode::NOT_FOUND, "Not Found"),
    }
}

async fn proto_download_latest(
    ctx: Ctx,
    Path((ns, name, provider)): Path<(String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some(m) = find_published(&store, &ns, &name, &provider) else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    let Some(v) = published(&store, &m.id)
        .last()
        .map(|v| v.str("version").to_string())
    else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    let location = format!("/api/registry/v1/modules/{ns}/{name}/{provider}/{v}/download");
    let mut res = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        res.headers_mut().insert(header::LOCATION, value);
    }
    res
}

async fn proto_download(
    ctx: Ctx,
    Path((ns, name, provider, version)): Path<(String, String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some(m) = find_published(&store, &ns, &name, &provider) else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    let Some(v) = published(&store, &m.id)
        .into_iter()
        .find(|v| v.str("version") == version)
    else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    let Some((object, _)) = store.objects.iter().find(|(_, o)| o.target == v.id) else {
        return proto_error(StatusCode::NOT_FOUND, "Not Found");
    };
    let url = if ctx.state.fault(Kind::RegistrySourceElsewhere) {
        format!("https://archive.example.invalid/v1/object/{object}?archive=tar.gz")
    } else {
        format!("{}?archive=tar.gz", ctx.object_url(object))
    };
    let mut res = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(&url) {
        res.headers_mut().insert("x-terraform-get", value);
    }
    res
}
