//! JSON:API plumbing: the request context and body extractors, answer helpers and paging.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult, JSONAPI};
use crate::faults::Kind;
use crate::shapes::Shape;
use crate::state::AppState;

/// The original request path, kept by the gate before it strips `/api/v2`.
#[derive(Clone)]
pub(crate) struct OriginalPath(pub String);

/// The lists' name filters, which the `list-filters-ignored` fault takes away.
const NAME_FILTERS: &[&str] = &[
    "q",
    "q[name]",
    "search[name]",
    "search[version]",
    "filter[names]",
    "filter[version]",
];

/// Where the registry read protocol is served: its `q` is the search's, never a list filter.
const REGISTRY_PROTOCOL: &str = "/api/registry/";

/// What most handlers need: the state, the root URL, the original path and the query.
pub(crate) struct Ctx {
    pub state: AppState,
    pub root: String,
    pub path: String,
    pub query: HashMap<String, String>,
}

impl Ctx {
    /// A query parameter.
    pub fn q(&self, name: &str) -> Option<&str> {
        self.query
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A required filter, or 400.
    pub fn required(&self, name: &str) -> ApiResult<&str> {
        self.q(name)
            .ok_or_else(|| ApiError::BadRequest(format!("the filter {name} is required")))
    }

    /// The address of an upload object.
    pub fn object_url(&self, object_id: &str) -> String {
        if self.state.fault(Kind::UploadUrlWrongForm) {
            format!("{}/uploads/{object_id}", self.root)
        } else {
            format!("{}/v1/object/{object_id}", self.root)
        }
    }
}

impl FromRequestParts<AppState> for Ctx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let root = public_root(&parts.headers, state);
        let path = parts
            .extensions
            .get::<OriginalPath>()
            .map(|p| p.0.clone())
            .unwrap_or_else(|| parts.uri.path().to_string());
        let mut query = Query::<HashMap<String, String>>::try_from_uri(&parts.uri)
            .map(|q| q.0)
            .unwrap_or_default();
        if state.fault(Kind::ListFiltersIgnored) && !path.starts_with(REGISTRY_PROTOCOL) {
            query.retain(|name, _| !NAME_FILTERS.contains(&name.as_str()));
        }
        Ok(Ctx {
            state: state.clone(),
            root,
            path,
            query,
        })
    }
}

/// The scheme and host of the service as the client reached it, without a trailing slash:
/// the configured public URL when there is one; else `Forwarded` (`proto=`, `host=`, first
/// element), else `X-Forwarded-Proto` / `X-Forwarded-Host`, else the `Host` header, with the
/// scheme the service itself serves (`https` under TLS).
pub(crate) fn public_root(headers: &HeaderMap, state: &AppState) -> String {
    if let Some(url) = &state.public_url {
        return url.to_string();
    }
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let mut proto: Option<String> = None;
    let mut host: Option<String> = None;
    if let Some(forwarded) = text("forwarded") {
        // Only the first element (the proxy nearest the client) counts.
        let first = forwarded.split(',').next().unwrap_or("");
        for pair in first.split(';') {
            let Some((key, value)) = pair.split_once('=') else {
                continue;
            };
            let value = value.trim().trim_matches('"').to_string();
            match key.trim().to_ascii_lowercase().as_str() {
                "proto" => proto = Some(value),
                "host" => host = Some(value),
                _ => {}
            }
        }
    }
    let first = |v: &str| v.split(',').next().unwrap_or("").trim().to_string();
    let proto = proto
        .or_else(|| text("x-forwarded-proto").map(first))
        .map(|p| p.to_ascii_lowercase())
        .filter(|p| p == "http" || p == "https")
        .unwrap_or_else(|| if state.tls { "https" } else { "http" }.to_string());
    let host = host
        .or_else(|| text("x-forwarded-host").map(first))
        .or_else(|| text("host").map(String::from))
        .filter(|h| valid_host(h))
        .unwrap_or_else(|| "localhost".to_string());
    format!("{proto}://{host}")
}

/// A host (and optional port) as it may appear in a URL: no path, query, user info or spaces.
fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && host.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']' | b'_')
        })
}

/// A JSON request body: `Null` when empty, 422 when malformed, 413 when over the limit.
pub(crate) struct Body(pub Value);

