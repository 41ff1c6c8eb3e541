//! Variable sets (TFE): listed by organization (`q`, a part of the name), made, shown, updated
//! and deleted; applied to and removed from workspaces and projects; their variables; the sets
//! linked to a workspace or a project.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Map, Value};

use super::named::{insert_named, list_in_org};
use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, item_ids, merge, no_content, ok, paginate, resource, Body, Ctx};
use crate::store::{now, Record, Store};

/// A variable set with its organization and its variables' count.
fn render_varset(store: &Store, v: &Record) -> Value {
    let mut doc = v.render();
    let vars: Vec<String> = store
        .list("varset-vars", Some(&v.id))
        .iter()
        .map(|x| x.id.clone())
        .collect();
    doc["attributes"]["var-count"] = json!(vars.len());
    doc["attributes"]["workspace-count"] = json!(v.rel_ids("workspaces").len());
    doc["attributes"]["project-count"] = json!(v.rel_ids("projects").len());
    doc["relationships"]["vars"] = json!({"data": vars.iter().map(|id| json!({"type": "vars", "id": id})).collect::<Vec<_>>()});
    doc
}

/// Whether a variable set's name contains the `q` parameter (TFE), when there is one.
fn varset_named(ctx: &Ctx) -> impl Fn(&Record) -> bool {
    let q = ctx.q("q").map(str::to_lowercase);
    move |v: &Record| {
        q.as_ref()
            .is_none_or(|q| v.str("name").to_lowercase().contains(q))
    }
}

// GET /organizations/:org/varsets (`q`: a part of the name)
pub(super) async fn list_varsets(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let named = varset_named(&ctx);
    list_in_org(&ctx, &o, "varsets", named, render_varset)
}

pub(super) async fn create_varset(
    ctx: Ctx,
    Path(o): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["varsets"])?;
    let name = doc.required("name")?;
    let mut store = ctx.state.write();
    let defaults = json!({"name": name, "description": null, "global": false,
        "priority": false, "created-at": now(), "updated-at": now()});
    let id = insert_named(
        &mut store,
        ("varsets", "varset-"),
        &o,
        defaults,
        &doc.attributes,
    )?;
    let v = store.find_mut("varsets", &id)?;
    v.set_rel("organization", "organizations", &o);
    v.set_rel_ids("workspaces", "workspaces", &[]);
    v.set_rel_ids("projects", "projects", &[]);
    let v = store.find("varsets", &id)?;
    created(render_varset(&store, v))
}

pub(super) async fn show_varset(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(render_varset(&store, store.find("varsets", &id)?))
}

pub(super) async fn update_varset(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["varsets"])?;
    let mut store = ctx.state.write();
    let v = store.find_mut("varsets", &id)?;
    v.attributes.extend(doc.attributes);
    v.attributes.insert("updated-at".into(), json!(now()));
    if let Some(Value::Object(ws)) = doc.relationships.get("workspaces") {
        let ids: Vec<String> = ws
            .get("data")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|i| i.get("id").and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        v.set_rel_ids("workspaces", "workspaces", &ids);
    }
    let v = store.find("varsets", &id)?;
    ok(render_varset(&store, v))
}

pub(super) async fn destroy_varset(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("varsets", &id)?;
    no_content()
}

fn change_links(
    ctx: &Ctx,
    id: &str,
    body: &Value,
    rel: &str,
    kind: &'static str,
    add: bool,
) -> ApiResult<Response> {
    let ids = item_ids(body, &[kind])?;
    let mut store = ctx.state.write();
    store.find("varsets", id)?;
    for i in &ids {
        store.find(kind, i)?;
    }
    let v = store.find_mut("varsets", id)?;
    let mut now_ids = v.rel_ids(rel);
    if add {
        for i in ids {
            if !now_ids.contains(&i) {
                now_ids.push(i);
            }
        }
    } else {
        now_ids.retain(|i| !ids.contains(i));
    }
    v.set_rel_ids(rel, kind, &now_ids);
    no_content()
}

pub(super) async fn apply_workspaces(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(b): Body,
) -> ApiResult<Response> {
    change_links(&ctx, &id, &b, "workspaces", "workspaces", true)
}
pub(super) async fn remove_workspaces(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(b): Body,
) -> ApiResult<Response> {
    change_links(&ctx, &id, &b, "workspaces", "workspaces", false)
}
pub(super) async fn apply_projects(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(b): Body,
) -> ApiResult<Response> {
    change_links(&ctx, &id, &b, "projects", "projects", true)
}
pub(super) async fn remove_projects(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(b): Body,
) -> ApiResult<Response> {
    change_links(&ctx, &id, &b, "projects", "projects", false)
}

