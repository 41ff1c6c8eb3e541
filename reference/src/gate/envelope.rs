//! The fault injection layer, on the answer side: every answer (the routes' and the other
//! layers') gets its error made a JSON:API document, then the faults that rewrite its status,
//! envelope, body or headers.

use std::convert::Infallible;
use std::sync::OnceLock;

use axum::body::{Body, Bytes};
use axum::http::response::Parts;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde_json::{json, Map, Value};

use super::answer::{content_type, is_json, REWRITE_LIMIT};
use crate::error::{ApiError, JSONAPI};
use crate::faults::{Faults, Kind};
use crate::state::AppState;

/// 1 GiB, the size of the `huge-body` answer.
const HUGE: u64 = 1 << 30;

fn is_run_action(method: &Method, bare: &str) -> bool {
    let s: Vec<&str> = bare.split('/').filter(|s| !s.is_empty()).collect();
    method == Method::POST && s.len() == 4 && s[0] == "runs" && s[2] == "actions"
}

/// Normalizes errors and applies the answer-rewriting faults.
pub(super) async fn apply(
    state: &AppState,
    method: &Method,
    bare: &str,
    res: Response,
) -> Response {
    let faults = &state.faults;
    let mut res = jsonapi_error(res);
    let route = |kind| faults.route(kind, method.as_str(), bare);
    if route(Kind::HugeBody) {
        return huge_body();
    }
    if route(Kind::NonJson) {
        let html = "<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>We'll be back soon</h1></body></html>";
        let mut res = (res.status(), html).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        return res;
    }
    if res.status() == StatusCode::CREATED && state.shapes.created_200(method, bare) {
        *res.status_mut() = StatusCode::OK;
    }
    if faults.has(&Kind::WrongStatus) {
        let s = res.status();
        if s == StatusCode::CREATED
            || (method == Method::DELETE && s == StatusCode::NO_CONTENT)
            || (is_run_action(method, bare) && s == StatusCode::ACCEPTED)
        {
            *res.status_mut() = StatusCode::OK;
        }
    }
    let res = router_text_404(state, res).await;
    let res = gone_410(state, method, res).await;
    let res = unknown_id_500(state, method, res).await;
    let res = show_any_id(state, method, bare, res).await;
    let res = rewrite_body(state, method, bare, res).await;
    after_body(state, method, bare, res)
}

/// Axum's own rejections (404, 405, 400, 413, 415) are plain text: made JSON:API.
fn jsonapi_error(res: Response) -> Response {
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&content_type(&res)) {
        return res;
    }
    let err = match status {
        StatusCode::NOT_FOUND => ApiError::NotFound("route not found".into()),
        StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge,
        StatusCode::UNAUTHORIZED => ApiError::Unauthorized,
        StatusCode::UNPROCESSABLE_ENTITY => ApiError::invalid("the request is invalid"),
        s if s.is_client_error() => ApiError::BadRequest(format!("the request was refused ({s})")),
        _ => ApiError::Internal("internal error".into()),
    };
    let mut res = err.into_response();
    *res.status_mut() = status;
    res
}

/// A GET answered 404 because the resource is not there (not because the route is absent):
/// the answer taken apart, its body read, for a fault to rewrite; `Err` gives the answer back
/// untouched.
async fn resource_not_found(method: &Method, res: Response) -> Result<(Parts, Bytes), Response> {
    if *method != Method::GET
        || res.status() != StatusCode::NOT_FOUND
        || !content_type(&res).starts_with(JSONAPI)
    {
        return Err(res);
    }
    let (parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, REWRITE_LIMIT)
        .await
        .unwrap_or_default();
    let route_missing = says_route_missing(&bytes).unwrap_or(true);
    if route_missing {
        return Err(Response::from_parts(parts, Body::from(bytes)));
    }
    Ok((parts, bytes))
}

/// Whether an error document's first error says its route is missing (`None`: not one).
fn says_route_missing(bytes: &[u8]) -> Option<bool> {
    let doc = serde_json::from_slice::<Value>(bytes).ok()?;
    let detail = doc.pointer("/errors/0/detail")?.as_str()?;
    Some(detail == "route not found")
}

