//! The registry read protocol under `/api/registry/v1/modules/` (plain JSON) and service
//! discovery. Spec: Endpoints > Registry modules (read endpoints).

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};

use crate::faults::Kind;
use crate::jsonapi::{plain, Ctx};
use crate::shapes::Shape;
use crate::state::AppState;
use crate::store::{Record, Store};

/// The read protocol and service discovery.
pub(super) fn router() -> Router<AppState> {
    Router::new()
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
fn version_key(v: &str) -> (Vec<u64>, bool) {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let nums = core.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    (nums, !v.contains('-'))
}

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
    if ctx.state.fault(Kind::RegistrySearchRefused)
        || (ctx.state.fault(Kind::RegistrySearchQuery400) && ctx.q("query").is_some())
    {
        return proto_error(StatusCode::BAD_REQUEST, "unknown parameter");
    }
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
        return not_found();
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

/// A published module and one of its published versions: `version`, else the latest.
fn find_release<'a>(
    store: &'a Store,
    (ns, name, provider): (&str, &str, &str),
    version: Option<&str>,
) -> Option<(&'a Record, &'a Record)> {
    let m = find_published(store, ns, name, provider)?;
    let versions = published(store, &m.id);
    let v = match version {
        Some(want) => versions.into_iter().find(|v| v.str("version") == want),
        None => versions.last().copied(),
    }?;
    Some((m, v))
}

fn not_found() -> Response {
    proto_error(StatusCode::NOT_FOUND, "Not Found")
}

async fn proto_latest(
    ctx: Ctx,
    Path((ns, name, provider)): Path<(String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some((m, v)) = find_release(&store, (&ns, &name, &provider), None) else {
        return not_found();
    };
    let mut doc = detail(&store, m, v);
    if ctx.state.fault(Kind::RegistryLatestOtherProvider) {
        under_other_provider(&mut doc);
    }
    proto_ok(&ctx, doc)
}

async fn proto_versions(
    ctx: Ctx,
    Path((ns, name, provider)): Path<(String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some(m) = find_published(&store, &ns, &name, &provider) else {
        return not_found();
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
    let Some((m, v)) = find_release(&store, (&ns, &name, &provider), Some(&version)) else {
        return not_found();
    };
    let mut doc = detail(&store, m, v);
    if ctx.state.fault(Kind::RegistryVersionWrong) {
        let other = next_version(&version);
        doc["id"] = json!(format!("{ns}/{name}/{provider}/{other}"));
        doc["version"] = json!(other);
    }
    proto_ok(&ctx, doc)
}

async fn proto_download_latest(
    ctx: Ctx,
    Path((ns, name, provider)): Path<(String, String, String)>,
) -> Response {
    let store = ctx.state.read();
    let Some((_, v)) = find_release(&store, (&ns, &name, &provider), None) else {
        return not_found();
    };
    let v = v.str("version");
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
    let Some((_, v)) = find_release(&store, (&ns, &name, &provider), Some(&version)) else {
        return not_found();
    };
    let Some((object, _)) = store.objects.iter().find(|(_, o)| o.target == v.id) else {
        return not_found();
    };
    let zip =
        ctx.state.fault(Kind::RegistrySourceZip) || ctx.state.fault(Kind::RegistrySourceMisnamed);
    let archive = if zip { "zip" } else { "tar.gz" };
    let url = if ctx.state.fault(Kind::RegistrySourceGit) {
        format!("git::https://git.example.invalid/{ns}/{name}-{provider}.git?ref=v{version}")
    } else if ctx.state.fault(Kind::RegistrySourceElsewhere) {
        format!("https://archive.example.invalid/v1/object/{object}?archive={archive}")
    } else {
        let url = ctx.object_url(object);
        let url = match url.strip_prefix(&ctx.root) {
            Some(rest) => format!("{}{rest}", ctx.state.shapes.source_root(&ctx.root)),
            None => url,
        };
        format!("{url}?archive={archive}")
    };
    if ctx.state.fault(Kind::RegistryDownloadJsonLocation) {
        return plain(StatusCode::OK, json!({ "location": url }));
    }
    let mut res = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(&url) {
        res.headers_mut().insert("x-terraform-get", value);
    }
    res
}
