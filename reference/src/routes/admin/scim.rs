//! SCIM (TFE; go-tfe's admin SCIM settings, tokens, group mappings, and the SCIM protocol's
//! groups its helpers use: TestTeamsRead "with scim attributes"). A SCIM token authenticates
//! like an organization token; the protocol answers plain SCIM JSON.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, no_content, ok, paginate, resource, Body, Ctx};
use crate::store::now;

/// A SCIM token without its secret.
fn scim_token(store: &crate::store::Store, id: &str) -> ApiResult<Value> {
    let t = store.find("authentication-tokens", id)?;
    if t.str("kind") != "scim" {
        return Err(ApiError::not_found("scim token", id));
    }
    let mut doc = t.render();
    if let Some(attrs) = doc["attributes"].as_object_mut() {
        attrs.remove("kind");
    }
    Ok(doc)
}

// POST /admin/scim-tokens: 201 with the secret, once.
pub(super) async fn create_scim_token(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = if body.is_null() {
        None
    } else {
        Some(resource(&body, &["authentication-tokens"])?)
    };
    let sent = |k: &str| {
        doc.as_ref()
            .and_then(|d| d.attributes.get(k).cloned())
            .unwrap_or(Value::Null)
    };
    let mut store = ctx.state.write();
    let secret = format!("{}.scimv1.{}", store.random(""), store.random(""));
    let attrs = json!({"kind": "scim", "description": sent("description"),
        "expired-at": sent("expired-at"), "created-at": now(), "last-used-at": null});
    let id = store.insert(
        "authentication-tokens",
        "at-",
        None,
        attrs.as_object().cloned().unwrap_or_default(),
        Map::new(),
    );
    store.tokens.insert(secret.clone(), format!("scim:{id}"));
    let mut doc = scim_token(&store, &id)?;
    doc["attributes"]["token"] = json!(secret);
    created(doc)
}

// GET /admin/scim-tokens
pub(super) async fn list_scim_tokens(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let items: Vec<Value> = store
        .list("authentication-tokens", None)
        .iter()
        .filter(|t| t.str("kind") == "scim")
        .filter_map(|t| scim_token(&store, &t.id).ok())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /admin/scim-tokens/:id
pub(super) async fn show_scim_token(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(scim_token(&ctx.state.read(), &id)?)
}

/// A SCIM group as the SCIM protocol shows it (RFC 7643 4.2).
fn scim_group(g: &crate::store::Record) -> Value {
    json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "id": g.id,
        "displayName": g.str("display-name"), "members": [],
        "meta": {"resourceType": "Group", "created": g.str("created-at")}})
}

fn scim_answer(status: axum::http::StatusCode, doc: Value) -> ApiResult<Response> {
    let mut res = crate::jsonapi::plain(status, doc);
    res.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/scim+json"),
    );
    Ok(res)
}

// POST /scim/v2/Groups {"displayName", "schemas"}: 201 with the group.
pub(super) async fn create_scim_group(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let Some(name) = body.get("displayName").and_then(Value::as_str) else {
        return Err(ApiError::invalid("displayName is required"));
    };
    let mut store = ctx.state.write();
    let attrs = json!({"display-name": name, "created-at": now()});
    let id = store.insert(
        "scim-groups",
        "",
        None,
        attrs.as_object().cloned().unwrap_or_default(),
        Map::new(),
    );
    scim_answer(
        axum::http::StatusCode::CREATED,
        scim_group(store.find("scim-groups", &id)?),
    )
}

// GET /scim/v2/Groups/:id
pub(super) async fn show_scim_group(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    scim_answer(
        axum::http::StatusCode::OK,
        scim_group(store.find("scim-groups", &id)?),
    )
}

// DELETE /scim/v2/Groups/:id: 204; the teams mapped to it are unlinked.
pub(super) async fn delete_scim_group(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    store.delete("scim-groups", &id)?;
    let linked: Vec<String> = store
        .list("teams", None)
        .iter()
        .filter(|t| t.str("scim-group-id") == id)
        .map(|t| t.id.clone())
        .collect();
    for team in linked {
        if let Some(t) = store.get_mut("teams", &team) {
            unlink_scim(t);
        }
    }
    no_content()
}

fn unlink_scim(team: &mut crate::store::Record) {
    for k in [
        "scim-group-id",
        "scim-group-name",
        "scim-sync-paused",
        "scim-updated-at",
    ] {
        team.attributes.remove(k);
    }
    team.attributes.insert("scim-linked".into(), json!(false));
}

// POST /admin/teams/:id/scim-group-mapping {"scim-group-id"}: the team is linked, 204.
pub(super) async fn map_scim_group(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["scim-group-mappings"])?;
    let group = doc.required("scim-group-id")?;
    let mut store = ctx.state.write();
    let name = store
        .find("scim-groups", &group)?
        .str("display-name")
        .to_string();
    let team = store.find_mut("teams", &id)?;
    for (k, v) in [
        ("scim-linked", json!(true)),
        ("scim-group-id", json!(group)),
        ("scim-group-name", json!(name)),
        ("scim-sync-paused", json!(false)),
        ("scim-updated-at", json!(now())),
    ] {
        team.attributes.insert(k.into(), v);
    }
    no_content()
}

// PATCH /admin/teams/:id/scim-group-mapping {"scim-sync-paused"}: 204.
pub(super) async fn update_scim_mapping(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["scim-group-mappings"])?;
    let mut store = ctx.state.write();
    let team = store.find_mut("teams", &id)?;
    if team.attributes.get("scim-linked") != Some(&json!(true)) {
        return Err(ApiError::not_found("scim group mapping", &id));
    }
    if let Some(paused) = doc.attributes.get("scim-sync-paused") {
        team.attributes
            .insert("scim-sync-paused".into(), paused.clone());
    }
    team.attributes
        .insert("scim-updated-at".into(), json!(now()));
    no_content()
}

// DELETE /admin/teams/:id/scim-group-mapping: 204.
pub(super) async fn unmap_scim_group(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let team = store.find_mut("teams", &id)?;
    if team.attributes.get("scim-linked") != Some(&json!(true)) {
        return Err(ApiError::not_found("scim group mapping", &id));
    }
    unlink_scim(team);
    no_content()
}
