//! TFE's shapes of the registry's answers (tfe-api-facts 3.3).

use crate::checks::Message;
use serde_json::Value;

use super::registry_modules;

/// Which TFE shape an answer must have (tfe-api-facts 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryShape {
    /// `…/versions`: `{modules:[{versions:[{version}]}]}`.
    Versions,
    /// One module version: `{id, namespace, name, provider, version, …}`.
    Module,
    /// A list or search: `{meta:{limit,current_offset}, modules:[{namespace,name,provider,version}]}`.
    List,
}

/// `tfe.registry-shape`.
pub fn registry_shape(doc: &Value, shape: RegistryShape) -> Result<(), Message> {
    let strings_of = |o: &Value, names: &[&str]| -> Result<(), Message> {
        let missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| o.get(*n).and_then(Value::as_str).is_none())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(message!("no string {}", missing.join(", ")))
        }
    };
    let result = match shape {
        RegistryShape::Versions => match registry_modules(doc).and_then(|m| m.first()) {
            None => Err(Message::new("no `modules` array with the module first")),
            Some(first) => match first.get("versions").and_then(Value::as_array) {
                None => Err(Message::new("`modules[0]` has no `versions` array")),
                Some(versions) => versions.iter().enumerate().try_for_each(|(i, v)| {
                    strings_of(v, &["version"])
                        .map_err(|e| message!("`modules[0].versions[{i}]`: {e}"))
                }),
            },
        },
        RegistryShape::Module => {
            strings_of(doc, &["id", "namespace", "name", "provider", "version"]).and_then(|_| {
                let part = |k: &str| doc.get(k).and_then(Value::as_str).unwrap_or_default();
                let id = format!(
                    "{}/{}/{}/{}",
                    part("namespace"),
                    part("name"),
                    part("provider"),
                    part("version")
                );
                if part("id") == id {
                    Ok(())
                } else {
                    Err(message!("`id` is `{}`, not `{id}`", part("id")))
                }
            })
        }
        RegistryShape::List => {
            let meta = match doc.get("meta") {
                Some(meta)
                    if meta.get("limit").is_some_and(Value::is_u64)
                        && meta.get("current_offset").is_some_and(Value::is_u64) =>
                {
                    Ok(())
                }
                _ => Err(Message::new(
                    "no `meta` with numbers `limit` and `current_offset`",
                )),
            };
            meta.and_then(|_| match registry_modules(doc) {
                None => Err(Message::new("no `modules` array")),
                Some(modules) => modules.iter().enumerate().try_for_each(|(i, m)| {
                    strings_of(m, &["namespace", "name", "provider", "version"])
                        .map_err(|e| message!("`modules[{i}]`: {e}"))
                }),
            })
        }
    };
    result.map_err(|e| {
        let expected = match shape {
            RegistryShape::Versions => "{\"modules\":[{\"versions\":[{\"version\":…}]}]}",
            RegistryShape::Module => {
                "{\"id\":\"ns/name/provider/version\",\"namespace\",\"name\",\"provider\",\"version\",…}"
            }
            RegistryShape::List => {
                "{\"meta\":{\"limit\",\"current_offset\"},\"modules\":[{\"namespace\",\"name\",\"provider\",\"version\"}]}"
            }
        };
        message!("expected the registry protocol's shape {expected}; {e}")
    })
}
