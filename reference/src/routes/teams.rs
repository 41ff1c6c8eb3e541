//! Teams, team memberships and team access to workspaces and projects.
//! Spec: Endpoints > Teams, team memberships, team access.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::jsonapi::{
    created, item_ids, merge, no_content, ok, paginate, resource, Body, Ctx, Doc,
};
use crate::shared::org;
use crate::shared::team_defaults;
use crate::shared::valid_name;
use crate::state::AppState;
use crate::store::Store;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/organizations/{org}/teams", get(list).post(create))
        .route("/teams/{id}", get(show).patch(update).delete(destroy))
        .route(
            "/teams/{id}/relationships/users",
            post(add_users).delete(remove_users),
        )
        .route(
            "/teams/{id}/relationships/organization-memberships",
            get(list_memberships)
                .post(add_memberships)
                .delete(remove_memberships),
        )
        .route("/team-workspaces", get(list_tws).post(create_tws))
        .route(
            "/team-workspaces/{id}",
            get(show_tws).patch(update_tws).delete(destroy_tws),
        )
        .route("/team-projects", get(list_tprj).post(create_tprj))
        .route(
            "/team-projects/{id}",
            get(show_tprj).patch(update_tprj).delete(destroy_tprj),
        )
}

// GET /organizations/:organization_name/teams
async fn list(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let q = ctx.q("q").map(str::to_lowercase);
    let names: Option<Vec<&str>> = ctx.q("filter[names]").map(|n| n.split(',').collect());
    let items: Vec<Value> = store
        .list("teams", Some(&name))
        .into_iter()
        .filter(|t| {
            q.as_ref()
                .is_none_or(|q| t.str("name").to_lowercase().starts_with(q))
        })
        .filter(|t| names.as_ref().is_none_or(|n| n.contains(&t.str("name"))))
        .map(|t| t.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/teams
async fn create(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["teams"])?;
    let team_name = doc.required("name")?;
    if !valid_team_name(&ctx, &team_name) {
        return Err(ApiError::attribute("name", "Name is invalid"));
    }
    let mut store = ctx.state.write();
    org(&store, &name)?;
    if store
        .list("teams", Some(&name))
        .iter()
        .any(|t| t.str("name") == team_name)
    {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    let mut attrs = merge(team_defaults(&team_name), &doc.attributes, &[]);
    merge_access(&mut attrs, &doc);
    let id = store.insert("teams", "team-", Some(&name), attrs, Map::new());
    let team = store.find_mut("teams", &id)?;
    team.set_rel_ids("users", "users", &[]);
    team.set_rel_ids("organization-memberships", "organization-memberships", &[]);
    team.set_rel("organization", "organizations", &name);
    created(team.render())
}

/// A team name: an organization's name characters and spaces. TFE takes `foo bar` for a team
/// (go-tfe's TestTeamsUpdate), where tfe-api-facts 0.13 presumes the workspace rule.
fn valid_team_name(ctx: &Ctx, name: &str) -> bool {
    if ctx.state.fault(Kind::TeamNameNoSpace) {
        return valid_name(name);
    }
    !name.trim().is_empty() && valid_name(&name.replace(' ', "-"))
}

/// Keeps the default organization-access keys that a partial update leaves out.
fn merge_access(attrs: &mut Map<String, Value>, doc: &Doc) {
    if let Some(Value::Object(sent)) = doc.attributes.get("organization-access") {
        let mut base = team_defaults("")["organization-access"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (k, v) in sent {
            base.insert(k.clone(), v.clone());
        }
        attrs.insert("organization-access".into(), Value::Object(base));
    }
}

// GET /teams/:team_id
async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("teams", &id)?.render())
}

// PATCH /teams/:team_id
async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["teams"])?;
    let mut store = ctx.state.write();
    let team = store.find("teams", &id)?;
    if let Some(new) = doc.opt("name") {
        let owner = team.owner.clone();
        if !valid_team_name(&ctx, &new) {
            return Err(ApiError::attribute("name", "Name is invalid"));
        }
        if store
            .list("teams", owner.as_deref())
            .iter()
            .any(|t| t.str("name") == new && t.id != id)
        {
            return Err(ApiError::attribute("name", "Name has already been taken"));
        }
    }
    let team = store.find_mut("teams", &id)?;
    let old_access = team.attributes.get("organization-access").cloned();
    for (k, v) in &doc.attributes {
        team.attributes.insert(k.clone(), v.clone());
    }
    if let (Some(Value::Object(mut base)), Some(Value::Object(sent))) =
        (old_access, doc.attributes.get("organization-access"))
    {
        for (k, v) in sent {
            base.insert(k.clone(), v.clone());
        }
        team.attributes
            .insert("organization-access".into(), Value::Object(base));
    }
    ok(team.render())
}

