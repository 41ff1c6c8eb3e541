//! Account, audit trail, invoices, feature sets, IP ranges, VCS app installations, no-code
//! modules, assessment results and ping. Spec: Endpoints > Account, Other organization-level groups.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{answer, created, merge, ok, paginate, plain, resource, Body, Ctx};
use crate::shared::org;
use crate::state::AppState;
use crate::store::now;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/account/details", get(account))
        .route("/account/update", patch(account_update))
        .route("/account/password", patch(account_password))
        .route("/organization/audit-trail", get(audit_trail))
        .route("/organizations/{org}/invoices", get(invoices))
        .route("/organizations/{org}/invoices/next", get(next_invoice))
        .route("/feature-sets", get(feature_sets))
        .route("/organizations/{org}/feature-sets", get(org_feature_sets))
        .route("/meta/ip-ranges", get(ip_ranges))
        .route("/vcs-app/installations", get(installations))
        .route("/vcs-app/installation/{id}", get(installation))
        // TFE's names of the same routes.
        .route("/github-app/installations", get(installations))
        .route("/github-app/installation/{id}", get(installation))
        .route("/organizations/{org}/no-code-modules", post(create_no_code))
        .route(
            "/no-code-modules/{id}",
            get(show_no_code).patch(update_no_code),
        )
        .route("/assessment-results/{id}", get(assessment))
        .route(
            "/assessment-results/{id}/json-output",
            get(assessment_output),
        )
        .route("/ping", get(ping))
        .route("/workspaces/{id}/all-vars", get(all_vars))
}

// GET /workspaces/:workspace_id/all-vars (TFE; go-tfe's Variables.ListAll,
// TestVariablesListAll): the workspace's variables and those of the variable sets that apply to
// it (linked to it or to its project, or global), one per key and category: a priority set's
// first, then the workspace's own, then a set linked to the workspace, to its project, global.
async fn all_vars(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let ws = store.find("workspaces", &id)?;
    let org_name = ws.owner.clone().unwrap_or_default();
    let project = ws.rel_id("project").map(String::from);
    let sets = store.list("varsets", Some(&org_name));
    let linked = |v: &&crate::store::Record, rel: &str, target: Option<&str>| {
        target.is_some_and(|t| v.rel_ids(rel).iter().any(|i| i == t))
    };
    let mut ordered: Vec<&crate::store::Record> = Vec::new();
    let applies = |v: &&crate::store::Record| {
        v.flag("global")
            || linked(v, "workspaces", Some(&id))
            || linked(v, "projects", project.as_deref())
    };
    let set_vars = |pick: &dyn Fn(&&crate::store::Record) -> bool| {
        sets.iter()
            .filter(|v| applies(v) && pick(v))
            .flat_map(|v| store.list("varset-vars", Some(&v.id)))
            .collect::<Vec<_>>()
    };
    ordered.extend(set_vars(&|v| v.flag("priority")));
    ordered.extend(store.list("vars", Some(&id)));
    ordered.extend(set_vars(&|v| {
        !v.flag("priority") && linked(v, "workspaces", Some(&id))
    }));
    ordered.extend(set_vars(&|v| {
        !v.flag("priority")
            && !linked(v, "workspaces", Some(&id))
            && linked(v, "projects", project.as_deref())
    }));
    ordered.extend(set_vars(&|v| {
        !v.flag("priority")
            && !linked(v, "workspaces", Some(&id))
            && !linked(v, "projects", project.as_deref())
    }));
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut items: Vec<Value> = Vec::new();
    for v in ordered {
        let key = (v.str("key").to_string(), v.str("category").to_string());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let mut doc = v.render();
        // every item is a `vars` resource, a set's variable too (go-tfe's VariableList)
        doc["type"] = json!("vars");
        if v.flag("sensitive") {
            doc["attributes"]["value"] = Value::Null;
        }
        items.push(doc);
    }
    drop(store);
    paginate(&ctx, items)
}