/// `router-text-404`: a route not served answers a router's bare text, as Go's net/http
/// does; a handler's 404 (a resource not there) stays an error document.
async fn router_text_404(state: &AppState, res: Response) -> Response {
    if !state.faults.has(&Kind::RouterText404) || res.status() != StatusCode::NOT_FOUND {
        return res;
    }
    let (parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, REWRITE_LIMIT)
        .await
        .unwrap_or_default();
    let route_missing = says_route_missing(&bytes).unwrap_or(false);
    if !route_missing {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let mut res = (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}

/// `gone-410`: 410 for a GET of a resource that is not there (an unknown route stays 404).
async fn gone_410(state: &AppState, method: &Method, res: Response) -> Response {
    if !state.faults.has(&Kind::Gone410) {
        return res;
    }
    match resource_not_found(method, res).await {
        Ok((mut parts, bytes)) => {
            parts.status = StatusCode::GONE;
            Response::from_parts(parts, Body::from(bytes))
        }
        Err(res) => res,
    }
}

/// `unknown-id-500`: 500 for a GET of a resource that is not there (an unknown route stays
/// 404), as a server whose id parser raises answers.
async fn unknown_id_500(state: &AppState, method: &Method, res: Response) -> Response {
    if !state.faults.has(&Kind::UnknownId500) {
        return res;
    }
    match resource_not_found(method, res).await {
        Ok(_) => ApiError::Internal("invalid id".into()).into_response(),
        Err(res) => res,
    }
}

/// `show-any-id`: a GET of a resource that is not there (an unknown route stays 404) answers
/// 200 with a document whose id is the path's last segment.
async fn show_any_id(state: &AppState, method: &Method, bare: &str, res: Response) -> Response {
    if !state.faults.has(&Kind::ShowAnyId) {
        return res;
    }
    let (mut parts, _) = match resource_not_found(method, res).await {
        Ok(found) => found,
        Err(res) => return res,
    };
    let mut segments = bare.trim_end_matches('/').rsplit('/');
    let id = segments.next().unwrap_or_default();
    let kind = segments.next().unwrap_or_default();
    parts.status = StatusCode::OK;
    parts.headers.remove(header::CONTENT_LENGTH);
    let doc = json!({"data": {"id": id, "type": kind, "attributes": {}}});
    Response::from_parts(parts, Body::from(doc.to_string()))
}

/// The faults that rewrite a JSON body: `errors-not-jsonapi` (an error as text),
/// `filter-optional` (an empty list for a missing required filter) and the envelope faults
/// ([`rewrite`]).
async fn rewrite_body(state: &AppState, method: &Method, bare: &str, res: Response) -> Response {
    let faults = &state.faults;
    let status = res.status();
    let rewrites = is_json(&content_type(&res))
        && (faults.has(&Kind::ListAsObject)
            || faults.has(&Kind::NumericId)
            || faults.has(&Kind::MissingId)
            || faults.has(&Kind::CreateWithoutId)
            || faults.has(&Kind::NoData)
            || faults.has(&Kind::ShowWrongId)
            || faults.has(&Kind::ShowForgetsAttributes)
            || faults.has(&Kind::ShowRelinks)
            || faults.has(&Kind::ShowAltersAttributes)
            || faults.has(&Kind::DropsPermissions)
            || faults.has(&Kind::NoDefaultProject)
            || (faults.has(&Kind::WrongDefaults) && status == StatusCode::CREATED)
            || (faults.has(&Kind::CreateAnswerFlipped) && status == StatusCode::CREATED)
            || faults.has(&Kind::ModuleStatusStuck)
            || faults.has(&Kind::DeliveriesForgotten)
            || faults.has(&Kind::NoPaginationMeta)
            || faults.has(&Kind::DeprecatedActsElsewhere)
            || faults.has(&Kind::UpdateWrongId)
            || faults.has(&Kind::RegistryHidesModules)
            || (faults.has(&Kind::FilterOptional) && status == StatusCode::BAD_REQUEST)
            || (faults.has(&Kind::ErrorsNotJsonapi) && status.as_u16() >= 400));
    if !rewrites {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, REWRITE_LIMIT)
        .await
        .unwrap_or_default();
    let detail = |doc: &Value| {
        doc.pointer("/errors/0/detail")
            .and_then(Value::as_str)
            .map(String::from)
    };
    let new_body = match serde_json::from_slice::<Value>(&bytes) {
        Ok(doc) if status.as_u16() >= 400 && faults.has(&Kind::ErrorsNotJsonapi) => {
            let detail = detail(&doc).unwrap_or_else(|| "the request failed".into());
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            Body::from(format!("Error {}: {detail}.", status.as_u16()))
        }
        Ok(doc)
            if status == StatusCode::BAD_REQUEST
                && faults.has(&Kind::FilterOptional)
                && *method == Method::GET
                && detail(&doc).is_some_and(|d| d.starts_with("the filter ")) =>
        {
            parts.status = StatusCode::OK;
            let list = json!({"data": [], "links": {}, "meta": {"pagination": {
                "current-page": 1, "page-size": 20, "prev-page": null, "next-page": null,
                "total-pages": 1, "total-count": 0}}});
            Body::from(list.to_string())
        }
        Ok(mut doc) => {
            rewrite(state, method, bare, status, &mut doc);
            Body::from(doc.to_string())
        }
        Err(_) => Body::from(bytes),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, new_body)
}

/// Header faults, applied last.
fn after_body(state: &AppState, method: &Method, bare: &str, mut res: Response) -> Response {
    let faults = &state.faults;
    if faults.has(&Kind::RegistryDownloadNoHeader) {
        res.headers_mut().remove("x-terraform-get");
    }
    let ct = content_type(&res);
    if faults.has(&Kind::PlainJsonMediaType) && ct.starts_with(JSONAPI) {
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    if faults.route(Kind::WrongContentType, method.as_str(), bare) {
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    res
}

/// The envelope faults, on a parsed JSON answer.
fn rewrite(state: &AppState, method: &Method, bare: &str, status: StatusCode, doc: &mut Value) {
    let faults = &state.faults;
    let Some(obj) = doc.as_object_mut() else {
        return;
    };
    if faults.has(&Kind::RegistryHidesModules)
        && *method == Method::GET
        && bare.starts_with("/api/registry/")
    {
        if let Some(Value::Array(modules)) = obj.get_mut("modules") {
            modules.clear();
        }
    }
    let is_list = obj.get("data").is_some_and(Value::is_array);
    list_faults(faults, obj, is_list);
    created_faults(faults, obj, status);
    resource_faults(faults, obj);
    if !is_list {
        if let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut) {
            single_faults(faults, method, bare, status, data);
        }
    }
    if faults.has(&Kind::NoData) {
        if let Some(data) = obj.remove("data") {
            obj.insert("result".into(), data);
        }
    }
}

/// The faults on a list's envelope: no pagination meta, the list as its first item.
fn list_faults(faults: &Faults, obj: &mut Map<String, Value>, is_list: bool) {
    if is_list && faults.has(&Kind::NoPaginationMeta) {
        if let Some(meta) = obj.get_mut("meta").and_then(Value::as_object_mut) {
            meta.remove("pagination");
        }
    }
    if is_list && faults.has(&Kind::ListAsObject) {
        let first = obj
            .get("data")
            .and_then(|d| d.get(0))
            .cloned()
            .unwrap_or_else(|| json!({}));
        obj.insert("data".into(), first);
    }
}

/// The faults on a 201 answer's attributes: booleans turned over.
fn created_faults(faults: &Faults, obj: &mut Map<String, Value>, status: StatusCode) {
    if faults.has(&Kind::WrongDefaults) && status == StatusCode::CREATED {
        if let Some(attributes) = obj
            .get_mut("data")
            .and_then(|d| d.get_mut("attributes"))
            .and_then(Value::as_object_mut)
        {
            for name in ["refresh", "global", "organization-scoped"] {
                if let Some(Value::Bool(flag)) = attributes.get_mut(name) {
                    *flag = !*flag;
                }
            }
        }
    }
    if faults.has(&Kind::CreateAnswerFlipped) && status == StatusCode::CREATED {
        let attributes = obj
            .get_mut("data")
            .and_then(|d| d.get_mut("attributes"))
            .and_then(Value::as_object_mut);
        for flag in attributes.into_iter().flat_map(|a| a.values_mut()) {
            if let Value::Bool(flag) = flag {
                *flag = !*flag;
            }
        }
    }
}

/// The faults on every resource of an answer's `data` (the list's items, or the one resource).
fn resource_faults(faults: &Faults, obj: &mut Map<String, Value>) {
    if faults.has(&Kind::ModuleStatusStuck) {
        for item in resources_mut(obj) {
            if let Some(Value::Array(statuses)) = item.pointer_mut("/attributes/version-statuses") {
                for status in statuses.iter_mut().filter_map(Value::as_object_mut) {
                    status.insert("status".into(), json!("pending"));
                }
            }
        }
    }
    if faults.has(&Kind::DeliveriesForgotten) {
        for item in resources_mut(obj) {
            if let Some(Value::Array(deliveries)) =
                item.pointer_mut("/attributes/delivery-responses")
            {
                deliveries.clear();
            }
        }
    }
    if faults.has(&Kind::NoDefaultProject) {
        for item in resources_mut(obj) {
            if item.get("type").and_then(Value::as_str) == Some("organizations") {
                if let Some(relationships) =
                    item.get_mut("relationships").and_then(Value::as_object_mut)
                {
                    relationships.remove("default-project");
                }
            }
        }
    }
    if faults.has(&Kind::DropsPermissions) {
        for item in resources_mut(obj) {
            if let Some(attributes) = item.get_mut("attributes").and_then(Value::as_object_mut) {
                attributes.remove("permissions");
            }
        }
    }
}

/// The faults on a single resource's `data`: its id, attributes and relationships.
fn single_faults(
    faults: &Faults,
    method: &Method,
    bare: &str,
    status: StatusCode,
    data: &mut Map<String, Value>,
) {
    let shows_elsewhere = faults.has(&Kind::DeprecatedActsElsewhere)
        && *method == Method::GET
        && bare.starts_with("/registry-modules/show/");
    if (faults.has(&Kind::ShowWrongId) && *method == Method::GET)
        || (faults.has(&Kind::UpdateWrongId) && *method == Method::PATCH)
        || shows_elsewhere
    {
        if let Some(Value::String(id)) = data.get_mut("id") {
            let last = id.pop();
            id.push(if last == Some('X') { 'Y' } else { 'X' });
        }
    }
    if faults.has(&Kind::ShowAltersAttributes) && *method == Method::GET {
        if let Some(attributes) = data.get_mut("attributes").and_then(Value::as_object_mut) {
            for (name, value) in attributes.iter_mut() {
                if let (false, Value::String(text)) = (name == "status", value) {
                    text.push_str("-altered");
                }
            }
        }
    }
    if faults.has(&Kind::ShowRelinks) && *method == Method::GET {
        let to_one = data
            .get_mut("relationships")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|r| r.values_mut())
            .filter_map(|r| r.get_mut("data").and_then(|d| d.get_mut("id")));
        for id in to_one {
            if let Value::String(id) = id {
                id.push_str("-elsewhere");
            }
        }
    }
    if faults.has(&Kind::ShowForgetsAttributes) && *method == Method::GET {
        if let Some(attributes) = data.get_mut("attributes").and_then(Value::as_object_mut) {
            attributes.retain(|name, value| name == "status" || !value.is_string());
        }
    }
    if shows_elsewhere {
        if let Some(Value::String(name)) =
            data.get_mut("attributes").and_then(|a| a.get_mut("name"))
        {
            name.push_str("-elsewhere");
        }
    }
    if faults.has(&Kind::NumericId) && data.contains_key("id") {
        let n: u64 = data
            .get("id")
            .and_then(Value::as_str)
            .map(|s| s.bytes().map(u64::from).sum())
            .unwrap_or(1);
        data.insert("id".into(), json!(n));
    }
    if faults.has(&Kind::MissingId)
        || (faults.has(&Kind::CreateWithoutId) && status == StatusCode::CREATED)
    {
        data.remove("id");
    }
}

/// A 200 answer of 1 GiB of JSON-looking bytes, streamed from one shared chunk.
fn huge_body() -> Response {
    static CHUNK: OnceLock<Bytes> = OnceLock::new();
    const CHUNK_SIZE: usize = 64 * 1024;
    let chunk = CHUNK
        .get_or_init(|| {
            let item = br#"{"id":"filler","type":"filler"},"#;
            let mut v: Vec<u8> = item.iter().copied().cycle().take(CHUNK_SIZE).collect();
            v.truncate(CHUNK_SIZE);
            Bytes::from(v)
        })
        .clone();
    let head = Bytes::from_static(b"{\"data\":[");
    let n_chunks = (HUGE as usize - head.len()) / CHUNK_SIZE;
    let tail_len = HUGE as usize - head.len() - n_chunks * CHUNK_SIZE;
    let tail = Bytes::from(vec![b' '; tail_len]);
    let parts = stream::iter(
        std::iter::once(head)
            .chain(std::iter::repeat_n(chunk, n_chunks))
            .chain(std::iter::once(tail))
            .map(Ok::<Bytes, Infallible>),
    );
    let mut res = Response::new(Body::from_stream(parts));
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSONAPI));
    res.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(HUGE));
    res
}

/// The resources of a document's `data`: the list's items, or the one resource.
fn resources_mut(doc: &mut serde_json::Map<String, Value>) -> Vec<&mut Value> {
    match doc.get_mut("data") {
        Some(Value::Array(items)) => items.iter_mut().collect(),
        Some(item) => vec![item],
        None => Vec::new(),
    }
}
