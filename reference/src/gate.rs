//! The gate: one middleware around the router. It strips the `/api/v2` prefix, checks the
//! token and the body size, injects the faults that act on transport, routing and envelopes,
//! and turns any non-JSON error answer into a JSON:API error.

use std::convert::Infallible;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde_json::{json, Value};

use crate::error::{ApiError, JSONAPI};
use crate::faults::{bare_path, Kind, RouteSpec};
use crate::jsonapi::{AppState, OriginalPath};
use crate::shapes::{self, Shape};
use crate::Compat;

/// The body limit of `PUT /v1/object/...` (tarballs).
pub(crate) const UPLOAD_LIMIT: usize = 64 * 1024 * 1024;

/// The largest answer the gate reads back to rewrite it.
const REWRITE_LIMIT: usize = 256 * 1024 * 1024;

/// 1 GiB, the size of the `huge-body` answer.
const HUGE: u64 = 1 << 30;

/// The object store (`{upload_url}`), in either form.
pub(crate) fn is_upload_path(bare: &str) -> bool {
    bare.starts_with("/v1/object/") || bare.starts_with("/uploads/")
}

/// A bare (unprefixed) API path: not the registry read protocol, discovery or the object
/// store, which have no `/api/v2` form. The `no-bare` fault and the `api-v2-only` shape drop
/// these.
pub(crate) fn is_bare_api(bare: &str, prefixed: bool) -> bool {
    let registry_protocol = bare.starts_with("/api/registry/") || bare.starts_with("/.well-known/");
    !prefixed && !registry_protocol && !is_upload_path(bare)
}

/// The decoded `include` query parameter, when there is one.
fn include_param(query: &str) -> Option<String> {
    url_decode_pairs(query)
        .into_iter()
        .find(|(k, _)| k == "include")
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

/// `application/x-www-form-urlencoded` pairs.
fn url_decode_pairs(query: &str) -> Vec<(String, String)> {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(
        &format!("/?{query}").parse::<Uri>().unwrap_or_default(),
    )
    .map(|q| q.0)
    .unwrap_or_default()
}

/// Whether a request says its body is JSON (`application/vnd.api+json` or `application/json`).
fn json_content_type(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|t| t == JSONAPI || t == "application/json")
}

fn is_public(method: &Method, bare: &str) -> bool {
    bare == "/.well-known/terraform.json"
        || bare == "/meta/ip-ranges"
        || (is_upload_path(bare) && (method == Method::PUT || method == Method::GET))
}

fn segments(bare: &str) -> Vec<&str> {
    bare.split('/').filter(|s| !s.is_empty()).collect()
}

fn is_deprecated_registry(bare: &str) -> bool {
    bare == "/registry-modules" || bare.starts_with("/registry-modules/")
}

fn is_run_action(method: &Method, bare: &str) -> bool {
    let s = segments(bare);
    method == Method::POST && s.len() == 4 && s[0] == "runs" && s[2] == "actions"
}

fn pattern(method: &Method, bare: &str, route: &str) -> bool {
    RouteSpec::matches_text(route, method.as_str(), bare)
}

