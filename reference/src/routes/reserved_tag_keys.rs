//! An organization's reserved tag keys (TFE, not in the spec): tag binding keys the
//! organization sets aside, with whether projects and workspaces may override them.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, patch};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, no_content, ok, paginate, resource, Body, Ctx, Ty};
use crate::shared::org;
use crate::state::AppState;
use crate::store::{now, Store};

/// The store kind (owned by the organization).
const KIND: &str = "reserved-tag-keys";

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/organizations/{org}/reserved-tag-keys",
            get(list).post(create),
        )
        .route("/reserved-tag-keys/{id}", patch(update).delete(destroy))
}

const TYPES: &[(&str, Ty)] = &[("key", Ty::Str), ("disable-overrides", Ty::Bool)];

/// A tag key: 1 to 128 letters, digits, `-`, `_`, `.` and `:`.
fn valid_key(key: &str) -> bool {
    (1..=128).contains(&key.chars().count())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// 422 unless `key` is a valid key no other reserved key (`except`) of the organization has.
fn check_key(store: &Store, o: &str, key: &str, except: &str) -> ApiResult<()> {
    if !valid_key(key) {
        return Err(ApiError::attribute("key", "Key is invalid"));
    }
    if store
        .list(KIND, Some(o))
        .iter()
        .any(|k| k.str("key") == key && k.id != except)
    {
        return Err(ApiError::attribute("key", "Key has already been taken"));
    }
    Ok(())
}

// GET /organizations/:organization_name/reserved-tag-keys
async fn list(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &o)?;
    let items: Vec<Value> = store
        .list(KIND, Some(&o))
        .into_iter()
        .map(|k| k.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/reserved-tag-keys
async fn create(ctx: Ctx, Path(o): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &[KIND])?;
    doc.typed(&ctx, TYPES)?;
    let key = doc.required("key")?;
    let mut store = ctx.state.write();
    org(&store, &o)?;
    check_key(&store, &o, &key, "")?;
    let mut attrs = Map::new();
    attrs.insert("key".into(), json!(key));
    attrs.insert(
        "disable-overrides".into(),
        json!(doc
            .attributes
            .get("disable-overrides")
            .and_then(Value::as_bool)
            .unwrap_or(false)),
    );
    attrs.insert("created-at".into(), json!(now()));
    attrs.insert("updated-at".into(), json!(now()));
    let id = store.insert(KIND, "rtk-", Some(&o), attrs, Map::new());
    created(store.find(KIND, &id)?.render())
}

// PATCH /reserved-tag-keys/:reserved_tag_key_id
async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &[KIND])?;
    doc.typed(&ctx, TYPES)?;
    let mut store = ctx.state.write();
    let o = store.find(KIND, &id)?.owner.clone().unwrap_or_default();
    if let Some(key) = doc.opt("key") {
        check_key(&store, &o, &key, &id)?;
    }
    let k = store.find_mut(KIND, &id)?;
    for name in ["key", "disable-overrides"] {
        if let Some(v) = doc.attributes.get(name) {
            k.attributes.insert(name.into(), v.clone());
        }
    }
    k.attributes.insert("updated-at".into(), json!(now()));
    ok(k.render())
}

// DELETE /reserved-tag-keys/:reserved_tag_key_id
async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete(KIND, &id)?;
    no_content()
}
