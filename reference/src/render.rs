//! What a resource looks like as JSON:API where more than its record says it: the renderers
//! the routes of several groups and the gate's `included` documents share.

use serde_json::{json, Value};

use crate::store::{Record, Store};

/// A workspace as JSON:API, with TFE's links.
pub(crate) fn render_ws(ws: &Record) -> Value {
    let mut doc = ws.render();
    let org_name = ws.owner.clone().unwrap_or_default();
    doc["links"] = json!({
        "self": format!("/api/v2/organizations/{org_name}/workspaces/{}", ws.str("name")),
        "self-html": format!("/app/{org_name}/workspaces/{}", ws.str("name")),
    });
    doc
}

/// A project with its organization relationship.
pub(crate) fn render_project(store: &Store, p: &Record) -> Value {
    let mut doc = p.render();
    let org_name = p.owner.clone().unwrap_or_default();
    doc["relationships"]["organization"] =
        json!({"data": {"type": "organizations", "id": org_name}});
    let count = store
        .list("workspaces", Some(&org_name))
        .iter()
        .filter(|w| w.rel_id("project") == Some(p.id.as_str()))
        .count();
    doc["attributes"]["workspace-count"] = json!(count);
    // The organization's default project, made before projects had execution settings.
    if p.attributes.get("default-execution-mode").is_none() {
        let mode = store
            .get("organizations", &org_name)
            .map(|o| o.str("default-execution-mode"))
            .filter(|m| !m.is_empty())
            .unwrap_or("remote");
        doc["attributes"]["default-execution-mode"] = json!(mode);
        doc["attributes"]["setting-overwrites"] =
            json!({"default-execution-mode": false, "default-agent-pool": false});
    }
    if p.relationships.get("default-agent-pool").is_none() {
        doc["relationships"]["default-agent-pool"] = json!({"data": null});
    }
    doc["attributes"]["permissions"] = json!({"can-read": true, "can-update": true,
        "can-destroy": true, "can-create-workspace": true, "can-move-workspace": true});
    doc
}