impl FromRequest<AppState> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> ApiResult<Self> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let bytes = read_bytes(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body(Value::Null));
        }
        // A body is JSON: one sent as another media type is refused (tfe-api-facts 0.2: 415).
        if let Some(ct) = content_type.filter(|ct| !is_json_type(ct)) {
            if !state.faults.has(&Kind::AcceptsAnyMediaType) {
                return Err(ApiError::UnsupportedMediaType(format!(
                    "the body's media type `{ct}` is not application/vnd.api+json"
                )));
            }
        }
        let mut value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            if state.faults.has(&Kind::MalformedJson500) {
                ApiError::Internal("unexpected token".into())
            } else {
                ApiError::invalid(format!("the body is not valid JSON: {e}"))
            }
        })?;
        if state.faults.has(&Kind::RefusesEmptyType)
            && value.pointer("/data/type").and_then(Value::as_str) == Some("")
        {
            return Err(ApiError::Invalid {
                detail: "data.type \"\" is not a type this route takes".into(),
                pointer: Some("/data/type".into()),
            });
        }
        if state.shapes.has(Shape::TypedBodies)
            && value
                .get("data")
                .and_then(Value::as_object)
                .is_some_and(|data| !data.contains_key("type"))
        {
            return Err(ApiError::Invalid {
                detail: "data.type is required".into(),
                pointer: Some("/data/type".into()),
            });
        }
        if state.faults.has(&Kind::AcceptsUnknownType) {
            // Read as if it named no type: every handler then takes it for its own.
            if let Some(data) = value.get_mut("data").and_then(Value::as_object_mut) {
                data.remove("type");
            }
        }
        Ok(Body(value))
    }
}

/// `application/json` or `application/<x>+json` (parameters allowed).
fn is_json_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The JSON type an attribute must have when it is sent.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ty {
    /// `true` or `false`.
    Bool,
    /// An integer.
    Int,
    /// A string.
    Str,
    /// A string or null.
    StrOrNull,
}

/// Reads the raw body, mapping the limit rejection to 413.
pub(crate) async fn read_bytes(req: Request, state: &AppState) -> ApiResult<Bytes> {
    Bytes::from_request(req, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge
        } else {
            ApiError::BadRequest(e.body_text())
        }
    })
}

/// The parts of a JSON:API resource document a handler uses.
pub(crate) struct Doc {
    pub attributes: Map<String, Value>,
    pub relationships: Map<String, Value>,
}

impl Doc {
    /// A required, non-empty string attribute, or 422.
    pub fn required(&self, name: &str) -> ApiResult<String> {
        match self.attributes.get(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                Err(ApiError::attribute(name, format!("{name} is required")))
            }
            Some(_) => Err(ApiError::attribute(
                name,
                format!("{name} must be a string"),
            )),
        }
    }

    /// 422 when an attribute of `table` is sent with another JSON type (tfe-api-facts 1.3:
    /// "missing or invalid attributes"); nothing is stored then. The `accepts-wrong-type`
    /// fault skips it.
    pub fn typed(&self, ctx: &Ctx, table: &[(&str, Ty)]) -> ApiResult<()> {
        if ctx.state.fault(Kind::AcceptsWrongType) {
            return Ok(());
        }
        for (name, ty) in table {
            let Some(value) = self.attributes.get(*name) else {
                continue;
            };
            let fits = match ty {
                Ty::Bool => value.is_boolean(),
                Ty::Int => value.is_i64() || value.is_u64(),
                Ty::Str => value.is_string(),
                Ty::StrOrNull => value.is_string() || value.is_null(),
            };
            if !fits {
                let want = match ty {
                    Ty::Bool => "a boolean",
                    Ty::Int => "an integer",
                    Ty::Str => "a string",
                    Ty::StrOrNull => "a string or null",
                };
                return Err(ApiError::attribute(name, format!("{name} must be {want}")));
            }
        }
        Ok(())
    }

    /// An optional string attribute.
    pub fn opt(&self, name: &str) -> Option<String> {
        self.attributes
            .get(name)
            .and_then(Value::as_str)
            .map(String::from)
    }

    /// The id of a to-one relationship.
    pub fn rel(&self, name: &str) -> Option<String> {
        self.relationships
            .get(name)
            .and_then(|r| r.get("data"))
            .and_then(|d| d.get("id"))
            .and_then(Value::as_str)
            .map(String::from)
    }

    /// The id of a required to-one relationship, or 422.
    pub fn required_rel(&self, name: &str) -> ApiResult<String> {
        self.rel(name).ok_or_else(|| ApiError::Invalid {
            detail: format!("relationship {name} is required"),
            pointer: Some(format!("/data/relationships/{name}")),
        })
    }
}