/// The middleware.
pub(crate) async fn gate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if state.compat == Compat::Tfe {
        // TFE's router ignores a trailing slash (`/vars/` is `/vars`).
        let path = req.uri().path();
        if path.len() > 1 && path.ends_with('/') {
            let trimmed = path.trim_end_matches('/');
            let q = req
                .uri()
                .query()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            if let Ok(uri) =
                format!("{}{q}", if trimmed.is_empty() { "/" } else { trimmed }).parse::<Uri>()
            {
                *req.uri_mut() = uri;
            }
        }
    }
    let method = req.method().clone();
    let original = req.uri().path().to_string();
    let (bare, prefixed) = bare_path(&original);
    let faults = state.faults.clone();

    // Transport faults that answer before anything else.
    if faults.has(&Kind::RateLimitForever) {
        return rate_limited();
    }
    if let Some(n) = faults.rate_limit_per_second() {
        if !admitted_this_second(&state, n) {
            return rate_limited();
        }
    }
    if let Some(n) = faults.rate_limit_first() {
        if state.requests.fetch_add(1, Ordering::SeqCst) < n {
            return rate_limited();
        }
    }

    // Routing faults, and the routes the shapes take away.
    let dropped = (faults.has(&Kind::NoApiV2) && prefixed)
        || (faults.has(&Kind::NoBare) && is_bare_api(&bare, prefixed))
        || state.shapes.refuses(&method, &bare, prefixed)
        || faults.route(
            |k| match k {
                Kind::DropRoute(r) => Some(r),
                _ => None,
            },
            method.as_str(),
            &bare,
        )
        || (faults.has(&Kind::NoDeprecatedRegistry) && is_deprecated_registry(&bare))
        || (faults.has(&Kind::NoAgentPoolSingular)
            && pattern(
                &method,
                &bare,
                "POST /organizations/:organization_name/agent-pool",
            ));
    if dropped {
        return finish(
            &state,
            &method,
            &bare,
            ApiError::NotFound("route not found".into()).into_response(),
        )
        .await;
    }

    let route_fault =
        |pick: fn(&Kind) -> Option<&RouteSpec>| faults.route(pick, method.as_str(), &bare);
    if route_fault(|k| match k {
        Kind::ServerError(r) => Some(r),
        _ => None,
    }) {
        let res = ApiError::Internal("injected server error".into()).into_response();
        return finish(&state, &method, &bare, res).await;
    }
    if route_fault(|k| match k {
        Kind::Slow(r) => Some(r),
        _ => None,
    }) {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    if route_fault(|k| match k {
        Kind::Reset(r) => Some(r),
        _ => None,
    }) {
        let failing =
            stream::once(async { Err::<Bytes, io::Error>(io::Error::other("injected reset")) });
        return Response::new(Body::from_stream(failing));
    }

    if faults.has(&Kind::PageParamsRefused) {
        let spec_names = req.uri().query().unwrap_or("").split('&').any(|pair| {
            let key = pair.split('=').next().unwrap_or("");
            key == "page" || key == "page_size"
        });
        if spec_names {
            let res =
                ApiError::BadRequest("use page[number] and page[size]".into()).into_response();
            return finish(&state, &method, &bare, res).await;
        }
    }

    // Authentication.
    if !is_public(&method, &bare) {
        let token = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(|t| t.trim().to_string());
        let no_header = req.headers().get(header::AUTHORIZATION).is_none();
        let is_admin = match &token {
            _ if no_header && faults.has(&Kind::NoAuth) => true,
            None => {
                return finish(
                    &state,
                    &method,
                    &bare,
                    ApiError::Unauthorized.into_response(),
                )
                .await
            }
            Some(t) if *t == *state.admin_token => true,
            Some(t) if *t == *state.token || state.read().tokens.contains_key(t) => false,
            Some(_) => {
                return finish(
                    &state,
                    &method,
                    &bare,
                    ApiError::Unauthorized.into_response(),
                )
                .await
            }
        };
        if !is_admin && (bare == "/admin" || bare.starts_with("/admin/")) {
            let res = ApiError::NotFound("route not found".into()).into_response();
            return finish(&state, &method, &bare, res).await;
        }
    }

    // TFE refuses a write whose body is not said to be JSON (415), uploads aside. A write
    // without a body passes: the spec gives several actions no body at all.
    let has_body = req.headers().contains_key(header::TRANSFER_ENCODING)
        || req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0");
    if state.compat == Compat::Tfe
        && (method == Method::POST || method == Method::PATCH)
        && has_body
        && !is_upload_path(&bare)
        && !json_content_type(req.headers())
    {
        let res = ApiError::UnsupportedMediaType(
            "a write needs Content-Type: application/vnd.api+json".into(),
        )
        .into_response();
        return finish(&state, &method, &bare, res).await;
    }

    // Body size, when the length is known up front (streamed bodies hit the extractor limit).
    let limit = if is_upload_path(&bare) {
        UPLOAD_LIMIT
    } else {
        state.body_limit
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return finish(&state, &method, &bare, ApiError::TooLarge.into_response()).await;
    }

    let is_object_put = method == Method::PUT && is_upload_path(&bare);
    if is_object_put && faults.has(&Kind::UploadRefused) {
        let res = ApiError::Forbidden("uploads are refused".into()).into_response();
        return finish(&state, &method, &bare, res).await;
    }

    // Behaviour faults that answer as if they acted but keep the store as it was.
    let deprecated_write = is_deprecated_registry(&bare) && method == Method::POST;
    let archive = pattern(
        &method,
        &bare,
        "POST /configuration-versions/:id/actions/archive",
    );
    let restore = (faults.has(&Kind::UpdateNotPersisted) && method == Method::PATCH)
        || (faults.has(&Kind::DeleteNoop) && method == Method::DELETE)
        || (faults.has(&Kind::ForceCancelNoop)
            && pattern(&method, &bare, "POST /admin/runs/:id/actions/force-cancel"))
        || (faults.has(&Kind::SuspendNoop)
            && pattern(&method, &bare, "POST /admin/users/:id/actions/suspend"))
        || (faults.has(&Kind::ArchiveNoop) && archive)
        || (faults.has(&Kind::UploadNotApplied) && is_object_put)
        || (faults.has(&Kind::DeprecatedActsElsewhere) && deprecated_write);
    // A request that restores the store runs alone: a concurrent request's change must not
    // be undone with it (the fault breaks one behaviour, not the others).
    let _exclusive = if faults.restores() {
        Some(if restore {
            Exclusive::Write(state.exclusive.clone().write_owned().await)
        } else {
            Exclusive::Read(state.exclusive.clone().read_owned().await)
        })
    } else {
        None
    };
    let snapshot = restore.then(|| state.read().clone());

    if prefixed {
        let rest = req.uri().path_and_query().map(|pq| {
            let q = pq.query().map(|q| format!("?{q}")).unwrap_or_default();
            format!("{bare}{q}")
        });
        if let Some(Ok(uri)) = rest.map(|r| r.parse::<Uri>()) {
            *req.uri_mut() = uri;
        }
    } else if bare != original {
        // `/api/meta/...` forms.
        let q = req
            .uri()
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        if let Ok(uri) = format!("{bare}{q}").parse::<Uri>() {
            *req.uri_mut() = uri;
        }
    }
    req.extensions_mut().insert(OriginalPath(original));
    if !is_upload_path(&bare) {
        // The whole body is read before any handler: one that answers without reading it
        // leaves hyper to close the connection, and a client reusing it sees "disconnected
        // without a response".
        req = match buffered(&state, req).await {
            Ok(req) => req,
            Err(res) => return finish(&state, &method, &bare, res).await,
        };
    }
    if state.shapes.has(Shape::NumericIds) && !is_upload_path(&bare) {
        req = match body_ids_to_strings(&state, req).await {
            Ok(req) => req,
            Err(res) => return finish(&state, &method, &bare, res).await,
        };
    }

    let include = (method == Method::GET)
        .then(|| include_param(req.uri().query().unwrap_or("")))
        .flatten();
    let mut res = next.run(req).await;
    if let Some(include) = include.filter(|_| res.status().is_success()) {
        let store = state.clone();
        res = rewrite_jsonapi(res, move |doc| {
            crate::include::add_included(&store.read(), doc, &include)
        })
        .await;
    }
    if !prefixed && method == Method::GET && faults.has(&Kind::BareSnakeCase) {
        res = snake_case_attributes(res).await;
    }

    if let Some(snapshot) = snapshot {
        *state.write() = snapshot;
        if res.status().is_success() || faults.has(&Kind::ArchiveNoop) && archive {
            if method == Method::DELETE {
                res = StatusCode::NO_CONTENT.into_response();
            } else if archive {
                res = StatusCode::ACCEPTED.into_response();
            } else if is_object_put {
                res = StatusCode::OK.into_response();
            }
        }
    }
    finish(&state, &method, &bare, res).await
}

