//! Check functions on recorded exchanges and documents. Each answers `Ok(())` or
//! `Err(message)` in the form "expected …, received …"; the runner attaches the check id.

use serde_json::Value;

use super::Schemas;
use crate::catalog::Kind;
use crate::target::Exchange;

/// `endpoint.exists`: the route answered something other than 404/405/501.
pub fn route_exists(ex: &Exchange) -> Result<(), String> {
    match ex.status() {
        Some(status @ (404 | 405 | 501)) => Err(format!(
            "expected the endpoint {} {} to exist; it answered {status} although every id in the path was made by this run",
            ex.request.method, path_of(&ex.request.url)
        )),
        _ => Ok(()),
    }
}

/// `endpoint.succeeds`: a 2xx answer.
pub fn succeeds(ex: &Exchange) -> Result<(), String> {
    match &ex.response {
        Ok(r) if (200..300).contains(&r.status) => Ok(()),
        Ok(r) => Err(format!(
            "expected success (2xx), received {}{}",
            r.status,
            error_detail(&r.body)
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )),
        Err(e) => Err(format!("expected an answer, received none: {e}")),
    }
}

/// `transport.no-5xx`.
pub fn no_server_error(ex: &Exchange) -> Result<(), String> {
    match ex.status() {
        Some(s) if s >= 500 => Err(format!("expected no server error, received {s}")),
        _ => Ok(()),
    }
}

/// `json.body`: a JSON content type and a parseable body. Returns the document.
pub fn json_body(ex: &Exchange) -> Result<Value, String> {
    let content_type = ex.header("content-type").unwrap_or("");
    let value = ex.json()?;
    if !is_json_media_type(content_type) {
        let shown = if content_type.is_empty() {
            "none"
        } else {
            content_type
        };
        return Err(format!(
            "expected a JSON content type (application/json or application/*+json), received `{shown}`"
        ));
    }
    Ok(value)
}

/// True for `application/json` and `application/<x>+json` (parameters allowed).
pub fn is_json_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// `envelope.single`.
pub fn envelope_single(schemas: &Schemas, doc: &Value) -> Result<(), String> {
    schemas.validate("envelope/single", doc).map_err(|e| {
        format!("expected `data` to be an object with a string `id` (schema envelope/single); {e}")
    })
}

/// `envelope.list`.
pub fn envelope_list(schemas: &Schemas, doc: &Value) -> Result<(), String> {
    schemas
        .validate("envelope/list", doc)
        .map_err(|e| format!("expected `data` to be an array of objects with a string `id` (schema envelope/list); {e}"))
}

/// The `data.id` of a single-resource document.
pub fn document_id(doc: &Value) -> Option<String> {
    id_text(doc.pointer("/data/id")?)
}

/// An id as text: a string, or a number (a deviation `envelope.single` reports once; every
/// other check compares the id it names).
fn id_text(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The ids in a list document.
pub fn list_ids(doc: &Value) -> Vec<String> {
    doc.get("data")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("id").and_then(id_text))
                .collect()
        })
        .unwrap_or_default()
}

/// `tfe.status-code` for the endpoint's kind.
/// `None` when the facts name no status for the endpoint (an action, a download, an
/// upload without an `expect.status` in `cases/`): the check is then not evaluated, and not
/// listed as passed.
pub fn tfe_status(
    ex: &Exchange,
    kind: Kind,
    expected_override: &[u16],
) -> Option<Result<(), String>> {
    let status = ex.status()?;
    let expected: &[u16] = if !expected_override.is_empty() {
        expected_override
    } else {
        match kind {
            Kind::Create => &[201],
            Kind::Delete | Kind::Relationship => &[204],
            Kind::Show | Kind::List | Kind::Update | Kind::Read => &[200],
            Kind::Action | Kind::Download | Kind::Upload => return None,
        }
    };
    Some(if expected.contains(&status) {
        Ok(())
    } else {
        Err(format!(
            "expected status {}, received {status}",
            join(expected)
        ))
    })
}

