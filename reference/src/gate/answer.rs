//! Answers read back to be rewritten: their media type and their JSON:API document.

use axum::body::Body;
use axum::http::header;
use axum::response::Response;
use serde_json::Value;

use crate::error::JSONAPI;

/// The largest answer the gate reads back to rewrite it.
pub(super) const REWRITE_LIMIT: usize = 256 * 1024 * 1024;

/// Rewrites the document of a JSON:API answer (one no larger than [`REWRITE_LIMIT`]); any
/// other answer passes unchanged.
pub(super) async fn rewrite_jsonapi(res: Response, rewrite: impl FnOnce(&mut Value)) -> Response {
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

/// The answer's `Content-Type`, or "".
pub(super) fn content_type(res: &Response) -> String {
    res.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// Whether a media type is JSON (JSON:API or plain).
pub(super) fn is_json(ct: &str) -> bool {
    ct.starts_with(JSONAPI) || ct.starts_with("application/json")
}
