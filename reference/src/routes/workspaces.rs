//! Workspaces (TFE paths, not shown in the spec), workspace tags and locks, and variables
//! (the deprecated `/vars` group and the workspace-scoped TFE paths).

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, patch, post};
use axum::Router;
use serde_json::{json, Map, Value};

use super::org;
use super::organizations::{recount, tag_by_name, tag_names, tag_workspace, valid_name};
use crate::error::{ApiError, ApiResult};
use crate::jsonapi::Ty;
use crate::jsonapi::{
    created, items, merge, no_content, ok, paginate, resource, AppState, Body, Ctx, Doc,
};
use crate::store::{now, Record, Store};

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

/// A workspace as JSON:API, with TFE's links.
pub(crate) fn render_ws(ws: &Record) -> Value {
    let mut doc = ws.render();
    let org_name = ws.owner.clone().unwrap_or_default();
    doc["links"] = json!({
        "self": format!("/api/v2/organizations/{org_name}/workspaces/{}", ws.str("name")),
        "self-html": format!("/app/{org_name}/workspaces/{}", ws.str("name")),
    });
    doc
}

pub(super) fn ws_by_name(store: &Store, org_name: &str, name: &str) -> ApiResult<String> {
    org(store, org_name)?;
    store
        .list("workspaces", Some(org_name))
        .iter()
        .find(|w| w.str("name") == name)
        .map(|w| w.id.clone())
        .ok_or_else(|| ApiError::not_found("workspace", name))
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

// GET /workspaces/:id/relationships/tags
async fn list_tags(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let ws = store.find("workspaces", &id)?;
    let items: Vec<Value> = ws
        .rel_ids("tags")
        .iter()
        .filter_map(|t| store.get("tags", t))
        .map(|t| t.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /workspaces/:id/relationships/tags: by id or by name (new names become organization tags)
async fn add_tags(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let list = items(&body, &["tags"])?;
    let mut store = ctx.state.write();
    let org_name = store
        .find("workspaces", &id)?
        .owner
        .clone()
        .unwrap_or_default();
    let mut tag_ids = Vec::new();
    for item in &list {
        match (
            &item.id,
            item.attributes.get("name").and_then(Value::as_str),
        ) {
            (Some(tid), _) => {
                store.find("tags", tid)?;
                tag_ids.push(tid.clone());
            }
            (None, Some(name)) if !name.trim().is_empty() => tag_ids.push(String::new() + name),
            _ => return Err(ApiError::invalid("each tag needs an id or a name")),
        }
    }
    for (item, key) in list.iter().zip(tag_ids) {
        let tid = if item.id.is_some() {
            key
        } else {
            tag_by_name(&mut store, &org_name, &key)
        };
        tag_workspace(&mut store, &tid, &id)?;
    }
    no_content()
}

// DELETE /workspaces/:id/relationships/tags
async fn remove_tags(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let list = items(&body, &["tags"])?;
    let mut store = ctx.state.write();
    let ws = store.find("workspaces", &id)?;
    let current = ws.rel_ids("tags");
    let mut drop_ids = Vec::new();
    for item in &list {
        if let Some(tid) = &item.id {
            drop_ids.push(tid.clone());
        } else if let Some(name) = item.attributes.get("name").and_then(Value::as_str) {
            drop_ids.extend(
                current
                    .iter()
                    .filter(|t| store.get("tags", t).is_some_and(|t| t.str("name") == name))
                    .cloned(),
            );
        }
    }
    let names: Vec<String> = drop_ids
        .iter()
        .filter_map(|t| store.get("tags", t).map(|t| t.str("name").to_string()))
        .collect();
    let ws = store.find_mut("workspaces", &id)?;
    let keep: Vec<String> = current
        .into_iter()
        .filter(|t| !drop_ids.contains(t))
        .collect();
    ws.set_rel_ids("tags", "tags", &keep);
    let left: Vec<String> = tag_names(ws)
        .into_iter()
        .filter(|n| !names.contains(n))
        .collect();
    ws.attributes.insert("tag-names".into(), json!(left));
    for t in drop_ids {
        recount(&mut store, &t);
    }
    no_content()
}

// POST /workspaces/:id/actions/lock
async fn lock(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let reason = body
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut store = ctx.state.write();
    let user = store.current_user.clone();
    let ws = store.find_mut("workspaces", &id)?;
    if ws.flag("locked") {
        return Err(ApiError::Conflict("the workspace is already locked".into()));
    }
    ws.attributes.insert("locked".into(), json!(true));
    ws.attributes.insert("locked-reason".into(), json!(reason));
    ws.set_rel("locked-by", "users", &user);
    ok(render_ws(ws))
}

// POST /workspaces/:id/actions/unlock: refused while the newest state version waits for its
// upload (TFE: 409 "latest state version is still pending").
async fn unlock(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let pending = {
        let store = ctx.state.read();
        store.find("workspaces", &id)?;
        store
            .list("state-versions", Some(&id))
            .last()
            .is_some_and(|s| s.str("status") == "pending")
    };
    if pending {
        return Err(ApiError::Conflict(
            "the workspace cannot be unlocked: the latest state version is still pending".into(),
        ));
    }
    force_unlock(ctx, Path(id)).await
}

// POST /workspaces/:id/actions/force-unlock
async fn force_unlock(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let ws = store.find_mut("workspaces", &id)?;
    if !ws.flag("locked") {
        return Err(ApiError::Conflict(
            "the workspace is already unlocked".into(),
        ));
    }
    ws.attributes.insert("locked".into(), json!(false));
    ws.attributes.insert("locked-reason".into(), json!(""));
    ws.relationships
        .insert("locked-by".into(), json!({"data": null}));
    ok(render_ws(ws))
}

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
async fn create_var(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
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
async fn list_vars(ctx: Ctx) -> ApiResult<Response> {
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
async fn update_var(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    ok(update_var_in(&mut ctx.state.write(), &id, doc)?)
}

// DELETE /vars/:variable_id
async fn destroy_var(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let ws = store.find("vars", &id)?.owner.clone().unwrap_or_default();
    store.delete("vars", &id)?;
    relink_vars(&mut store, &ws);
    no_content()
}

async fn create_ws_var(ctx: Ctx, Path(ws): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    let mut store = ctx.state.write();
    store.find("workspaces", &ws)?;
    created(insert_var(&mut store, &ws, &doc)?)
}

async fn list_ws_vars(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
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

async fn show_ws_var(ctx: Ctx, Path((ws, id)): Path<(String, String)>) -> ApiResult<Response> {
    ok(render_var(ws_var(&ctx.state.read(), &ws, &id)?))
}

async fn update_ws_var(
    ctx: Ctx,
    Path((ws, id)): Path<(String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, &["vars"])?;
    let mut store = ctx.state.write();
    ws_var(&store, &ws, &id)?;
    ok(update_var_in(&mut store, &id, doc)?)
}

async fn destroy_ws_var(ctx: Ctx, Path((ws, id)): Path<(String, String)>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    ws_var(&store, &ws, &id)?;
    store.delete("vars", &id)?;
    relink_vars(&mut store, &ws);
    no_content()
}
