//! Organizations, entitlement sets, organization memberships, organization tags and tokens.
//! Spec: Endpoints > Organizations, Organization memberships, Organization tags and tokens.

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::jsonapi::Ty;
use crate::jsonapi::{
    answer, created, item_ids, merge, no_content, ok, paginate, resource, Body, Ctx,
};
use crate::shared::org;
use crate::shared::tags::{tag_names, tag_workspace};
use crate::shared::valid_name;
use crate::state::AppState;
use crate::store::{now, Store};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/organizations", get(list).post(create))
        .route(
            "/organizations/{org}",
            get(show).patch(update).delete(destroy),
        )
        .route("/organizations/{org}/entitlement-set", get(entitlements))
        .route(
            "/organizations/{org}/organization-memberships",
            get(list_memberships).post(invite),
        )
        .route("/organization-memberships", get(own_memberships))
        .route(
            "/organization-memberships/{id}",
            get(show_membership).delete(delete_membership),
        )
        .route(
            "/organizations/{org}/tags",
            get(list_tags).delete(delete_tags),
        )
        .route("/tags/{id}/relationships/workspaces", post(tag_workspaces))
        .route(
            "/organizations/{org}/authentication-token",
            post(create_token).delete(delete_token).get(show_token),
        )
}

fn render_org(store: &Store, name: &str) -> ApiResult<Value> {
    Ok(store.find("organizations", name)?.render())
}

