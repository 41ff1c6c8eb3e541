//! Runs, run actions, comments, plans, applies, run events and cost estimates.
//! Spec: Endpoints > Runs.

use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::jsonapi::{accepted, created, merge, ok, paginate, resource, Body, Ctx};
use crate::shared::runs::set_status;
use crate::state::AppState;
use crate::store::{now, Store};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/runs", post(create))
        .route("/runs/{id}", get(show))
        .route("/workspaces/{id}/runs", get(list))
        .route("/organizations/{org}/runs", get(list_org))
        .route("/runs/{id}/actions/{action}", post(action))
        .route("/runs/{id}/run-events", get(list_events))
        .route("/runs/{id}/plan", get(run_plan))
        .route("/runs/{id}/apply", get(run_apply))
        .route("/runs/{id}/policy-checks", get(no_items))
        .route("/runs/{id}/task-stages", get(no_items))
        .route("/run-events/{id}", get(show_event))
        .route(
            "/runs/{id}/comments",
            get(list_comments).post(create_comment),
        )
        .route("/comments/{id}", get(show_comment))
        .route("/applies/{id}", get(show_apply))
        .route("/applies/{id}/logs", get(apply_logs))
        .route("/plans/{id}", get(show_plan))
        .route("/plans/{id}/logs", get(plan_logs))
        .route("/cost-estimates/{id}", get(show_cost_estimate))
}

/// A plan or apply with its `log-read-url`.
fn render_step(ctx: &Ctx, store: &Store, kind: &'static str, id: &str) -> ApiResult<Value> {
    let mut doc = store.find(kind, id)?.render();
    let log = store
        .objects
        .iter()
        .find(|(_, o)| o.target == id && o.kind == "logs")
        .map(|(object, _)| ctx.object_url(object));
    doc["attributes"]["log-read-url"] = json!(log);
    Ok(doc)
}

// POST /runs
async fn create(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["runs"])?;
    let ws = doc.required_rel("workspace")?;
    let mut store = ctx.state.write();
    let workspace = store.find("workspaces", &ws)?;
    let auto_apply = workspace.flag("auto-apply");
    let cv = match doc.rel("configuration-version") {
        Some(cv) => {
            store.find("configuration-versions", &cv)?;
            Some(cv)
        }
        None => store
            .list("configuration-versions", Some(&ws))
            .last()
            .map(|c| c.id.clone()),
    };
    if cv.is_none()
        && ctx
            .state
            .shapes
            .has(crate::shapes::Shape::RunsNeedConfiguration)
    {
        return Err(ApiError::invalid(
            "the workspace has no configuration version to run",
        ));
    }
    let uploaded = cv
        .as_ref()
        .and_then(|c| store.get("configuration-versions", c))
        .is_some_and(|c| c.str("status") == "uploaded");
    // A plan-only run, or one on a speculative configuration, ends `planned_and_finished`.
    let speculative = cv
        .as_ref()
        .and_then(|c| store.get("configuration-versions", c))
        .is_some_and(|c| c.flag("speculative"))
        || doc.attributes.get("plan-only").and_then(Value::as_bool) == Some(true);
    let attrs = run_attributes(&doc.attributes, auto_apply);
    let id = store.insert("runs", "run-", Some(&ws), attrs, Map::new());
    let (apply, plan, estimate) = insert_stages(&mut store, &id);
    let user = store.current_user.clone();
    let run = store.find_mut("runs", &id)?;
    run.set_rel("workspace", "workspaces", &ws);
    match &cv {
        Some(cv) => run.set_rel("configuration-version", "configuration-versions", cv),
        None => {
            run.relationships
                .insert("configuration-version".into(), json!({"data": null}));
        }
    }
    run.set_rel("apply", "applies", &apply);
    run.set_rel("plan", "plans", &plan);
    run.set_rel("cost-estimate", "cost-estimates", &estimate);
    run.set_rel("created-by", "users", &user);
    run.set_rel_ids("comments", "comments", &[]);
    run.set_rel_ids("policy-checks", "policy-checks", &[]);
    // The runner plans a run whose configuration is uploaded; without one it stays pending.
    let planned = uploaded && store.runner;
    let status = match (planned, speculative) {
        (false, _) => "pending",
        (true, false) => "planned",
        (true, true) => "planned_and_finished",
    };
    // `plan-errors-at-once`: a run the runner would plan is answered pending, and its plan
    // fails before any read (a server with no engine to download): it was discardable only in
    // that answer. A run without an uploaded configuration stays pending, as it would.
    let errors_at_once = planned && ctx.state.fault(Kind::PlanErrorsAtOnce);
    let status = if errors_at_once { "pending" } else { status };
    set_status(&mut store, &id, status)?;
    if let Some(ws) = store.get_mut("workspaces", &ws) {
        ws.set_rel("latest-run", "runs", &id);
        ws.set_rel("current-run", "runs", &id);
    }
    let answer = render_run(&ctx, &store, store.find("runs", &id)?);
    if errors_at_once {
        set_status(&mut store, &id, "errored")?;
    }
    created(answer)
}

