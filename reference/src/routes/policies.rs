//! Policy sets, policy set versions and policies.
//! Spec: Endpoints > Policy sets (`DELETE /policies/:policy_set_id` exactly as listed).

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, item_ids, merge, no_content, ok, paginate, resource, Body, Ctx};
use crate::shared::org;
use crate::shared::valid_name;
use crate::state::AppState;
use crate::store::{now, Record, Store};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/organizations/{org}/policy-sets", get(list).post(create))
        .route("/policy-sets/{id}", get(show).patch(update).delete(destroy))
        .route(
            "/policies/{id}",
            get(show_policy).delete(destroy_policy).patch(update_policy),
        )
        .route(
            "/policy-sets/{id}/relationships/policies",
            post(add_policies).delete(remove_policies),
        )
        .route(
            "/policy-sets/{id}/relationships/workspaces",
            post(add_workspaces).delete(remove_workspaces),
        )
        .route("/policy-sets/{id}/versions", post(create_version))
        .route("/policy-set-versions/{id}", get(show_version))
        .route(
            "/organizations/{org}/policies",
            get(list_policies).post(create_policy),
        )
}

fn render_set(set: &Record) -> Value {
    let mut doc = set.render();
    doc["attributes"]["policy-count"] = json!(set.rel_ids("policies").len());
    doc["attributes"]["workspace-count"] = json!(set.rel_ids("workspaces").len());
    doc
}

// GET /organizations/:organization_name/policy-sets
async fn list(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let search = ctx
        .q("search[name]")
        .or(ctx.q("search"))
        .map(str::to_lowercase);
    let versioned = ctx.q("filter[versioned]").map(|v| v == "true");
    let kind = ctx.q("filter[kind]");
    let items: Vec<Value> = store
        .list("policy-sets", Some(&name))
        .into_iter()
        .filter(|s| {
            search
                .as_ref()
                .is_none_or(|q| s.str("name").to_lowercase().contains(q))
        })
        .filter(|s| versioned.is_none_or(|v| s.flag("versioned") == v))
        .filter(|s| kind.is_none_or(|k| s.str("kind") == k))
        .map(render_set)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/policy-sets
async fn create(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["policy-sets"])?;
    let set_name = doc.required("name")?;
    if !valid_name(&set_name) {
        return Err(ApiError::attribute("name", "Name is invalid"));
    }
    if let Some(kind) = doc.opt("kind") {
        if kind != "sentinel" && kind != "opa" {
            return Err(ApiError::attribute("kind", "Kind must be sentinel or opa"));
        }
    }
    let mut store = ctx.state.write();
    org(&store, &name)?;
    if store
        .list("policy-sets", Some(&name))
        .iter()
        .any(|s| s.str("name") == set_name)
    {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    let attrs = merge(
        json!({"name": set_name, "description": null, "kind": "sentinel", "global": false,
            "overridable": false, "agent-enabled": false, "policy-tool-version": "latest",
            "versioned": false, "project-count": 0, "policies-path": null,
            "created-at": now(), "updated-at": now()}),
        &doc.attributes,
        &[],
    );
    let id = store.insert("policy-sets", "polset-", Some(&name), attrs, Map::new());
    let set = store.find_mut("policy-sets", &id)?;
    set.set_rel("organization", "organizations", &name);
    set.set_rel_ids("policies", "policies", &[]);
    set.set_rel_ids("workspaces", "workspaces", &[]);
    set.set_rel_ids("projects", "projects", &[]);
    set.relationships
        .insert("newest-version".into(), json!({"data": null}));
    set.relationships
        .insert("current-version".into(), json!({"data": null}));
    created(render_set(set))
}

async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render_set(ctx.state.read().find("policy-sets", &id)?))
}

// PATCH /policy-sets/:id
async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["policy-sets"])?;
    let mut store = ctx.state.write();
    let set = store.find("policy-sets", &id)?;
    if let Some(new) = doc.opt("name") {
        if !valid_name(&new) {
            return Err(ApiError::attribute("name", "Name is invalid"));
        }
        if store
            .list("policy-sets", set.owner.as_deref())
            .iter()
            .any(|s| s.str("name") == new && s.id != id)
        {
            return Err(ApiError::attribute("name", "Name has already been taken"));
        }
    }
    let set = store.find_mut("policy-sets", &id)?;
    for (k, v) in doc.attributes {
        set.attributes.insert(k, v);
    }
    set.attributes.insert("updated-at".into(), json!(now()));
    ok(render_set(set))
}

async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("policy-sets", &id)?;
    no_content()
}

