//! TFE's shapes of the registry's answers (tfe-api-facts 3.3).

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
pub fn registry_shape(doc: &Value, shape: RegistryShape) -> Result<(), String> {
    let strings_of = |o: &Value, names: &[&str]| -> Result<(), String> {
        let missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| o.get(*n).and_then(Value::as_str).is_none())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("no string {}", missing.join(", ")))
        }
    };
    let result = match shape {
        RegistryShape::Versions => match registry_modules(doc).and_then(|m| m.first()) {
            None => Err("no `modules` array with the module first".to_string()),
            Some(first) => match first.get("versions").and_then(Value::as_array) {
                None => Err("`modules[0]` has no `versions` array".to_string()),
                Some(versions) => versions.iter().enumerate().try_for_each(|(i, v)| {
                    strings_of(v, &["version"])
                        .map_err(|e| format!("`modules[0].versions[{i}]`: {e}"))
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
                    Err(format!("`id` is `{}`, not `{id}`", part("id")))
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
                _ => Err("no `meta` with numbers `limit` and `current_offset`".to_string()),
            };
            meta.and_then(|_| match registry_modules(doc) {
                None => Err("no `modules` array".to_string()),
                Some(modules) => modules.iter().enumerate().try_for_each(|(i, m)| {
                    strings_of(m, &["namespace", "name", "provider", "version"])
                        .map_err(|e| format!("`modules[{i}]`: {e}"))
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
        format!("expected the registry protocol's shape {expected}; {e}")
    })
}
