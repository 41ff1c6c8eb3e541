//! The registry read protocol ("Registry modules, read endpoints"): pure judgments on its
//! answers. Nothing here sends a request; `crate::runner`'s registry part sends them and records the
//! results.
//!
//! The spec names no member of a registry answer. The core judgments read only what the spec's
//! words give: the values of the path (the namespace, name, provider and version a request
//! names, which the spec's "Identifiers used in paths" table calls exactly that), found as JSON
//! strings, and, where an answer has objects, the members named like those identifiers. The
//! exact TFE shapes (`modules`, `meta.limit`, `id` = `ns/name/provider/version`) are judged
//! only by the `tfe.*` checks (tfe-api-facts 3.3).
//!
//! By job: `reads` (the module, its versions, its latest version), `lists` (pages, filters and
//! searches), `shape` (TFE's shapes of the answers), `download` (the download's source address
//! and the archive it gives), `archive` (that archive unpacked as terraform unpacks it); here the module a run knows and the readers of an answer.

mod archive;
mod download;
mod lists;
mod reads;
mod shape;

pub use archive::*;
pub use download::*;
pub use lists::*;
pub use reads::*;
pub use shape::*;

use serde_json::{Map, Value};

use super::{status_text, Message};
use crate::target::Exchange;

/// A module version of the registry, as the run knows it: the one it published, or the one
/// `--module` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleRef {
    /// The namespace (the organization, for a private module).
    pub namespace: String,
    /// The module name.
    pub name: String,
    /// The provider.
    pub provider: String,
    /// The version.
    pub version: String,
}

impl ModuleRef {
    /// `namespace/name/provider`, the module's source address in the registry.
    pub fn source(&self) -> String {
        format!("{}/{}/{}", self.namespace, self.name, self.provider)
    }
}

impl std::fmt::Display for ModuleRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.source(), self.version)
    }
}

/// Every object of `doc` (at any depth, `doc` itself included), depth first.
fn objects(doc: &Value) -> Vec<&Map<String, Value>> {
    let mut out = Vec::new();
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                out.push(map);
                stack.extend(map.values().rev());
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    out
}

/// Every string value of `doc`, at any depth.
fn strings(doc: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => out.push(s.as_str()),
            Value::Object(map) => stack.extend(map.values()),
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    out
}

/// True when some string of `doc` is exactly `text`.
fn has_string(doc: &Value, text: &str) -> bool {
    strings(doc).contains(&text)
}

/// The objects of `doc` whose `name` is the module's name (the spec's identifier `name`).
fn named<'a>(doc: &'a Value, name: &str) -> Vec<&'a Map<String, Value>> {
    objects(doc)
        .into_iter()
        .filter(|o| o.get("name").and_then(Value::as_str) == Some(name))
        .collect()
}

fn member<'a>(o: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    o.get(name).and_then(Value::as_str)
}

/// A registry answer that must be a JSON document (`what`: "`offset=1&limit=1` to answer a
/// list"): a 2xx answer with a JSON body. Returns the document.
pub fn registry_answer(ex: &Exchange, what: &str) -> Result<Value, Message> {
    let received = match (ex.is_success(), ex.json()) {
        (true, Ok(doc)) => return Ok(doc),
        (true, Err(e)) => format!("{} ({e})", status_text(ex.status())),
        (false, _) => transport_or_status(ex),
    };
    Err(message!("expected {what}, received {received}"))
}

/// The status of an answer, or the transport error that stood for it.
fn transport_or_status(ex: &Exchange) -> String {
    match &ex.response {
        Err(e) => e.to_string(),
        Ok(r) => r.status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module the tests of every part judge answers about.
    pub(super) fn m() -> ModuleRef {
        ModuleRef {
            namespace: "acme".into(),
            name: "network".into(),
            provider: "aws".into(),
            version: "1.0.0".into(),
        }
    }

    #[test]
    fn a_registry_answer_is_a_json_document() {
        use crate::checks::testing::exchange;
        let json = exchange(200, "application/json", r#"{"modules":[]}"#);
        assert!(registry_answer(&json, "a list").is_ok());
        let html = exchange(200, "text/html", "<html>");
        assert!(registry_answer(&html, "a list")
            .unwrap_err()
            .starts_with("expected a list, received 200 ("));
        assert_eq!(
            registry_answer(&exchange(404, "", ""), "a list").unwrap_err(),
            "expected a list, received 404"
        );
    }
}
