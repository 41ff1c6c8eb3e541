//! Workspaces (TFE paths, not shown in the spec): listed, made, shown, updated and deleted by id
//! or by name; with, by job, their tags (`tags`), lock actions (`locks`) and variables (`vars`:
//! the deprecated `/vars` group and the workspace-scoped TFE paths). The router is here, whole.

mod locks;
mod tags;
mod vars;

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, patch, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::Ty;
use crate::jsonapi::{created, merge, no_content, ok, paginate, resource, Body, Ctx, Doc};
use crate::render::render_ws;
use crate::shared::org;
use crate::shared::tags::{tag_by_name, tag_names, tag_workspace};
use crate::shared::{valid_name, ws_by_name};
use crate::state::AppState;
use crate::store::{now, Store};
use locks::{force_unlock, lock, unlock};
use tags::{add_tags, list_tags, remove_tags};
use vars::{
    create_var, create_ws_var, destroy_var, destroy_ws_var, list_vars, list_ws_vars, show_ws_var,
    update_var, update_ws_var,
};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/organizations/{org}/workspaces", get(list).post(create))
        .route(
            "/organizations/{org}/workspaces/{name}",
            get(show_by_name)
                .patch(update_by_name)
                .delete(destroy_by_name),
        )
        .route("/workspaces/{id}", get(show).patch(update).delete(destroy))
        .route(
            "/workspaces/{id}/relationships/tags",
            get(list_tags).post(add_tags).delete(remove_tags),
        )
        .route("/workspaces/{id}/actions/lock", post(lock))
        .route("/workspaces/{id}/actions/unlock", post(unlock))
        .route("/workspaces/{id}/actions/force-unlock", post(force_unlock))
        .route("/vars", get(list_vars).post(create_var))
        .route("/vars/{id}", patch(update_var).delete(destroy_var))
        .route(
            "/workspaces/{id}/vars",
            get(list_ws_vars).post(create_ws_var),
        )
        .route(
            "/workspaces/{id}/vars/{var}",
            get(show_ws_var).patch(update_ws_var).delete(destroy_ws_var),
        )
}

