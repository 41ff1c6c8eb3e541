//! Administrator endpoints: organizations, runs, workspaces, engine versions, users and
//! instance settings. Spec: Endpoints > Administrator endpoints. The gate answers 404 to
//! anything but the admin token. The router is here, whole; the instance settings are in
//! `settings`, the engine versions in `engines`, SCIM (tokens, group mappings, the SCIM protocol's groups) in `scim`.

mod engines;
mod scim;
mod settings;

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, patch, post};
use axum::Router;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{item_ids, no_content, ok, paginate, resource, Body, Ctx};
use crate::render::render_ws;
use crate::shared::runs::{is_final, set_status};
use crate::state::AppState;
use crate::store::{Record, Store};
use engines::{create_engine, delete_engine, list_engines, show_engine, update_engine};
use scim::{
    create_scim_group, create_scim_token, delete_scim_group, list_scim_tokens, map_scim_group,
    show_scim_group, show_scim_token, unmap_scim_group, update_scim_mapping,
};
use settings::{
    delete_settings, revoke_old_certificate, show_settings, twilio_verify, update_settings,
};

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

/// An organization as the administrator API shows it: TFE's administrator attributes, and the
/// `owners` relationship (the users of its owners team; `include=owners` adds them).
fn admin_org(store: &Store, o: &Record) -> Value {
    let mut doc = o.render();
    let owners: Vec<Value> = store
        .list("teams", Some(&o.id))
        .into_iter()
        .filter(|t| t.str("name") == "owners")
        .flat_map(|t| t.rel_ids("users"))
        .map(|id| json!({"type": "users", "id": id}))
        .collect();
    doc["relationships"]["owners"] = json!({ "data": owners });
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
        .map(|o| admin_org(&store, o))
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show_org(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(admin_org(&store, store.find("organizations", &name)?))
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
    ok(admin_org(&store, store.find("organizations", &name)?))
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
        .map(|o| admin_org(&store, o))
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

/// A user as the administrator API shows it: with the `organizations` relationship, the
/// organizations it is a member of (tfe-api-facts 5: `include=organizations` adds them).
fn admin_user(store: &Store, u: &Record) -> Value {
    let mut doc = u.render();
    let organizations: Vec<Value> = store
        .list("organization-memberships", None)
        .into_iter()
        .filter(|m| m.rel_id("user") == Some(u.id.as_str()))
        .filter_map(|m| m.rel_id("organization"))
        .map(|id| json!({"type": "organizations", "id": id}))
        .collect();
    doc["relationships"]["organizations"] = json!({ "data": organizations });
    doc
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
        .map(|u| admin_user(&store, u))
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /admin/users/:id (TFE)
async fn show_user(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(admin_user(&store, store.find("users", &id)?))
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