/// Reads `{"data":{"type":…,"attributes":…,"relationships":…}}`; `type`, when present and not
/// empty, must be one of `types`. An empty `type` is read as none: go-tfe sends `"type":""` for
/// options without a JSON:API type (organization token create, admin SAML settings), and TFE
/// takes them (go-tfe's TestOrganizationTokensCreate, TestTeamsRead).
pub(crate) fn resource(body: &Value, types: &[&str]) -> ApiResult<Doc> {
    let Some(data) = body.get("data").and_then(Value::as_object) else {
        return Err(ApiError::Invalid {
            detail: "the body must be a JSON:API document with a data object".into(),
            pointer: Some("/data".into()),
        });
    };
    match data.get("type") {
        None => {}
        Some(Value::String(t)) if types.contains(&t.as_str()) || t.is_empty() => {}
        Some(other) => {
            return Err(ApiError::Invalid {
                detail: format!("data.type {other} is not one of {}", types.join(", ")),
                pointer: Some("/data/type".into()),
            })
        }
    }
    let attributes = match data.get("attributes") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(ApiError::invalid("data.attributes must be an object")),
    };
    let relationships = match data.get("relationships") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(ApiError::invalid("data.relationships must be an object")),
    };
    Ok(Doc {
        attributes,
        relationships,
    })
}

/// One item of a relationship-collection body `{"data":[{"type","id"}…]}`.
pub(crate) struct Item {
    pub id: Option<String>,
    pub attributes: Map<String, Value>,
}

