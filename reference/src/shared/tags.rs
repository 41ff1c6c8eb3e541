//! Organization tags on workspaces: found or made by name, put on a workspace, counted.

use serde_json::{json, Map, Value};

use crate::error::ApiResult;
use crate::store::{now, Record, Store};

/// Finds or creates an organization tag by name; answers its id.
pub(crate) fn tag_by_name(store: &mut Store, org_name: &str, name: &str) -> String {
    if let Some(t) = store
        .list("tags", Some(org_name))
        .iter()
        .find(|t| t.str("name") == name)
    {
        return t.id.clone();
    }
    let id = store.insert(
        "tags",
        "tag-",
        Some(org_name),
        json!({"name": name, "instance-count": 0, "created-at": now()})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        Map::new(),
    );
    // A tag belongs to its organization (go-tfe's OrganizationTag.Organization;
    // TestOrganizationTagsList "ensure org relation is properly decoded").
    if let Some(tag) = store.get_mut("tags", &id) {
        tag.set_rel("organization", "organizations", org_name);
    }
    id
}

/// Puts a tag on a workspace (idempotent) and recounts it.
pub(crate) fn tag_workspace(store: &mut Store, tag_id: &str, ws_id: &str) -> ApiResult<()> {
    let tag_name = store.find("tags", tag_id)?.str("name").to_string();
    let ws = store.find_mut("workspaces", ws_id)?;
    let mut names: Vec<String> = tag_names(ws);
    if !names.contains(&tag_name) {
        names.push(tag_name);
    }
    ws.attributes.insert("tag-names".into(), json!(names));
    let mut ids = ws.rel_ids("tags");
    if !ids.iter().any(|i| i == tag_id) {
        ids.push(tag_id.to_string());
    }
    ws.set_rel_ids("tags", "tags", &ids);
    recount(store, tag_id);
    Ok(())
}

/// The tag names of a workspace.
pub(crate) fn tag_names(ws: &Record) -> Vec<String> {
    ws.attributes
        .get("tag-names")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Recomputes a tag's `instance-count`.
pub(crate) fn recount(store: &mut Store, tag_id: &str) {
    let n = store
        .list("workspaces", None)
        .iter()
        .filter(|w| w.rel_ids("tags").iter().any(|t| t == tag_id))
        .count();
    if let Some(t) = store.get_mut("tags", tag_id) {
        t.attributes.insert("instance-count".into(), json!(n));
    }
}
