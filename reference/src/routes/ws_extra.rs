//! TFE workspace routes the spec does not list and TFE clients use (go-tfe, the `tfe`
//! provider): safe delete, remote state consumers, the SSH key relationship and the
//! workspace's resources (read from its current state).

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, patch, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{item_ids, no_content, ok, paginate, Body, Ctx};
use crate::render::render_ws;
use crate::shared::ws_by_name;
use crate::state::AppState;
use crate::store::Store;

/// The store kind of one (producer workspace, consumer workspace) pair: owned by the producer,
/// its `consumer` attribute names the consumer.
const CONSUMERS: &str = "remote-state-consumers";

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/workspaces/{id}/actions/safe-delete", post(safe_delete))
        .route(
            "/organizations/{org}/workspaces/{name}/actions/safe-delete",
            post(safe_delete_by_name),
        )
        .route(
            "/workspaces/{id}/relationships/remote-state-consumers",
            get(list_consumers)
                .post(add_consumers)
                .delete(remove_consumers)
                .patch(replace_consumers),
        )
        .route(
            "/workspaces/{id}/relationships/ssh-key",
            patch(assign_ssh_key),
        )
        .route("/workspaces/{id}/resources", get(list_resources))
}

/// TFE's safe delete: 409 while the workspace is locked or manages resources (its current
/// state holds any), else the workspace is deleted (204).
fn safe_delete_in(store: &mut Store, id: &str) -> ApiResult<Response> {
    let ws = store.find("workspaces", id)?;
    if ws.flag("locked") {
        return Err(ApiError::Conflict(
            "Workspace is currently locked. Workspace must be unlocked before it can be safely deleted".into(),
        ));
    }
    let resources = ws
        .attributes
        .get("resource-count")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if resources > 0 {
        return Err(ApiError::Conflict(
            "workspace cannot be safely deleted because it is still managing resources".into(),
        ));
    }
    store.delete("workspaces", id)?;
    no_content()
}

// POST /workspaces/:workspace_id/actions/safe-delete
async fn safe_delete(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    safe_delete_in(&mut ctx.state.write(), &id)
}

// POST /organizations/:organization_name/workspaces/:name/actions/safe-delete
async fn safe_delete_by_name(
    ctx: Ctx,
    Path((o, n)): Path<(String, String)>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = ws_by_name(&store, &o, &n)?;
    safe_delete_in(&mut store, &id)
}

/// The ids of a workspace's remote state consumers: with project remote state sharing on,
/// the other workspaces of its project; else those added, that still exist.
fn consumers(store: &Store, id: &str) -> ApiResult<Vec<String>> {
    let ws = store.find("workspaces", id)?;
    if ws.flag("project-remote-state") {
        let project = ws.rel_id("project");
        return Ok(store
            .list("workspaces", ws.owner.as_deref())
            .iter()
            .filter(|w| w.id != id && w.rel_id("project") == project)
            .map(|w| w.id.clone())
            .collect());
    }
    Ok(store
        .list(CONSUMERS, Some(id))
        .iter()
        .map(|c| c.str("consumer").to_string())
        .filter(|c| store.get("workspaces", c).is_some())
        .collect())
}