// GET /organizations/:organization_name/workspaces
async fn list(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let search = ctx.q("search[name]").map(str::to_lowercase);
    let project = ctx.q("filter[project][id]");
    let tags: Option<Vec<&str>> = ctx.q("search[tags]").map(|t| t.split(',').collect());
    let items: Vec<Value> = store
        .list("workspaces", Some(&name))
        .into_iter()
        .filter(|w| {
            search
                .as_ref()
                .is_none_or(|s| w.str("name").to_lowercase().contains(s))
        })
        .filter(|w| project.is_none_or(|p| w.rel_id("project") == Some(p)))
        .filter(|w| {
            tags.as_ref()
                .is_none_or(|t| t.iter().all(|t| tag_names(w).iter().any(|n| n == t)))
        })
        .map(render_ws)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/workspaces
/// The JSON types of the workspace attributes a client may send (tfe-api-facts 2.2).
const WORKSPACE_TYPES: &[(&str, Ty)] = &[
    ("name", Ty::Str),
    ("description", Ty::StrOrNull),
    ("auto-apply", Ty::Bool),
    ("allow-destroy-plan", Ty::Bool),
    ("queue-all-runs", Ty::Bool),
    ("speculative-enabled", Ty::Bool),
    ("file-triggers-enabled", Ty::Bool),
    ("global-remote-state", Ty::Bool),
    ("execution-mode", Ty::Str),
    ("terraform-version", Ty::StrOrNull),
    ("working-directory", Ty::StrOrNull),
    ("project-remote-state", Ty::Bool),
    ("operations", Ty::Bool),
];

/// TFE (`--compat tfe`): a Terraform version is a version (`1.9.5`, `0.11.0-beta1`), a
/// constraint of versions (`~> 1.5`, `>= 1.0, < 2.0`) or `latest`; anything else is 422.
fn valid_terraform_version(v: &str) -> bool {
    let part = |p: &str| {
        let p = p
            .trim()
            .trim_start_matches(['~', '>', '<', '=', '!'])
            .trim();
        let core = p.split(['-', '+']).next().unwrap_or("");
        !core.is_empty()
            && core.split('.').count() <= 3
            && core
                .split('.')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    v == "latest" || (!v.trim().is_empty() && v.split(',').all(part))
}

/// TFE's rules on a workspace's settings that the spec does not state (`--compat tfe`): a
/// Terraform version must be a version; project and global remote state sharing exclude each
/// other (`merged` is the workspace as it would be).
fn check_tfe_rules(store: &Store, merged: &Map<String, Value>) -> ApiResult<()> {
    if !store.tfe {
        return Ok(());
    }
    if let Some(v) = merged.get("terraform-version").and_then(Value::as_str) {
        if !valid_terraform_version(v) {
            return Err(ApiError::attribute(
                "terraform-version",
                format!("Terraform version {v} is not a valid version"),
            ));
        }
    }
    let on = |k: &str| merged.get(k).and_then(Value::as_bool).unwrap_or(false);
    if on("project-remote-state") && on("global-remote-state") {
        return Err(ApiError::attribute(
            "project-remote-state",
            "Project remote state cannot be enabled when global remote state sharing is enabled",
        ));
    }
    Ok(())
}

/// TFE's execution settings from what a client sends: `operations` (deprecated) stands for
/// `remote` (true) or `local` (false) execution and follows an explicit `execution-mode`; an
/// explicit execution mode overwrites the organization's default
/// (`setting-overwrites.execution-mode` true) unless the client says otherwise; with
/// `setting-overwrites.execution-mode` false the workspace takes the organization's default
/// execution mode (and `agent-pool` false its default agent pool). Answers the agent pool to
/// set, if the default one is taken.
fn execution_settings(
    store: &Store,
    org_name: &str,
    sent: &mut Map<String, Value>,
    current: Option<&Map<String, Value>>,
) -> Option<Option<String>> {
    let sent_overwrites = sent
        .get("setting-overwrites")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut overwrites = current
        .and_then(|c| c.get("setting-overwrites"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(|| {
            json!({"execution-mode": false, "agent-pool": false})
                .as_object()
                .cloned()
                .unwrap_or_default()
        });
    if let Some(mode) = sent.get("execution-mode").and_then(Value::as_str) {
        let mode = mode.to_string();
        sent.insert("operations".into(), json!(mode != "local"));
        overwrites.insert("execution-mode".into(), json!(true));
    } else if let Some(ops) = sent.get("operations").and_then(Value::as_bool) {
        sent.insert(
            "execution-mode".into(),
            json!(if ops { "remote" } else { "local" }),
        );
        overwrites.insert("execution-mode".into(), json!(true));
    }
    for (k, v) in &sent_overwrites {
        overwrites.insert(k.clone(), v.clone());
    }
    let mut pool = None;
    if sent_overwrites.get("execution-mode") == Some(&json!(false)) {
        let organization = store.get("organizations", org_name);
        let mode = organization
            .map(|o| o.str("default-execution-mode"))
            .filter(|m| !m.is_empty())
            .unwrap_or("remote")
            .to_string();
        sent.insert("operations".into(), json!(mode != "local"));
        sent.insert("execution-mode".into(), json!(mode));
        if sent_overwrites.get("agent-pool") == Some(&json!(false)) {
            pool = Some(
                organization
                    .and_then(|o| o.rel_id("default-agent-pool"))
                    .map(String::from),
            );
        }
    }
    sent.insert("setting-overwrites".into(), Value::Object(overwrites));
    pool
}

/// Tags a new workspace with the tags its create body names: the `tags` relationship's items
/// by id or by name (TFE), and the `tag-names` attribute.
fn tag_new_workspace(store: &mut Store, org_name: &str, id: &str, doc: &Doc) -> ApiResult<()> {
    let mut tag_ids = Vec::new();
    let items = doc
        .relationships
        .get("tags")
        .and_then(|r| r.get("data"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for item in &items {
        let tid = item
            .get("id")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty());
        let name = item
            .pointer("/attributes/name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty());
        match (tid, name) {
            (Some(tid), _) => {
                store.find("tags", tid)?;
                tag_ids.push(tid.to_string());
            }
            (None, Some(name)) => tag_ids.push(tag_by_name(store, org_name, name)),
            _ => return Err(ApiError::invalid("each tag needs an id or a name")),
        }
    }
    let names: Vec<String> = doc
        .attributes
        .get("tag-names")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if let Some(ws) = store.get_mut("workspaces", id) {
        ws.attributes.insert("tag-names".into(), json!([]));
    }
    for name in names.iter().filter(|n| !n.trim().is_empty()) {
        tag_ids.push(tag_by_name(store, org_name, name));
    }
    for tid in tag_ids {
        tag_workspace(store, &tid, id)?;
    }
    Ok(())
}

async fn create(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["workspaces"])?;
    doc.typed(&ctx, WORKSPACE_TYPES)?;
    let ws_name = doc.required("name")?;
    if !valid_name(&ws_name) {
        return Err(ApiError::attribute("name", "Name is invalid"));
    }
    let mut store = ctx.state.write();
    org(&store, &name)?;
    let mut sent = doc.attributes.clone();
    let pool = execution_settings(&store, &name, &mut sent, None);
    check_tfe_rules(&store, &sent)?;
    let ws = insert_workspace(&mut store, &name, &ws_name, doc.rel("project"), &sent)?;
    let id = ws["id"].as_str().unwrap_or_default().to_string();
    tag_new_workspace(&mut store, &name, &id, &doc)?;
    let w = store.find_mut("workspaces", &id)?;
    match pool.flatten().or(doc.rel("agent-pool")) {
        Some(p) => w.set_rel("agent-pool", "agent-pools", &p),
        None => {
            w.relationships
                .insert("agent-pool".into(), json!({"data": null}));
        }
    }
    created(render_ws(w))
}

/// Makes a workspace `ws_name` in organization `name` (in `project`, else the organization's
/// default project) with TFE's defaults and the `sent` attributes; answers it rendered. The
/// create route and `conform serve --seed-workspace` both make workspaces here.
pub(crate) fn insert_workspace(
    store: &mut Store,
    name: &str,
    ws_name: &str,
    project: Option<String>,
    sent: &Map<String, Value>,
) -> ApiResult<Value> {
    let organization = store.find("organizations", name)?;
    let default_project = organization
        .rel_id("default-project")
        .unwrap_or_default()
        .to_string();
    let mode = organization.str("default-execution-mode").to_string();
    if store
        .list("workspaces", Some(name))
        .iter()
        .any(|w| w.str("name") == ws_name)
    {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    let mode = if mode.is_empty() {
        "remote".to_string()
    } else {
        mode
    };
    let project = project.unwrap_or(default_project);
    if store.get("projects", &project).is_none() {
        return Err(ApiError::not_found("project", &project));
    }
    // TFE's further attributes (go-tfe's `Workspace`).
    let tfe_defaults = json!({
        "assessments-enabled": false, "auto-apply-run-trigger": false,
        "project-remote-state": false,
        "structured-run-output-enabled": true, "source-name": null, "source-url": null,
        "trigger-patterns": [], "can-queue-destroy-plan": true,
    });
    let mut attrs = merge(
        json!({
            "name": ws_name, "description": null, "auto-apply": false,
            "allow-destroy-plan": true, "file-triggers-enabled": true, "queue-all-runs": false,
            "speculative-enabled": true, "global-remote-state": false,
            "terraform-version": "1.9.5", "execution-mode": mode,
            "working-directory": "", "locked": false, "locked-reason": "", "resource-count": 0,
            "source": "tfe-api", "tag-names": [], "created-at": now(), "updated-at": now(),
            "environment": "default", "trigger-prefixes": [], "vcs-repo": null,
            "actions": {"is-destroyable": true},
            "setting-overwrites": {"execution-mode": false, "agent-pool": false},
            "permissions": {"can-update": true, "can-destroy": true, "can-queue-run": true,
                "can-read-variable": true, "can-update-variable": true, "can-read-state-versions": true,
                "can-create-state-versions": true, "can-queue-apply": true, "can-lock": true,
                "can-unlock": true, "can-force-unlock": true, "can-read-settings": true,
                "can-force-delete": true},
        }),
        &Map::new(),
        &[],
    );
    for (k, v) in tfe_defaults.as_object().into_iter().flatten() {
        attrs.insert(k.clone(), v.clone());
    }
    for (k, v) in sent {
        attrs.insert(k.clone(), v.clone());
    }
    let local = attrs.get("execution-mode").and_then(Value::as_str) == Some("local");
    attrs.insert("operations".into(), json!(!local));
    let id = store.insert("workspaces", "ws-", Some(name), attrs, Map::new());
    let ws = store.find_mut("workspaces", &id)?;
    ws.set_rel("organization", "organizations", name);
    ws.set_rel("project", "projects", &project);
    for rel in [
        "current-run",
        "latest-run",
        "current-state-version",
        "current-configuration-version",
        "locked-by",
        "ssh-key",
    ] {
        ws.relationships.insert(rel.into(), json!({"data": null}));
    }
    ws.set_rel_ids("tags", "tags", &[]);
    ws.set_rel_ids("outputs", "workspace-outputs", &[]);
    Ok(render_ws(ws))
}

async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render_ws(ctx.state.read().find("workspaces", &id)?))
}

async fn show_by_name(ctx: Ctx, Path((o, n)): Path<(String, String)>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let id = ws_by_name(&store, &o, &n)?;
    ok(render_ws(store.find("workspaces", &id)?))
}

fn update_ws(store: &mut Store, id: &str, mut doc: Doc) -> ApiResult<Value> {
    let ws = store.find("workspaces", id)?;
    let owner = ws.owner.clone();
    let current = ws.attributes.clone();
    let pool = execution_settings(
        store,
        owner.as_deref().unwrap_or_default(),
        &mut doc.attributes,
        Some(&current),
    );
    let mut merged = current;
    for (k, v) in &doc.attributes {
        merged.insert(k.clone(), v.clone());
    }
    check_tfe_rules(store, &merged)?;
    if let Some(new) = doc.opt("name") {
        if !valid_name(&new) {
            return Err(ApiError::attribute("name", "Name is invalid"));
        }
        if store
            .list("workspaces", owner.as_deref())
            .iter()
            .any(|w| w.str("name") == new && w.id != id)
        {
            return Err(ApiError::attribute("name", "Name has already been taken"));
        }
    }
    if let Some(p) = doc.rel("project") {
        store.find("projects", &p)?;
    }
    let ws = store.find_mut("workspaces", id)?;
    for (k, v) in doc.attributes.clone() {
        ws.attributes.insert(k, v);
    }
    if let Some(p) = doc.rel("project") {
        ws.set_rel("project", "projects", &p);
    }
    match pool {
        Some(Some(p)) => ws.set_rel("agent-pool", "agent-pools", &p),
        Some(None) => {
            ws.relationships
                .insert("agent-pool".into(), json!({"data": null}));
        }
        None => {}
    }
    ws.attributes.insert("updated-at".into(), json!(now()));
    Ok(render_ws(ws))
}

async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["workspaces"])?;
    doc.typed(&ctx, WORKSPACE_TYPES)?;
    ok(update_ws(&mut ctx.state.write(), &id, doc)?)
}

async fn update_by_name(
    ctx: Ctx,
    Path((o, n)): Path<(String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["workspaces"])?;
    doc.typed(&ctx, WORKSPACE_TYPES)?;
    let mut store = ctx.state.write();
    let id = ws_by_name(&store, &o, &n)?;
    ok(update_ws(&mut store, &id, doc)?)
}

async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("workspaces", &id)?;
    no_content()
}

async fn destroy_by_name(ctx: Ctx, Path((o, n)): Path<(String, String)>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = ws_by_name(&store, &o, &n)?;
    store.delete("workspaces", &id)?;
    no_content()
}
