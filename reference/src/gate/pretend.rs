//! The shapes that implement nothing of the API's meaning (`stores-nothing`, `generic-store`):
//! what a pass must not be. They answer every authenticated request themselves, before any
//! route, with a plausible JSON:API document:
//!
//! - `stores-nothing`: an item's GET answers a resource whose `id` is the path's last segment
//!   and whose `type` the segment before it; a collection's GET an empty list with paging meta;
//!   a POST 201 with a fresh id and the attributes it was sent; a PATCH the attributes it was
//!   sent; a DELETE 204; anything else 200 without a body.
//! - `generic-store`: a POST keeps the document it was sent under a fresh id, in the
//!   collection it was posted to; a GET shows a kept document by its id, or lists a
//!   collection's; a PATCH merges attributes; a DELETE forgets. No states, no tokens, no
//!   relationships, no uploads, no registry: an unknown item is 404, a POST without a
//!   resource object 422, any other method 405.
//!
//! The registry's discovery document is left to the routes: both still say where they serve.

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use super::prefix::Target;
use crate::error::JSONAPI;
use crate::shapes::Shape;
use crate::state::AppState;
use crate::store::Kept;

/// The largest body these shapes read (everything the suite sends is far smaller).
const BODY_LIMIT: usize = 1024 * 1024;

/// The answer of a shape that implements nothing, or the request back when no such shape is on
/// (or the request is the registry's discovery, which the routes answer).
pub(super) async fn answer(
    state: &AppState,
    at: &Target,
    req: Request,
) -> Result<Response, Request> {
    let hollow = state.shapes.has(Shape::StoresNothing);
    if !(hollow || state.shapes.has(Shape::GenericStore))
        || at.bare == "/.well-known/terraform.json"
    {
        return Err(req);
    }
    let page_size = page_size(req.uri().query().unwrap_or(""));
    let sent = to_bytes(req.into_body(), BODY_LIMIT)
        .await
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .unwrap_or(Value::Null);
    let request = Sent {
        method: &at.method,
        path: at.bare.trim_end_matches('/'),
        page_size,
        document: &sent,
    };
    Ok(if hollow {
        stores_nothing(&state.kept, &request)
    } else {
        generic_store(&state.kept, &request)
    })
}

/// What these shapes read of a request.
struct Sent<'a> {
    method: &'a Method,
    path: &'a str,
    page_size: u64,
    document: &'a Value,
}

impl Sent<'_> {
    /// The path's last segment and the one before it.
    fn tail(&self) -> (&str, &str) {
        let mut segments = self.path.rsplit('/');
        let last = segments.next().unwrap_or_default();
        (last, segments.next().unwrap_or_default())
    }

    /// Whether the path names a collection (its last segment is a word, not an id).
    fn is_collection(&self) -> bool {
        let (last, _) = self.tail();
        !last.is_empty()
            && last
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
    }

    fn sent_type(&self) -> Option<&str> {
        self.document.pointer("/data/type").and_then(Value::as_str)
    }

    fn sent_attributes(&self) -> Map<String, Value> {
        self.document
            .pointer("/data/attributes")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }
}

fn stores_nothing(kept: &Kept, sent: &Sent) -> Response {
    let (last, before) = sent.tail();
    match *sent.method {
        Method::GET if sent.is_collection() => listing(Vec::new(), sent.page_size),
        Method::GET => single(StatusCode::OK, last, before, Map::new()),
        Method::POST => {
            let kind = sent.sent_type().unwrap_or(last).to_string();
            single(
                StatusCode::CREATED,
                &kept.issue(&kind),
                &kind,
                sent.sent_attributes(),
            )
        }
        Method::PATCH => {
            let kind = sent.sent_type().unwrap_or(before);
            single(StatusCode::OK, last, kind, sent.sent_attributes())
        }
        Method::DELETE => StatusCode::NO_CONTENT.into_response(),
        _ => StatusCode::OK.into_response(),
    }
}

fn generic_store(kept: &Kept, sent: &Sent) -> Response {
    let (last, _) = sent.tail();
    let mut documents = kept
        .documents
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match *sent.method {
        Method::GET => match documents.get(last) {
            Some((_, resource)) => jsonapi(StatusCode::OK, json!({ "data": resource })),
            None if sent.is_collection() => {
                let held = documents
                    .values()
                    .filter(|(collection, _)| collection == sent.path)
                    .map(|(_, resource)| resource.clone())
                    .collect();
                listing(held, sent.page_size)
            }
            None => error(StatusCode::NOT_FOUND),
        },
        Method::POST => {
            let Some(kind) = sent.sent_type() else {
                return error(StatusCode::UNPROCESSABLE_ENTITY);
            };
            let id = kept.issue(kind);
            let resource = resource(&id, kind, sent.sent_attributes());
            documents.insert(id, (sent.path.to_string(), resource.clone()));
            jsonapi(StatusCode::CREATED, json!({ "data": resource }))
        }
        Method::PATCH => match documents.get_mut(last) {
            Some((_, resource)) => {
                if let Some(attributes) = resource["attributes"].as_object_mut() {
                    attributes.extend(sent.sent_attributes());
                }
                jsonapi(StatusCode::OK, json!({ "data": resource }))
            }
            None => error(StatusCode::NOT_FOUND),
        },
        Method::DELETE => match documents.remove(last) {
            Some(_) => StatusCode::NO_CONTENT.into_response(),
            None => error(StatusCode::NOT_FOUND),
        },
        _ => error(StatusCode::METHOD_NOT_ALLOWED),
    }
}

fn resource(id: &str, kind: &str, attributes: Map<String, Value>) -> Value {
    json!({ "id": id, "type": kind, "attributes": attributes })
}

fn single(status: StatusCode, id: &str, kind: &str, attributes: Map<String, Value>) -> Response {
    jsonapi(status, json!({ "data": resource(id, kind, attributes) }))
}

/// One page holding `resources`, with TFE's paging meta.
fn listing(resources: Vec<Value>, page_size: u64) -> Response {
    let count = resources.len();
    jsonapi(
        StatusCode::OK,
        json!({
            "data": resources,
            "links": { "next": null },
            "meta": { "pagination": {
                "current-page": 1, "page-size": page_size, "prev-page": null,
                "next-page": null, "total-pages": 1, "total-count": count
            } }
        }),
    )
}

/// The page size a query asks for (`page[size]`), else 20.
fn page_size(query: &str) -> u64 {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "page[size]" || *name == "page%5Bsize%5D")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(20)
}

fn error(status: StatusCode) -> Response {
    let title = status.canonical_reason().unwrap_or("error").to_lowercase();
    jsonapi(
        status,
        json!({ "errors": [{ "status": status.as_str(), "title": title }] }),
    )
}

fn jsonapi(status: StatusCode, document: Value) -> Response {
    let mut res = (status, Body::from(document.to_string())).into_response();
    if let Ok(media) = JSONAPI.parse() {
        res.headers_mut()
            .insert(axum::http::header::CONTENT_TYPE, media);
    }
    res
}
