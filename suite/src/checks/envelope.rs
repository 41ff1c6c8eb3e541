//! Checks of JSON:API envelopes: one resource, a list, the ids they hold, and two path
//! forms' documents agreeing.
//! Each answers `Ok(())` or `Err(message)` in the form "expected …, received …"; the
//! caller records it under the check's id.

use crate::checks::Message;
use serde_json::Value;

use super::Schemas;
use crate::target::Exchange;

/// `envelope.single`.
pub fn envelope_single(schemas: &Schemas, doc: &Value) -> Result<(), Message> {
    schemas.validate("envelope/single", doc).map_err(|e| {
        message!("expected `data` to be an object with a string `id` (schema envelope/single); {e}")
    })
}

/// `envelope.list`.
pub fn envelope_list(schemas: &Schemas, doc: &Value) -> Result<(), Message> {
    schemas
        .validate("envelope/list", doc)
        .map_err(|e| message!("expected `data` to be an array of objects with a string `id` (schema envelope/list); {e}"))
}

/// The schema family an endpoint's resources are judged by: `tfe/admin` for the
/// administrator API's views, else `tfe/resources`.
pub fn resource_family(admin: bool) -> &'static str {
    if admin {
        "tfe/admin"
    } else {
        "tfe/resources"
    }
}

/// `tfe.resource-shape`: every resource object of `doc` (its `data`, one or a list) whose
/// `type` has a schema under `family` (`tfe/resources`, or `tfe/admin` for the administrator
/// API's views) validates against it. Types without a schema are not judged.
pub fn tfe_resource_shape(schemas: &Schemas, family: &str, doc: &Value) -> Result<(), Message> {
    let items: Vec<&Value> = match doc.get("data") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(item @ Value::Object(_)) => vec![item],
        _ => return Ok(()),
    };
    for item in items {
        let Some(kind) = item.get("type").and_then(Value::as_str) else {
            continue;
        };
        let id = format!("{family}/{kind}");
        if !schemas.has(&id) {
            continue;
        }
        if let Err(e) = schemas.validate(&id, item) {
            let name = item.get("id").map(Value::to_string).unwrap_or_default();
            return Err(message!(
                "expected the `{kind}` {name} to have the attributes TFE answers for it (schema {id}); {e}"
            ));
        }
    }
    Ok(())
}

/// `tfe.resource-shape` for a document that is no resource: it validates against the
/// schema `id` (`tfe/ip-ranges`).
pub fn tfe_document_shape(schemas: &Schemas, id: &str, doc: &Value) -> Result<(), Message> {
    schemas.validate(id, doc).map_err(|e| {
        message!("expected the answer to have the shape TFE documents (schema {id}); {e}")
    })
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
        .map(|items| item_ids(items))
        .unwrap_or_default()
}

/// The ids of a list's items (those without an id aside).
pub fn item_ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| i.get("id").and_then(id_text))
        .collect()
}

/// `variants.agree`: the other path form's answer (`other`) has the status of the main
/// answer (`main`, whose document is `doc`) and a document that agrees with it (see
/// [`documents_agree`]).
pub fn forms_agree(
    main: &Exchange,
    doc: &Value,
    other: &Exchange,
    must_hold: Option<&str>,
) -> Result<(), Message> {
    match other.json() {
        Ok(other_doc) if other.status() == main.status() => {
            documents_agree(doc, &other_doc, must_hold)
        }
        _ => Err(message!(
            "expected the path without /api/v2 to answer like the path with it ({}); it answered {}",
            super::status_text(main.status()),
            super::status_text(other.status())
        )),
    }
}

/// `variants.agree` of `what` (`the show of <item>`) read with (`with`) and without
/// (`without`) /api/v2: [`documents_agree`], its finding naming what was read.
pub fn documents_agree_as(
    with: &Value,
    without: &Value,
    must_hold: Option<&str>,
    what: &str,
) -> Result<(), Message> {
    documents_agree(with, without, must_hold)
        .map_err(|e| message!("{what} with and without /api/v2: {e}"))
}

/// `deprecated.same-operation` of a show of `label` through `path` and through the other
/// show form `alt`: the other form answers the item (`want`, its id) and the same document.
pub fn shows_agree(
    doc: &Value,
    other: &Value,
    want: &str,
    label: &str,
    path: &str,
    alt: &str,
) -> Result<(), Message> {
    super::lifecycle::same_id(other, want, "it")
        .and_then(|()| documents_agree(doc, other, None))
        .map_err(|e| message!("the show of {label} through {path} and through {alt}: {e}"))
}

/// `variants.agree`: two answers to the same request under the two path forms describe the
/// same thing. Values may change between the two reads while other tests run, so the
/// comparison is of identity and shape: for one resource its `id`, `type` and the names of
/// its attributes and relationships; for a list, the types of its items and, when both are
/// non-empty, at least one common id (or `must_hold` in both); otherwise the top-level members.
pub fn documents_agree(a: &Value, b: &Value, must_hold: Option<&str>) -> Result<(), Message> {
    match (a.get("data"), b.get("data")) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            for member in ["id", "type"] {
                if x.get(member) != y.get(member) {
                    return Err(message!(
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
                    return Err(message!(
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
                return Err(message!(
                    "the lists hold items of different types: {:?} versus {:?}",
                    types(x),
                    types(y)
                ));
            }
            if let Some(id) = must_hold {
                for (list, name) in [(x, "with"), (y, "without")] {
                    if !ids(list).contains(id) {
                        return Err(message!("the list {name} /api/v2 does not hold {id}"));
                    }
                }
            } else if !x.is_empty() && !y.is_empty() && ids(x).is_disjoint(&ids(y)) {
                return Err(Message::new("the two lists have no item in common"));
            }
            Ok(())
        }
        (None, None) => {
            let (kx, ky) = (keys(Some(a)), keys(Some(b)));
            if kx == ky {
                Ok(())
            } else {
                Err(message!(
                    "the documents have different members: {kx:?} versus {ky:?}"
                ))
            }
        }
        _ => Err(message!(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::testing::*;
    use serde_json::json;

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
    fn the_other_form_must_answer_alike() {
        let doc = json!({"data":{"id":"a","type":"t","attributes":{}}});
        let main = exchange(200, "application/json", &doc.to_string());
        assert!(forms_agree(&main, &doc, &main, None).is_ok());
        let other = exchange(404, "application/json", &doc.to_string());
        let e = forms_agree(&main, &doc, &other, None).unwrap_err();
        assert!(e.contains("(200); it answered 404"), "{e}");
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
}