/// Reads a relationship-collection body; every item must be an object with a `type` (when
/// given) among `types`.
pub(crate) fn items(body: &Value, types: &[&str]) -> ApiResult<Vec<Item>> {
    let Some(data) = body.get("data").and_then(Value::as_array) else {
        return Err(ApiError::Invalid {
            detail: "the body must be a JSON:API document with a data array".into(),
            pointer: Some("/data".into()),
        });
    };
    data.iter()
        .map(|item| {
            let Some(obj) = item.as_object() else {
                return Err(ApiError::invalid("each data item must be an object"));
            };
            if let Some(t) = obj.get("type") {
                if !t.as_str().is_some_and(|t| types.contains(&t)) {
                    return Err(ApiError::Invalid {
                        detail: format!("data item type {t} is not one of {}", types.join(", ")),
                        pointer: Some("/data/type".into()),
                    });
                }
            }
            Ok(Item {
                id: obj.get("id").and_then(Value::as_str).map(String::from),
                attributes: obj
                    .get("attributes")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// Ids of a relationship-collection body; every item needs an id.
pub(crate) fn item_ids(body: &Value, types: &[&str]) -> ApiResult<Vec<String>> {
    items(body, types)?
        .into_iter()
        .map(|i| {
            i.id.ok_or_else(|| ApiError::invalid("each data item needs an id"))
        })
        .collect()
}

/// A JSON:API answer with a status and a full document.
pub(crate) fn answer(status: StatusCode, document: Value) -> Response {
    let mut res = (status, document.to_string()).into_response();
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSONAPI));
    res
}

/// `200` with `{"data": …}`.
pub(crate) fn ok(data: Value) -> ApiResult<Response> {
    Ok(answer(StatusCode::OK, json!({ "data": data })))
}

/// `201` with `{"data": …}`.
pub(crate) fn created(data: Value) -> ApiResult<Response> {
    Ok(answer(StatusCode::CREATED, json!({ "data": data })))
}

/// `204` without a body.
pub(crate) fn no_content() -> ApiResult<Response> {
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `202` without a body.
pub(crate) fn accepted() -> ApiResult<Response> {
    Ok(StatusCode::ACCEPTED.into_response())
}

/// A plain `application/json` answer (registry protocol, discovery, ip-ranges).
pub(crate) fn plain(status: StatusCode, document: Value) -> Response {
    let mut res = (status, document.to_string()).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// Merges sent attributes over defaults, leaving out write-only ones.
pub(crate) fn merge(
    defaults: Value,
    sent: &Map<String, Value>,
    write_only: &[&str],
) -> Map<String, Value> {
    let mut attrs = defaults.as_object().cloned().unwrap_or_default();
    for (k, v) in sent {
        if !write_only.contains(&k.as_str()) {
            attrs.insert(k.clone(), v.clone());
        }
    }
    attrs
}

fn number(ctx: &Ctx, names: &[&str], default: usize) -> usize {
    names
        .iter()
        .find_map(|n| ctx.q(n))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(default)
}

/// A list TFE answers whole, without `meta` or `links`, when neither page parameter is sent
/// (tfe-api-facts 0.8, the unpaginated quirk: go-tfe's TestNotificationConfigurationList expects
/// `current-page` and `total-count` 0); paged as [`paginate`] otherwise.
pub(crate) fn unpaginated(ctx: &Ctx, items: Vec<Value>) -> ApiResult<Response> {
    let paged = ["page[number]", "page[size]", "page", "page_size"]
        .iter()
        .any(|n| ctx.q(n).is_some());
    if paged || ctx.state.fault(Kind::AlwaysPaged) {
        return paginate(ctx, items);
    }
    Ok(answer(StatusCode::OK, json!({ "data": items })))
}

/// A paged list answer (`meta.pagination` and `links`), applying the paging faults.
pub(crate) fn paginate(ctx: &Ctx, mut items: Vec<Value>) -> ApiResult<Response> {
    let state = &ctx.state;
    if state.fault(Kind::ListsNewestFirst) {
        items.reverse();
    }
    if state.fault(Kind::ListOmitsNewest) {
        items.pop();
    }
    if state.fault(Kind::ListHoldsExtra) {
        if let Some(mut extra) = items.last().cloned() {
            if let Some(Value::String(id)) = extra.get_mut("id") {
                id.push_str("-extra");
            }
            items.push(extra);
        }
    }
    let total = items.len();
    let mut page = number(ctx, &["page[number]", "page"], 1).max(1);
    let mut size = number(ctx, &["page[size]", "page_size"], 20).clamp(1, 100);
    if state.fault(Kind::PageIgnored) {
        page = 1;
    }
    if state.fault(Kind::PageSizeIgnored) {
        size = total.max(1);
    }
    let mut start = (page - 1).saturating_mul(size);
    let mut end = start.saturating_add(size);
    if page > 1 && state.fault(Kind::PageRepeatsItem) {
        start -= 1;
        end -= 1;
    }
    if page > 1 && state.fault(Kind::PageDropsItem) {
        start += 1;
    }
    let data: Vec<Value> = items
        .into_iter()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect();
    let pages = total.div_ceil(size).max(1);
    let link = |n: usize| {
        let mut pairs: Vec<(String, String)> = ctx
            .query
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "page" | "page_size" | "page[number]" | "page[size]"
                )
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        pairs.sort();
        pairs.push(("page[number]".into(), n.to_string()));
        pairs.push(("page[size]".into(), size.to_string()));
        let query: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        json!(format!("{}{}?{}", ctx.root, ctx.path, query.join("&")))
    };
    let prev = (page > 1).then(|| page.min(pages + 1) - 1);
    let next = (page < pages).then_some(page + 1);
    let mut document = json!({
        "data": data,
        "links": {
            "self": link(page),
            "first": link(1),
            "prev": prev.map(link),
            "next": next.map(link),
            "last": link(pages),
        },
        "meta": { "pagination": {
            "current-page": page,
            "page-size": size,
            "prev-page": prev,
            "next-page": next,
            "total-pages": pages,
            "total-count": total,
        }},
    });
    if state.fault(Kind::NoPaginationLinks) {
        if let Some(doc) = document.as_object_mut() {
            doc.remove("links");
        }
    }
    Ok(answer(StatusCode::OK, document))
}

/// Percent-encodes a query component.
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
