//! The installation's engine versions (`/admin/engine-versions`, TFE's
//! `/admin/terraform-versions`): listed, made, shown, changed and deleted.
//!
//! A version's binaries are its `archs`, one `{url, sha, os, arch}` per platform (TFE's
//! documented shape; go-tfe's `ToolVersionArchitecture`); `url` and `sha` are the linux/amd64
//! binary's. Sending `archs` replaces the binaries and sets `url` and `sha` from the amd64 one
//! (null without one); sending `url` or `sha` alone replaces the binaries with that amd64 one.
//! A version no longer deprecated has no `deprecated-reason` (go-tfe's list asserts it).
//! `filter[version]` finds one version exactly, `search[version]` the versions containing the
//! text (tfe-api-facts 5).

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, merge, no_content, ok, paginate, resource, Body, Ctx, Doc};
use crate::store::now;

const ENGINE_TYPES: &[&str] = &[
    "terraform-versions",
    "engine-versions",
    "admin-terraform-versions",
];

/// The attributes that say where the binaries are (set by [`set_binaries`], never as sent).
const BINARIES: &[&str] = &["archs", "url", "sha"];

pub(super) async fn list_engines(ctx: Ctx) -> ApiResult<Response> {
    let store = ctx.state.read();
    let exact = ctx.q("filter[version]");
    let search = ctx.q("search[version]");
    let items: Vec<Value> = store
        .list("terraform-versions", None)
        .into_iter()
        .filter(|e| match (exact, search) {
            (Some(v), _) => e.str("version") == v,
            (None, Some(text)) => e.str("version").contains(text),
            (None, None) => true,
        })
        .map(|e| e.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

/// The `archs` sent, each an object of string `url`, `sha`, `os` and `arch`; 422 otherwise.
fn sent_archs(doc: &Doc) -> ApiResult<Option<Vec<Value>>> {
    let Some(archs) = doc.attributes.get("archs") else {
        return Ok(None);
    };
    let refuse = || ApiError::attribute("archs", "archs must be a list of {url, sha, os, arch}");
    let items = archs.as_array().ok_or_else(refuse)?;
    for item in items {
        let fits = ["url", "sha", "os", "arch"]
            .iter()
            .all(|k| item.get(k).is_some_and(Value::is_string));
        if !fits {
            return Err(refuse());
        }
    }
    Ok(Some(items.clone()))
}

/// Sets `archs`, `url` and `sha` from what was sent (see the module's rule); nothing changes
/// when none of them was sent.
fn set_binaries(attrs: &mut Map<String, Value>, doc: &Doc) -> ApiResult<()> {
    let archs = match sent_archs(doc)? {
        Some(archs) => archs,
        None if doc.attributes.contains_key("url") || doc.attributes.contains_key("sha") => {
            let keep = |name: &str| {
                doc.opt(name)
                    .map(Value::from)
                    .or_else(|| attrs.get(name).cloned())
                    .unwrap_or(Value::Null)
            };
            vec![json!({"url": keep("url"), "sha": keep("sha"), "os": "linux", "arch": "amd64"})]
        }
        None => return Ok(()),
    };
    let amd64 = archs
        .iter()
        .find(|a| a["os"] == "linux" && a["arch"] == "amd64");
    for name in ["url", "sha"] {
        let value = amd64.map_or(Value::Null, |a| a[name].clone());
        attrs.insert(name.into(), value);
    }
    attrs.insert("archs".into(), Value::Array(archs));
    Ok(())
}

pub(super) async fn create_engine(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, ENGINE_TYPES)?;
    let version = doc.required("version")?;
    if doc.attributes.get("archs").is_none() {
        doc.required("url")?;
        doc.required("sha")?;
    }
    let mut store = ctx.state.write();
    if store
        .list("terraform-versions", None)
        .iter()
        .any(|e| e.str("version") == version)
    {
        return Err(ApiError::attribute(
            "version",
            "Version has already been taken",
        ));
    }
    let mut attrs = merge(
        json!({"version": version, "official": false, "enabled": true, "beta": false,
            "deprecated": false, "deprecated-reason": null, "usage": 0, "created-at": now()}),
        &doc.attributes,
        BINARIES,
    );
    set_binaries(&mut attrs, &doc)?;
    let id = store.insert("terraform-versions", "tfv-", None, attrs, Map::new());
    created(store.find("terraform-versions", &id)?.render())
}

pub(super) async fn show_engine(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("terraform-versions", &id)?.render())
}

pub(super) async fn update_engine(
    ctx: Ctx,
    Path(id): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let doc = resource(&body, ENGINE_TYPES)?;
    let mut store = ctx.state.write();
    if let Some(v) = doc.opt("version") {
        if store
            .list("terraform-versions", None)
            .iter()
            .any(|e| e.str("version") == v && e.id != id)
        {
            return Err(ApiError::attribute(
                "version",
                "Version has already been taken",
            ));
        }
    }
    let e = store.find_mut("terraform-versions", &id)?;
    let mut attrs = e.attributes.clone();
    for (k, v) in &doc.attributes {
        if !BINARIES.contains(&k.as_str()) {
            attrs.insert(k.clone(), v.clone());
        }
    }
    set_binaries(&mut attrs, &doc)?;
    if attrs.get("deprecated") == Some(&Value::Bool(false)) {
        attrs.insert("deprecated-reason".into(), Value::Null);
    }
    e.attributes = attrs;
    ok(e.render())
}

pub(super) async fn delete_engine(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    if store.find("terraform-versions", &id)?.flag("official") {
        return Err(ApiError::invalid("an official version cannot be deleted"));
    }
    store.delete("terraform-versions", &id)?;
    no_content()
}
