//! Agent pools, agents and agent tokens. Spec: Endpoints > Agents.

use crate::faults::Kind;
use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, merge, no_content, ok, paginate, resource, Body, Ctx};
use crate::shared::org;
use crate::shared::valid_name;
use crate::state::AppState;
use crate::store::{now, Record};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/organizations/{org}/agent-pools", get(list).post(create))
        .route("/organizations/{org}/agent-pool", post(create))
        .route("/agent-pools/{id}", get(show).patch(update).delete(destroy))
        .route("/agent-pools/{id}/agents", get(list_agents))
        .route("/agents/{id}", get(show_agent).delete(destroy_agent))
        .route(
            "/agent-pools/{id}/authentication-tokens",
            get(list_tokens).post(create_token),
        )
}

fn render_pool(pool: &Record, agents: usize) -> Value {
    let mut doc = pool.render();
    doc["attributes"]["agent-count"] = json!(agents);
    doc
}

// GET /organizations/:organization_name/agent-pools
async fn list(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let q = ctx.q("q").map(str::to_lowercase);
    let items: Vec<Value> = store
        .list("agent-pools", Some(&name))
        .into_iter()
        .filter(|p| {
            q.as_ref()
                .is_none_or(|q| p.str("name").to_lowercase().contains(q))
        })
        .map(|p| render_pool(p, store.list("agents", Some(&p.id)).len()))
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/agent-pools (and the singular agent-pool)
async fn create(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["agent-pools", "agent-pool"])?;
    let pool_name = doc.required("name")?;
    if !valid_name(&pool_name) {
        return Err(ApiError::attribute("name", "Name is invalid"));
    }
    let mut store = ctx.state.write();
    org(&store, &name)?;
    if store
        .list("agent-pools", Some(&name))
        .iter()
        .any(|p| p.str("name") == pool_name)
    {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    let attrs = merge(
        json!({"name": pool_name, "organization-scoped": true, "created-at": now()}),
        &doc.attributes,
        &[],
    );
    let id = store.insert("agent-pools", "apool-", Some(&name), attrs, Map::new());
    // One registered agent stands in for an agent process, which the API cannot create.
    let agent = store.insert(
        "agents",
        "agent-",
        Some(&id),
        json!({"name": format!("{pool_name}-agent"), "status": "exited",
            "ip-address": "127.0.0.1", "last-ping-at": now()})
        .as_object()
        .cloned()
        .unwrap_or_default(),
        Map::new(),
    );
    if let Some(a) = store.get_mut("agents", &agent) {
        a.set_rel("agent-pool", "agent-pools", &id);
    }
    let p = store.find_mut("agent-pools", &id)?;
    p.set_rel("organization", "organizations", &name);
    p.set_rel_ids("workspaces", "workspaces", &[]);
    p.set_rel_ids("allowed-workspaces", "workspaces", &[]);
    p.relationships.insert(
        "agents".into(),
        json!({"links": {"related": format!("/api/v2/agent-pools/{id}/agents")}}),
    );
    p.relationships.insert(
        "authentication-tokens".into(),
        json!({"links": {"related": format!("/api/v2/agent-pools/{id}/authentication-tokens")}}),
    );
    created(render_pool(p, 1))
}

async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(render_pool(
        store.find("agent-pools", &id)?,
        store.list("agents", Some(&id)).len(),
    ))
}

async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["agent-pools"])?;
    let mut store = ctx.state.write();
    let pool = store.find("agent-pools", &id)?;
    if let Some(new) = doc.opt("name") {
        if !valid_name(&new) {
            return Err(ApiError::attribute("name", "Name is invalid"));
        }
        if store
            .list("agent-pools", pool.owner.as_deref())
            .iter()
            .any(|p| p.str("name") == new && p.id != id)
        {
            return Err(ApiError::attribute("name", "Name has already been taken"));
        }
    }
    let n = store.list("agents", Some(&id)).len();
    let p = store.find_mut("agent-pools", &id)?;
    for (k, v) in doc.attributes {
        p.attributes.insert(k, v);
    }
    ok(render_pool(p, n))
}

async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("agent-pools", &id)?;
    no_content()
}

async fn list_agents(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("agent-pools", &id)?;
    let items: Vec<Value> = store
        .list("agents", Some(&id))
        .into_iter()
        .map(|a| a.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show_agent(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("agents", &id)?.render())
}

// DELETE /agents/:id: only agents that are gone (unknown, errored, exited).
async fn destroy_agent(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let status = store.find("agents", &id)?.str("status").to_string();
    if !matches!(status.as_str(), "unknown" | "errored" | "exited") {
        return Err(ApiError::Precondition(format!("the agent is {status}")));
    }
    store.delete("agents", &id)?;
    no_content()
}

async fn list_tokens(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("agent-pools", &id)?;
    let items: Vec<Value> = store
        .list("authentication-tokens", Some(&id))
        .into_iter()
        .map(|t| t.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /agent-pools/:agent_pool_id/authentication-tokens (the secret is shown once)
async fn create_token(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let attributes = if body.is_null() {
        Map::new()
    } else {
        resource(&body, &["authentication-tokens"])?.attributes
    };
    let mut store = ctx.state.write();
    store.find("agent-pools", &id)?;
    let user = store.current_user.clone();
    let secret = format!("{}.atlasv1.{}", store.random(""), store.random(""));
    let attrs = merge(
        json!({"description": null, "created-at": now(), "last-used-at": null}),
        &attributes,
        &["token"],
    );
    let tid = store.insert("authentication-tokens", "at-", Some(&id), attrs, Map::new());
    let t = store.find_mut("authentication-tokens", &tid)?;
    t.set_rel("created-by", "users", &user);
    t.set_rel("agent-pool", "agent-pools", &id);
    let mut doc = t.render();
    doc["attributes"]["token"] = if ctx.state.fault(Kind::TokenSecretWithheld) {
        Value::Null
    } else {
        json!(secret)
    };
    created(doc)
}