// GET /organizations
async fn list(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let q = ctx.q("q").or(ctx.q("q[name]")).map(str::to_lowercase);
    let by_name_only = ctx.q("q").is_none() || ctx.state.fault(Kind::OrganizationQueryNameOnly);
    let items: Vec<Value> = store
        .list("organizations", None)
        .into_iter()
        .filter(|o| {
            // `q` matches a part of the name or of the email (go-tfe's OrganizationListOptions.Query;
            // TestOrganizationsList "when querying on a valid email")
            q.as_ref().is_none_or(|q| {
                o.id.to_lowercase().contains(q)
                    || (!by_name_only && o.str("email").to_lowercase().contains(q))
            })
        })
        .map(|o| o.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

/// The JSON types of the organization attributes a client may send (tfe-api-facts 2.1).
const ORGANIZATION_TYPES: &[(&str, Ty)] = &[
    ("name", Ty::Str),
    ("email", Ty::Str),
    ("session-timeout", Ty::Int),
    ("session-remember", Ty::Int),
    ("collaborator-auth-policy", Ty::Str),
    ("cost-estimation-enabled", Ty::Bool),
    ("default-execution-mode", Ty::Str),
    ("assessments-enforced", Ty::Bool),
    ("allow-force-delete-workspaces", Ty::Bool),
    ("owners-team-saml-role-id", Ty::StrOrNull),
];

// POST /organizations
async fn create(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["organizations"])?;
    doc.typed(&ctx, ORGANIZATION_TYPES)?;
    let name = doc.required("name")?;
    let email = match doc.required("email") {
        Err(_) if ctx.state.fault(Kind::AcceptsMissingAttribute) && doc.opt("email").is_none() => {
            String::new()
        }
        email => email?,
    };
    if !valid_name(&name) {
        return Err(ApiError::attribute("name", "Name is invalid"));
    }
    let mut store = ctx.state.write();
    insert_organization(&mut store, &name, &email, &doc.attributes)?;
    created(render_org(&store, &name)?)
}

/// Creates an organization as `POST /organizations` does, with its default project, its
/// `owners` team (holding the current user) and the user's membership; 422 when the name is
/// taken. The shapes seed their organization with it.
pub(crate) fn insert_organization(
    store: &mut Store,
    name: &str,
    email: &str,
    sent: &Map<String, Value>,
) -> ApiResult<()> {
    let name = name.to_string();
    if store.get("organizations", &name).is_some() {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    let external = store.new_id("org-");
    let attrs = merge(
        json!({
            "name": name, "email": email, "external-id": external, "created-at": now(),
            "session-timeout": 20160, "session-remember": 20160,
            "collaborator-auth-policy": "password", "cost-estimation-enabled": false,
            "default-execution-mode": "remote", "saml-enabled": false,
            "owners-team-saml-role-id": null, "two-factor-conformant": true,
            "assessments-enforced": false, "allow-force-delete-workspaces": false,
            // go-tfe's Organization: a new organization is in the free tier, not in a trial,
            // and takes user tokens (TestOrganizationsRead, TestOrganizationsUpdate)
            "trial-expires-at": null, "remaining-testable-count": 5,
            "user-tokens-enabled": true,
            "permissions": {"can-update": true, "can-destroy": true, "can-create-team": true,
                "can-create-workspace": true, "can-manage-subscription": true,
                "can-update-oauth": true, "can-create-workspace-migration": true},
        }),
        sent,
        &[],
    );
    store.insert_with_id("organizations", name.clone(), None, attrs, Map::new());
    let project = store.insert(
        "projects",
        "prj-",
        Some(&name),
        json!({"name": "Default Project", "created-at": now()})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        Map::new(),
    );
    let user = store.current_user.clone();
    let owners = store.insert(
        "teams",
        "team-",
        Some(&name),
        merge(crate::shared::team_defaults("owners"), &Map::new(), &[]),
        Map::new(),
    );
    if let Some(team) = store.get_mut("teams", &owners) {
        team.set_rel_ids("users", "users", std::slice::from_ref(&user));
        team.attributes.insert("users-count".into(), json!(1));
    }
    let email = store
        .get("users", &user)
        .map(|u| u.str("email").to_string())
        .unwrap_or_default();
    let membership = store.insert(
        "organization-memberships",
        "ou-",
        Some(&name),
        json!({"status": "active", "email": email, "created-at": now()})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        Map::new(),
    );
    if let Some(m) = store.get_mut("organization-memberships", &membership) {
        m.set_rel("user", "users", &user);
        m.set_rel("organization", "organizations", &name);
        m.set_rel_ids("teams", "teams", std::slice::from_ref(&owners));
    }
    if let Some(o) = store.get_mut("organizations", &name) {
        o.set_rel("default-project", "projects", &project);
        o.relationships
            .insert("default-agent-pool".into(), json!({"data": null}));
    }
    Ok(())
}

// GET /organizations/:organization_name
async fn show(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    ok(render_org(&ctx.state.read(), &name)?)
}

// PATCH /organizations/:organization_name
async fn update(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["organizations"])?;
    doc.typed(&ctx, ORGANIZATION_TYPES)?;
    let mut store = ctx.state.write();
    org(&store, &name)?;
    let mut id = name.clone();
    if let Some(new) = doc.opt("name").filter(|n| *n != name) {
        if !valid_name(&new) {
            return Err(ApiError::attribute("name", "Name is invalid"));
        }
        if store.get("organizations", &new).is_some() {
            return Err(ApiError::attribute("name", "Name has already been taken"));
        }
        store.rekey("organizations", &name, &new);
        id = new;
    }
    // The default agent pool (go-tfe's OrganizationUpdateOptions.DefaultAgentPool, with
    // `default-execution-mode: agent`): one of the organization's pools, or null.
    let pool = match doc.relationships.get("default-agent-pool") {
        Some(rel) if !ctx.state.fault(Kind::OrganizationAgentPoolDropped) => {
            match rel
                .get("data")
                .and_then(|d| d.get("id"))
                .and_then(Value::as_str)
            {
                Some(pool) => {
                    if store.get("agent-pools", pool).map(|p| p.owner.as_deref())
                        != Some(Some(id.as_str()))
                    {
                        return Err(ApiError::Invalid {
                            detail: format!("agent pool {pool} is not in the organization"),
                            pointer: Some("/data/relationships/default-agent-pool".into()),
                        });
                    }
                    Some(json!({"data": {"type": "agent-pools", "id": pool}}))
                }
                None => Some(json!({"data": null})),
            }
        }
        _ => None,
    };
    let record = store.find_mut("organizations", &id)?;
    let mode = doc
        .opt("default-execution-mode")
        .unwrap_or_else(|| record.str("default-execution-mode").to_string());
    // A pool only goes with the `agent` mode, and another mode drops it (go-tfe's
    // TestOrganizationsUpdate: "must not be specified unless using 'agent' execution mode").
    let pool =
        match pool {
            Some(p) if mode != "agent" && !p["data"].is_null() => return Err(ApiError::Invalid {
                detail:
                    "Default agent pool must not be specified unless using 'agent' execution mode"
                        .into(),
                pointer: Some("/data/relationships/default-agent-pool".into()),
            }),
            None if mode != "agent" && !ctx.state.fault(Kind::OrganizationAgentPoolDropped) => {
                Some(json!({"data": null}))
            }
            pool => pool,
        };
    for (k, v) in doc.attributes {
        record.attributes.insert(k, v);
    }
    if let Some(pool) = pool {
        record
            .relationships
            .insert("default-agent-pool".into(), pool);
    }
    ok(record.render())
}

// DELETE /organizations/:organization_name
async fn destroy(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    store.delete("organizations", &name)?;
    store.tokens.retain(|_, owner| *owner != name);
    no_content()
}

// GET /organizations/:organization_name/entitlement-set
async fn entitlements(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let o = store.find("organizations", &name)?;
    ok(json!({
        "id": o.str("external-id"),
        "type": "entitlement-sets",
        "attributes": {
            "agents": true, "audit-logging": true, "configuration-designer": true,
            "cost-estimation": true, "global-run-tasks": true, "module-tests-generation": false,
            "operations": true, "policy-enforcement": true, "policy-limit": null,
            "private-module-registry": true, "private-policy-agents": true,
            "private-run-tasks": true, "run-task-limit": null, "run-tasks": true,
            "self-serve-billing": true, "sentinel": true, "sso": true, "state-storage": true,
            "teams": true, "usage-reporting": true, "user-limit": null,
            "vcs-integrations": true, "versioned-policy-set-limit": null,
        },
        "links": {"self": format!("/api/v2/entitlement-sets/{}", o.str("external-id"))},
    }))
}

// POST /organizations/:organization_name/organization-memberships
async fn invite(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["organization-memberships"])?;
    let email = doc.required("email")?;
    if !email.contains('@') {
        return Err(ApiError::attribute("email", "Email is invalid"));
    }
    let mut store = ctx.state.write();
    org(&store, &name)?;
    let existing = store
        .list("organization-memberships", Some(&name))
        .iter()
        .any(|m| m.str("email").eq_ignore_ascii_case(&email));
    if existing {
        return Err(ApiError::attribute("email", "Email is already a member"));
    }
    let user = match store
        .list("users", None)
        .iter()
        .find(|u| u.str("email").eq_ignore_ascii_case(&email))
    {
        Some(u) => u.id.clone(),
        // `invite-stub`: the membership names a user no read shows (an invitation stub)
        None if ctx.state.fault(Kind::InviteStub) => store.random("user-"),
        None => {
            let username = email.split('@').next().unwrap_or("user").to_string();
            let user = store.new_user(&username, &email);
            // `users-without-two-factor`: an invited user has none, as on TFE
            if ctx.state.fault(crate::faults::Kind::UsersWithoutTwoFactor) {
                if let Ok(u) = store.find_mut("users", &user) {
                    u.attributes.insert(
                        "two-factor".into(),
                        json!({"enabled": false, "verified": false}),
                    );
                }
            }
            user
        }
    };
    let id = store.insert(
        "organization-memberships",
        "ou-",
        Some(&name),
        json!({"status": "invited", "email": email, "created-at": now()})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        Map::new(),
    );
    let mut teams: Vec<String> = Vec::new();
    if let Some(data) = doc
        .relationships
        .get("teams")
        .and_then(|t| t.get("data"))
        .and_then(Value::as_array)
    {
        for t in data {
            if let Some(tid) = t.get("id").and_then(Value::as_str) {
                teams.push(tid.to_string());
            }
        }
    }
    let m = store.find_mut("organization-memberships", &id)?;
    m.set_rel("user", "users", &user);
    m.set_rel("organization", "organizations", &name);
    m.set_rel_ids("teams", "teams", &teams);
    let data = m.render();
    // TFE answers the invite with its user included: go-tfe's TestOrganizationMembershipsCreate
    // finds the create's answer equal to a read with `include=user`.
    let included: Vec<Value> = store
        .get("users", &user)
        .filter(|_| !ctx.state.fault(Kind::InviteWithoutUser))
        .map(|u| u.render())
        .into_iter()
        .collect();
    Ok(answer(
        StatusCode::CREATED,
        json!({ "data": data, "included": included }),
    ))
}

