//! Run triggers: the workspaces a workspace's runs are triggered from (inbound and outbound).
//! Spec: Endpoints > Run triggers.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, no_content, ok, paginate, resource, Body, Ctx};
use crate::state::AppState;
use crate::store::now;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/workspaces/{id}/run-triggers",
            get(list_triggers).post(create_trigger),
        )
        .route(
            "/run-triggers/{id}",
            get(show_trigger).delete(destroy_trigger),
        )
}

// POST /workspaces/:workspace_id/run-triggers
async fn create_trigger(ctx: Ctx, Path(ws): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["run-triggers", "run-trigger"])?;
    let source = doc.required_rel("sourceable")?;
    let mut store = ctx.state.write();
    let target_name = store.find("workspaces", &ws)?.str("name").to_string();
    let source_name = store.find("workspaces", &source)?.str("name").to_string();
    if source == ws {
        return Err(ApiError::Invalid {
            detail: "a workspace cannot be its own run trigger source".into(),
            pointer: Some("/data/relationships/sourceable".into()),
        });
    }
    if store
        .list("run-triggers", Some(&ws))
        .iter()
        .any(|t| t.rel_id("sourceable") == Some(source.as_str()))
    {
        return Err(ApiError::invalid("Sourceable has already been taken"));
    }
    let attrs = json!({"workspace-name": target_name, "sourceable-name": source_name,
        "created-at": now()});
    let id = store.insert(
        "run-triggers",
        "rt-",
        Some(&ws),
        attrs.as_object().cloned().unwrap_or_default(),
        Map::new(),
    );
    let t = store.find_mut("run-triggers", &id)?;
    t.set_rel("workspace", "workspaces", &ws);
    t.set_rel("sourceable", "workspaces", &source);
    created(t.render())
}

// GET /workspaces/:workspace_id/run-triggers
async fn list_triggers(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let kind = ctx.required("filter[run-trigger][type]")?.to_string();
    if kind != "inbound" && kind != "outbound" {
        return Err(ApiError::BadRequest(
            "filter[run-trigger][type] must be inbound or outbound".into(),
        ));
    }
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let items: Vec<Value> = store
        .list("run-triggers", None)
        .into_iter()
        .filter(|t| {
            let rel = if kind == "inbound" {
                "workspace"
            } else {
                "sourceable"
            };
            t.rel_id(rel) == Some(ws.as_str())
        })
        .map(|t| t.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show_trigger(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("run-triggers", &id)?.render())
}

async fn destroy_trigger(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete("run-triggers", &id)?;
    no_content()
}