// DELETE /teams/:team_id
async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    store.delete("teams", &id)?;
    let grants: Vec<(&'static str, String)> = store
        .list("team-workspaces", None)
        .into_iter()
        .chain(store.list("team-projects", None))
        .filter(|g| g.rel_id("team") == Some(id.as_str()))
        .map(|g| (g.kind, g.id.clone()))
        .collect();
    for (kind, gid) in grants {
        store.remove(kind, &gid);
    }
    no_content()
}

/// A user id from a user id or a username.
fn user_id(store: &Store, key: &str) -> ApiResult<String> {
    if store.get("users", key).is_some() {
        return Ok(key.to_string());
    }
    store
        .list("users", None)
        .iter()
        .find(|u| u.str("username") == key)
        .map(|u| u.id.clone())
        .ok_or_else(|| ApiError::not_found("user", key))
}

fn change_users(store: &mut Store, team_id: &str, users: &[String], add: bool) -> ApiResult<()> {
    let team = store.find_mut("teams", team_id)?;
    let mut ids = team.rel_ids("users");
    for u in users {
        if add && !ids.contains(u) {
            ids.push(u.clone());
        }
        if !add {
            ids.retain(|i| i != u);
        }
    }
    team.attributes
        .insert("users-count".into(), json!(ids.len()));
    team.set_rel_ids("users", "users", &ids);
    Ok(())
}

// POST /teams/:team_id/relationships/users
async fn add_users(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    users_by_id(ctx, id, body, true).await
}

// DELETE /teams/:team_id/relationships/users
async fn remove_users(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    users_by_id(ctx, id, body, false).await
}

async fn users_by_id(ctx: Ctx, id: String, body: Value, add: bool) -> ApiResult<Response> {
    let keys = item_ids(&body, &["users"])?;
    let mut store = ctx.state.write();
    store.find("teams", &id)?;
    let users = keys
        .iter()
        .map(|k| user_id(&store, k))
        .collect::<ApiResult<Vec<_>>>()?;
    change_users(&mut store, &id, &users, add)?;
    no_content()
}

// GET /teams/:team_id/relationships/organization-memberships (TFE; pytfe's
// `teams.list_organization_memberships`): the organization memberships of the team's users.
async fn list_memberships(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let team = store.find("teams", &id)?;
    let users = team.rel_ids("users");
    let organization = team.rel_id("organization").unwrap_or_default().to_string();
    let items: Vec<Value> = store
        .list("organization-memberships", Some(&organization))
        .into_iter()
        .filter(|m| {
            m.rel_id("user")
                .is_some_and(|u| users.iter().any(|x| x == u))
        })
        .map(|m| m.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /teams/:team_id/relationships/organization-memberships
async fn add_memberships(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    by_membership(ctx, id, body, true).await
}

// DELETE /teams/:team_id/relationships/organization-memberships
async fn remove_memberships(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    by_membership(ctx, id, body, false).await
}

async fn by_membership(ctx: Ctx, id: String, body: Value, add: bool) -> ApiResult<Response> {
    let keys = item_ids(&body, &["organization-memberships"])?;
    let mut store = ctx.state.write();
    store.find("teams", &id)?;
    let mut users = Vec::new();
    for k in &keys {
        let m = store.find("organization-memberships", k)?;
        users.push(m.rel_id("user").unwrap_or_default().to_string());
    }
    change_users(&mut store, &id, &users, add)?;
    let team = store.find_mut("teams", &id)?;
    let mut ids = team.rel_ids("organization-memberships");
    for k in keys {
        if add && !ids.contains(&k) {
            ids.push(k);
        } else if !add {
            ids.retain(|i| *i != k);
        }
    }
    team.set_rel_ids("organization-memberships", "organization-memberships", &ids);
    no_content()
}

/// The two kinds of team access, which differ only in their target.
#[derive(Clone, Copy)]
struct Access {
    kind: &'static str,
    prefix: &'static str,
    target_rel: &'static str,
    target_kind: &'static str,
    filter: &'static str,
    levels: &'static [&'static str],
    custom: &'static [&'static str],
}

