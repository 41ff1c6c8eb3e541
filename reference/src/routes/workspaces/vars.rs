//! Variables: the deprecated `/vars` group and the workspace-scoped TFE paths
//! (`/workspaces/:id/vars`).

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, merge, no_content, ok, paginate, resource, Body, Ctx, Doc};
use crate::shared::org;
use crate::shared::ws_by_name;
use crate::store::{now, Record, Store};

/// A variable as JSON:API (sensitive values are write-only).
fn render_var(v: &Record) -> Value {
    let mut doc = v.render();
    if v.flag("sensitive") {
        doc["attributes"]["value"] = Value::Null;
    }
    doc["links"]["self"] = json!(format!(
        "/api/v2/workspaces/{}/vars/{}",
        v.owner.clone().unwrap_or_default(),
        v.id
    ));
    doc
}

fn check_var(
    store: &Store,
    ws: &str,
    attrs: &Map<String, Value>,
    own: Option<&str>,
) -> ApiResult<()> {
    let get = |k: &str| attrs.get(k).and_then(Value::as_str).unwrap_or("");
    if let Some(c) = attrs.get("category") {
        if !matches!(c.as_str(), Some("terraform" | "env" | "policy-set")) {
            return Err(ApiError::attribute(
                "category",
                "Category must be terraform or env",
            ));
        }
    }
    if get("description").chars().count() > 512 {
        return Err(ApiError::attribute(
            "description",
            "Description is too long (maximum is 512 characters)",
        ));
    }
    if let Some(k) = attrs.get("key") {
        let key = k.as_str().unwrap_or("");
        if key.trim().is_empty() {
            return Err(ApiError::attribute("key", "Key is required"));
        }
        let taken = store.list("vars", Some(ws)).iter().any(|v| {
            Some(v.id.as_str()) != own
                && v.str("key") == key
                && attrs
                    .get("category")
                    .and_then(Value::as_str)
                    .is_none_or(|c| v.str("category") == c)
        });
        if taken {
            return Err(ApiError::attribute("key", "Key has already been taken"));
        }
    }
    Ok(())
}

fn insert_var(store: &mut Store, ws: &str, doc: &Doc) -> ApiResult<Value> {
    doc.required("key")?;
    doc.required("category")?;
    check_var(store, ws, &doc.attributes, None)?;
    let version = store.random("");
    let mut attrs = merge(
        json!({"value": "", "description": null, "hcl": false, "sensitive": false,
            "created-at": now(), "version-id": version}),
        &doc.attributes,
        &[],
    );
    if attrs.get("value").is_some_and(Value::is_null) {
        attrs.insert("value".into(), json!(""));
    }
    let id = store.insert("vars", "var-", Some(ws), attrs, Map::new());
    let v = store.find_mut("vars", &id)?;
    v.set_rel("configurable", "workspaces", ws);
    v.set_rel("workspace", "workspaces", ws);
    let doc = render_var(v);
    relink_vars(store, ws);
    Ok(doc)
}

/// The workspace's `vars` relationship: its variables (go-tfe's Workspace.Variables;
/// TestVariablesCreate reads the new variable there).
fn relink_vars(store: &mut Store, ws: &str) {
    let ids: Vec<String> = store
        .list("vars", Some(ws))
        .iter()
        .map(|v| v.id.clone())
        .collect();
    if let Some(w) = store.get_mut("workspaces", ws) {
        w.set_rel_ids("vars", "vars", &ids);
    }
}

fn update_var_in(store: &mut Store, id: &str, doc: Doc) -> ApiResult<Value> {
    let v = store.find("vars", id)?;
    let ws = v.owner.clone().unwrap_or_default();
    let mut probe = doc.attributes.clone();
    if !probe.contains_key("category") && probe.contains_key("key") {
        probe.insert("category".into(), json!(v.str("category")));
    }
    check_var(store, &ws, &probe, Some(id))?;
    let version = store.random("");
    let v = store.find_mut("vars", id)?;
    for (k, val) in doc.attributes {
        v.attributes.insert(k, val);
    }
    v.attributes.insert("version-id".into(), json!(version));
    Ok(render_var(v))
}

// POST /vars
pub(super) async fn create_var(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    let mut store = ctx.state.write();
    let ws = match doc.rel("workspace").or(doc.rel("configurable")) {
        Some(ws) => {
            store.find("workspaces", &ws)?;
            ws
        }
        None => {
            // The deprecated `filter` object names the workspace.
            let name = body
                .pointer("/filter/workspace/name")
                .and_then(Value::as_str);
            let org_name = body
                .pointer("/filter/organization/name")
                .and_then(Value::as_str);
            match (name, org_name) {
                (Some(n), Some(o)) => ws_by_name(&store, o, n)?,
                _ => {
                    return Err(doc
                        .required_rel("workspace")
                        .err()
                        .unwrap_or_else(|| ApiError::invalid("workspace is required")))
                }
            }
        }
    };
    created(insert_var(&mut store, &ws, &doc)?)
}

// GET /vars
pub(super) async fn list_vars(ctx: Ctx) -> ApiResult<Response> {
    let name = ctx.required("filter[workspace][name]")?.to_string();
    let org_name = ctx.q("filter[organization][name]").map(String::from);
    let store = ctx.state.read();
    if let Some(o) = &org_name {
        org(&store, o)?;
    }
    let workspaces: Vec<String> = store
        .list("workspaces", org_name.as_deref())
        .iter()
        .filter(|w| w.str("name") == name)
        .map(|w| w.id.clone())
        .collect();
    if workspaces.is_empty() {
        return Err(ApiError::not_found("workspace", &name));
    }
    let items: Vec<Value> = workspaces
        .iter()
        .flat_map(|w| store.list("vars", Some(w)))
        .map(render_var)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// PATCH /vars/:variable_id
pub(super) async fn update_var(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    ok(update_var_in(&mut ctx.state.write(), &id, doc)?)
}

// DELETE /vars/:variable_id
pub(super) async fn destroy_var(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let ws = store.find("vars", &id)?.owner.clone().unwrap_or_default();
    store.delete("vars", &id)?;
    relink_vars(&mut store, &ws);
    no_content()
}

pub(super) async fn create_ws_var(
    ctx: Ctx,
    Path(ws): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    let mut store = ctx.state.write();
    store.find("workspaces", &ws)?;
    created(insert_var(&mut store, &ws, &doc)?)
}

pub(super) async fn list_ws_vars(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let items: Vec<Value> = store
        .list("vars", Some(&ws))
        .into_iter()
        .map(render_var)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

fn ws_var<'a>(store: &'a Store, ws: &str, id: &str) -> ApiResult<&'a Record> {
    store.find("workspaces", ws)?;
    let v = store.find("vars", id)?;
    if v.owner.as_deref() != Some(ws) {
        return Err(ApiError::not_found("var", id));
    }
    Ok(v)
}

pub(super) async fn show_ws_var(
    ctx: Ctx,
    Path((ws, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    ok(render_var(ws_var(&ctx.state.read(), &ws, &id)?))
}

pub(super) async fn update_ws_var(
    ctx: Ctx,
    Path((ws, id)): Path<(String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    let mut store = ctx.state.write();
    ws_var(&store, &ws, &id)?;
    ok(update_var_in(&mut store, &id, doc)?)
}

pub(super) async fn destroy_ws_var(
    ctx: Ctx,
    Path((ws, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    ws_var(&store, &ws, &id)?;
    store.delete("vars", &id)?;
    relink_vars(&mut store, &ws);
    no_content()
}
