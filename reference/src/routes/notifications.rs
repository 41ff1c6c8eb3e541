//! Notification configurations. Spec: Endpoints > Notification configurations; Events.
//! Verification records a successful delivery; the reference never sends a request anywhere.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, merge, no_content, ok, resource, unpaginated, Body, Ctx};
use crate::state::AppState;
use crate::store::{now, Record};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/workspaces/{id}/notification-configurations",
            get(list).post(create),
        )
        .route(
            "/notification-configurations/{id}",
            get(show).patch(update).delete(destroy),
        )
        .route(
            "/notification-configurations/{id}/actions/verify",
            post(verify),
        )
}

const TYPES: &[&str] = &["notification-configurations", "notification-configuration"];

fn render(n: &Record) -> Value {
    let mut doc = n.render();
    doc["attributes"]["token"] = Value::Null;
    doc
}

fn check(attrs: &Map<String, Value>) -> ApiResult<()> {
    let dest = attrs
        .get("destination-type")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !matches!(dest, "generic" | "email" | "slack" | "microsoft-teams") {
        return Err(ApiError::attribute(
            "destination-type",
            "Destination type must be generic, email, slack or microsoft-teams",
        ));
    }
    let url = attrs.get("url").and_then(Value::as_str).unwrap_or("");
    if dest != "email" && url.is_empty() {
        return Err(ApiError::attribute(
            "url",
            "Url is required for this destination",
        ));
    }
    if let Some(t) = attrs.get("triggers") {
        if !t.is_array() {
            return Err(ApiError::attribute("triggers", "Triggers must be a list"));
        }
    }
    Ok(())
}

// POST /workspaces/:workspace_id/notification-configurations
async fn create(ctx: Ctx, Path(ws): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, TYPES)?;
    doc.required("name")?;
    doc.required("destination-type")?;
    let attrs = merge(
        json!({"enabled": false, "triggers": [], "url": null, "email-addresses": [],
            "delivery-responses": [], "created-at": now(), "updated-at": now()}),
        &doc.attributes,
        &["token"],
    );
    check(&attrs)?;
    let mut store = ctx.state.write();
    store.find("workspaces", &ws)?;
    let id = store.insert(
        "notification-configurations",
        "nc-",
        Some(&ws),
        attrs,
        Map::new(),
    );
    let n = store.find_mut("notification-configurations", &id)?;
    n.set_rel("subscribable", "workspaces", &ws);
    n.set_rel_ids("users", "users", &[]);
    created(render(n))
}

async fn list(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let items: Vec<Value> = store
        .list("notification-configurations", Some(&ws))
        .into_iter()
        .map(render)
        .collect();
    drop(store);
    unpaginated(&ctx, items)
}

async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render(
        ctx.state.read().find("notification-configurations", &id)?,
    ))
}

async fn update(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, TYPES)?;
    let mut store = ctx.state.write();
    let n = store.find("notification-configurations", &id)?;
    let mut probe = n.attributes.clone();
    for (k, v) in &doc.attributes {
        probe.insert(k.clone(), v.clone());
    }
    check(&probe)?;
    let n = store.find_mut("notification-configurations", &id)?;
    for (k, v) in doc.attributes {
        if k != "token" {
            n.attributes.insert(k, v);
        }
    }
    n.attributes.insert("updated-at".into(), json!(now()));
    ok(render(n))
}

async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state
        .write()
        .delete("notification-configurations", &id)?;
    no_content()
}

// POST /notification-configurations/:id/actions/verify
async fn verify(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let n = store.find_mut("notification-configurations", &id)?;
    let url = n.str("url").to_string();
    let delivery = json!({"url": url, "body": "", "code": "200",
        "headers": {"content-type": ["text/plain"]}, "sent-at": now(), "successful": "true"});
    n.attributes
        .insert("delivery-responses".into(), json!([delivery]));
    ok(render(n))
}
