//! A workspace's lock actions: lock, unlock (refused while the newest state version waits for
//! its upload), force-unlock.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::jsonapi::{ok, Body, Ctx};
use crate::render::render_ws;

// POST /workspaces/:id/actions/lock
pub(super) async fn lock(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let reason = body
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut store = ctx.state.write();
    let user = store.current_user.clone();
    let ws = store.find_mut("workspaces", &id)?;
    if ws.flag("locked") {
        let held = "the workspace is already locked".to_string();
        return Err(if ctx.state.fault(Kind::LockConflict423) {
            ApiError::Locked(held)
        } else {
            ApiError::Conflict(held)
        });
    }
    ws.attributes.insert("locked".into(), json!(true));
    ws.attributes.insert("locked-reason".into(), json!(reason));
    ws.set_rel("locked-by", "users", &user);
    ok(render_ws(ws))
}

// POST /workspaces/:id/actions/unlock: refused while the newest state version waits for its
// upload (TFE: 409 "latest state version is still pending").
pub(super) async fn unlock(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
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
pub(super) async fn force_unlock(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
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