// GET /workspaces/:workspace_id/relationships/remote-state-consumers
async fn list_consumers(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let items: Vec<Value> = consumers(&store, &id)?
        .iter()
        .filter_map(|c| store.get("workspaces", c))
        .map(render_ws)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

/// The workspaces a consumers body names: each must be a workspace of the producer's
/// organization (404 otherwise, 422 for an empty list).
fn named_consumers(store: &Store, id: &str, body: &Value) -> ApiResult<Vec<String>> {
    let org_name = store.find("workspaces", id)?.owner.clone();
    let ids = item_ids(body, &["workspaces"])?;
    if ids.is_empty() {
        return Err(ApiError::invalid("at least one workspace is required"));
    }
    for c in &ids {
        if store.find("workspaces", c)?.owner != org_name {
            return Err(ApiError::not_found("workspace", c));
        }
    }
    Ok(ids)
}

fn add_in(store: &mut Store, id: &str, ids: &[String]) {
    let current: Vec<String> = store
        .list(CONSUMERS, Some(id))
        .iter()
        .map(|c| c.str("consumer").to_string())
        .collect();
    for c in ids {
        if !current.contains(c) {
            let mut attrs = Map::new();
            attrs.insert("consumer".into(), json!(c));
            store.insert(CONSUMERS, "rsc-", Some(id), attrs, Map::new());
        }
    }
}

fn remove_in(store: &mut Store, id: &str, keep: impl Fn(&str) -> bool) {
    let gone: Vec<String> = store
        .list(CONSUMERS, Some(id))
        .iter()
        .filter(|c| !keep(c.str("consumer")))
        .map(|c| c.id.clone())
        .collect();
    for g in gone {
        store.remove(CONSUMERS, &g);
    }
}

// POST /workspaces/:workspace_id/relationships/remote-state-consumers
async fn add_consumers(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let ids = named_consumers(&store, &id, &body)?;
    add_in(&mut store, &id, &ids);
    no_content()
}

// DELETE /workspaces/:workspace_id/relationships/remote-state-consumers
async fn remove_consumers(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let ids = named_consumers(&store, &id, &body)?;
    remove_in(&mut store, &id, |c| !ids.iter().any(|i| i == c));
    no_content()
}

// PATCH /workspaces/:workspace_id/relationships/remote-state-consumers: replaces the list.
async fn replace_consumers(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let ids = named_consumers(&store, &id, &body)?;
    remove_in(&mut store, &id, |c| ids.iter().any(|i| i == c));
    add_in(&mut store, &id, &ids);
    no_content()
}

// PATCH /workspaces/:workspace_id/relationships/ssh-key: `data.attributes.id` names an SSH
// key of the workspace's organization (null unassigns it).
async fn assign_ssh_key(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let key = match body.pointer("/data/attributes/id") {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) => Some(k.clone()),
        Some(_) => return Err(ApiError::attribute("id", "id must be a string or null")),
    };
    let mut store = ctx.state.write();
    let org_name = store.find("workspaces", &id)?.owner.clone();
    if let Some(k) = &key {
        if store.find("ssh-keys", k)?.owner != org_name {
            return Err(ApiError::not_found("ssh-key", k));
        }
    }
    let ws = store.find_mut("workspaces", &id)?;
    match key {
        Some(k) => ws.set_rel("ssh-key", "ssh-keys", &k),
        None => {
            ws.relationships
                .insert("ssh-key".into(), json!({"data": null}));
        }
    }
    ok(render_ws(ws))
}

/// The raw state of a workspace's current (newest finalized) state version, with its id.
fn current_state(store: &Store, ws: &str) -> Option<(String, Value)> {
    let sv = store
        .list("state-versions", Some(ws))
        .into_iter()
        .rev()
        .find(|s| s.str("status") == "finalized")?;
    let state = store
        .objects
        .values()
        .find(|o| o.target == sv.id && o.kind == "state-versions")
        .and_then(|o| o.bytes.as_deref())
        .and_then(|b| serde_json::from_slice(b).ok())?;
    Some((sv.id.clone(), state))
}

/// A workspace's managed resource instances as TFE lists them (`resources`): the address
/// without `module.` prefixes, the module (`root` at the top), the provider's source
/// (`hashicorp/aws`), the provider type (the resource type) and the instance key.
fn resources(store: &Store, ws: &str) -> Vec<Value> {
    let Some((sv, state)) = current_state(store, ws) else {
        return Vec::new();
    };
    let at = store
        .get("state-versions", &sv)
        .map(|s| s.str("created-at").to_string())
        .unwrap_or_default();
    let mut out = Vec::new();
    for r in state
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if r.get("mode").and_then(Value::as_str) == Some("data") {
            continue;
        }
        let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let module: Vec<&str> = r
            .get("module")
            .and_then(Value::as_str)
            .unwrap_or("")
            .split('.')
            .filter(|p| !p.is_empty() && *p != "module")
            .collect();
        let module = module.join(".");
        let (kind, name) = (text("type"), text("name"));
        let provider = text("provider");
        let source = provider
            .trim_start_matches("provider[\"")
            .trim_end_matches("\"]");
        let provider = source
            .split_once('/')
            .map_or(source, |(_, rest)| rest)
            .to_string();
        let base = if module.is_empty() {
            format!("{kind}.{name}")
        } else {
            format!("{module}.{kind}.{name}")
        };
        let instances = r
            .get("instances")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for inst in instances {
            let key = inst.get("index_key");
            let (address, index) = match key {
                Some(Value::Number(n)) => (format!("{base}[{n}]"), Some(n.to_string())),
                Some(Value::String(s)) => (format!("{base}[\"{s}\"]"), Some(s.clone())),
                _ => (base.clone(), None),
            };
            out.push(json!({
                "id": format!("wsr-{}-{}", ws.trim_start_matches("ws-"), out.len()),
                "type": "resources",
                "attributes": {
                    "address": address,
                    "name": name,
                    "created-at": at,
                    "updated-at": at,
                    "module": if module.is_empty() { "root" } else { module.as_str() },
                    "provider": provider,
                    "provider-type": kind,
                    "modified-by-state-version-id": sv,
                    "name-index": index,
                },
            }));
        }
    }
    out
}

// GET /workspaces/:workspace_id/resources
async fn list_resources(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &id)?;
    let items = resources(&store, &id);
    drop(store);
    paginate(&ctx, items)
}