/// A variable of a set (sensitive values are write-only).
fn render_varset_var(v: &Record) -> Value {
    let mut doc = v.render();
    doc["type"] = json!("vars");
    if v.flag("sensitive") {
        doc["attributes"]["value"] = Value::Null;
    }
    doc["links"] = json!({"self": format!("/api/v2/varsets/{}/relationships/vars/{}",
        v.owner.clone().unwrap_or_default(), v.id)});
    doc
}

pub(super) async fn list_varset_vars(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("varsets", &id)?;
    let items: Vec<Value> = store
        .list("varset-vars", Some(&id))
        .into_iter()
        .map(render_varset_var)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

pub(super) async fn create_varset_var(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    let key = doc.required("key")?;
    let category = doc.opt("category").unwrap_or_else(|| "terraform".into());
    if category != "terraform" && category != "env" {
        return Err(ApiError::attribute(
            "category",
            "category must be terraform or env",
        ));
    }
    if doc.opt("description").unwrap_or_default().chars().count() > 512 {
        return Err(ApiError::attribute(
            "description",
            "Description is too long (maximum is 512 characters)",
        ));
    }
    let mut store = ctx.state.write();
    store.find("varsets", &id)?;
    if store
        .list("varset-vars", Some(&id))
        .iter()
        .any(|v| v.str("key") == key && v.str("category") == category)
    {
        return Err(ApiError::attribute("key", "Key has already been taken"));
    }
    let version = store.random("");
    let mut attrs = merge(
        json!({"key": key, "value": "", "description": null, "category": category,
            "hcl": false, "sensitive": false, "created-at": now()}),
        &doc.attributes,
        &[],
    );
    // Every write gives the variable a new `version-id` (TFE).
    attrs.insert("version-id".into(), json!(version));
    let var = store.insert("varset-vars", "var-", Some(&id), attrs, Map::new());
    let v = store.find_mut("varset-vars", &var)?;
    v.set_rel("varset", "varsets", &id);
    created(render_varset_var(v))
}

fn varset_var<'a>(store: &'a Store, set: &str, id: &str) -> ApiResult<&'a Record> {
    let v = store.find("varset-vars", id)?;
    if v.owner.as_deref() != Some(set) {
        return Err(ApiError::not_found("variable", id));
    }
    Ok(v)
}

pub(super) async fn show_varset_var(
    ctx: Ctx,
    Path((set, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(render_varset_var(varset_var(&store, &set, &id)?))
}

pub(super) async fn update_varset_var(
    ctx: Ctx,
    Path((set, id)): Path<(String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    if doc.opt("description").unwrap_or_default().chars().count() > 512 {
        return Err(ApiError::attribute(
            "description",
            "Description is too long (maximum is 512 characters)",
        ));
    }
    let mut store = ctx.state.write();
    varset_var(&store, &set, &id)?;
    let version = store.random("");
    let v = store.find_mut("varset-vars", &id)?;
    v.attributes.extend(doc.attributes);
    v.attributes.insert("version-id".into(), json!(version));
    ok(render_varset_var(v))
}

pub(super) async fn destroy_varset_var(
    ctx: Ctx,
    Path((set, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    varset_var(&store, &set, &id)?;
    store.delete("varset-vars", &id)?;
    no_content()
}

fn varsets_linked(ctx: &Ctx, kind: &'static str, rel: &str, id: &str) -> ApiResult<Response> {
    let named = varset_named(ctx);
    let store = ctx.state.read();
    let owner = store.find(kind, id)?.owner.clone().unwrap_or_default();
    let items: Vec<Value> = store
        .list("varsets", Some(&owner))
        .into_iter()
        .filter(|v| v.flag("global") || v.rel_ids(rel).iter().any(|i| i == id))
        .filter(|v| named(v))
        .map(|v| render_varset(&store, v))
        .collect();
    drop(store);
    paginate(ctx, items)
}

pub(super) async fn list_ws_varsets(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    varsets_linked(&ctx, "workspaces", "workspaces", &id)
}

pub(super) async fn list_project_varsets(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    varsets_linked(&ctx, "projects", "projects", &id)
}
