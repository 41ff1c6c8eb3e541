//! An organization's SSH keys (TFE, not in the spec): the private keys workspaces use to
//! fetch Terraform modules. The key's value is write-only: answers show its name.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, no_content, ok, paginate, resource, Body, Ctx, Ty};
use crate::shared::org;
use crate::state::AppState;
use crate::store::{now, Record};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/organizations/{org}/ssh-keys", get(list).post(create))
        .route("/ssh-keys/{id}", get(show).patch(update).delete(destroy))
}

const SSH_KEY_TYPES: &[(&str, Ty)] = &[("name", Ty::Str), ("value", Ty::Str)];

/// An SSH key as JSON:API, without its value.
fn render(k: &Record) -> serde_json::Value {
    let mut doc = k.render();
    if let Some(attrs) = doc["attributes"].as_object_mut() {
        attrs.remove("value");
    }
    doc["relationships"]["organization"] =
        json!({"data": {"type": "organizations", "id": k.owner.clone().unwrap_or_default()}});
    doc
}

// GET /organizations/:organization_name/ssh-keys
async fn list(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &o)?;
    let items = store
        .list("ssh-keys", Some(&o))
        .into_iter()
        .map(render)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/ssh-keys
async fn create(ctx: Ctx, Path(o): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["ssh-keys"])?;
    doc.typed(&ctx, SSH_KEY_TYPES)?;
    let name = doc.required("name")?;
    let value = doc.required("value")?;
    let mut store = ctx.state.write();
    org(&store, &o)?;
    let mut attrs = Map::new();
    attrs.insert("name".into(), json!(name));
    attrs.insert("value".into(), json!(value));
    attrs.insert("created-at".into(), json!(now()));
    let id = store.insert("ssh-keys", "sshkey-", Some(&o), attrs, Map::new());
    created(render(store.find("ssh-keys", &id)?))
}

// GET /ssh-keys/:ssh_key_id
async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render(ctx.state.read().find("ssh-keys", &id)?))
}

// PATCH /ssh-keys/:ssh_key_id: the name and the value may change.
async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["ssh-keys"])?;
    doc.typed(&ctx, SSH_KEY_TYPES)?;
    let mut store = ctx.state.write();
    let k = store.find_mut("ssh-keys", &id)?;
    for name in ["name", "value"] {
        if let Some(v) = doc.opt(name) {
            if v.trim().is_empty() {
                return Err(ApiError::attribute(name, format!("{name} is required")));
            }
            k.attributes.insert(name.into(), json!(v));
        }
    }
    ok(render(k))
}

// DELETE /ssh-keys/:ssh_key_id: the workspaces that used it use none.
async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let owner = store.find("ssh-keys", &id)?.owner.clone();
    let users: Vec<String> = store
        .list("workspaces", owner.as_deref())
        .iter()
        .filter(|w| w.rel_id("ssh-key") == Some(id.as_str()))
        .map(|w| w.id.clone())
        .collect();
    for w in users {
        if let Some(ws) = store.get_mut("workspaces", &w) {
            ws.relationships
                .insert("ssh-key".into(), json!({"data": null}));
        }
    }
    store.delete("ssh-keys", &id)?;
    no_content()
}
