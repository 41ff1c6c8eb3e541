//! Two servers that look like the API and do not implement it, written apart from the
//! reference (they share none of its code): the measure of how much a `pass` certifies.
//!
//! - [`hollow`] stores nothing. Every route exists; a GET of an item answers a document whose
//!   `id` is the path's last segment, a GET of a collection an empty list with paging meta, a
//!   POST 201 with a fresh id and the attributes it was sent, a PATCH echoes what it was sent,
//!   a DELETE 204, a PUT 200.
//! - [`generic_store`] is a JSON:API store without domain meaning: a POST to a path stores the
//!   document under a fresh id, GET shows it by id and lists what was posted to that path with
//!   paging meta, PATCH merges attributes, DELETE removes. No states, no tokens, no
//!   relationships, no uploads, no registry.
//!
//! Both answer 401 without an `Authorization` header, `application/vnd.api+json`, and a
//! registry discovery document, as any plausible server would.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Map, Value};

/// Which impostor to serve.
#[derive(Clone, Copy, Debug)]
pub enum Impostor {
    /// Stores nothing, answers everything plausibly.
    Hollow,
    /// A generic JSON:API store without domain meaning.
    GenericStore,
}

/// Serves `impostor` on a loopback port (on its own thread and runtime, so that a test's
/// in-process run can block on it); returns the address.
pub fn serve(impostor: Impostor) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind loopback");
            tx.send(listener.local_addr().expect("address")).ok();
            let state = Arc::new(Store::default());
            let app = Router::new().fallback(move |method, uri, headers, body| {
                let state = state.clone();
                async move { answer(impostor, &state, method, uri, headers, body) }
            });
            axum::serve(listener, app).await.ok();
        });
    });
    rx.recv().expect("impostor started")
}

#[derive(Default)]
struct Store {
    next: AtomicU64,
    /// Documents by id: (the collection path they were posted to, the resource object).
    items: Mutex<BTreeMap<String, (String, Value)>>,
}

fn answer(
    impostor: Impostor,
    store: &Store,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().trim_end_matches('/').to_string();
    if path == "/.well-known/terraform.json" {
        return document(
            StatusCode::OK,
            json!({ "modules.v1": "/api/registry/v1/modules/", "tfe.v2": "/api/v2/" }),
        );
    }
    if !headers.contains_key("authorization") {
        return document(
            StatusCode::UNAUTHORIZED,
            json!({ "errors": [{ "status": "401", "title": "unauthorized" }] }),
        );
    }
    let sent: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    match impostor {
        Impostor::Hollow => hollow(store, &method, &path, &uri, &sent),
        Impostor::GenericStore => generic(store, &method, &path, &uri, &sent),
    }
}

/// The last segment of a path, and the one before it.
fn segments(path: &str) -> (String, String) {
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or_default().to_string();
    let before = parts.next().unwrap_or_default().to_string();
    (last, before)
}

/// A segment that names a collection rather than an item: letters, `-` and `_` only.
fn is_collection(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '-' || c == '_')
}

fn fresh_id(store: &Store, kind: &str) -> String {
    let n = store.next.fetch_add(1, Ordering::Relaxed) + 1;
    let prefix: String = kind.chars().take(3).collect();
    format!("{prefix}-{n:016x}")
}

fn hollow(store: &Store, method: &Method, path: &str, uri: &Uri, sent: &Value) -> Response {
    let (last, before) = segments(path);
    match *method {
        Method::GET if is_collection(&last) => list(uri, Vec::new()),
        Method::GET => {
            let item = json!({ "id": last, "type": before, "attributes": {} });
            document(StatusCode::OK, json!({ "data": item }))
        }
        Method::POST => {
            let kind = sent_type(sent).unwrap_or(last);
            let id = fresh_id(store, &kind);
            let item = json!({ "id": id, "type": kind, "attributes": sent_attributes(sent) });
            document(StatusCode::CREATED, json!({ "data": item }))
        }
        Method::PATCH => {
            let kind = sent_type(sent).unwrap_or(before);
            let item = json!({ "id": last, "type": kind, "attributes": sent_attributes(sent) });
            document(StatusCode::OK, json!({ "data": item }))
        }
        Method::DELETE => StatusCode::NO_CONTENT.into_response(),
        _ => StatusCode::OK.into_response(),
    }
}

fn generic(store: &Store, method: &Method, path: &str, uri: &Uri, sent: &Value) -> Response {
    let (last, _) = segments(path);
    let mut items = store.items.lock().expect("store");
    match *method {
        Method::GET => {
            if let Some((_, item)) = items.get(&last) {
                return document(StatusCode::OK, json!({ "data": item }));
            }
            if is_collection(&last) {
                let found = items
                    .values()
                    .filter(|(home, _)| home == path)
                    .map(|(_, item)| item.clone())
                    .collect();
                return list(uri, found);
            }
            not_found()
        }
        Method::POST => {
            let Some(kind) = sent_type(sent) else {
                return document(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    json!({ "errors": [{ "status": "422", "title": "no data" }] }),
                );
            };
            let id = fresh_id(store, &kind);
            let item = json!({ "id": id, "type": kind, "attributes": sent_attributes(sent) });
            items.insert(id, (path.to_string(), item.clone()));
            document(StatusCode::CREATED, json!({ "data": item }))
        }
        Method::PATCH => match items.get_mut(&last) {
            Some((_, item)) => {
                if let (Some(have), Value::Object(new)) =
                    (item["attributes"].as_object_mut(), sent_attributes(sent))
                {
                    have.extend(new);
                }
                document(StatusCode::OK, json!({ "data": item }))
            }
            None => not_found(),
        },
        Method::DELETE => match items.remove(&last) {
            Some(_) => StatusCode::NO_CONTENT.into_response(),
            None => not_found(),
        },
        _ => StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
}

fn sent_type(sent: &Value) -> Option<String> {
    sent.pointer("/data/type")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn sent_attributes(sent: &Value) -> Value {
    sent.pointer("/data/attributes")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(Map::new()))
}

/// A list document of `items`, one page, with TFE's paging meta.
fn list(uri: &Uri, items: Vec<Value>) -> Response {
    let size = uri
        .query()
        .and_then(|q| {
            q.split('&').find_map(|p| {
                p.strip_prefix("page%5Bsize%5D=")
                    .or(p.strip_prefix("page[size]="))
            })
        })
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(20);
    let count = items.len();
    document(
        StatusCode::OK,
        json!({
            "data": items,
            "links": { "self": uri.to_string(), "next": null },
            "meta": { "pagination": {
                "current-page": 1, "page-size": size, "prev-page": null, "next-page": null,
                "total-pages": 1, "total-count": count
            } }
        }),
    )
}

fn not_found() -> Response {
    document(
        StatusCode::NOT_FOUND,
        json!({ "errors": [{ "status": "404", "title": "not found" }] }),
    )
}

fn document(status: StatusCode, body: Value) -> Response {
    (
        status,
        [("content-type", "application/vnd.api+json")],
        body.to_string(),
    )
        .into_response()
}
