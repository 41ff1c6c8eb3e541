//! Administrator endpoints: organizations, runs, workspaces, engine versions, users and
//! instance settings. Spec: Endpoints > Administrator endpoints. The gate answers 404 to
//! anything but the admin token.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, patch, post};
use axum::Router;
use serde_json::{json, Map, Value};

use super::runs::{is_final, set_status};
use super::workspaces::render_ws;
use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{
    created, item_ids, merge, no_content, ok, paginate, resource, AppState, Body, Ctx,
};
use crate::store::now;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/organizations", get(list_orgs))
        .route(
            "/admin/organizations/{name}",
            get(show_org).delete(delete_org).patch(update_org),
        )
        .route(
            "/admin/organizations/{name}/module-consumers",
            patch(module_consumers).get(list_module_consumers),
        )
        .route(
            "/admin/organizations/{name}/relationships/module-consumers",
            patch(module_consumers).get(list_module_consumers),
        )
        .route("/admin/runs", get(list_runs))
        .route("/admin/runs/{id}/actions/force-cancel", post(force_cancel))
        .route("/admin/workspaces", get(list_workspaces))
        .route(
            "/admin/workspaces/{id}",
            get(show_workspace).delete(delete_workspace),
        )
        .route(
            "/admin/engine-versions",
            get(list_engines).post(create_engine),
        )
        .route(
            "/admin/engine-versions/{id}",
            get(show_engine).patch(update_engine).delete(delete_engine),
        )
        .route(
            "/admin/terraform-versions",
            get(list_engines).post(create_engine),
        )
        .route(
            "/admin/terraform-versions/{id}",
            get(show_engine).patch(update_engine).delete(delete_engine),
        )
        .route("/admin/users", get(list_users))
        .route("/admin/users/{id}", get(show_user).delete(delete_user))
        .route("/admin/users/{id}/actions/{action}", post(user_action))
        .route("/admin/users/actions/unimpersonate", post(unimpersonate))
        .route(
            "/admin/{group}",
            get(show_settings)
                .patch(update_settings)
                .delete(delete_settings),
        )
        .route(
            "/admin/saml-settings/actions/revoke-old-certificate",
            post(revoke_old_certificate),
        )
        .route("/admin/twilio-settings/verify", post(twilio_verify))
        .route(
            "/admin/scim-tokens",
            get(list_scim_tokens).post(create_scim_token),
        )
        .route("/admin/scim-tokens/{id}", get(show_scim_token))
        .route(
            "/admin/teams/{id}/scim-group-mapping",
            post(map_scim_group)
                .patch(update_scim_mapping)
                .delete(unmap_scim_group),
        )
        .route("/scim/v2/Groups", post(create_scim_group))
        .route(
            "/scim/v2/Groups/{id}",
            get(show_scim_group).delete(delete_scim_group),
        )
}

fn admin_org(o: &crate::store::Record) -> Value {
    let mut doc = o.render();
    let a = &mut doc["attributes"];
    for (k, v) in [
        ("access-beta-tools", json!(false)),
        ("global-module-sharing", json!(false)),
        ("global-provider-sharing", json!(false)),
        ("is-disabled", json!(false)),
        ("notification-email", json!(o.str("email"))),
        ("sso-enabled", json!(false)),
        ("terraform-build-worker-apply-timeout", json!("24h")),
        ("terraform-build-worker-plan-timeout", json!("2h")),
        ("apply-timeout", json!("24h")),
        ("plan-timeout", json!("2h")),
        ("terraform-worker-sudo-enabled", json!(false)),
        ("workspace-limit", Value::Null),
    ] {
        if a.get(k).is_none() {
            a[k] = v;
        }
    }
    doc["links"]["self"] = json!(format!("/api/v2/admin/organizations/{}", o.id));
    doc
}

async fn list_orgs(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let q = ctx.q("q").map(str::to_lowercase);
    let items: Vec<Value> = store
        .list("organizations", None)
        .into_iter()
        .filter(|o| {
            q.as_ref().is_none_or(|q| {
                o.id.to_lowercase().contains(q) || o.str("email").to_lowercase().contains(q)
            })
        })
        .map(admin_org)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show_org(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    ok(admin_org(ctx.state.read().find("organizations", &name)?))
}

async fn update_org(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["organizations"])?;
    let mut store = ctx.state.write();
    let o = store.find_mut("organizations", &name)?;
    for (k, v) in doc.attributes {
        if k != "name" {
            o.attributes.insert(k, v);
        }
    }
    ok(admin_org(o))
}