/// Guards of [`AppState::exclusive`], held until the answer is made.
enum Exclusive {
    Read(#[allow(dead_code)] tokio::sync::OwnedRwLockReadGuard<()>),
    Write(#[allow(dead_code)] tokio::sync::OwnedRwLockWriteGuard<()>),
}

/// `bare-snake-case`: every attribute name of a JSON:API answer in snake_case.
async fn snake_case_attributes(res: Response) -> Response {
    rewrite_jsonapi(res, |doc| {
        let snake = |item: &mut Value| {
            if let Some(attrs) = item.get_mut("attributes").and_then(Value::as_object_mut) {
                let renamed: serde_json::Map<String, Value> = std::mem::take(attrs)
                    .into_iter()
                    .map(|(k, v)| (k.replace('-', "_"), v))
                    .collect();
                *attrs = renamed;
            }
        };
        match doc.get_mut("data") {
            Some(Value::Array(items)) => items.iter_mut().for_each(snake),
            Some(item) => snake(item),
            None => {}
        }
    })
    .await
}

/// Rewrites the document of a JSON:API answer (one no larger than [`REWRITE_LIMIT`]); any
/// other answer passes unchanged.
async fn rewrite_jsonapi(res: Response, rewrite: impl FnOnce(&mut Value)) -> Response {
    let declared = res
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if !content_type(&res).starts_with(JSONAPI)
        || declared.is_some_and(|n| n > REWRITE_LIMIT as u64)
    {
        return res;
    }
    let (parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, REWRITE_LIMIT)
        .await
        .unwrap_or_default();
    let Ok(mut doc) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    rewrite(&mut doc);
    let mut res = Response::from_parts(parts, Body::from(doc.to_string()));
    res.headers_mut().remove(header::CONTENT_LENGTH);
    res
}

/// A server limiting at `n` requests per second: true when fewer than `n` requests were
/// admitted in the last second (any second, not only whole ones); a refused request counts
/// as nothing.
fn admitted_this_second(state: &AppState, n: u64) -> bool {
    let now = std::time::Instant::now();
    let mut arrivals = state.arrivals.lock().unwrap_or_else(|e| e.into_inner());
    while arrivals
        .front()
        .is_some_and(|t| now.duration_since(*t) >= std::time::Duration::from_secs(1))
    {
        arrivals.pop_front();
    }
    if arrivals.len() as u64 >= n {
        return false;
    }
    arrivals.push_back(now);
    true
}

fn rate_limited() -> Response {
    let mut res = ApiError::RateLimited.into_response();
    let h = res.headers_mut();
    h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    h.insert("x-ratelimit-reset", HeaderValue::from_static("0.2"));
    h.insert("x-ratelimit-limit", HeaderValue::from_static("30"));
    res
}

fn content_type(res: &Response) -> String {
    res.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

fn is_json(ct: &str) -> bool {
    ct.starts_with(JSONAPI) || ct.starts_with("application/json")
}

/// The request with its body read whole; 413 when it is over the body limit.
async fn buffered(state: &AppState, req: Request) -> Result<Request, Response> {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, state.body_limit)
        .await
        .map_err(|_| ApiError::TooLarge.into_response())?;
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// `numeric-ids`: the request body with its numeric ids turned into the strings the store
/// knows ([`shapes::ids_to_strings`]); 413 when it is over the body limit.
async fn body_ids_to_strings(state: &AppState, req: Request) -> Result<Request, Response> {
    let (mut parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, state.body_limit)
        .await
        .map_err(|_| ApiError::TooLarge.into_response())?;
    let mut doc = match serde_json::from_slice::<Value>(&bytes) {
        Ok(doc) => doc,
        Err(_) => return Ok(Request::from_parts(parts, Body::from(bytes))),
    };
    if !shapes::ids_to_strings(&mut doc, &state.read()) {
        return Ok(Request::from_parts(parts, Body::from(bytes)));
    }
    let text = doc.to_string();
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(text.len()));
    Ok(Request::from_parts(parts, Body::from(text)))
}

/// Normalizes errors, applies the answer-rewriting faults, then the shapes' rendering.
async fn finish(state: &AppState, method: &Method, bare: &str, res: Response) -> Response {
    let res = finish_faults(state, method, bare, res).await;
    if state.shapes.has(Shape::NumericIds) {
        return ids_to_numbers(state, res).await;
    }
    res
}

/// `numeric-ids`: the JSON:API answer with its ids as JSON numbers
/// ([`shapes::ids_to_numbers`]). Applied after the faults: the shaped server is what they
/// break.
async fn ids_to_numbers(state: &AppState, res: Response) -> Response {
    rewrite_jsonapi(res, |doc| shapes::ids_to_numbers(doc, &mut state.write())).await
}

/// Normalizes errors and applies the answer-rewriting faults.
async fn finish_faults(
    state: &AppState,
    method: &Method,
    bare: &str,
    mut res: Response,
) -> Response {
    let faults = &state.faults;
    let status = res.status();

    // Axum's own rejections (404, 405, 400, 413, 415) are plain text: make them JSON:API.
    if (status.is_client_error() || status.is_server_error()) && !is_json(&content_type(&res)) {
        let err = match status {
            StatusCode::NOT_FOUND => ApiError::NotFound("route not found".into()),
            StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge,
            StatusCode::UNAUTHORIZED => ApiError::Unauthorized,
            StatusCode::UNPROCESSABLE_ENTITY => ApiError::invalid("the request is invalid"),
            s if s.is_client_error() => {
                ApiError::BadRequest(format!("the request was refused ({s})"))
            }
            _ => ApiError::Internal("internal error".into()),
        };
        res = err.into_response();
        *res.status_mut() = status;
    }

    let route = |pick: fn(&Kind) -> Option<&RouteSpec>| faults.route(pick, method.as_str(), bare);
    if route(|k| match k {
        Kind::HugeBody(r) => Some(r),
        _ => None,
    }) {
        return huge_body();
    }
    if route(|k| match k {
        Kind::NonJson(r) => Some(r),
        _ => None,
    }) {
        let html = "<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>We'll be back soon</h1></body></html>";
        let mut res = (res.status(), html).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        return res;
    }

    // Status faults.
    if faults.has(&Kind::WrongStatus) {
        let s = res.status();
        if s == StatusCode::CREATED
            || (method == Method::DELETE && s == StatusCode::NO_CONTENT)
            || (is_run_action(method, bare) && s == StatusCode::ACCEPTED)
        {
            *res.status_mut() = StatusCode::OK;
        }
    }

    let ct = content_type(&res);
    let rewrite_body = is_json(&ct)
        && (faults.has(&Kind::ListAsObject)
            || faults.has(&Kind::NumericId)
            || faults.has(&Kind::MissingId)
            || faults.has(&Kind::CreateWithoutId)
            || faults.has(&Kind::NoData)
            || faults.has(&Kind::ShowWrongId)
            || faults.has(&Kind::NoPaginationMeta)
            || faults.has(&Kind::DeprecatedActsElsewhere)
            || faults.has(&Kind::UpdateWrongId)
            || faults.has(&Kind::RegistryHidesModules)
            || (faults.has(&Kind::FilterOptional) && res.status() == StatusCode::BAD_REQUEST)
            || (faults.has(&Kind::ErrorsNotJsonapi) && res.status().as_u16() >= 400));
    if faults.has(&Kind::Gone410)
        && *method == Method::GET
        && res.status() == StatusCode::NOT_FOUND
        && ct.starts_with(JSONAPI)
    {
        let (mut parts, body) = res.into_parts();
        let bytes = axum::body::to_bytes(body, REWRITE_LIMIT)
            .await
            .unwrap_or_default();
        let route_missing = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|d| {
                d.pointer("/errors/0/detail")
                    .and_then(Value::as_str)
                    .map(|d| d == "route not found")
            })
            .unwrap_or(true);
        if !route_missing {
            parts.status = StatusCode::GONE;
        }
        res = Response::from_parts(parts, Body::from(bytes));
    }
    if rewrite_body {
        let (parts, body) = res.into_parts();
        let bytes = axum::body::to_bytes(body, REWRITE_LIMIT)
            .await
            .unwrap_or_default();
        let new_body = match serde_json::from_slice::<Value>(&bytes) {
            Ok(doc) if parts.status.as_u16() >= 400 && faults.has(&Kind::ErrorsNotJsonapi) => {
                let detail = doc
                    .pointer("/errors/0/detail")
                    .and_then(Value::as_str)
                    .unwrap_or("the request failed")
                    .to_string();
                let text = format!("Error {}: {detail}.", parts.status.as_u16());
                let mut res = Response::from_parts(parts, Body::from(text));
                res.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                res.headers_mut().remove(header::CONTENT_LENGTH);
                return after_body(state, method, bare, res);
            }
            Ok(doc)
                if parts.status == StatusCode::BAD_REQUEST
                    && faults.has(&Kind::FilterOptional)
                    && *method == Method::GET
                    && doc
                        .pointer("/errors/0/detail")
                        .and_then(Value::as_str)
                        .is_some_and(|d| d.starts_with("the filter ")) =>
            {
                let mut parts = parts;
                parts.status = StatusCode::OK;
                let list = json!({"data": [], "links": {}, "meta": {"pagination": {
                    "current-page": 1, "page-size": 20, "prev-page": null, "next-page": null,
                    "total-pages": 1, "total-count": 0}}});
                let mut res = Response::from_parts(parts, Body::from(list.to_string()));
                res.headers_mut().remove(header::CONTENT_LENGTH);
                return after_body(state, method, bare, res);
            }
            Ok(mut doc) => {
                rewrite(state, method, bare, parts.status, &mut doc);
                Body::from(doc.to_string())
            }
            Err(_) => Body::from(bytes),
        };
        let mut res = Response::from_parts(parts, new_body);
        res.headers_mut().remove(header::CONTENT_LENGTH);
        return after_body(state, method, bare, res);
    }
    after_body(state, method, bare, res)
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
    if faults.route(
        |k| match k {
            Kind::WrongContentType(r) => Some(r),
            _ => None,
        },
        method.as_str(),
        bare,
    ) {
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
    if !is_list {
        if let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut) {
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
    }
    if faults.has(&Kind::NoData) {
        if let Some(data) = obj.remove("data") {
            obj.insert("result".into(), data);
        }
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