// DELETE /policies/:policy_set_id: a policy set id deletes the set, a policy id the policy.
async fn destroy_policy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    if store.get("policy-sets", &id).is_some() {
        store.delete("policy-sets", &id)?;
        return no_content();
    }
    store.delete("policies", &id)?;
    let sets: Vec<String> = store
        .list("policy-sets", None)
        .iter()
        .map(|s| s.id.clone())
        .collect();
    for s in sets {
        if let Some(set) = store.get_mut("policy-sets", &s) {
            let ids: Vec<String> = set
                .rel_ids("policies")
                .into_iter()
                .filter(|p| *p != id)
                .collect();
            set.set_rel_ids("policies", "policies", &ids);
        }
    }
    no_content()
}

/// Adds or removes the `kind` members named in a relationship document of a policy set
/// (the relationship is named as the type); unknown members are a 404 and change nothing.
fn change(ctx: &Ctx, id: &str, body: &Value, kind: &'static str, add: bool) -> ApiResult<Response> {
    let ids = item_ids(body, &[kind])?;
    let mut store = ctx.state.write();
    store.find("policy-sets", id)?;
    for i in &ids {
        store.find(kind, i)?;
    }
    let set = store.find_mut("policy-sets", id)?;
    let mut current = set.rel_ids(kind);
    for i in &ids {
        if add && !current.contains(i) {
            current.push(i.clone());
        }
        if !add {
            current.retain(|c| c != i);
        }
    }
    set.set_rel_ids(kind, kind, &current);
    drop(store);
    no_content()
}

async fn add_policies(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    change(&ctx, &id, &body, "policies", true)
}

async fn remove_policies(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    change(&ctx, &id, &body, "policies", false)
}

async fn add_workspaces(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    change(&ctx, &id, &body, "workspaces", true)
}

async fn remove_workspaces(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    change(&ctx, &id, &body, "workspaces", false)
}

fn render_version(ctx: &Ctx, store: &Store, id: &str) -> ApiResult<Value> {
    let v = store.find("policy-set-versions", id)?;
    let mut doc = v.render();
    if let Some((object, _)) = store.objects.iter().find(|(_, o)| o.target == id) {
        doc["links"]["upload"] = json!(ctx.object_url(object));
    }
    Ok(doc)
}

// POST /policy-sets/:id/versions
async fn create_version(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let set = store.find("policy-sets", &id)?;
    if set.attributes.get("vcs-repo").is_some_and(|v| !v.is_null()) {
        return Err(ApiError::invalid(
            "a VCS-backed policy set takes no uploads",
        ));
    }
    let version = store.insert(
        "policy-set-versions",
        "polsetver-",
        Some(&id),
        json!({"source": "tfe-api", "status": "pending", "status-timestamps": {},
            "error": null, "error-message": null, "ingress-attributes": null,
            "created-at": now(), "updated-at": now()})
        .as_object()
        .cloned()
        .unwrap_or_default(),
        Map::new(),
    );
    store.new_object("policy-set-versions", &version);
    if let Some(v) = store.get_mut("policy-set-versions", &version) {
        v.set_rel("policy-set", "policy-sets", &id);
    }
    if let Some(set) = store.get_mut("policy-sets", &id) {
        set.set_rel("newest-version", "policy-set-versions", &version);
        set.attributes.insert("versioned".into(), json!(true));
    }
    created(render_version(&ctx, &store, &version)?)
}

async fn show_version(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(render_version(&ctx, &store, &id)?)
}

// POST /organizations/:organization_name/policies (TFE)
async fn create_policy(
    ctx: Ctx,
    Path(name): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["policies"])?;
    let policy_name = doc.required("name")?;
    if let Some(level) = doc.opt("enforcement-level") {
        if !matches!(
            level.as_str(),
            "advisory" | "soft-mandatory" | "hard-mandatory" | "mandatory"
        ) {
            return Err(ApiError::attribute(
                "enforcement-level",
                "Enforcement level is invalid",
            ));
        }
    }
    let mut store = ctx.state.write();
    org(&store, &name)?;
    if store
        .list("policies", Some(&name))
        .iter()
        .any(|p| p.str("name") == policy_name)
    {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    let attrs = merge(
        json!({"name": policy_name, "description": null, "kind": "sentinel",
            "enforcement-level": "advisory", "policy-set-count": 0, "updated-at": now(),
            "enforce": [{"path": format!("{policy_name}.sentinel"), "mode": "advisory"}]}),
        &doc.attributes,
        &[],
    );
    let id = store.insert("policies", "pol-", Some(&name), attrs, Map::new());
    let p = store.find_mut("policies", &id)?;
    p.set_rel("organization", "organizations", &name);
    created(p.render())
}

async fn list_policies(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let items: Vec<Value> = store
        .list("policies", Some(&name))
        .into_iter()
        .map(|p| p.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show_policy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    if let Some(set) = store.get("policy-sets", &id) {
        return ok(render_set(set));
    }
    ok(store.find("policies", &id)?.render())
}

async fn update_policy(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["policies"])?;
    let mut store = ctx.state.write();
    let p = store.find_mut("policies", &id)?;
    for (k, v) in doc.attributes {
        p.attributes.insert(k, v);
    }
    ok(p.render())
}
