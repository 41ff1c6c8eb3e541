//! Configuration versions, state versions and the object store (`{upload_url}`).
//! Spec: Endpoints > Configuration versions, State versions; Versioning 2.

use axum::extract::{DefaultBodyLimit, Path, Request};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::jsonapi::Body as JsonBody;
use crate::jsonapi::{accepted, created, merge, ok, paginate, read_bytes, resource, Ctx};
use crate::paths::UPLOAD_LIMIT;
use crate::state::AppState;
use crate::store::{now, Store};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/workspaces/{id}/configuration-versions",
            get(list).post(create),
        )
        .route("/configuration-versions/{id}", get(show))
        .route(
            "/configuration-versions/{id}/ingress-attributes",
            get(ingress),
        )
        .route(
            "/configuration-versions/{id}/actions/archive",
            post(archive),
        )
        .route("/configuration-versions/{id}/download", get(download))
        .route(
            "/workspaces/{id}/state-versions",
            post(create_state).get(list_ws_states),
        )
        .route("/workspaces/{id}/current-state-version", get(current_state))
        .route("/state-versions", get(list_states))
        .route("/state-versions/{id}", get(show_state))
        .route("/state-versions/{id}/outputs", get(list_outputs))
        .route(
            "/workspaces/{id}/current-state-version-outputs",
            get(current_outputs),
        )
        .route("/state-version-outputs/{id}", get(show_output))
        .route(
            "/v1/object/{id}",
            get(fetch_object)
                .put(upload)
                .layer(DefaultBodyLimit::max(UPLOAD_LIMIT)),
        )
        .route(
            "/uploads/{id}",
            get(fetch_object)
                .put(upload)
                .layer(DefaultBodyLimit::max(UPLOAD_LIMIT)),
        )
}

// POST /workspaces/:workspace_id/configuration-versions
async fn create(ctx: Ctx, Path(ws): Path<String>, JsonBody(body): JsonBody) -> ApiResult<Response> {
    // TFE accepts an empty body here; a body, when sent, must be a valid document.
    let attributes = if body.is_null() {
        Map::new()
    } else {
        resource(&body, &["configuration-versions"])?.attributes
    };
    let mut store = ctx.state.write();
    store.find("workspaces", &ws)?;
    let attrs = merge(
        json!({"auto-queue-runs": true, "speculative": false, "provisional": false,
            "status": "pending", "source": "tfe-api", "error": null, "error-message": null,
            "created-at": now(), "status-timestamps": {}, "changed-files": []}),
        &attributes,
        &[],
    );
    let id = store.insert(
        "configuration-versions",
        "cv-",
        Some(&ws),
        attrs,
        Map::new(),
    );
    let object = store.new_object("configuration-versions", &id);
    // `ia-` plus the version's own suffix; an id without the `cv-` prefix (numeric-ids) gets
    // an id of its own.
    let ingress = match id.strip_prefix("cv-") {
        Some(suffix) => format!("ia-{suffix}"),
        None => store.new_id("ia-"),
    };
    let unconfigured = ctx.state.shapes.has(crate::shapes::Shape::Unconfigured);
    let cv = store.find_mut("configuration-versions", &id)?;
    match unconfigured {
        // uploaded through the API: no commit information (TFE)
        true => {
            cv.relationships
                .insert("ingress-attributes".into(), json!({"data": null}));
        }
        false => cv.set_rel("ingress-attributes", "ingress-attributes", &ingress),
    }
    let mut doc = cv.render();
    doc["attributes"]["upload-url"] = json!(ctx.object_url(&object));
    doc["links"]["download"] = json!(format!("/api/v2/configuration-versions/{id}/download"));
    if !cv.flag("provisional") {
        if let Some(w) = store.get_mut("workspaces", &ws) {
            w.set_rel(
                "current-configuration-version",
                "configuration-versions",
                &id,
            );
        }
    }
    created(doc)
}