/// `tfe.media-type`: `application/vnd.api+json`.
pub fn tfe_media_type(ex: &Exchange) -> Result<(), String> {
    let content_type = ex.header("content-type").unwrap_or("none");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case(crate::target::JSONAPI) {
        Ok(())
    } else {
        Err(format!(
            "expected content type application/vnd.api+json, received `{content_type}`"
        ))
    }
}

/// `tfe.error-document`: a 4xx answer is a JSON:API error document.
pub fn tfe_error_document(schemas: &Schemas, ex: &Exchange) -> Result<(), String> {
    let doc = ex
        .json()
        .map_err(|e| format!("expected a JSON:API error document; {e}"))?;
    schemas
        .validate("tfe/error", &doc)
        .map_err(|e| format!("expected a JSON:API error document (schema tfe/error); {e}"))
}

/// `variants.agree`: two answers to the same request under the two path forms describe the
/// same thing. Values may change between the two reads while other tests run, so the
/// comparison is of identity and shape: for one resource its `id`, `type` and the names of
/// its attributes and relationships; for a list, the types of its items and, when both are
/// non-empty, at least one common id (or `must_hold` in both); otherwise the top-level members.
pub fn documents_agree(a: &Value, b: &Value, must_hold: Option<&str>) -> Result<(), String> {
    match (a.get("data"), b.get("data")) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            for member in ["id", "type"] {
                if x.get(member) != y.get(member) {
                    return Err(format!(
                        "`data.{member}` differs: {} versus {}",
                        short(&x.get(member).cloned().unwrap_or(Value::Null)),
                        short(&y.get(member).cloned().unwrap_or(Value::Null))
                    ));
                }
            }
            for member in ["attributes", "relationships"] {
                let (kx, ky) = (keys(x.get(member)), keys(y.get(member)));
                if kx != ky {
                    let only: Vec<_> = kx.symmetric_difference(&ky).cloned().collect();
                    return Err(format!(
                        "`data.{member}` differ in their names: {}",
                        only.join(", ")
                    ));
                }
            }
            Ok(())
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            let types = |items: &Vec<Value>| -> std::collections::BTreeSet<String> {
                items
                    .iter()
                    .filter_map(|i| i.get("type").and_then(Value::as_str).map(str::to_string))
                    .collect()
            };
            let ids = |items: &Vec<Value>| -> std::collections::BTreeSet<String> {
                items
                    .iter()
                    .filter_map(|i| i.get("id").and_then(id_text))
                    .collect()
            };
            if !x.is_empty() && !y.is_empty() && types(x) != types(y) {
                return Err(format!(
                    "the lists hold items of different types: {:?} versus {:?}",
                    types(x),
                    types(y)
                ));
            }
            if let Some(id) = must_hold {
                for (list, name) in [(x, "with"), (y, "without")] {
                    if !ids(list).contains(id) {
                        return Err(format!("the list {name} /api/v2 does not hold {id}"));
                    }
                }
            } else if !x.is_empty() && !y.is_empty() && ids(x).is_disjoint(&ids(y)) {
                return Err("the two lists have no item in common".to_string());
            }
            Ok(())
        }
        (None, None) => {
            let (kx, ky) = (keys(Some(a)), keys(Some(b)));
            if kx == ky {
                Ok(())
            } else {
                Err(format!(
                    "the documents have different members: {kx:?} versus {ky:?}"
                ))
            }
        }
        _ => Err(format!(
            "the documents differ in shape: {} versus {}",
            short(a),
            short(b)
        )),
    }
}