const TWS: Access = Access {
    kind: "team-workspaces",
    prefix: "tws-",
    target_rel: "workspace",
    target_kind: "workspaces",
    filter: "filter[workspace][id]",
    levels: &["read", "plan", "write", "admin", "custom"],
    custom: &[
        "runs",
        "variables",
        "state-versions",
        "sentinel-mocks",
        "workspace-locking",
        "run-tasks",
    ],
};

const TPRJ: Access = Access {
    kind: "team-projects",
    prefix: "tprj-",
    target_rel: "project",
    target_kind: "projects",
    filter: "filter[project][id]",
    levels: &["read", "write", "maintain", "admin", "custom"],
    custom: &["project-access", "workspace-access"],
};

/// The values a custom permission takes (tfe-api-facts 2.11; go-tfe's access.go and
/// project_access.go): strings from a list, or a boolean (`None`).
fn permission_values(key: &str) -> Option<&'static [&'static str]> {
    match key {
        "runs" => Some(&["read", "plan", "apply"]),
        "variables" | "variable-sets" => Some(&["none", "read", "write"]),
        "state-versions" => Some(&["none", "read-outputs", "read", "write"]),
        "sentinel-mocks" => Some(&["none", "read"]),
        "settings" => Some(&["read", "update", "delete"]),
        "teams" => Some(&["none", "read", "manage"]),
        _ => None,
    }
}

/// A custom permission's value, or 422 naming it (`path`: its attribute, dotted when nested).
fn check_permission(path: &str, key: &str, value: &Value) -> ApiResult<()> {
    let valid = match permission_values(key) {
        Some(values) => value.as_str().is_some_and(|v| values.contains(&v)),
        None => value.is_boolean(),
    };
    if valid {
        return Ok(());
    }
    Err(ApiError::Invalid {
        detail: format!("{} {value} is not a valid value", humanize(path)),
        pointer: Some(format!("/data/attributes/{}", path.replace('.', "/"))),
    })
}

/// `state-versions` → `State versions`, as TFE names an attribute in its messages.
fn humanize(key: &str) -> String {
    let words = key.replace(['-', '.'], " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

fn check_access(ctx: &Ctx, a: Access, attrs: &Map<String, Value>, level: &str) -> ApiResult<()> {
    if !a.levels.contains(&level) {
        return Err(ApiError::attribute(
            "access",
            format!("Access {level} is not valid"),
        ));
    }
    if level != "custom" {
        if let Some(key) = a.custom.iter().find(|k| attrs.contains_key(**k)) {
            return Err(ApiError::attribute(
                key,
                format!("{} is read-only when access level is '{level}'; use the 'custom' access level to set this attribute.", humanize(key)),
            ));
        }
    }
    if ctx.state.fault(Kind::AccessValuesUnchecked) {
        return Ok(());
    }
    for key in a.custom {
        match attrs.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(nested)) if a.kind == "team-projects" => {
                for (k, v) in nested {
                    check_permission(&format!("{key}.{k}"), k, v)?;
                }
            }
            Some(v) if a.kind == "team-workspaces" => check_permission(key, key, v)?,
            Some(v) => {
                return Err(ApiError::Invalid {
                    detail: format!("{} {v} is not an object", humanize(key)),
                    pointer: Some(format!("/data/attributes/{key}")),
                })
            }
        }
    }
    Ok(())
}

fn defaults(ctx: &Ctx, a: Access, level: &str) -> Value {
    if a.kind == "team-workspaces" {
        let (runs, vars, state) = match level {
            "read" => ("read", "read", "read-outputs"),
            "plan" => ("plan", "read", "read"),
            _ => ("apply", "write", "write"),
        };
        // write and admin read sentinel mocks (go-tfe's TestTeamAccessesRead)
        let mocks = if matches!(level, "write" | "admin") && !ctx.state.fault(Kind::GrantMocksNone)
        {
            "read"
        } else {
            "none"
        };
        json!({"access": level, "runs": runs, "variables": vars, "state-versions": state,
            "sentinel-mocks": mocks, "workspace-locking": level != "read" && level != "plan",
            "run-tasks": level == "admin"})
    } else {
        json!({"access": level,
            "project-access": {"settings": "read", "teams": "none", "variable-sets": "none"},
            "workspace-access": {"runs": "read", "variables": "read", "state-versions": "read",
                "sentinel-mocks": "none", "create": false, "locking": false, "delete": false,
                "move": false, "run-tasks": false}})
    }
}