// GET /workspaces/:workspace_id/configuration-versions
async fn list(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let items: Vec<Value> = store
        .list("configuration-versions", Some(&ws))
        .into_iter()
        .map(|c| c.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx
        .state
        .read()
        .find("configuration-versions", &id)?
        .render())
}

// GET /configuration-versions/:configuration-id/ingress-attributes
async fn ingress(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    let cv = store.find("configuration-versions", &id)?;
    let Some(ingress) = cv.rel_id("ingress-attributes") else {
        return Err(ApiError::not_found("ingress attributes", &id));
    };
    ok(json!({
        "id": ingress,
        "type": "ingress-attributes",
        "attributes": {
            "branch": "main", "clone-url": "https://example.test/reference/config.git",
            "commit-message": "Upload through the API", "commit-sha": "0000000000000000000000000000000000000000",
            "commit-url": null, "compare-url": null, "identifier": "reference/config",
            "is-pull-request": false, "on-default-branch": true, "pull-request-number": null,
            "pull-request-url": null, "pull-request-title": null, "pull-request-body": null,
            "tag": null, "sender-username": "reference-user", "sender-avatar-url": null,
            "sender-html-url": null,
        },
        "relationships": {"created-by": {"data": {"type": "users", "id": store.current_user}}},
        "links": {"self": format!("/api/v2/configuration-versions/{id}/ingress-attributes")},
    }))
}

// POST /configuration-versions/:configuration_version_id/actions/archive: only an uploaded
// version that is not its workspace's current one (409 otherwise, tfe-api-facts 2.4).
async fn archive(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let cv = store.find("configuration-versions", &id)?;
    match cv.str("status") {
        "archived" => {
            return Err(ApiError::Conflict(
                "the configuration version is already archived".into(),
            ))
        }
        "uploaded" => {}
        _ if ctx.state.fault(Kind::ArchiveAnyVersion) => {}
        _ => return Err(ApiError::Conflict("transition not allowed".into())),
    }
    // TFE keeps the workspace's current version (tfe-api-facts 2.4)
    let current = cv
        .owner
        .as_deref()
        .and_then(|ws| store.get("workspaces", ws))
        .and_then(|w| w.rel_id("current-configuration-version"));
    if current == Some(id.as_str()) && !ctx.state.fault(Kind::ArchiveAnyVersion) {
        return Err(ApiError::Conflict(
            "configuration could not be archived because it is current".into(),
        ));
    }
    let cv = store.find_mut("configuration-versions", &id)?;
    cv.attributes.insert("status".into(), json!("archived"));
    if let Some(Value::Object(ts)) = cv.attributes.get_mut("status-timestamps") {
        ts.insert("archived-at".into(), json!(now()));
    }
    accepted()
}

// GET /configuration-versions/:configuration_version_id/download
async fn download(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("configuration-versions", &id)?;
    let bytes = store
        .uploaded_bytes(&id)
        .ok_or_else(|| ApiError::NotFound("the configuration version has no upload".into()))?
        .to_vec();
    if ctx
        .state
        .fault(crate::faults::Kind::ConfigurationDownloadWrongBytes)
    {
        // half of what was uploaded: a download that answers, but not the content
        return Ok(octets(bytes[..bytes.len() / 2].to_vec()));
    }
    Ok(octets(bytes))
}

fn octets(bytes: Vec<u8>) -> Response {
    let mut res = (StatusCode::OK, bytes).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    res
}

/// Marks the owner of an object as uploaded.
fn apply_upload(store: &mut Store, kind: &str, target: &str) {
    match kind {
        "configuration-versions" => {
            if let Some(cv) = store.get_mut("configuration-versions", target) {
                cv.attributes.insert("status".into(), json!("uploaded"));
                if let Some(Value::Object(ts)) = cv.attributes.get_mut("status-timestamps") {
                    ts.insert("uploaded-at".into(), json!(now()));
                }
            }
        }
        "policy-set-versions" => crate::shared::uploads::policy_set_version_uploaded(store, target),
        "registry-module-versions" => {
            crate::shared::uploads::module_version_uploaded(store, target)
        }
        "state-versions" => finalize_state(store, target),
        _ => {}
    }
}