fn keys(v: Option<&Value>) -> std::collections::BTreeSet<String> {
    v.and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Every string in the document that looks like an upload address: (JSON pointer, URL).
/// The spec names no field, so any attribute or link counts.
pub fn upload_candidates(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    walk(doc, String::new(), &mut |pointer, s| {
        let lower = pointer.to_ascii_lowercase();
        let is_url = s.starts_with("http://") || s.starts_with("https://") || s.starts_with('/');
        if is_url && (s.contains("/v1/object/") || lower.contains("upload")) {
            found.push((pointer.to_string(), s.to_string()));
        }
    });
    // Those already on the documented form first.
    found.sort_by_key(|(_, url)| !url.contains("/v1/object/"));
    found
}

fn walk(v: &Value, at: String, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::Object(map) => map
            .iter()
            .for_each(|(k, v)| walk(v, format!("{at}/{k}"), f)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| walk(v, format!("{at}/{i}"), f)),
        Value::String(s) => f(&at, s),
        _ => {}
    }
}

/// `upload.url-form`: the path ends in `/v1/object/<object_id>` (Versioning 2).
pub fn upload_url_form(url: &str) -> Result<(), String> {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.split('?').next().unwrap_or(url).to_string());
    let ok = path
        .rsplit_once("/v1/object/")
        .is_some_and(|(_, id)| !id.is_empty() && !id.contains('/'));
    if ok {
        Ok(())
    } else {
        Err(format!("expected an upload address whose path has the form /v1/object/<object_id>, received `{url}`"))
    }
}

fn path_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.to_string())
}