/// A new run's attributes: the defaults, with what the request sent over them.
fn run_attributes(sent: &Map<String, Value>, auto_apply: bool) -> Map<String, Value> {
    merge(
        json!({
            "message": "Queued manually via the Terraform Enterprise API",
            "is-destroy": false, "refresh": true, "refresh-only": false, "plan-only": false,
            "save-plan": false, "auto-apply": auto_apply, "allow-empty-apply": false,
            "source": "tfe-api", "trigger-reason": "manual", "has-changes": false,
            "created-at": now(), "canceled-at": null, "target-addrs": null,
            "replace-addrs": null, "variables": [],
            "status-timestamps": {"plan-queueable-at": now()},
            "permissions": {"can-apply": true, "can-cancel": true, "can-discard": true,
                "can-force-cancel": true, "can-force-execute": true, "can-comment": true},
        }),
        sent,
        &[],
    )
}

/// A new run's apply, plan and cost estimate, made beside it.
fn insert_stages(store: &mut Store, id: &str) -> (String, String, String) {
    let apply_attrs = json!({"status": "unreached", "resource-additions": 0,
        "resource-changes": 0, "resource-destructions": 0, "status-timestamps": {}});
    let apply = store.insert(
        "applies",
        "apply-",
        Some(id),
        apply_attrs.as_object().cloned().unwrap_or_default(),
        Map::new(),
    );
    let plan = store.insert(
        "plans",
        "plan-",
        Some(id),
        apply_attrs.as_object().cloned().unwrap_or_default(),
        Map::new(),
    );
    let estimate = store.insert(
        "cost-estimates",
        "ce-",
        Some(id),
        json!({"status": "finished", "matched-resources-count": 0,
            "unmatched-resources-count": 0, "resources-count": 0,
            "prior-monthly-cost": "0.0", "proposed-monthly-cost": "0.0", "delta-monthly-cost": "0.0",
            "error-message": null, "status-timestamps": {"finished-at": now()}})
        .as_object()
        .cloned()
        .unwrap_or_default(),
        Map::new(),
    );
    (apply, plan, estimate)
}

/// A run with its `run-events` relationship: the events of its states so far (go-tfe's
/// Run.RunEvents; TestRunsRunEvents reads them on the create's answer).
fn render_run(ctx: &Ctx, store: &Store, run: &crate::store::Record) -> Value {
    let mut doc = run.render();
    if ctx.state.fault(Kind::RunWithoutEvents) {
        return doc;
    }
    let events: Vec<Value> = run_events(store, &run.id)
        .unwrap_or_default()
        .iter()
        .map(|e| json!({"type": "run-events", "id": e["id"]}))
        .collect();
    doc["relationships"]["run-events"] = json!({ "data": events });
    doc
}

async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    ok(render_run(&ctx, &store, store.find("runs", &id)?))
}

