//! The shapes that change how ids look, at the gate:
//! - `numeric-ids`: the store issues numbers as strings; answers carry them as JSON numbers,
//!   and request bodies are turned back into the strings the store knows;
//! - `opaque-organization-ids`: an organization's id in answers is `org-` and the hex of its
//!   name (as a server whose organizations have ids apart from their names), turned back into
//!   the name in request bodies; paths still take only the name.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::answer::rewrite_jsonapi;
use super::prefix::Target;
use crate::error::ApiError;
use crate::paths::is_upload_path;
use crate::shapes::Shape;
use crate::state::AppState;
use crate::store::Store;

/// The request with the numeric ids of its body as strings ([`ids_to_strings`]; uploads
/// aside); 413 when it is over the body limit.
pub(super) async fn request(
    state: &AppState,
    at: &Target,
    req: Request,
) -> Result<Request, Response> {
    let numeric = state.shapes.has(Shape::NumericIds);
    let opaque = state.shapes.has(Shape::OpaqueOrganizationIds);
    if !(numeric || opaque) || is_upload_path(&at.bare) {
        return Ok(req);
    }
    let (mut parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, state.body_limit)
        .await
        .map_err(|_| ApiError::TooLarge.into_response())?;
    let mut doc = match serde_json::from_slice::<Value>(&bytes) {
        Ok(doc) => doc,
        Err(_) => return Ok(Request::from_parts(parts, Body::from(bytes))),
    };
    let changed = (numeric && ids_to_strings(&mut doc, &state.read()))
        | (opaque && organization_ids_to_names(&mut doc));
    if !changed {
        return Ok(Request::from_parts(parts, Body::from(bytes)));
    }
    let text = doc.to_string();
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(text.len()));
    Ok(Request::from_parts(parts, Body::from(text)))
}

/// The JSON:API answer with its ids as JSON numbers ([`ids_to_numbers`]) and its
/// organizations' ids opaque ([`organization_ids_to_opaque`]). Applied after the faults: the
/// shaped server is what they break.
pub(super) async fn answer(state: &AppState, res: Response) -> Response {
    let numeric = state.shapes.has(Shape::NumericIds);
    let opaque = state.shapes.has(Shape::OpaqueOrganizationIds);
    if !(numeric || opaque) {
        return res;
    }
    rewrite_jsonapi(res, |doc| {
        if opaque {
            organization_ids_to_opaque(doc);
        }
        if numeric {
            ids_to_numbers(doc, &mut state.write());
        }
    })
    .await
}

/// The prefix of an opaque organization id.
const OPAQUE_ORGANIZATION: &str = "org-";

/// `opaque-organization-ids`, on an answer: the `id` of every object whose `type` is an
/// organization's (resources and resource identifiers, at any depth) becomes `org-` and the
/// hex of the name.
fn organization_ids_to_opaque(doc: &mut Value) {
    match doc {
        Value::Array(items) => items.iter_mut().for_each(organization_ids_to_opaque),
        Value::Object(obj) => {
            let kind = obj.get("type").and_then(Value::as_str);
            if let (Some(kind), Some(Value::String(id))) = (kind, obj.get("id")) {
                if keeps_string_id(kind) {
                    let hex: String = id.bytes().map(|b| format!("{b:02x}")).collect();
                    obj.insert("id".into(), json!(format!("{OPAQUE_ORGANIZATION}{hex}")));
                }
            }
            obj.values_mut().for_each(organization_ids_to_opaque);
        }
        _ => {}
    }
}

/// `opaque-organization-ids`, on a request body: every string member named `id` that is an
/// opaque organization id becomes the name again. Answers whether anything changed.
fn organization_ids_to_names(body: &mut Value) -> bool {
    match body {
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| organization_ids_to_names(v) | changed),
        Value::Object(obj) => {
            let mut changed = false;
            for (key, value) in obj.iter_mut() {
                let name = (key == "id")
                    .then(|| value.as_str().and_then(name_of_opaque))
                    .flatten();
                match name {
                    Some(name) => {
                        *value = json!(name);
                        changed = true;
                    }
                    None => changed |= organization_ids_to_names(value),
                }
            }
            changed
        }
        _ => false,
    }
}

