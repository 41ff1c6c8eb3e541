//! The paths object: catalog paths as OpenAPI templates, one template per shape (two paths
//! differing only in their parameters' names share one), each under its server.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// Where an operation is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Server {
    Api,
    Registry,
}

/// The paths object under construction: path templates by shape, so that two catalog paths
/// differing only in their parameters' names share one template (OpenAPI forbids both).
#[derive(Default)]
pub(super) struct Paths {
    /// Shape (parameters as `{}`) -> (the template written, its server, its operations by method).
    items: BTreeMap<String, (String, Server, Map<String, Value>)>,
}

impl Paths {
    /// Adds an operation; `false` when the path and method are already taken (the first
    /// catalog row keeps them; the later one is named in its `x-conform-tests`).
    pub(super) fn add(&mut self, server: Server, template: &str, method: &str, op: Value) -> bool {
        let parts = segments(template);
        let shape = parts
            .iter()
            .map(|s| match s {
                Segment::Literal(l) => l.clone(),
                Segment::Param(_) => "{}".to_string(),
            })
            .collect::<Vec<_>>()
            .join("/");
        let key = format!("{server:?} /{shape}");
        let method = method.to_ascii_lowercase();
        let written = match self.items.get(&key) {
            Some((t, _, _)) => t.clone(),
            None => openapi_path(&parts),
        };
        let names: Vec<String> = segments(&written)
            .into_iter()
            .filter_map(|s| match s {
                Segment::Param(p) => Some(p),
                Segment::Literal(_) => None,
            })
            .collect();
        let entry = self
            .items
            .entry(key)
            .or_insert_with(|| (written, server, Map::new()));
        if let Some(existing) = entry.2.get_mut(&method) {
            let tests = op
                .get("x-conform-tests")
                .cloned()
                .unwrap_or_else(|| json!([]));
            if let Some(list) = existing
                .get_mut("x-conform-tests")
                .and_then(Value::as_array_mut)
            {
                list.extend(tests.as_array().cloned().unwrap_or_default());
            }
            return false;
        }
        let mut op = op;
        let mut params: Vec<Value> = names
            .iter()
            .map(|n| {
                json!({
                    "name": n, "in": "path", "required": true,
                    "schema": { "type": "string", "minLength": 1 },
                })
            })
            .collect();
        if let Some(query) = op.get("parameters").and_then(Value::as_array) {
            params.extend(query.iter().cloned());
        }
        if !params.is_empty() {
            op["parameters"] = Value::Array(params);
        }
        entry.2.insert(method, op);
        true
    }

    pub(super) fn into_value(self) -> (Value, usize) {
        let mut paths = Map::new();
        let mut count = 0;
        for (_, (template, server, mut ops)) in self.items {
            count += ops.len();
            if server == Server::Registry {
                ops.insert(
                    "servers".into(),
                    json!([{
                        "url": registry_server(),
                        "description": "the module registry read protocol: its address comes from service discovery (`/.well-known/terraform.json`, key `modules.v1`); this is the default"
                    }]),
                );
            }
            // A registry path that is also a path of the API is written in full instead,
            // without its own server (two path items cannot share a template).
            if server == Server::Registry && paths.contains_key(&template) {
                ops.remove("servers");
                let full = format!("{}{}", registry_server(), template.trim_end_matches('/'));
                paths.insert(full, Value::Object(ops));
            } else {
                paths.insert(template, Value::Object(ops));
            }
        }
        (Value::Object(paths), count)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Segment {
    Literal(String),
    Param(String),
}

/// The segments of a catalog path (`:param`) or an OpenAPI one (`{param}`).
pub(super) fn segments(path: &str) -> Vec<Segment> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if let Some(p) = s.strip_prefix(':') {
                Segment::Param(p.to_string())
            } else if let Some(p) = s.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                Segment::Param(p.to_string())
            } else {
                Segment::Literal(s.to_string())
            }
        })
        .collect()
}

pub(super) fn openapi_path(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        match s {
            Segment::Literal(l) => out.push_str(l),
            Segment::Param(p) => {
                out.push('{');
                out.push_str(p);
                out.push('}');
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

pub(super) fn shape(path: &str) -> String {
    segments(path)
        .iter()
        .map(|s| match s {
            Segment::Literal(l) => l.as_str(),
            Segment::Param(_) => "{}",
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The registry read protocol's server: its default address, without the trailing slash.
pub(super) fn registry_server() -> &'static str {
    crate::catalog::REGISTRY_DEFAULT.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_differing_in_parameter_names_share_a_template() {
        let mut paths = Paths::default();
        assert!(paths.add(Server::Api, "/runs/:run_id", "GET", json!({})));
        assert!(paths.add(Server::Api, "/runs/:id", "PATCH", json!({})));
        assert!(!paths.add(Server::Api, "/runs/:id", "GET", json!({})));
        let (value, count) = paths.into_value();
        assert_eq!(count, 2);
        let item = &value["/runs/{run_id}"];
        assert_eq!(item["patch"]["parameters"][0]["name"], "run_id");
    }
}