/// The `data.type` a grant's body may carry: under TFE's words also the singular one some
/// SDKs send (`team-project-access`).
fn grant_types(ctx: &Ctx, a: Access) -> Vec<&'static str> {
    let singular = if a.kind == "team-projects" {
        "team-project-access"
    } else {
        "team-workspace-access"
    };
    if ctx.state.compat == crate::compat::Compat::Tfe {
        vec![a.kind, singular]
    } else {
        vec![a.kind]
    }
}

fn create_grant(ctx: &Ctx, a: Access, body: &Value) -> ApiResult<Response> {
    let doc = resource(body, &grant_types(ctx, a))?;
    let team = doc.required_rel("team")?;
    let target = doc.required_rel(a.target_rel)?;
    let level = doc.opt("access").unwrap_or_else(|| "read".into());
    check_access(ctx, a, &doc.attributes, &level)?;
    let mut store = ctx.state.write();
    store.find("teams", &team)?;
    store.find(a.target_kind, &target)?;
    if store
        .list(a.kind, Some(&target))
        .iter()
        .any(|g| g.rel_id("team") == Some(team.as_str()))
    {
        return Err(ApiError::invalid("Team already has access to this target"));
    }
    let attrs = merge(defaults(ctx, a, &level), &doc.attributes, &[]);
    let id = store.insert(a.kind, a.prefix, Some(&target), attrs, Map::new());
    let g = store.find_mut(a.kind, &id)?;
    g.set_rel("team", "teams", &team);
    g.set_rel(a.target_rel, a.target_kind, &target);
    created(g.render())
}

fn list_grants(ctx: &Ctx, a: Access) -> ApiResult<Response> {
    let target = ctx.required(a.filter)?.to_string();
    let items: Vec<Value> = ctx
        .state
        .read()
        .list(a.kind, Some(&target))
        .into_iter()
        .map(|g| g.render())
        .collect();
    paginate(ctx, items)
}

fn update_grant(ctx: &Ctx, a: Access, id: &str, body: &Value) -> ApiResult<Response> {
    let doc = resource(body, &grant_types(ctx, a))?;
    let mut store = ctx.state.write();
    let g = store.find_mut(a.kind, id)?;
    let level = doc
        .opt("access")
        .unwrap_or_else(|| g.str("access").to_string());
    check_access(ctx, a, &doc.attributes, &level)?;
    if doc.opt("access").is_some() {
        for (k, v) in defaults(ctx, a, &level)
            .as_object()
            .cloned()
            .unwrap_or_default()
        {
            g.attributes.insert(k, v);
        }
    }
    let replaced = ctx.state.fault(Kind::NestedAccessReplaced);
    for (k, v) in doc.attributes {
        // a project grant's nested permissions change only the keys sent (go-tfe's
        // TestTeamProjectAccessesUpdate: "other attributes remain the same")
        match (g.attributes.get_mut(&k), v) {
            (Some(Value::Object(_)), v) if replaced => {
                g.attributes.insert(k, v);
            }
            (Some(Value::Object(old)), Value::Object(sent)) => {
                for (nk, nv) in sent {
                    old.insert(nk, nv);
                }
            }
            (_, v) => {
                g.attributes.insert(k, v);
            }
        }
    }
    ok(g.render())
}

async fn list_tws(ctx: Ctx) -> ApiResult<Response> {
    list_grants(&ctx, TWS)
}
async fn create_tws(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    create_grant(&ctx, TWS, &body)
}
async fn show_tws(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find(TWS.kind, &id)?.render())
}
async fn update_tws(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    update_grant(&ctx, TWS, &id, &body)
}
async fn destroy_tws(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete(TWS.kind, &id)?;
    no_content()
}
async fn list_tprj(ctx: Ctx) -> ApiResult<Response> {
    list_grants(&ctx, TPRJ)
}
async fn create_tprj(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    create_grant(&ctx, TPRJ, &body)
}
async fn show_tprj(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find(TPRJ.kind, &id)?.render())
}
async fn update_tprj(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    update_grant(&ctx, TPRJ, &id, &body)
}
async fn destroy_tprj(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete(TPRJ.kind, &id)?;
    no_content()
}