// PUT {upload_url}
async fn upload(ctx: Ctx, Path(object): Path<String>, req: Request) -> ApiResult<Response> {
    let bytes = read_bytes(req, &ctx.state).await?;
    if bytes.is_empty() {
        return Err(ApiError::invalid("the upload is empty"));
    }
    let mut store = ctx.state.write();
    let Some(obj) = store.objects.get_mut(&object) else {
        return Err(ApiError::not_found("object", &object));
    };
    obj.bytes = Some(bytes.to_vec());
    let (kind, target) = (obj.kind, obj.target.clone());
    apply_upload(&mut store, kind, &target);
    Ok(StatusCode::OK.into_response())
}

// GET {upload_url}: the archivist also serves what was uploaded, and the plan and apply logs
// (`?offset=&limit=` read a part of a log, as TFE's log stream is read).
async fn fetch_object(ctx: Ctx, Path(object): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    if let Some(log) = store
        .objects
        .get(&object)
        .filter(|o| o.kind == "logs")
        .and_then(|o| o.bytes.as_deref())
    {
        let number = |name: &str| ctx.q(name).and_then(|v| v.parse::<usize>().ok());
        let start = number("offset").unwrap_or(0).min(log.len());
        let end = number("limit").map_or(log.len(), |l| start.saturating_add(l).min(log.len()));
        let mut res = (StatusCode::OK, log[start..end].to_vec()).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        return Ok(res);
    }
    let (kind, bytes) = store
        .objects
        .get(&object)
        .and_then(|o| Some((o.kind, o.bytes.clone()?)))
        .ok_or_else(|| ApiError::not_found("object", &object))?;
    Ok(octets(crate::shared::archive::served_object(
        &ctx, kind, bytes,
    )))
}

/// Decodes standard base64 (padding optional); None when invalid.
fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The object kind of a state version's JSON state (the raw state's is `state-versions`).
const JSON_STATE: &str = "state-versions-json";

/// A state version whose raw state is in: `finalized`, the workspace's current state, its
/// outputs read from the state's `outputs`.
fn finalize_state(store: &mut Store, id: &str) {
    let Some(sv) = store.get_mut("state-versions", id) else {
        return;
    };
    sv.attributes.insert("status".into(), json!("finalized"));
    let ws = sv.owner.clone().unwrap_or_default();
    let state: Value = store
        .objects
        .values()
        .find(|o| o.target == id && o.kind == "state-versions")
        .and_then(|o| o.bytes.as_deref())
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Null);
    let mut ids = Vec::new();
    if let Some(outputs) = state.get("outputs").and_then(Value::as_object) {
        for (name, output) in outputs {
            let detailed = output.get("type").cloned().unwrap_or(Value::Null);
            let attrs = json!({
                "name": name,
                "sensitive": output.get("sensitive").and_then(Value::as_bool).unwrap_or(false),
                "type": simple_type(&detailed),
                "value": output.get("value").cloned().unwrap_or(Value::Null),
                "detailed-type": detailed,
            });
            let out = store.insert(
                "state-version-outputs",
                "wsout-",
                Some(id),
                attrs.as_object().cloned().unwrap_or_default(),
                Map::new(),
            );
            ids.push(out);
        }
    }
    let resources = state
        .get("resources")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if let Some(sv) = store.get_mut("state-versions", id) {
        sv.set_rel_ids("outputs", "state-version-outputs", &ids);
    }
    if let Some(w) = store.get_mut("workspaces", &ws) {
        w.set_rel("current-state-version", "state-versions", id);
        w.set_rel_ids("outputs", "workspace-outputs", &ids);
        w.attributes
            .insert("resource-count".into(), json!(resources));
    }
}