/// The `include` names a membership read takes (go-tfe's `OrgMembershipIncludeOpt`: `user`,
/// `teams`); another is answered 400 naming the include parameter (tfe-api-facts 1.3: 400 on an
/// invalid `include`; go-tfe's TestOrganizationMembershipsReadWithOptions).
fn membership_include(ctx: &Ctx) -> ApiResult<()> {
    if ctx.state.fault(Kind::MembershipIncludeUnchecked) {
        return Ok(());
    }
    match ctx
        .q("include")
        .into_iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .find(|name| !["user", "teams"].contains(name))
    {
        Some(name) => Err(ApiError::BadRequest(format!(
            "Invalid include parameter: `{name}` (organization memberships include user, teams)"
        ))),
        None => Ok(()),
    }
}

// GET /organizations/:organization_name/organization-memberships
async fn list_memberships(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    membership_include(&ctx)?;
    let store = ctx.state.read();
    org(&store, &name)?;
    let q = ctx.q("q").map(str::to_lowercase);
    let status = ctx.q("filter[status]");
    // `filter[email]`: a comma-separated list of emails (go-tfe's
    // OrganizationMembershipListOptions.Emails; TestOrganizationMembershipsList).
    let emails: Option<Vec<String>> = ctx
        .q("filter[email]")
        .filter(|_| !ctx.state.fault(Kind::MembershipEmailFilterIgnored))
        .map(|e| e.split(',').map(|e| e.trim().to_lowercase()).collect());
    let items: Vec<Value> = store
        .list("organization-memberships", Some(&name))
        .into_iter()
        .filter(|m| {
            q.as_ref()
                .is_none_or(|q| m.str("email").to_lowercase().contains(q))
        })
        .filter(|m| status.is_none_or(|s| m.str("status") == s))
        .filter(|m| {
            emails
                .as_ref()
                .is_none_or(|e| e.contains(&m.str("email").to_lowercase()))
        })
        .map(|m| m.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /organization-memberships (the caller's own)
async fn own_memberships(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let me = store.current_user.clone();
    let items: Vec<Value> = store
        .list("organization-memberships", None)
        .into_iter()
        .filter(|m| m.rel_id("user") == Some(me.as_str()))
        .map(|m| m.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /organization-memberships/:organization_membership_id
async fn show_membership(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    membership_include(&ctx)?;
    ok(ctx
        .state
        .read()
        .find("organization-memberships", &id)?
        .render())
}

// DELETE /organization-memberships/:organization_membership_id
async fn delete_membership(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("organization-memberships", &id)?;
    no_content()
}

// GET /organizations/:organization_name/tags
async fn list_tags(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let q = ctx.q("q");
    let items: Vec<Value> = store
        .list("tags", Some(&name))
        .into_iter()
        .filter(|t| q.is_none_or(|q| t.str("name").contains(q)))
        .map(|t| {
            let mut doc = t.render();
            if ctx.state.fault(Kind::TagWithoutOrganization) {
                if let Some(rels) = doc["relationships"].as_object_mut() {
                    rels.remove("organization");
                }
            }
            doc
        })
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// DELETE /organizations/:organization_name/tags
async fn delete_tags(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let ids = item_ids(&body, &["tags"])?;
    let mut store = ctx.state.write();
    org(&store, &name)?;
    for id in &ids {
        let tag = store.find("tags", id)?;
        if tag.owner.as_deref() != Some(name.as_str()) {
            return Err(ApiError::not_found("tag", id));
        }
    }
    for id in &ids {
        let tag_name = store.find("tags", id)?.str("name").to_string();
        let ws_ids: Vec<String> = store
            .list("workspaces", Some(&name))
            .iter()
            .map(|w| w.id.clone())
            .collect();
        for ws_id in ws_ids {
            if let Some(ws) = store.get_mut("workspaces", &ws_id) {
                let names: Vec<String> = tag_names(ws)
                    .into_iter()
                    .filter(|n| *n != tag_name)
                    .collect();
                ws.attributes.insert("tag-names".into(), json!(names));
                let ids: Vec<String> = ws.rel_ids("tags").into_iter().filter(|t| t != id).collect();
                ws.set_rel_ids("tags", "tags", &ids);
            }
        }
        store.remove("tags", id);
    }
    no_content()
}

// POST /tags/:tag_id/relationships/workspaces
async fn tag_workspaces(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let ids = item_ids(&body, &["workspaces"])?;
    let mut store = ctx.state.write();
    store.find("tags", &id)?;
    for ws in &ids {
        store.find("workspaces", ws)?;
    }
    if ctx.state.fault(crate::faults::Kind::TagWorkspacesNoop) {
        return no_content();
    }
    for ws in &ids {
        tag_workspace(&mut store, &id, ws)?;
    }
    no_content()
}

// POST /organizations/:organization_name/authentication-token
async fn create_token(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    // The spec sends no body; an expiry may come as a JSON:API document.
    let expired_at = if body.is_null() {
        Value::Null
    } else {
        resource(&body, &["authentication-tokens", "authentication-token"])?
            .attributes
            .get("expired-at")
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut store = ctx.state.write();
    org(&store, &name)?;
    let old: Vec<String> = store
        .list("authentication-tokens", Some(&name))
        .iter()
        .map(|t| t.id.clone())
        .collect();
    for id in old {
        store.remove("authentication-tokens", &id);
    }
    store.tokens.retain(|_, owner| *owner != name);
    let secret = format!("{}.atlasv1.{}", store.random(""), store.random(""));
    let id = store.insert(
        "authentication-tokens",
        "at-",
        Some(&name),
        json!({"created-at": now(), "last-used-at": null, "description": null,
            "expired-at": expired_at})
        .as_object()
        .cloned()
        .unwrap_or_default(),
        Map::new(),
    );
    store.tokens.insert(secret.clone(), name.clone());
    // Who made it (go-tfe's `created-by` polyrelation: an organization, team or user).
    if !ctx.state.fault(Kind::TokenWithoutCreator) {
        let me = store.current_user.clone();
        store
            .find_mut("authentication-tokens", &id)?
            .set_rel("created-by", "users", &me);
    }
    let mut doc = store.find("authentication-tokens", &id)?.render();
    doc["attributes"]["token"] = if ctx.state.fault(Kind::TokenSecretWithheld) {
        Value::Null
    } else {
        json!(secret)
    };
    created(doc)
}

// GET /organizations/:organization_name/authentication-token (TFE): the token, without its secret.
async fn show_token(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let token = store
        .list("authentication-tokens", Some(&name))
        .last()
        .map(|t| t.render())
        .ok_or_else(|| ApiError::NotFound("the organization has no token".into()))?;
    ok(token)
}

// DELETE /organizations/:organization_name/authentication-token
async fn delete_token(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    org(&store, &name)?;
    let old: Vec<String> = store
        .list("authentication-tokens", Some(&name))
        .iter()
        .map(|t| t.id.clone())
        .collect();
    if old.is_empty() {
        return Err(ApiError::NotFound("the organization has no token".into()));
    }
    for id in old {
        store.remove("authentication-tokens", &id);
    }
    if !ctx.state.fault(Kind::TokenNotRevoked) {
        store.tokens.retain(|_, owner| *owner != name);
    }
    no_content()
}
