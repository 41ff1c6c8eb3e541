//! The shapes of an eventually consistent server: `list-lag` (a list shows a new item only
//! [`LAG`] after its create, as a list served from a search index or a replica does) and
//! `delete-202-later` (a delete of something its path shows is answered `202 Accepted` and
//! takes effect [`LAG`] later, as a delete queued to a worker does). Both are correct servers:
//! the spec promises neither when a list shows an item nor when a delete takes effect.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::answer::rewrite_jsonapi;
use super::prefix::Target;
use crate::shapes::Shape;
use crate::state::{AppState, LAG};

/// `list-lag`: notes the id a create answered, and leaves out of a list's answer the items
/// created less than [`LAG`] ago (`meta.pagination.total-count` counts what it shows). Any
/// other answer, and every answer without the shape, passes unchanged.
pub(super) async fn list_lag(state: &AppState, at: &Target, res: Response) -> Response {
    if !state.shapes.has(Shape::ListLag) || !res.status().is_success() {
        return res;
    }
    let lagging = state.lagging.clone();
    if at.method == Method::POST {
        return rewrite_jsonapi(res, |doc| {
            if let Some(id) = doc.pointer("/data/id").and_then(Value::as_str) {
                lagging.note(id);
            }
        })
        .await;
    }
    if at.method != Method::GET {
        return res;
    }
    rewrite_jsonapi(res, |doc| {
        let Some(items) = doc.get_mut("data").and_then(Value::as_array_mut) else {
            return;
        };
        let before = items.len();
        items.retain(|item| {
            !item
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| lagging.hidden(id))
        });
        let left_out = (before - items.len()) as u64;
        if left_out == 0 {
            return;
        }
        if let Some(total) = doc.pointer_mut("/meta/pagination/total-count") {
            if let Some(n) = total.as_u64() {
                *total = Value::from(n.saturating_sub(left_out));
            }
        }
    })
    .await
}

/// `delete-202-later`: a delete of what a GET of its path shows is answered 202 with no body,
/// and done [`LAG`] later; a delete of anything else (a relationship, what its path does not
/// show, what is not there) is done at once, as without the shape.
pub(super) async fn delete_later(state: &AppState, req: Request, next: Next) -> Response {
    if !state.shapes.has(Shape::Delete202Later) || req.method() != Method::DELETE {
        return next.run(req).await;
    }
    let mut show = Request::new(Body::empty());
    *show.method_mut() = Method::GET;
    *show.uri_mut() = req.uri().clone();
    *show.headers_mut() = req.headers().clone();
    *show.extensions_mut() = req.extensions().clone();
    show.headers_mut()
        .remove(axum::http::header::CONTENT_LENGTH);
    show.headers_mut().remove(axum::http::header::CONTENT_TYPE);
    let shown = next.clone().run(show).await;
    if !shown.status().is_success() {
        return next.run(req).await;
    }
    tokio::spawn(async move {
        tokio::time::sleep(LAG).await;
        let _ = next.run(req).await;
    });
    StatusCode::ACCEPTED.into_response()
}