fn join(codes: &[u16]) -> String {
    codes
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The first error's title/detail of a JSON:API error body, for messages.
pub fn error_detail(body: &[u8]) -> Option<String> {
    let doc: Value = serde_json::from_slice(body).ok()?;
    let first = doc.get("errors")?.get(0)?;
    if let Some(s) = first.as_str() {
        return Some(s.to_string());
    }
    let title = first.get("title").and_then(Value::as_str).unwrap_or("");
    let detail = first.get("detail").and_then(Value::as_str).unwrap_or("");
    Some(format!("{title} {detail}").trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{RequestRecord, ResponseRecord};
    use serde_json::json;

    fn exchange(status: u16, content_type: &str, body: &str) -> Exchange {
        Exchange {
            request: RequestRecord {
                method: "GET".into(),
                url: "http://t/runs/run-1".into(),
                headers: vec![],
                body: None,
            },
            response: Ok(ResponseRecord {
                status,
                headers: vec![("content-type".into(), content_type.into())],
                body: body.as_bytes().to_vec(),
                truncated: false,
                received: 0,
            }),
            elapsed: Default::default(),
        }
    }

    fn schemas() -> Schemas {
        Schemas::embedded().expect("embedded schemas load")
    }

    #[test]
    fn json_body_passes_json_and_fails_html_wrong_type_and_empty() {
        assert!(json_body(&exchange(200, "application/vnd.api+json", r#"{"data":{}}"#)).is_ok());
        let html = json_body(&exchange(200, "text/html", "<html>hi</html>")).unwrap_err();
        assert!(
            html.contains("not JSON") && html.contains("<html>"),
            "{html}"
        );
        let wrong = json_body(&exchange(200, "text/plain", "{}")).unwrap_err();
        assert!(wrong.contains("text/plain"), "{wrong}");
        assert!(json_body(&exchange(200, "application/json", ""))
            .unwrap_err()
            .contains("empty"));
    }

    #[test]
    fn envelope_single_fails_numeric_missing_and_absent_id() {
        let s = schemas();
        assert!(envelope_single(&s, &json!({"data":{"id":"ws-1","type":"workspaces"}})).is_ok());
        assert!(envelope_single(&s, &json!({"data":{"id":7}})).is_err());
        assert!(envelope_single(&s, &json!({"data":{"type":"x"}})).is_err());
        assert!(envelope_single(&s, &json!({"result":{"id":"x"}})).is_err());
        assert!(envelope_single(&s, &json!({"data":[{"id":"x"}]})).is_err());
    }

    #[test]
    fn envelope_list_fails_object_and_bad_items() {
        let s = schemas();
        assert!(envelope_list(&s, &json!({"data":[{"id":"a"},{"id":"b"}]})).is_ok());
        assert!(envelope_list(&s, &json!({"data":[]})).is_ok());
        assert!(envelope_list(&s, &json!({"data":{"id":"a"}})).is_err());
        assert!(envelope_list(&s, &json!({"data":[{"id":1}]})).is_err());
    }

    #[test]
    fn route_exists_flags_404_405_501_only() {
        assert!(route_exists(&exchange(200, "application/json", "{}")).is_ok());
        assert!(route_exists(&exchange(409, "application/json", "{}")).is_ok());
        for s in [404, 405, 501] {
            let e = route_exists(&exchange(s, "application/json", "{}")).unwrap_err();
            assert!(e.contains("GET /runs/run-1"), "{e}");
        }
    }

    #[test]
    fn upload_form_accepts_only_v1_object_paths() {
        assert!(upload_url_form("https://h/v1/object/abc").is_ok());
        assert!(upload_url_form("https://h/_archivist/v1/object/abc").is_ok());
        assert!(upload_url_form("https://h/uploads/abc").is_err());
        assert!(upload_url_form("https://h/v1/object/").is_err());
        let doc = json!({"data":{"attributes":{"upload-url":"http://h/v1/object/x"},"links":{"self":"/x"}}});
        assert_eq!(upload_candidates(&doc)[0].0, "/data/attributes/upload-url");
    }

    #[test]
    fn documents_agree_on_identity_and_shape_only() {
        let a = json!({"data":{"id":"a","type":"t","attributes":{"name":"n","updated-at":"1"},"links":{"self":"/api/v2/x"}}});
        let b = json!({"data":{"id":"a","type":"t","attributes":{"name":"m","updated-at":"2"},"links":{"self":"/x"}}});
        assert!(documents_agree(&a, &b, None).is_ok());
        let c = json!({"data":{"id":"b","type":"t","attributes":{"name":"n","updated-at":"1"}}});
        assert!(documents_agree(&a, &c, None)
            .unwrap_err()
            .contains("data.id"));
        let d = json!({"data":{"id":"a","type":"t","attributes":{"name":"n"}}});
        assert!(documents_agree(&a, &d, None)
            .unwrap_err()
            .contains("updated-at"));
        let l1 = json!({"data":[{"id":"a","type":"t"},{"id":"b","type":"t"}]});
        let l2 = json!({"data":[{"id":"b","type":"t"}]});
        assert!(documents_agree(&l1, &l2, None).is_ok());
        assert!(documents_agree(&l1, &l2, Some("a")).is_err());
        assert!(documents_agree(&l1, &json!({"data":[{"id":"c","type":"t"}]}), None).is_err());
        assert!(documents_agree(&l1, &json!({"data":{"id":"a"}}), None).is_err());
    }

    #[test]
    fn tfe_checks_fail_on_wrong_codes_media_and_error_shape() {
        let s = schemas();
        assert_eq!(
            tfe_status(&exchange(201, "", ""), Kind::Create, &[]),
            Some(Ok(()))
        );
        assert!(tfe_status(&exchange(200, "", ""), Kind::Create, &[]).is_some_and(|r| r.is_err()));
        // an action whose status the facts do not name is not evaluated (never "passed")
        assert_eq!(tfe_status(&exchange(200, "", ""), Kind::Action, &[]), None);
        assert!(
            tfe_status(&exchange(200, "", ""), Kind::Action, &[202]).is_some_and(|r| r.is_err())
        );
        assert!(tfe_media_type(&exchange(200, "application/vnd.api+json", "")).is_ok());
        assert!(tfe_media_type(&exchange(200, "application/json", "")).is_err());
        let good = r#"{"errors":[{"status":"404","title":"not found"}]}"#;
        assert!(tfe_error_document(&s, &exchange(404, "application/vnd.api+json", good)).is_ok());
        assert!(tfe_error_document(&s, &exchange(404, "text/plain", "not found")).is_err());
    }
}
