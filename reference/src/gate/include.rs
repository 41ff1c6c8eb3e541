//! `include=`: the related resources a client names, in the answer's top-level `included`
//! (JSON:API; TFE documents it per resource, e.g. teams→users, workspaces→organization,
//! current_run, runs→plan, apply). Names are relationship names, TFE's underscores or the
//! relationships' hyphens, dotted for a second step (`current_run.plan`); a name the
//! resource has no relationship for adds nothing.

use axum::extract::Request;
use axum::http::{Method, Uri};
use axum::response::Response;
use serde_json::{json, Value};

use super::answer::rewrite_jsonapi;
use crate::render::{render_project, render_ws};
use crate::state::AppState;
use crate::store::Store;

/// The `include` names of a GET, when it has any.
pub(super) fn param(req: &Request) -> Option<String> {
    if req.method() != Method::GET {
        return None;
    }
    let uri = format!("/?{}", req.uri().query().unwrap_or(""));
    let pairs = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(
        &uri.parse::<Uri>().unwrap_or_default(),
    )
    .map(|q| q.0)
    .unwrap_or_default();
    pairs
        .into_iter()
        .find(|(k, _)| k == "include")
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

/// A successful answer with `included` for the names ([`add_included`]).
pub(super) async fn decorate(state: &AppState, include: Option<String>, res: Response) -> Response {
    match include.filter(|_| res.status().is_success()) {
        Some(include) => {
            rewrite_jsonapi(res, |doc| add_included(&state.read(), doc, &include)).await
        }
        None => res,
    }
}

/// Every JSON:API type the store holds, to look a relationship's `type` up.
const KINDS: &[&str] = &[
    "agent-pools",
    "agents",
    "applies",
    "assessment-results",
    "authentication-tokens",
    "comments",
    "configuration-versions",
    "cost-estimates",
    "github-app-installations",
    "no-code-modules",
    "notification-configurations",
    "oauth-clients",
    "oauth-tokens",
    "organization-memberships",
    "organizations",
    "plans",
    "policies",
    "policy-set-versions",
    "policy-sets",
    "projects",
    "registry-module-versions",
    "registry-modules",
    "run-triggers",
    "runs",
    "state-version-outputs",
    "state-versions",
    "tags",
    "team-projects",
    "team-workspaces",
    "teams",
    "terraform-versions",
    "users",
    "vars",
    "varset-vars",
    "varsets",
    "workspaces",
];

/// One related resource as it would be shown on its own, or None when it is not stored.
fn render(store: &Store, kind: &str, id: &str) -> Option<Value> {
    if kind == "effective-tag-bindings" {
        let b = store.get("tag-bindings", id)?;
        return Some(json!({
            "id": b.id,
            "type": "effective-tag-bindings",
            "attributes": {"key": b.str("key"), "value": b.str("value")},
        }));
    }
    if kind == "workspace-outputs" {
        return store
            .get("state-version-outputs", id)
            .map(render_workspace_output);
    }
    let kind = *KINDS.iter().find(|k| **k == kind)?;
    let record = store.get(kind, id)?;
    Some(match kind {
        "workspaces" => render_ws(record),
        "projects" => render_project(store, record),
        _ => record.render(),
    })
}

/// A state version output as a workspace's `outputs` shows it (TFE `workspace-outputs`:
/// `output-type`, the value hidden when sensitive).
fn render_workspace_output(out: &crate::store::Record) -> Value {
    let sensitive = out.flag("sensitive");
    json!({
        "id": out.id,
        "type": "workspace-outputs",
        "attributes": {
            "name": out.str("name"),
            "sensitive": sensitive,
            "output-type": out.str("type"),
            "value": if sensitive { Value::Null } else { out.attributes.get("value").cloned().unwrap_or(Value::Null) },
        },
    })
}

/// The `(type, id)` pairs a resource's relationship points at.
fn targets(item: &Value, rel: &str) -> Vec<(String, String)> {
    let pair = |d: &Value| {
        Some((
            d.get("type")?.as_str()?.to_string(),
            d.get("id")?.as_str()?.to_string(),
        ))
    };
    match item
        .get("relationships")
        .and_then(|r| r.get(rel))
        .and_then(|r| r.get("data"))
    {
        Some(Value::Array(items)) => items.iter().filter_map(pair).collect(),
        Some(d @ Value::Object(_)) => pair(d).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Adds `included` to a JSON:API document for the comma-separated `include` names.
fn add_included(store: &Store, doc: &mut Value, include: &str) {
    let primary: Vec<Value> = match doc.get("data") {
        Some(Value::Array(items)) => items.clone(),
        Some(d @ Value::Object(_)) => vec![d.clone()],
        _ => return,
    };
    let mut included: Vec<Value> = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for path in include.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut current = primary.clone();
        for step in path.split('.') {
            let rel = step.replace('_', "-");
            let mut next = Vec::new();
            for item in &current {
                for (kind, id) in targets(item, &rel) {
                    let Some(rendered) = render(store, &kind, &id) else {
                        continue;
                    };
                    if !seen.contains(&(kind.clone(), id.clone())) {
                        seen.push((kind, id));
                        included.push(rendered.clone());
                    }
                    next.push(rendered);
                }
            }
            current = next;
        }
    }
    doc["included"] = json!(included);
}