/// The organization name an opaque id stands for.
fn name_of_opaque(id: &str) -> Option<String> {
    let hex = id.strip_prefix(OPAQUE_ORGANIZATION)?;
    if hex.is_empty() || hex.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// The JSON:API types whose id is a name, never turned into a number.
fn keeps_string_id(kind: &str) -> bool {
    matches!(kind, "organizations" | "organization")
}

/// `numeric-ids`, on an answer: every `id` of an object with a string `type` (resource
/// objects and resource identifiers, at any depth) becomes a JSON number, except an
/// organization's. A decimal id (what the store issues) becomes that number; any other id (a
/// fixed one, such as `general` for the general settings) gets a number of its own from the
/// store's counter, the same one every time ([`Store::alias`]).
fn ids_to_numbers(doc: &mut Value, store: &mut Store) {
    match doc {
        Value::Array(items) => items.iter_mut().for_each(|v| ids_to_numbers(v, store)),
        Value::Object(obj) => {
            let kind = obj.get("type").and_then(Value::as_str);
            let id = obj.get("id").and_then(Value::as_str);
            if let (Some(kind), Some(id)) = (kind, id) {
                if !keeps_string_id(kind) {
                    let n = decimal(id).unwrap_or_else(|| store.alias(id));
                    obj.insert("id".into(), json!(n));
                }
            }
            obj.values_mut().for_each(|v| ids_to_numbers(v, store));
        }
        _ => {}
    }
}

/// `numeric-ids`, on a request body: every integer member named `id` or ending in `-id`
/// becomes the string the store knows (a number it issued, or the fixed id it aliased).
/// Answers whether anything changed.
fn ids_to_strings(body: &mut Value, store: &Store) -> bool {
    match body {
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| ids_to_strings(v, store) | changed),
        Value::Object(obj) => {
            let mut changed = false;
            for (key, value) in obj.iter_mut() {
                let is_id = key == "id" || key.ends_with("-id");
                match value.as_u64() {
                    Some(n) if is_id => {
                        *value = json!(store.unalias(n));
                        changed = true;
                    }
                    _ => changed |= ids_to_strings(value, store),
                }
            }
            changed
        }
        _ => false,
    }
}

/// The number a decimal id stands for (no sign, no leading zero).
fn decimal(id: &str) -> Option<u64> {
    let plain = !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
        && (id == "0" || !id.starts_with('0'));
    plain.then(|| id.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_organization_ids_stand_for_their_names() {
        let mut doc = json!({"data": {"type": "organizations", "id": "acme", "relationships":
            {"x": {"data": {"type": "workspaces", "id": "ws-1"}}}}});
        organization_ids_to_opaque(&mut doc);
        assert_eq!(doc["data"]["id"], "org-61636d65");
        assert_eq!(doc["data"]["relationships"]["x"]["data"]["id"], "ws-1");
        let mut body =
            json!({"data": {"relationships": {"organization": {"data": {"id": "org-61636d65"}}}}});
        assert!(organization_ids_to_names(&mut body));
        assert_eq!(
            body["data"]["relationships"]["organization"]["data"]["id"],
            "acme"
        );
        assert_eq!(name_of_opaque("org-6"), None);
        assert_eq!(name_of_opaque("org-zz"), None);
    }

    #[test]
    fn decimal_ids_are_plain_numbers() {
        assert_eq!(decimal("17"), Some(17));
        assert_eq!(decimal("0"), Some(0));
        assert_eq!(decimal("017"), None);
        assert_eq!(decimal("ws-1"), None);
        assert_eq!(decimal(""), None);
    }
}