// GET /workspaces/:workspace_id/runs
async fn list(ctx: Ctx, Path(ws): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("workspaces", &ws)?;
    let statuses: Option<Vec<&str>> = ctx.q("filter[status]").map(|s| s.split(',').collect());
    let items: Vec<Value> = store
        .list("runs", Some(&ws))
        .into_iter()
        .filter(|r| {
            statuses
                .as_ref()
                .is_none_or(|s| s.contains(&r.str("status")))
        })
        .map(|r| render_run(&ctx, &store, r))
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /organizations/:organization_name/runs (TFE)
async fn list_org(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    crate::shared::org(&store, &o)?;
    let ws: Vec<String> = store
        .list("workspaces", Some(&o))
        .iter()
        .map(|w| w.id.clone())
        .collect();
    let mut runs: Vec<_> = ws
        .iter()
        .flat_map(|w| store.list("runs", Some(w)))
        .collect();
    runs.sort_by_key(|r| r.seq);
    let items: Vec<Value> = runs
        .into_iter()
        .map(|r| render_run(&ctx, &store, r))
        .collect();
    drop(store);
    paginate(&ctx, items)
}

fn add_comment(store: &mut Store, run_id: &str, text: &str) -> ApiResult<Value> {
    let user = store.current_user.clone();
    let id = store.insert(
        "comments",
        "comment-",
        Some(run_id),
        json!({"body": text, "created-at": now()})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        Map::new(),
    );
    let c = store.find_mut("comments", &id)?;
    c.set_rel("run-event", "run-events", run_id);
    c.set_rel("created-by", "users", &user);
    let doc = c.render();
    let run = store.find_mut("runs", run_id)?;
    let mut ids = run.rel_ids("comments");
    ids.push(id);
    run.set_rel_ids("comments", "comments", &ids);
    Ok(doc)
}

// POST /runs/:run_id/actions/{apply,cancel,discard,force-cancel,force-execute}
async fn action(
    ctx: Ctx,
    Path((id, name)): Path<(String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    // The optional body is plain JSON: {"comment": "..."}.
    if !body.is_null() && !body.is_object() {
        return Err(ApiError::invalid("the body must be a JSON object"));
    }
    let comment = body
        .get("comment")
        .and_then(Value::as_str)
        .map(String::from);
    let mut store = ctx.state.write();
    // Without a runner a pending run cannot be discarded, and force-execute (202) only moves
    // it to the front of a queue nothing takes from: it stays pending.
    let runner = store.runner;
    let (from, to): (&[&str], &str) = match name.as_str() {
        "apply" => (&["planned"], "applied"),
        "discard" if runner => (&["pending", "planned"], "discarded"),
        "discard" => (&["planned"], "discarded"),
        "cancel" => (&["pending", "planned"], "canceled"),
        // TFE: only after a cancel that did not stop the run, which never happens here.
        "force-cancel" if store.tfe => (&[], "force_canceled"),
        "force-cancel" => (&["pending", "planned"], "force_canceled"),
        "force-execute" => (&["pending"], "planned"),
        _ => return Err(ApiError::NotFound("route not found".into())),
    };
    let status = store.find("runs", &id)?.str("status").to_string();
    if !from.contains(&status.as_str()) && !ctx.state.fault(Kind::ActionIgnoresState) {
        return Err(ApiError::Conflict(format!(
            "the run is {status}; {name} is not allowed"
        )));
    }
    let stays_pending = !runner && name == "force-execute";
    if !stays_pending {
        set_status(&mut store, &id, to)?;
    }
    if let Some(text) = comment.filter(|c| !c.is_empty()) {
        add_comment(&mut store, &id, &text)?;
    }
    accepted()
}

// GET /runs/:id/comments
async fn list_comments(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("runs", &id)?;
    let items: Vec<Value> = store
        .list("comments", Some(&id))
        .into_iter()
        .map(|c| c.render())
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /runs/:id/comments
async fn create_comment(ctx: Ctx, Path(id): Path<String>, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["comments"])?;
    let text = doc.required("body")?;
    let mut store = ctx.state.write();
    store.find("runs", &id)?;
    created(add_comment(&mut store, &id, &text)?)
}

async fn show_comment(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("comments", &id)?.render())
}

async fn show_apply(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render_step(&ctx, &ctx.state.read(), "applies", &id)?)
}

async fn show_plan(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(render_step(&ctx, &ctx.state.read(), "plans", &id)?)
}

