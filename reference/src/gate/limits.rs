//! The auth and limits layer: the rate limits (`rate-limit-*` faults), a load balancer's
//! moments of unavailability (`unavailable-now-and-then`), the token, the media
//! type and size of a body, and the body read whole before any handler.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::response::{IntoResponse, Response};

use super::prefix::Target;
use crate::compat::Compat;
use crate::error::{ApiError, ApiResult, JSONAPI};
use crate::faults::Kind;
use crate::paths::{is_upload_path, UPLOAD_LIMIT};
use crate::shapes::Shape;
use crate::state::AppState;

/// The `rate-limit-*` faults: a 429 for a request over the limit, before anything else.
pub(super) fn rate_limited(state: &AppState) -> Option<Response> {
    let faults = &state.faults;
    let per_second = faults.rate_limit_per_second();
    let over = faults.has(&Kind::RateLimitForever)
        || per_second.is_some_and(|n| !admitted_this_second(state, n))
        || faults
            .rate_limit_first()
            .is_some_and(|n| state.requests.fetch_add(1, Ordering::SeqCst) < n);
    over.then(|| too_many(per_second.unwrap_or(TFE_LIMIT)))
}

/// The limit TFE states (`X-RateLimit-Limit`) where the fault names none.
const TFE_LIMIT: u64 = 30;

/// The `unavailable-now-and-then` shape: every [`UNAVAILABLE_EVERY`]th request is answered
/// by a load balancer's 503 (plain text, `Retry-After: 1`) before anything else.
pub(super) fn unavailable_now_and_then(state: &AppState) -> Option<Response> {
    if !state.shapes.has(Shape::UnavailableNowAndThen) {
        return None;
    }
    let n = state.seen.fetch_add(1, Ordering::SeqCst) + 1;
    n.is_multiple_of(UNAVAILABLE_EVERY).then(|| {
        let mut res = (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "503 Service Temporarily Unavailable\n",
        )
            .into_response();
        res.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        res
    })
}

/// How often the `unavailable-now-and-then` shape answers 503.
pub const UNAVAILABLE_EVERY: u64 = 40;

/// A server limiting at `n` requests per second: true when fewer than `n` requests were
/// admitted in the last second (any second, not only whole ones); a refused request counts
/// as nothing.
fn admitted_this_second(state: &AppState, n: u64) -> bool {
    let now = Instant::now();
    let mut arrivals = state.arrivals.lock().unwrap_or_else(|e| e.into_inner());
    while arrivals
        .front()
        .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(1))
    {
        arrivals.pop_front();
    }
    if arrivals.len() as u64 >= n {
        return false;
    }
    arrivals.push_back(now);
    true
}

/// A 429 as TFE answers it: `Retry-After`, and `X-RateLimit-Limit` (no window stated)
/// with `X-RateLimit-Reset`.
fn too_many(limit: u64) -> Response {
    let mut res = ApiError::RateLimited.into_response();
    let h = res.headers_mut();
    h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    h.insert("x-ratelimit-reset", HeaderValue::from_static("0.2"));
    h.insert("x-ratelimit-limit", HeaderValue::from(limit));
    res
}

/// The token: 401 without a known one (but under `no-auth` without the header), 404 for the
/// administrator routes without the admin token. Discovery, ip-ranges and the object store's
/// reads and writes need none.
pub(super) fn authenticated(state: &AppState, at: &Target, req: &Request) -> ApiResult<()> {
    if is_public(&at.method, &at.bare) {
        return Ok(());
    }
    let given = req.headers().get(header::AUTHORIZATION);
    let token = given
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    let is_admin = match token {
        _ if given.is_none() && state.faults.has(&Kind::NoAuth) => true,
        Some(t) if *t == *state.admin_token => true,
        Some(t) if *t == *state.token || state.read().tokens.contains_key(t) => false,
        _ => return Err(ApiError::Unauthorized),
    };
    if !is_admin && (at.bare == "/admin" || at.bare.starts_with("/admin/")) {
        return Err(ApiError::NotFound("route not found".into()));
    }
    // A user's token (the configured ones) does not reach an organization that turned user
    // tokens off (`user-tokens-enabled: false`; go-tfe's TestOrganizationsUpdate "with new
    // UserTokensEnabled option": 401 unauthorized, while a team token still works).
    let user_token = token.is_some_and(|t| *t == *state.admin_token || *t == *state.token);
    if user_token {
        if let Some(org) = at
            .bare
            .strip_prefix("/organizations/")
            .and_then(|rest| rest.split('/').next())
        {
            let off = state.read().get("organizations", org).is_some_and(|o| {
                o.attributes.get("user-tokens-enabled") == Some(&serde_json::Value::Bool(false))
            });
            if off {
                return Err(ApiError::Unauthorized);
            }
        }
    }
    Ok(())
}

fn is_public(method: &Method, bare: &str) -> bool {
    bare == "/.well-known/terraform.json"
        || bare == "/meta/ip-ranges"
        || (is_upload_path(bare) && (method == Method::PUT || method == Method::GET))
}

/// What the headers say of the body: under [`Compat::Tfe`] a POST or PATCH body not said to
/// be JSON is 415 (uploads aside; a write without a body passes, the spec gives several
/// actions none); a declared length over the limit is 413 (streamed bodies hit the
/// extractor's limit).
pub(super) fn declared_body(state: &AppState, at: &Target, req: &Request) -> ApiResult<()> {
    let upload = is_upload_path(&at.bare);
    let headers = req.headers();
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0");
    if state.compat == Compat::Tfe
        && (at.method == Method::POST || at.method == Method::PATCH)
        && has_body
        && !upload
        && !json_content_type(headers)
        && !(at.bare.starts_with("/scim/") && scim_content_type(headers))
    {
        let err = ApiError::UnsupportedMediaType(
            "a write needs Content-Type: application/vnd.api+json".into(),
        );
        return Err(err);
    }
    let limit = if upload {
        UPLOAD_LIMIT
    } else {
        state.body_limit
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::TooLarge);
    }
    Ok(())
}

/// Whether a request to the SCIM protocol says its body is SCIM JSON (RFC 7644 3.1:
/// `application/scim+json`).
fn scim_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("application/scim+json")
        })
}

/// Whether a request says its body is JSON (`application/vnd.api+json` or `application/json`).
fn json_content_type(headers: &HeaderMap) -> bool {
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

/// The request with its body read whole (uploads aside); 413 over the body limit. A handler
/// that answers without reading the body would leave hyper to close the connection, and a
/// client reusing it would see "disconnected without a response".
pub(super) async fn buffered(
    state: &AppState,
    at: &Target,
    req: Request,
) -> Result<Request, Response> {
    if is_upload_path(&at.bare) {
        return Ok(req);
    }
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, state.body_limit)
        .await
        .map_err(|_| ApiError::TooLarge.into_response())?;
    Ok(Request::from_parts(parts, Body::from(bytes)))
}