/// TFE's simple output type for a cty type (`string`, `number`, `boolean`, `array`, `object`).
fn simple_type(detailed: &Value) -> &'static str {
    match detailed {
        Value::String(t) if t == "number" => "number",
        Value::String(t) if t == "bool" => "boolean",
        Value::String(_) => "string",
        Value::Array(parts) => match parts.first().and_then(Value::as_str) {
            Some("list" | "tuple" | "set") => "array",
            _ => "object",
        },
        _ => "string",
    }
}

// POST /workspaces/:workspace_id/state-versions
async fn create_state(
    ctx: Ctx,
    Path(ws): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let doc = resource(&body, &["state-versions"])?;
    let serial = doc
        .attributes
        .get("serial")
        .and_then(Value::as_i64)
        .ok_or_else(|| ApiError::attribute("serial", "serial is required and must be a number"))?;
    doc.required("md5")?;
    let decode = |name: &str| -> ApiResult<Option<Vec<u8>>> {
        match doc.opt(name) {
            Some(s) => base64(&s)
                .map(Some)
                .ok_or_else(|| ApiError::attribute(name, format!("{name} must be base64"))),
            None => Ok(None),
        }
    };
    let state = decode("state")?;
    let json_state = decode("json-state")?;
    let mut store = ctx.state.write();
    // TFE: the caller must hold the workspace's lock (tfe-api-facts 2.5).
    if !store.find("workspaces", &ws)?.flag("locked") {
        return Err(ApiError::Conflict(
            "the workspace must be locked by the caller to create a state version".into(),
        ));
    }
    let attrs = merge(
        json!({"serial": serial, "status": "pending", "created-at": now(), "size": state.as_ref().map_or(0, Vec::len),
            "state-version": 4, "terraform-version": "1.9.5", "resources-processed": true,
            "intermediate": false, "vcs-commit-sha": null, "vcs-commit-url": null,
            "modules": {}, "providers": {}, "resources": []}),
        &doc.attributes,
        // inputs only: TFE's state version answers neither `lineage` nor `md5`
        &[
            "state",
            "json-state",
            "json-state-outputs",
            "force",
            "lineage",
            "md5",
        ],
    );
    let id = store.insert("state-versions", "sv-", Some(&ws), attrs, Map::new());
    let object = store.new_object("state-versions", &id);
    let json_object = store.new_object(JSON_STATE, &id);
    let user = store.current_user.clone();
    let sv = store.find_mut("state-versions", &id)?;
    sv.set_rel("workspace", "workspaces", &ws);
    sv.set_rel("created-by", "users", &user);
    sv.set_rel_ids("outputs", "state-version-outputs", &[]);
    if let Some(run) = doc.rel("run") {
        sv.set_rel("run", "runs", &run);
    }
    if let Some(bytes) = json_state {
        if let Some(o) = store.objects.get_mut(&json_object) {
            o.bytes = Some(bytes);
        }
    }
    if let Some(bytes) = state {
        if let Some(o) = store.objects.get_mut(&object) {
            o.bytes = Some(bytes);
        }
        finalize_state(&mut store, &id);
    }
    created(render_state(&ctx, &store, &id)?)
}

fn render_state(ctx: &Ctx, store: &Store, id: &str) -> ApiResult<Value> {
    let sv = store.find("state-versions", id)?;
    let mut doc = sv.render();
    for (object, o) in store.objects.iter().filter(|(_, o)| o.target == id) {
        let (upload, download) = if o.kind == JSON_STATE {
            (
                "hosted-json-state-upload-url",
                "hosted-json-state-download-url",
            )
        } else {
            ("hosted-state-upload-url", "hosted-state-download-url")
        };
        // An upload address is shown until its object is uploaded; the raw state's download
        // address always (404 until uploaded), the JSON state's once it is there.
        if o.bytes.is_none() {
            doc["attributes"][upload] = json!(ctx.object_url(object));
        } else {
            doc["attributes"][upload] = Value::Null;
        }
        if o.bytes.is_some() || o.kind != JSON_STATE {
            doc["attributes"][download] = json!(ctx.object_url(object));
        } else {
            doc["attributes"][download] = Value::Null;
        }
    }
    Ok(doc)
}