/// `GET /plans/:id/logs` and `/applies/:id/logs` (TFE): a redirect to the log.
fn logs_redirect(ctx: &Ctx, kind: &'static str, id: &str) -> ApiResult<Response> {
    let store = ctx.state.read();
    let doc = render_step(ctx, &store, kind, id)?;
    let Some(url) = doc["attributes"]["log-read-url"].as_str() else {
        return Err(ApiError::NotFound("the log is not there yet".into()));
    };
    let mut res = axum::http::StatusCode::TEMPORARY_REDIRECT.into_response();
    if let Ok(v) = axum::http::HeaderValue::from_str(url) {
        res.headers_mut().insert(axum::http::header::LOCATION, v);
    }
    Ok(res)
}

async fn plan_logs(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    logs_redirect(&ctx, "plans", &id)
}

async fn apply_logs(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    logs_redirect(&ctx, "applies", &id)
}

/// The status timestamps in the order a run reaches them.
const RUN_ORDER: &[&str] = &[
    "plan-queueable-at",
    "pending-at",
    "plan-queued-at",
    "planning-at",
    "planned-at",
    "planned-and-finished-at",
    "confirmed-at",
    "apply-queued-at",
    "applying-at",
    "applied-at",
];

/// A run's events, made from its status timestamps (ids stable: the run's id and the order).
fn run_events(store: &Store, run_id: &str) -> ApiResult<Vec<Value>> {
    let run = store.find("runs", run_id)?;
    let mut stamps: Vec<(String, String)> = run
        .attributes
        .get("status-timestamps")
        .and_then(Value::as_object)
        .map(|ts| {
            ts.iter()
                .map(|(k, v)| (v.as_str().unwrap_or("").to_string(), k.clone()))
                .collect()
        })
        .unwrap_or_default();
    // By time, and within one millisecond in the order a run goes through its states.
    let step = |key: &str| {
        RUN_ORDER
            .iter()
            .position(|k| *k == key)
            .unwrap_or(RUN_ORDER.len())
    };
    stamps.sort_by(|a, b| a.0.cmp(&b.0).then(step(&a.1).cmp(&step(&b.1))));
    let suffix = run_id.trim_start_matches("run-");
    Ok(stamps
        .into_iter()
        .enumerate()
        .map(|(n, (at, key))| {
            let action = key.trim_end_matches("-at").replace('-', "_");
            json!({
                "id": format!("re-{suffix}-{n}"),
                "type": "run-events",
                "attributes": {"action": action, "created-at": at, "description": null},
                "relationships": {"run": {"data": {"type": "runs", "id": run_id}}},
                "links": {"self": format!("/api/v2/run-events/re-{suffix}-{n}")},
            })
        })
        .collect())
}

// GET /runs/:id/plan and /runs/:id/apply (TFE): the run's plan or apply.
fn run_step(ctx: &Ctx, id: &str, rel: &str, kind: &'static str) -> ApiResult<Response> {
    let store = ctx.state.read();
    let step = store
        .find("runs", id)?
        .rel_id(rel)
        .map(String::from)
        .ok_or_else(|| ApiError::not_found(rel, id))?;
    ok(render_step(ctx, &store, kind, &step)?)
}

async fn run_plan(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    run_step(&ctx, &id, "plan", "plans")
}

async fn run_apply(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    run_step(&ctx, &id, "apply", "applies")
}

// GET /runs/:id/policy-checks and /runs/:id/task-stages (TFE): none here (no policy runs).
async fn no_items(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.read().find("runs", &id)?;
    paginate(&ctx, Vec::new())
}

// GET /runs/:id/run-events (TFE)
async fn list_events(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let items = run_events(&ctx.state.read(), &id)?;
    paginate(&ctx, items)
}

// GET /run-events/:id (TFE)
async fn show_event(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let Some((run, _)) = id
        .strip_prefix("re-")
        .and_then(|rest| rest.rsplit_once('-'))
    else {
        return Err(ApiError::not_found("run event", &id));
    };
    let events = run_events(&ctx.state.read(), &format!("run-{run}"))
        .map_err(|_| ApiError::not_found("run event", &id))?;
    let event = events
        .into_iter()
        .find(|e| e["id"] == id.as_str())
        .ok_or_else(|| ApiError::not_found("run event", &id))?;
    ok(event)
}

async fn show_cost_estimate(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ok(ctx.state.read().find("cost-estimates", &id)?.render())
}
