//! OAuth clients and OAuth tokens. Spec: Endpoints > OAuth clients and tokens.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, merge, no_content, ok, paginate, resource, Body, Ctx};
use crate::shared::org;
use crate::state::AppState;
use crate::store::now;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/organizations/{org}/oauth-clients", get(list).post(create))
        .route(
            "/oauth-clients/{id}",
            get(show).patch(update).delete(destroy),
        )
        .route("/oauth-clients/{id}/oauth-tokens", get(list_tokens))
        .route(
            "/oauth-tokens/{id}",
            get(show_token).patch(update_token).delete(destroy_token),
        )
}

const PROVIDERS: &[&str] = &[
    "github",
    "github_enterprise",
    "gitlab_hosted",
    "gitlab_community_edition",
    "gitlab_enterprise_edition",
    "ado_services",
    "ado_server",
    "bitbucket_hosted",
    "bitbucket_server",
    "bitbucket_data_center",
];

// GET /organizations/:organization_name/oauth-clients
async fn list(ctx: Ctx, Path(name): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &name)?;
    let items: Vec<Value> = store
        .list("oauth-clients", Some(&name))
        .into_iter()
        .map(|c| c.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /organizations/:organization_name/oauth-clients
async fn create(ctx: Ctx, Path(name): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["oauth-clients"])?;
    let provider = doc.required("service-provider")?;
    if !PROVIDERS.contains(&provider.as_str()) {
        return Err(ApiError::attribute(
            "service-provider",
            "Service provider is not supported",
        ));
    }
    let mut store = ctx.state.write();
    org(&store, &name)?;
    let callback = store.random("");
    let attrs = merge(
        json!({"name": null, "service-provider": provider,
            "service-provider-display-name": provider.replace('_', " "),
            "http-url": "https://github.com", "api-url": "https://api.github.com",
            "key": null, "rsa-public-key": null, "secret": null, "organization-scoped": true,
            "created-at": now(), "callback-url": format!("{}/auth/{callback}/callback", ctx.root),
            "connect-path": format!("/auth/{callback}?organization_id=1")}),
        &doc.attributes,
        &["oauth-token-string", "private-key", "secret"],
    );
    let id = store.insert("oauth-clients", "oc-", Some(&name), attrs, Map::new());
    let token = store.insert(
        "oauth-tokens",
        "ot-",
        Some(&id),
        json!({"uid": store_uid(&id), "created-at": now(), "has-ssh-key": false,
            "service-provider-user": "reference-user"})
        .as_object()
        .cloned()
        .unwrap_or_default(),
        Map::new(),
    );
    if let Some(t) = store.get_mut("oauth-tokens", &token) {
        t.set_rel("oauth-client", "oauth-clients", &id);
    }
    let c = store.find_mut("oauth-clients", &id)?;
    c.set_rel("organization", "organizations", &name);
    c.set_rel_ids("oauth-tokens", "oauth-tokens", std::slice::from_ref(&token));
    c.set_rel_ids("projects", "projects", &[]);
    c.relationships
        .insert("agent-pool".into(), json!({"data": null}));
    created(c.render())
}

fn store_uid(id: &str) -> String {
    format!("{}", id.bytes().map(u64::from).sum::<u64>() * 7919)
}

async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("oauth-clients", &id)?.render())
}

async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["oauth-clients"])?;
    let mut store = ctx.state.write();
    let c = store.find_mut("oauth-clients", &id)?;
    for (k, v) in doc.attributes {
        if !matches!(k.as_str(), "oauth-token-string" | "private-key" | "secret") {
            c.attributes.insert(k, v);
        }
    }
    // `rename-on-update`: the client answers, and lives on, under a new id (as some servers' do)
    let id = if ctx.state.fault(crate::faults::Kind::RenameOnUpdate) {
        let new = store.new_id("oc-");
        store.rekey("oauth-clients", &id, &new);
        new
    } else {
        id
    };
    ok(store.find("oauth-clients", &id)?.render())
}

async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("oauth-clients", &id)?;
    no_content()
}

// GET /oauth-clients/:oauth_client_id/oauth-tokens
async fn list_tokens(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("oauth-clients", &id)?;
    let items: Vec<Value> = store
        .list("oauth-tokens", Some(&id))
        .into_iter()
        .map(|t| t.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show_token(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("oauth-tokens", &id)?.render())
}

// PATCH /oauth-tokens/:id (sets ssh-key, which is write-only)
async fn update_token(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["oauth-tokens"])?;
    let mut store = ctx.state.write();
    let t = store.find_mut("oauth-tokens", &id)?;
    for (k, v) in doc.attributes {
        if k == "ssh-key" {
            let has = v.as_str().is_some_and(|s| !s.is_empty());
            t.attributes.insert("has-ssh-key".into(), json!(has));
        } else {
            t.attributes.insert(k, v);
        }
    }
    ok(t.render())
}

async fn destroy_token(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let client = store
        .find("oauth-tokens", &id)?
        .owner
        .clone()
        .unwrap_or_default();
    store.delete("oauth-tokens", &id)?;
    if let Some(c) = store.get_mut("oauth-clients", &client) {
        let ids: Vec<String> = c
            .rel_ids("oauth-tokens")
            .into_iter()
            .filter(|t| *t != id)
            .collect();
        c.set_rel_ids("oauth-tokens", "oauth-tokens", &ids);
    }
    no_content()
}