/// The workspace's current state version: its newest finalized one.
fn current_state_id(store: &Store, ws: &str) -> ApiResult<String> {
    store
        .list("state-versions", Some(ws))
        .iter()
        .rev()
        .find(|s| s.str("status") == "finalized")
        .map(|s| s.id.clone())
        .ok_or_else(|| ApiError::NotFound("the workspace has no state version".into()))
}

/// A state version output; in the workspace's current outputs a sensitive value is left out
/// (`null`), as TFE does (go-tfe's TestStateVersionOutputsRead "Sensitive secrets are null"),
/// while a state version's own outputs list shows it (TestStateVersionOutputs).
fn render_output(out: &crate::store::Record, in_list: bool) -> Value {
    let mut doc = out.render();
    if in_list && out.flag("sensitive") {
        doc["attributes"]["value"] = Value::Null;
    }
    doc
}

fn outputs_of(store: &Store, sv: &str, hide_sensitive: bool) -> Vec<Value> {
    store
        .list("state-version-outputs", Some(sv))
        .into_iter()
        .map(|o| render_output(o, hide_sensitive))
        .collect()
}

// GET /state-versions/:id/outputs (TFE)
async fn list_outputs(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("state-versions", &id)?;
    let items = outputs_of(&store, &id, false);
    drop(store);
    paginate(&ctx, items)
}

// GET /workspaces/:id/current-state-version-outputs (TFE)
async fn current_outputs(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let sv = current_state_id(&store, &ws)?;
    let items = outputs_of(&store, &sv, true);
    drop(store);
    paginate(&ctx, items)
}

// GET /state-version-outputs/:id (TFE): the value, sensitive or not.
async fn show_output(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render_output(
        ctx.state.read().find("state-version-outputs", &id)?,
        false,
    ))
}

// GET /workspaces/:workspace_id/current-state-version
async fn current_state(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let id = current_state_id(&store, &ws)?;
    ok(render_state(&ctx, &store, &id)?)
}

fn state_items(ctx: &Ctx, store: &Store, ws: &str) -> ApiResult<Vec<Value>> {
    store
        .list("state-versions", Some(ws))
        .iter()
        .rev()
        .filter(|s| ctx.q("filter[status]").is_none_or(|f| s.str("status") == f))
        .map(|s| render_state(ctx, store, &s.id))
        .collect()
}

// GET /state-versions?filter[workspace][name]&filter[organization][name]
async fn list_states(ctx: Ctx) -> ApiResult<Response> {
    let name = ctx.required("filter[workspace][name]")?.to_string();
    let org_name = ctx.required("filter[organization][name]")?.to_string();
    let store = ctx.state.read();
    crate::shared::org(&store, &org_name)?;
    let ws = store
        .list("workspaces", Some(&org_name))
        .iter()
        .find(|w| w.str("name") == name)
        .map(|w| w.id.clone())
        .ok_or_else(|| ApiError::not_found("workspace", &name))?;
    let mut items = state_items(&ctx, &store, &ws)?;
    // Newest first is TFE's order; the reference lists oldest first like every other list.
    items.reverse();
    drop(store);
    paginate(&ctx, items)
}

// GET /workspaces/:workspace_id/state-versions (TFE)
async fn list_ws_states(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let mut items = state_items(&ctx, &store, &ws)?;
    items.reverse();
    drop(store);
    paginate(&ctx, items)
}

async fn show_state(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(render_state(&ctx, &store, &id)?)
}