async fn account(ctx: Ctx, headers: axum::http::HeaderMap) -> ApiResult<Response> {
    let store = ctx.state.read();
    let mut doc = store.find("users", &store.current_user)?.render();
    // The user's token is not a site administrator's (the admin API answers it 404, as TFE
    // answers anyone else): its account says so.
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    if bearer.is_some_and(|t| *t != *ctx.state.admin_token) {
        doc["attributes"]["is-site-admin"] = json!(false);
    }
    // With SCIM on, TFE answers the user's SCIM attributes (the caller is not SCIM-managed);
    // with it off, none (go-tfe's TestUsersReadCurrent, "with" and "with no scim attributes").
    let scim = store
        .settings
        .get("scim")
        .and_then(|s| s.get("enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if scim {
        doc["attributes"]["is-scim-managed"] = json!(false);
        doc["attributes"]["scim-username"] = Value::Null;
        doc["attributes"]["scim-updated-at"] = Value::Null;
    }
    ok(doc)
}

// PATCH /account/update (username, email)
async fn account_update(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["users"])?;
    if let Some(email) = doc.opt("email") {
        if !email.contains('@') {
            return Err(ApiError::attribute("email", "Email is invalid"));
        }
    }
    if doc.attributes.get("username").is_some() {
        doc.required("username")?;
    }
    let mut store = ctx.state.write();
    let me = store.current_user.clone();
    let user = store.find_mut("users", &me)?;
    for key in ["username", "email"] {
        if let Some(v) = doc.attributes.get(key) {
            user.attributes.insert(key.into(), v.clone());
        }
    }
    ok(user.render())
}

// PATCH /account/password (current_password, password, password_confirmation)
async fn account_password(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    // TFE sends a JSON:API document; plain JSON is accepted too.
    let attrs = match body.get("data") {
        Some(_) => resource(&body, &["users"])?.attributes,
        None => body
            .as_object()
            .cloned()
            .ok_or_else(|| ApiError::invalid("the body must be a JSON object"))?,
    };
    let get = |k: &str| {
        attrs
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (current, new, confirm) = (
        get("current_password"),
        get("password"),
        get("password_confirmation"),
    );
    let mut store = ctx.state.write();
    if current != store.password {
        return Err(ApiError::attribute(
            "current_password",
            "Current password is incorrect",
        ));
    }
    if new.is_empty() {
        return Err(ApiError::attribute("password", "Password is required"));
    }
    if !confirm.is_empty() && confirm != new {
        return Err(ApiError::attribute(
            "password_confirmation",
            "Password confirmation does not match",
        ));
    }
    store.password = new;
    ok(store.find("users", &store.current_user)?.render())
}

// GET /organization/audit-trail (not JSON:API; snake_case pagination at the top level)
async fn audit_trail(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let events: Vec<Value> = store
        .list("organizations", None)
        .iter()
        .map(|o| json!({
            "id": format!("audit-{}", o.str("external-id")),
            "version": "0", "type": "Resource", "timestamp": o.str("created-at"),
            "auth": {"accessor_id": store.current_user, "description": "reference-user",
                "type": "Client", "impersonator_id": null, "organization_id": o.str("external-id")},
            "request": {"id": o.str("external-id")},
            "resource": {"id": o.id, "type": "organization", "action": "create", "meta": null},
        }))
        .collect();
    drop(store);
    let page: usize = ctx
        .q("page[number]")
        .or(ctx.q("page"))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let size: usize = ctx
        .q("page[size]")
        .or(ctx.q("page_size"))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1000)
        .clamp(1, 1000);
    let total = events.len();
    let pages = total.div_ceil(size).max(1);
    let data: Vec<Value> = events
        .into_iter()
        .skip((page - 1).saturating_mul(size))
        .take(size)
        .collect();
    let document = json!({
        "data": data,
        "pagination": {"current_page": page, "prev_page": (page > 1).then(|| page - 1),
            "next_page": (page < pages).then_some(page + 1), "total_pages": pages, "total_count": total},
    });
    Ok(answer(StatusCode::OK, document))
}

fn invoice(o: &str, n: u32, status: &str) -> Value {
    json!({"id": format!("in_{o}_{n:04}"), "type": "billing-invoices", "attributes": {
        "created-at": now(), "external-link": format!("https://billing.example.test/{o}/{n}"),
        "number": format!("REF-{n:04}"), "paid": status == "paid", "status": status, "total": 0}})
}

async fn invoices(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    org(&ctx.state.read(), &o)?;
    Ok(answer(
        StatusCode::OK,
        json!({"data": [invoice(&o, 1, "paid")], "meta": {"continuation": null}}),
    ))
}

async fn next_invoice(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    org(&ctx.state.read(), &o)?;
    ok(invoice(&o, 2, "draft"))
}