async fn delete_org(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    store.delete("organizations", &name)?;
    store.tokens.retain(|_, owner| *owner != name);
    no_content()
}

// PATCH /admin/organizations/:name/module-consumers: replaces the list.
async fn module_consumers(
    ctx: Ctx,
    Path(name): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let ids = item_ids(&body, &["organizations"])?;
    let mut store = ctx.state.write();
    store.find("organizations", &name)?;
    for id in &ids {
        store.find("organizations", id)?;
    }
    let o = store.find_mut("organizations", &name)?;
    o.set_rel_ids("module-consumers", "organizations", &ids);
    no_content()
}

async fn list_module_consumers(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let ids = store
        .find("organizations", &name)?
        .rel_ids("module-consumers");
    let items: Vec<Value> = ids
        .iter()
        .filter_map(|i| store.get("organizations", i))
        .map(admin_org)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn list_runs(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let statuses: Option<Vec<&str>> = ctx.q("filter[status]").map(|s| s.split(',').collect());
    let q = ctx.q("q");
    let items: Vec<Value> = store
        .list("runs", None)
        .into_iter()
        .filter(|r| {
            statuses
                .as_ref()
                .is_none_or(|s| s.contains(&r.str("status")))
        })
        .filter(|r| q.is_none_or(|q| r.id.contains(q) || r.owner.as_deref() == Some(q)))
        .map(|r| r.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /admin/runs/:id/actions/force-cancel: any non-final run becomes `cancelled` (the
// spec's word; TFE's `force_canceled` under `Compat::Tfe`).
async fn force_cancel(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let comment = body
        .get("comment")
        .and_then(Value::as_str)
        .map(String::from);
    let mut store = ctx.state.write();
    let status = store.find("runs", &id)?.str("status").to_string();
    if is_final(&status) {
        return Err(ApiError::Conflict(format!("the run is already {status}")));
    }
    let to = if store.tfe {
        "force_canceled"
    } else {
        "cancelled"
    };
    set_status(&mut store, &id, to)?;
    if let Some(c) = comment {
        if let Some(r) = store.get_mut("runs", &id) {
            r.attributes.insert("force-cancel-comment".into(), json!(c));
        }
    }
    ok(store.find("runs", &id)?.render())
}

async fn list_workspaces(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let q = ctx.q("q").map(str::to_lowercase);
    let items: Vec<Value> = store
        .list("workspaces", None)
        .into_iter()
        .filter(|w| {
            q.as_ref()
                .is_none_or(|q| w.str("name").to_lowercase().contains(q))
        })
        .map(render_ws)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show_workspace(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render_ws(ctx.state.read().find("workspaces", &id)?))
}

async fn delete_workspace(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("workspaces", &id)?;
    no_content()
}

const ENGINE_TYPES: &[&str] = &[
    "terraform-versions",
    "engine-versions",
    "admin-terraform-versions",
];

async fn list_engines(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let version = ctx.q("filter[version]").or(ctx.q("search[version]"));
    let items: Vec<Value> = store
        .list("terraform-versions", None)
        .into_iter()
        .filter(|e| version.is_none_or(|v| e.str("version").contains(v)))
        .map(|e| e.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn create_engine(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, ENGINE_TYPES)?;
    let version = doc.required("version")?;
    if doc.attributes.get("archs").is_none() {
        doc.required("url")?;
        doc.required("sha")?;
    }
    let mut store = ctx.state.write();
    if store
        .list("terraform-versions", None)
        .iter()
        .any(|e| e.str("version") == version)
    {
        return Err(ApiError::attribute(
            "version",
            "Version has already been taken",
        ));
    }
    let attrs = merge(
        json!({"version": version, "official": false, "enabled": true, "beta": false,
            "deprecated": false, "deprecated-reason": null, "usage": 0, "created-at": now()}),
        &doc.attributes,
        &[],
    );
    let id = store.insert("terraform-versions", "tfv-", None, attrs, Map::new());
    created(store.find("terraform-versions", &id)?.render())
}

async fn show_engine(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("terraform-versions", &id)?.render())
}

async fn update_engine(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, ENGINE_TYPES)?;
    let mut store = ctx.state.write();
    if let Some(v) = doc.opt("version") {
        if store
            .list("terraform-versions", None)
            .iter()
            .any(|e| e.str("version") == v && e.id != id)
        {
            return Err(ApiError::attribute(
                "version",
                "Version has already been taken",
            ));
        }
    }
    let e = store.find_mut("terraform-versions", &id)?;
    for (k, v) in doc.attributes {
        e.attributes.insert(k, v);
    }
    ok(e.render())
}

async fn delete_engine(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    if store.find("terraform-versions", &id)?.flag("official") {
        return Err(ApiError::invalid("an official version cannot be deleted"));
    }
    store.delete("terraform-versions", &id)?;
    no_content()
}

async fn list_users(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let q = ctx.q("q").map(str::to_lowercase);
    let admin = ctx.q("filter[admin]").map(|v| v == "true");
    let suspended = ctx.q("filter[suspended]").map(|v| v == "true");
    let items: Vec<Value> = store
        .list("users", None)
        .into_iter()
        .filter(|u| {
            q.as_ref().is_none_or(|q| {
                u.str("email").to_lowercase().contains(q)
                    || u.str("username").to_lowercase().contains(q)
            })
        })
        .filter(|u| admin.is_none_or(|a| u.flag("is-admin") == a))
        .filter(|u| suspended.is_none_or(|s| u.flag("is-suspended") == s))
        .map(|u| u.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /admin/users/:id (TFE)
async fn show_user(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("users", &id)?.render())
}

async fn delete_user(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    if id == store.current_user {
        return Err(ApiError::invalid("the current user cannot be deleted"));
    }
    store.delete("users", &id)?;
    let memberships: Vec<String> = store
        .list("organization-memberships", None)
        .iter()
        .filter(|m| m.rel_id("user") == Some(id.as_str()))
        .map(|m| m.id.clone())
        .collect();
    for m in memberships {
        store.remove("organization-memberships", &m);
    }
    no_content()
}

// POST /admin/users/:id/actions/{suspend,unsuspend,grant_admin,revoke_admin,disable_two_factor,impersonate}
async fn user_action(
    ctx: Ctx,
    Path((id, action)): Path<(String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    store.find("users", &id)?;
    if action == "impersonate" {
        let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
        if reason.trim().is_empty() {
            return Err(ApiError::BadRequest("a reason is required".into()));
        }
        if store.impersonating.is_some() {
            return Err(ApiError::Forbidden("already impersonating a user".into()));
        }
        store.impersonating = Some(id);
        return no_content();
    }
    let (attr, value, word) = match action.as_str() {
        "suspend" => ("is-suspended", true, "suspended"),
        "unsuspend" => ("is-suspended", false, "not suspended"),
        "grant_admin" => ("is-admin", true, "an administrator"),
        "revoke_admin" => ("is-admin", false, "not an administrator"),
        "disable_two_factor" => ("two-factor", false, "without two-factor authentication"),
        _ => return Err(ApiError::NotFound("route not found".into())),
    };
    let user = store.find_mut("users", &id)?;
    if attr == "two-factor" {
        let enabled = user
            .attributes
            .get("two-factor")
            .and_then(|t| t.get("enabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !enabled
            || ctx
                .state
                .fault(crate::faults::Kind::TwoFactorDisableRefused)
        {
            return Err(ApiError::BadRequest(format!("the user is already {word}")));
        }
        user.attributes.insert(
            "two-factor".into(),
            json!({"enabled": false, "verified": false}),
        );
    } else {
        if user.flag(attr) == value {
            return Err(ApiError::BadRequest(format!("the user is already {word}")));
        }
        user.attributes.insert(attr.into(), json!(value));
    }
    ok(user.render())
}

// POST /admin/users/actions/unimpersonate
async fn unimpersonate(ctx: Ctx) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    if store.impersonating.take().is_none() {
        return Err(ApiError::BadRequest("not impersonating a user".into()));
    }
    no_content()
}

fn settings_id(group: &str) -> ApiResult<&str> {
    group
        .strip_suffix("-settings")
        .filter(|g| {
            matches!(
                *g,
                "general"
                    | "cost-estimation"
                    | "saml"
                    | "smtp"
                    | "twilio"
                    | "customization"
                    | "scim"
            )
        })
        .ok_or_else(|| ApiError::NotFound("route not found".into()))
}

fn render_settings(id: &str, attrs: &Map<String, Value>) -> Value {
    json!({"id": id, "type": format!("{id}-settings"), "attributes": attrs,
        "links": {"self": format!("/api/v2/admin/{id}-settings")}})
}

/// The SCIM settings before any change (TFE; go-tfe's AdminSCIMSetting): off.
fn scim_defaults() -> Map<String, Value> {
    json!({"enabled": false, "paused": false, "site-admin-group-scim-id": null,
        "site-admin-group-display-name": null})
    .as_object()
    .cloned()
    .unwrap_or_default()
}

// GET /api/v2/admin/S-settings
async fn show_settings(ctx: Ctx, Path(group): Path<String>) -> ApiResult<Response> {
    let id = settings_id(&group)?;
    let store = ctx.state.read();
    let attrs = match store.settings.get(id) {
        Some(attrs) => attrs.clone(),
        None if id == "scim" => scim_defaults(),
        None => Map::new(),
    };
    ok(render_settings(id, &attrs))
}

// DELETE /api/v2/admin/scim-settings (TFE; go-tfe's SCIM.Delete, the helpers of
// TestUsersReadCurrent): SCIM turned off, 204. Other settings cannot be deleted.
async fn delete_settings(ctx: Ctx, Path(group): Path<String>) -> ApiResult<Response> {
    if settings_id(&group)? != "scim" {
        return Err(ApiError::MethodNotAllowed);
    }
    ctx.state
        .write()
        .settings
        .insert("scim".into(), scim_defaults());
    no_content()
}

// PATCH /api/v2/admin/S-settings: echoes what it was sent.
async fn update_settings(
    ctx: Ctx,
    Path(group): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let id = settings_id(&group)?.to_string();
    let kind = format!("{id}-settings");
    let doc = resource(&body, &[kind.as_str(), "settings"])?;
    let mut store = ctx.state.write();
    let attrs = store.settings.entry(id.clone()).or_insert_with(|| {
        if id == "scim" {
            scim_defaults()
        } else {
            Map::new()
        }
    });
    for (k, v) in doc.attributes {
        attrs.insert(k, v);
    }
    let attrs = attrs.clone();
    ok(render_settings(&id, &attrs))
}

// POST /api/v2/admin/saml-settings/actions/revoke-old-certificate
async fn revoke_old_certificate(ctx: Ctx) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let attrs = store.settings.entry("saml".into()).or_default();
    attrs.insert("old-idp-cert".into(), Value::Null);
    let attrs = attrs.clone();
    ok(render_settings("saml", &attrs))
}

// POST /api/v2/admin/twilio-settings/verify
async fn twilio_verify(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    if !body.is_null() && !body.is_object() {
        return Err(ApiError::invalid("the body must be a JSON object"));
    }
    let store = ctx.state.read();
    let attrs = store.settings.get("twilio").cloned().unwrap_or_default();
    let enabled = attrs.get("enabled").and_then(Value::as_bool) == Some(true);
    if !enabled && ctx.state.shapes.has(crate::shapes::Shape::Unconfigured) {
        return Err(ApiError::invalid("Twilio is not enabled"));
    }
    ok(render_settings("twilio", &attrs))
}

// SCIM (TFE; go-tfe's admin SCIM settings, tokens, group mappings, and the SCIM protocol's
// groups its helpers use: TestTeamsRead "with scim attributes"). A SCIM token authenticates
// like an organization token; the protocol answers plain SCIM JSON.

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
async fn create_scim_token(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
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
async fn list_scim_tokens(ctx: Ctx) -> ApiResult<Response> {
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
async fn show_scim_token(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
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
async fn create_scim_group(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
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
async fn show_scim_group(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    scim_answer(
        axum::http::StatusCode::OK,
        scim_group(store.find("scim-groups", &id)?),
    )
}

// DELETE /scim/v2/Groups/:id: 204; the teams mapped to it are unlinked.
async fn delete_scim_group(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
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
async fn map_scim_group(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
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
async fn update_scim_mapping(
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
async fn unmap_scim_group(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let team = store.find_mut("teams", &id)?;
    if team.attributes.get("scim-linked") != Some(&json!(true)) {
        return Err(ApiError::not_found("scim group mapping", &id));
    }
    unlink_scim(team);
    no_content()
}
