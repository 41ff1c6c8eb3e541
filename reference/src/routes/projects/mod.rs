//! TFE routes that TFE clients use and the spec does not list (issue 12): projects (the
//! organization's default project among them), variable sets (in `varsets`), the
//! organization's OAuth tokens, user reads and the organization token read. Source: the TFE
//! facts (`tfe-api-facts.md` 2.12, 2.13, fact 12) and the public TFE API.

mod named;
mod varsets;

use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, item_ids, no_content, ok, paginate, resource, Body, Ctx};
use crate::render::render_project;
use crate::shared::org;
use crate::state::AppState;
use crate::store::{now, Record, Store};
use named::{insert_named, list_in_org, name_free};
use varsets::{
    apply_projects, apply_workspaces, create_varset, create_varset_var, destroy_varset,
    destroy_varset_var, list_project_varsets, list_varset_vars, list_varsets, list_ws_varsets,
    remove_projects, remove_workspaces, show_varset, show_varset_var, update_varset,
    update_varset_var,
};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/organizations/{org}/projects",
            get(list_projects).post(create_project),
        )
        .route(
            "/projects/{id}",
            get(show_project)
                .patch(update_project)
                .delete(destroy_project),
        )
        .route(
            "/projects/{id}/relationships/workspaces",
            axum::routing::post(move_workspaces),
        )
        .route(
            "/organizations/{org}/varsets",
            get(list_varsets).post(create_varset),
        )
        .route(
            "/varsets/{id}",
            get(show_varset).patch(update_varset).delete(destroy_varset),
        )
        .route(
            "/varsets/{id}/relationships/workspaces",
            axum::routing::post(apply_workspaces).delete(remove_workspaces),
        )
        .route(
            "/varsets/{id}/relationships/projects",
            axum::routing::post(apply_projects).delete(remove_projects),
        )
        .route(
            "/varsets/{id}/relationships/vars",
            get(list_varset_vars).post(create_varset_var),
        )
        .route(
            "/varsets/{id}/relationships/vars/{var}",
            get(show_varset_var)
                .patch(update_varset_var)
                .delete(destroy_varset_var),
        )
        .route("/workspaces/{id}/varsets", get(list_ws_varsets))
        .route("/projects/{id}/varsets", get(list_project_varsets))
        .route("/organizations/{org}/oauth-tokens", get(list_org_tokens))
        .route("/users/{id}", get(show_user))
}

fn valid_project_name(name: &str) -> bool {
    (3..=40).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ' '))
}

// GET /organizations/:org/projects
async fn list_projects(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let q = ctx.q("q").or(ctx.q("filter[names]")).map(str::to_lowercase);
    let named = |p: &Record| {
        q.as_ref()
            .is_none_or(|q| p.str("name").to_lowercase().contains(q))
    };
    list_in_org(&ctx, &o, "projects", named, render_project)
}

// POST /organizations/:org/projects
async fn create_project(ctx: Ctx, Path(o): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["projects"])?;
    let name = doc.required("name")?;
    let mut store = ctx.state.write();
    check_project_name(&store, &name)?;
    org(&store, &o)?;
    let mut sent = doc.attributes.clone();
    let pool = project_execution(&store, &o, &mut sent, None)?;
    let defaults = json!({"name": name, "description": null, "created-at": now(),
        "auto-destroy-activity-duration": null});
    let id = insert_named(&mut store, ("projects", "prj-"), &o, defaults, &sent)?;
    let bindings = tag_bindings(&doc);
    let p = store.find_mut("projects", &id)?;
    p.set_rel_ids("effective-tag-bindings", "effective-tag-bindings", &[]);
    set_pool(p, pool);
    if let Some(bindings) = bindings {
        set_tag_bindings(&mut store, &id, &bindings);
    }
    let p = store.find("projects", &id)?;
    created(render_project(&store, p))
}