fn feature_set_list(current: Option<&str>) -> Vec<Value> {
    [
        ("fs-free0000000000000", "Free", "free_standard", true, 0),
        ("fs-plus0000000000000", "Plus", "plus", false, 7000),
    ]
    .iter()
    .map(|(id, name, ident, free, cost)| {
        json!({"id": id, "type": "feature-sets", "attributes": {
            "name": name, "identifier": ident, "is-current": current == Some(*ident),
            "is-free-tier": free, "cost": cost, "runs-ceiling": 1, "user-limit": null,
            "audit-logging": !free, "agents": !free, "sso": true, "teams": true,
            "policy-enforcement": !free, "private-module-registry": true}})
    })
    .collect()
}

async fn feature_sets(ctx: Ctx) -> ApiResult<Response> {
    paginate(&ctx, feature_set_list(None))
}

async fn org_feature_sets(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    org(&ctx.state.read(), &o)?;
    paginate(&ctx, feature_set_list(Some("free_standard")))
}

// GET /meta/ip-ranges (no token, plain JSON)
async fn ip_ranges() -> Response {
    let mut res = plain(
        StatusCode::OK,
        json!({
            "api": ["127.0.0.1/32"], "notifications": ["127.0.0.1/32"],
            "sentinel": ["127.0.0.1/32"], "vcs": ["127.0.0.1/32"],
        }),
    );
    res.headers_mut().insert(
        "last-modified",
        HeaderValue::from_static("Mon, 01 Jan 2024 00:00:00 GMT"),
    );
    res
}

async fn installations(ctx: Ctx) -> ApiResult<Response> {
    let items: Vec<Value> = ctx
        .state
        .read()
        .list("github-app-installations", None)
        .into_iter()
        .map(|i| i.render())
        .collect();
    paginate(&ctx, items)
}

async fn installation(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx
        .state
        .read()
        .find("github-app-installations", &id)?
        .render())
}

// POST /organizations/:organization_name/no-code-modules
async fn create_no_code(ctx: Ctx, Path(o): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["no-code-modules"])?;
    let module = doc.required_rel("registry-module")?;
    let mut store = ctx.state.write();
    org(&store, &o)?;
    store.find("registry-modules", &module)?;
    // TFE pins a version the module has (the no-code provisioning API's `version-pin`)
    if let Some(pin) = doc.attributes.get("version-pin").and_then(Value::as_str) {
        let known = store
            .list("registry-module-versions", Some(&module))
            .iter()
            .any(|v| v.str("version") == pin);
        if !known {
            return Err(ApiError::attribute(
                "version-pin",
                format!("version-pin {pin} is no version of the module"),
            ));
        }
    }
    let attrs = merge(
        json!({"enabled": true, "version-pin": null, "created-at": now(), "updated-at": now()}),
        &doc.attributes,
        &[],
    );
    let id = store.insert(
        "no-code-modules",
        "nocode-",
        Some(&module),
        attrs,
        Map::new(),
    );
    let n = store.find_mut("no-code-modules", &id)?;
    n.set_rel("organization", "organizations", &o);
    n.set_rel("registry-module", "registry-modules", &module);
    n.set_rel_ids("variable-options", "variable-options", &[]);
    created(n.render())
}

async fn show_no_code(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("no-code-modules", &id)?.render())
}

async fn update_no_code(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["no-code-modules"])?;
    let mut store = ctx.state.write();
    let n = store.find_mut("no-code-modules", &id)?;
    for (k, v) in doc.attributes {
        n.attributes.insert(k, v);
    }
    n.attributes.insert("updated-at".into(), json!(now()));
    ok(n.render())
}

async fn assessment(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("assessment-results", &id)?.render())
}

async fn assessment_output(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.read().find("assessment-results", &id)?;
    Ok(plain(
        StatusCode::OK,
        json!({"format_version": "1.2", "terraform_version": "1.9.5",
        "resource_drift": [], "resource_changes": [], "output_changes": {}, "applyable": false, "complete": true}),
    ))
}

async fn ping() -> Response {
    let mut res = StatusCode::NO_CONTENT.into_response();
    let h = res.headers_mut();
    h.insert("x-ratelimit-limit", HeaderValue::from_static("30"));
    h.insert("tfp-api-version", HeaderValue::from_static("2.6"));
    h.insert(
        "tfp-appname",
        HeaderValue::from_static("Terraform Enterprise"),
    );
    res
}
