//! One operation: its parameters, request body (inferred from the payload template, with an
//! example) and answers (the envelopes and the error document, as schema references).

use serde_json::{json, Map, Value};

use super::{component_name, JSONAPI};
use crate::catalog::{BodyKind, Catalog, Endpoint, Kind, QueryParam};

pub(super) fn schema_ref(schema_id: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{}", component_name(schema_id)) })
}

/// One operation object: query parameters, request body, answers.
pub(super) fn operation(catalog: &Catalog, e: &Endpoint, payload: Option<&str>) -> Value {
    let mut op = Map::new();
    let mut query: Vec<QueryParam> = e.query.clone();
    if e.paged {
        for name in ["page", "page_size", "page[number]", "page[size]"] {
            query.push(QueryParam {
                name: name.into(),
                required: false,
                paged: true,
                value: None,
                finds: None,
                narrows: None,
                exact: false,
            });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let params: Vec<Value> = query
        .iter()
        .filter(|q| seen.insert(q.name.clone()))
        .map(|q| {
            let schema = if q.paged {
                let max = if q.name.contains("size") {
                    json!(100)
                } else {
                    Value::Null
                };
                let mut s = json!({ "type": "integer", "minimum": 1 });
                if !max.is_null() {
                    s["maximum"] = max;
                }
                s
            } else {
                json!({ "type": "string" })
            };
            let mut p =
                json!({ "name": q.name, "in": "query", "required": q.required, "schema": schema });
            if q.paged {
                p["description"] = json!(if q.name.contains('[') {
                    "TFE paging (tfe-api-facts 0.5)"
                } else {
                    "paging (spec: Endpoints conventions, paged; Limits 1)"
                });
            }
            p
        })
        .collect();
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    match e.body {
        BodyKind::Json => {
            let template = payload
                .and_then(|p| catalog.payload(p))
                .and_then(|t| serde_json::from_str::<Value>(t).ok());
            let (schema, example) = match &template {
                Some(t) => (infer_schema(t), fill_example(t)),
                None => (json!({ "type": "object" }), Value::Null),
            };
            let mut media = json!({ "schema": schema });
            if !example.is_null() {
                media["example"] = example;
            }
            op.insert(
                "requestBody".into(),
                json!({ "required": true, "content": { JSONAPI: media } }),
            );
        }
        BodyKind::Tarball => {
            op.insert(
                "requestBody".into(),
                json!({ "required": true, "content": { "application/octet-stream": { "schema": { "type": "string", "contentMediaType": "application/gzip" } } } }),
            );
        }
        BodyKind::None => {}
    }
    op.insert("responses".into(), responses(e));
    Value::Object(op)
}

pub(super) fn responses(e: &Endpoint) -> Value {
    let doc = |schema: Value, description: &str| json!({ "description": description, "content": { JSONAPI: { "schema": schema } } });
    let single = || doc(schema_ref("envelope/single"), "one resource");
    let mut out = Map::new();
    let codes = |default: &[u16]| -> Vec<String> {
        let codes: &[u16] = if e.expect.status.is_empty() {
            default
        } else {
            &e.expect.status
        };
        codes.iter().map(u16::to_string).collect()
    };
    match e.kind {
        Kind::Create => {
            for code in codes(&[201]) {
                out.insert(code, single());
            }
        }
        Kind::Show | Kind::Update => {
            for code in codes(&[200]) {
                out.insert(code, single());
            }
        }
        Kind::List => {
            for code in codes(&[200]) {
                out.insert(code, doc(schema_ref("envelope/list"), "a list"));
            }
        }
        Kind::Delete | Kind::Relationship => {
            for code in codes(&[204]) {
                out.insert(code, json!({ "description": "done, no document" }));
            }
        }
        Kind::Action | Kind::Upload => {
            out.insert(
                "2XX".into(),
                json!({ "description": "done (TFE: 202 for run actions and archive, 200 otherwise); a body, if any, is JSON" }),
            );
        }
        Kind::Read => {
            out.insert(
                "200".into(),
                json!({ "description": "a JSON document (not a JSON:API resource)", "content": { "application/json": { "schema": {} } } }),
            );
        }
        Kind::Download => {
            out.insert(
                "2XX".into(),
                json!({ "description": "the bytes, or 204 with the address in X-Terraform-Get (tfe-api-facts 3.3)", "headers": { "X-Terraform-Get": { "schema": { "type": "string" } } } }),
            );
            out.insert(
                "3XX".into(),
                json!({ "description": "a redirect to the source" }),
            );
        }
    }
    out.insert(
        "4XX".into(),
        doc(
            schema_ref("tfe/error"),
            "refused: TFE answers a JSON:API error document (tfe-api-facts 0.3, 1.3)",
        ),
    );
    Value::Object(out)
}

/// A JSON Schema for bodies shaped like a payload template: every member present is required,
/// `data.type` is the template's own, placeholders are strings.
pub(super) fn infer_schema(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut props = Map::new();
            for (k, item) in map {
                let schema = match (k.as_str(), item) {
                    ("type", Value::String(t)) if !t.contains("{{") => json!({ "const": t }),
                    _ => infer_schema(item),
                };
                props.insert(k.clone(), schema);
            }
            let required: Vec<&String> = map.keys().collect();
            json!({ "type": "object", "properties": props, "required": required })
        }
        Value::Array(items) => match items.first() {
            Some(first) => json!({ "type": "array", "items": infer_schema(first) }),
            None => json!({ "type": "array" }),
        },
        Value::String(_) => json!({ "type": "string" }),
        Value::Bool(_) => json!({ "type": "boolean" }),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({ "type": "integer" }),
        Value::Number(_) => json!({ "type": "number" }),
        Value::Null => json!({}),
    }
}

/// The template with every `{{placeholder}}` replaced by an example value.
pub(super) fn fill_example(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_example(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(fill_example).collect()),
        Value::String(s) if s.contains("{{") => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{") {
                out.push_str(&rest[..start]);
                match rest[start..].find("}}") {
                    Some(end) => {
                        out.push_str("example");
                        rest = &rest[start + end + 2..];
                    }
                    None => {
                        rest = &rest[start..];
                        break;
                    }
                }
            }
            out.push_str(rest);
            Value::String(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_give_schemas_and_examples() {
        let t: Value = serde_json::from_str(
            r#"{"data":{"type":"workspaces","attributes":{"name":"{{prefix}}-{{unique}}","auto-apply":false}}}"#,
        )
        .unwrap();
        let s = infer_schema(&t);
        assert_eq!(
            s["properties"]["data"]["properties"]["type"]["const"],
            "workspaces"
        );
        assert_eq!(
            s["properties"]["data"]["properties"]["attributes"]["properties"]["auto-apply"]["type"],
            "boolean"
        );
        assert_eq!(
            fill_example(&t)["data"]["attributes"]["name"],
            "example-example"
        );
    }
}
