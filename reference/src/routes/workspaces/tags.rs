//! A workspace's tags (`/workspaces/:id/relationships/tags`): listed, added by id or by name
//! (new names become organization tags), removed.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{items, no_content, paginate, Body, Ctx};
use crate::shared::tags::{recount, tag_by_name, tag_names, tag_workspace};

// GET /workspaces/:id/relationships/tags
pub(super) async fn list_tags(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
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
pub(super) async fn add_tags(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
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
pub(super) async fn remove_tags(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
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