/// 422 unless a project name is 3 to 40 letters, digits, spaces, `-` and `_` (TFE's words
/// under `--compat tfe`).
fn check_project_name(store: &Store, name: &str) -> ApiResult<()> {
    if valid_project_name(name) {
        return Ok(());
    }
    Err(ApiError::attribute(
        "name",
        if store.tfe {
            "Name may only contain letters, numbers, spaces, -, and _, and must be 3 to 40 characters"
        } else {
            "Name is invalid"
        },
    ))
}

/// TFE's execution settings of a project from what a client sends: `default-agent-pool-id`
/// (write-only) names the default agent pool, only with the `agent` execution mode (422
/// otherwise); another mode drops the pool; an explicit mode overwrites the organization's
/// default (`setting-overwrites.default-execution-mode` true); with it false the project takes
/// the organization's default mode (and with `default-agent-pool` false its pool). Answers the
/// pool to set (`Some(None)`: none), `None` to leave it.
fn project_execution(
    store: &Store,
    o: &str,
    sent: &mut Map<String, Value>,
    current: Option<&Record>,
) -> ApiResult<Option<Option<String>>> {
    let sent_overwrites = sent
        .get("setting-overwrites")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut overwrites = current
        .and_then(|c| c.attributes.get("setting-overwrites"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(|| {
            json!({"default-execution-mode": false, "default-agent-pool": false})
                .as_object()
                .cloned()
                .unwrap_or_default()
        });
    let organization = store.find("organizations", o)?;
    let org_mode = Some(organization.str("default-execution-mode"))
        .filter(|m| !m.is_empty())
        .unwrap_or("remote")
        .to_string();
    let org_pool = organization.rel_id("default-agent-pool").map(String::from);
    let pool_id = match sent.remove("default-agent-pool-id") {
        Some(Value::String(p)) if !p.is_empty() => {
            if store.find("agent-pools", &p)?.owner.as_deref() != Some(o) {
                return Err(ApiError::not_found("agent pool", &p));
            }
            Some(p)
        }
        _ => None,
    };
    let mut pool = None;
    if let Some(mode) = sent.get("default-execution-mode").and_then(Value::as_str) {
        if mode != "agent" && pool_id.is_some() {
            return Err(ApiError::attribute(
                "default-agent-pool-id",
                "Default agent pool must not be specified unless using 'agent' execution mode",
            ));
        }
        if mode == "agent"
            && pool_id.is_none()
            && current.is_none_or(|c| c.rel_id("default-agent-pool").is_none())
        {
            return Err(ApiError::attribute(
                "default-agent-pool-id",
                "Default agent pool is required when using 'agent' execution mode",
            ));
        }
        overwrites.insert("default-execution-mode".into(), json!(true));
        overwrites.insert("default-agent-pool".into(), json!(true));
        pool = Some(if mode == "agent" {
            pool_id.or_else(|| {
                current
                    .and_then(|c| c.rel_id("default-agent-pool"))
                    .map(String::from)
            })
        } else {
            None
        });
    } else if pool_id.is_some() {
        pool = Some(pool_id);
        overwrites.insert("default-agent-pool".into(), json!(true));
    }
    for (k, v) in &sent_overwrites {
        overwrites.insert(k.clone(), v.clone());
    }
    let inherit = sent_overwrites.get("default-execution-mode") == Some(&json!(false))
        || (current.is_none() && !sent.contains_key("default-execution-mode"));
    if inherit {
        sent.insert("default-execution-mode".into(), json!(org_mode));
        if sent_overwrites.get("default-agent-pool") != Some(&json!(true)) {
            pool = Some(if org_mode == "agent" { org_pool } else { None });
        }
    }
    sent.insert("setting-overwrites".into(), Value::Object(overwrites));
    Ok(pool)
}

fn set_pool(p: &mut Record, pool: Option<Option<String>>) {
    match pool {
        Some(Some(id)) => p.set_rel("default-agent-pool", "agent-pools", &id),
        Some(None) => {
            p.relationships
                .insert("default-agent-pool".into(), json!({"data": null}));
        }
        None => {}
    }
}

/// The `(key, value)` pairs of a body's `tag-bindings` relationship, if it has one.
fn tag_bindings(doc: &crate::jsonapi::Doc) -> Option<Vec<(String, String)>> {
    let items = doc
        .relationships
        .get("tag-bindings")?
        .get("data")?
        .as_array()?;
    Some(
        items
            .iter()
            .filter_map(|i| {
                let key = i.pointer("/attributes/key")?.as_str()?.to_string();
                let value = i
                    .pointer("/attributes/value")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                Some((key, value))
            })
            .collect(),
    )
}

/// The store kind of a project's tag bindings (owned by the project).
const TAG_BINDINGS: &str = "tag-bindings";

/// Replaces a project's tag bindings; its `effective-tag-bindings` relationship names them.
fn set_tag_bindings(store: &mut Store, project: &str, bindings: &[(String, String)]) {
    let old: Vec<String> = store
        .list(TAG_BINDINGS, Some(project))
        .iter()
        .map(|b| b.id.clone())
        .collect();
    for b in old {
        store.remove(TAG_BINDINGS, &b);
    }
    let mut ids = Vec::new();
    for (key, value) in bindings {
        let mut attrs = Map::new();
        attrs.insert("key".into(), json!(key));
        attrs.insert("value".into(), json!(value));
        attrs.insert("created-at".into(), json!(now()));
        ids.push(store.insert(TAG_BINDINGS, "tb-", Some(project), attrs, Map::new()));
    }
    if let Some(p) = store.get_mut("projects", project) {
        p.set_rel_ids("effective-tag-bindings", "effective-tag-bindings", &ids);
    }
}

async fn show_project(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(render_project(&store, store.find("projects", &id)?))
}

async fn update_project(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["projects"])?;
    let mut store = ctx.state.write();
    let current = store.find("projects", &id)?.clone();
    let owner = current.owner.clone().unwrap_or_default();
    if let Some(name) = doc.opt("name") {
        check_project_name(&store, &name)?;
        name_free(&store, "projects", &owner, &name, &id)?;
    }
    let mut sent = doc.attributes.clone();
    let pool = project_execution(&store, &owner, &mut sent, Some(&current))?;
    let bindings = tag_bindings(&doc);
    let p = store.find_mut("projects", &id)?;
    p.attributes.extend(sent);
    set_pool(p, pool);
    if let Some(bindings) = bindings {
        set_tag_bindings(&mut store, &id, &bindings);
    }
    let p = store.find("projects", &id)?;
    ok(render_project(&store, p))
}

// DELETE /projects/:id: not the default project, not one that holds workspaces.
async fn destroy_project(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let owner = store
        .find("projects", &id)?
        .owner
        .clone()
        .unwrap_or_default();
    let is_default = store
        .get("organizations", &owner)
        .is_some_and(|o| o.rel_id("default-project") == Some(id.as_str()));
    if is_default {
        return Err(ApiError::invalid("the default project cannot be deleted"));
    }
    if store
        .list("workspaces", Some(&owner))
        .iter()
        .any(|w| w.rel_id("project") == Some(id.as_str()))
    {
        return Err(ApiError::invalid(
            "a project with workspaces cannot be deleted",
        ));
    }
    store.delete("projects", &id)?;
    no_content()
}

// POST /projects/:id/relationships/workspaces: moves workspaces into the project.
async fn move_workspaces(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let ids = item_ids(&body, &["workspaces"])?;
    let mut store = ctx.state.write();
    store.find("projects", &id)?;
    for w in &ids {
        store.find("workspaces", w)?;
    }
    for w in &ids {
        if let Some(ws) = store.get_mut("workspaces", w) {
            ws.set_rel("project", "projects", &id);
        }
    }
    no_content()
}

// GET /organizations/:org/oauth-tokens: the tokens of every OAuth client of the organization.
async fn list_org_tokens(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &o)?;
    let items: Vec<Value> = store
        .list("oauth-clients", Some(&o))
        .iter()
        .flat_map(|c| store.list("oauth-tokens", Some(&c.id)))
        .map(Record::render)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /users/:id
async fn show_user(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("users", &id)?.render())
}
