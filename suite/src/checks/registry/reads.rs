//! The reads of a module: the answer is about it, its versions list its version, a version
//! answers that version, the latest version names its provider.

use crate::checks::Message;
use serde_json::Value;

use super::{has_string, member, named, objects, strings, ModuleRef};

/// Whether an answer holds the module: an object named like it whose `namespace` (when it
/// has one) is the module's; or, in an answer without such objects, a string that is the
/// module's name or has it as a `/`-separated segment (`ns/name/provider`).
pub fn registry_holds_module(doc: &Value, m: &ModuleRef) -> bool {
    let named = named(doc, &m.name);
    if !named.is_empty() {
        return named
            .iter()
            .any(|o| member(o, "namespace").is_none_or(|ns| ns == m.namespace));
    }
    strings(doc)
        .iter()
        .any(|s| *s == m.name || s.split('/').any(|seg| seg == m.name))
}

/// `registry.read`: the answer is about the module.
pub fn registry_read(doc: &Value, m: &ModuleRef, pages: usize) -> Result<(), Message> {
    if registry_holds_module(doc, m) {
        return Ok(());
    }
    let read = if pages > 1 {
        format!(" ({pages} pages read with `offset`)")
    } else {
        String::new()
    };
    Err(message!(
        "expected the answer to be about the module `{}`{read}; it names no module `{}` in namespace `{}`",
        m.source(),
        m.name,
        m.namespace
    ))
}

/// `registry.versions`: the versions of the module list its version.
pub fn registry_versions_listed(doc: &Value, m: &ModuleRef) -> Result<(), Message> {
    if has_string(doc, &m.version) {
        return Ok(());
    }
    let listed = registry_listed_versions(doc);
    Err(message!(
        "expected the versions of `{}` to list its published version `{}`; {}",
        m.source(),
        m.version,
        if listed.is_empty() {
            "the answer lists no version".to_string()
        } else {
            format!("it lists {}", listed.join(", "))
        }
    ))
}

/// The versions a versions answer lists: the non-empty `version` members of its objects, in
/// the order they stand, each once (preflight's look-up of `--module`, and its findings).
pub fn registry_listed_versions(doc: &Value) -> Vec<String> {
    let mut listed: Vec<String> = Vec::new();
    for v in objects(doc)
        .into_iter()
        .filter_map(|o| member(o, "version"))
    {
        if !v.is_empty() && !listed.iter().any(|l| l == v) {
            listed.push(v.to_string());
        }
    }
    listed
}

/// `registry.version`: the answer is that version of that module.
pub fn registry_version_answered(doc: &Value, m: &ModuleRef) -> Result<(), Message> {
    if !registry_holds_module(doc, m) {
        return Err(message!(
            "expected the version `{}` of `{}`; the answer names no module `{}`",
            m.version,
            m.source(),
            m.name
        ));
    }
    let stated: Vec<&str> = named(doc, &m.name)
        .into_iter()
        .filter_map(|o| member(o, "version"))
        .collect();
    if let Some(other) = stated.iter().find(|v| **v != m.version) {
        return Err(message!(
            "expected the version `{}` of `{}`; the answer states version `{other}`",
            m.version,
            m.source()
        ));
    }
    if stated.is_empty() && !has_string(doc, &m.version) {
        return Err(message!(
            "expected the version `{}` of `{}`; the answer does not name that version",
            m.version,
            m.source()
        ));
    }
    Ok(())
}

/// `registry.latest`: the answer is the module with its provider. `list`: the answer lists
/// the latest version per provider (`…/:namespace/:name`), so it must list the module's
/// provider among others; otherwise (`…/:namespace/:name/:provider`) it must state no other.
pub fn registry_latest(doc: &Value, m: &ModuleRef, list: bool) -> Result<(), Message> {
    let providers: Vec<&str> = named(doc, &m.name)
        .into_iter()
        .filter(|o| member(o, "namespace").is_none_or(|ns| ns == m.namespace))
        .filter_map(|o| member(o, "provider"))
        .collect();
    let what = if list {
        format!(
            "expected the latest versions of `{}/{}` to include the provider `{}`",
            m.namespace, m.name, m.provider
        )
    } else {
        format!("expected the latest version of `{}`", m.source())
    };
    if providers.is_empty() {
        return if registry_holds_module(doc, m) && has_string(doc, &m.provider) {
            Ok(())
        } else {
            Err(message!(
                "{what}; the answer does not name the module `{}` with the provider `{}`",
                m.name,
                m.provider
            ))
        };
    }
    let ok = if list {
        providers.contains(&m.provider.as_str())
    } else {
        providers.iter().all(|p| *p == m.provider)
    };
    if ok {
        Ok(())
    } else {
        Err(message!(
            "{what}; the answer states the provider {}",
            providers
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::m;
    use super::super::*;
    use serde_json::json;

    #[test]
    fn versions_must_list_the_version() {
        let ok =
            json!({"modules":[{"source":"acme/network/aws","versions":[{"version":"1.0.0"}]}]});
        assert!(registry_versions_listed(&ok, &m()).is_ok());
        let empty = json!({"modules":[{"source":"acme/network/aws","versions":[]}]});
        let err = registry_versions_listed(&empty, &m()).unwrap_err();
        assert!(err.contains("lists no version"), "{err}");
        assert!(registry_shape(&ok, RegistryShape::Versions).is_ok());
        assert!(registry_shape(&json!({"versions":["1.0.0"]}), RegistryShape::Versions).is_err());
    }

    #[test]
    fn a_version_page_of_another_version_fails() {
        let doc = |v: &str| json!({"id": format!("acme/network/aws/{v}"), "namespace":"acme","name":"network","provider":"aws","version":v,"versions":["1.0.0", v]});
        assert!(registry_version_answered(&doc("1.0.0"), &m()).is_ok());
        let err = registry_version_answered(&doc("1.0.1"), &m()).unwrap_err();
        assert!(err.contains("states version `1.0.1`"), "{err}");
        assert!(registry_shape(&doc("1.0.1"), RegistryShape::Module).is_ok());
        // shape-free answers are judged by the strings they hold
        assert!(registry_version_answered(&json!(["acme/network/aws", "1.0.0"]), &m()).is_ok());
    }

    #[test]
    fn latest_names_the_provider() {
        let one =
            |p: &str| json!({"namespace":"acme","name":"network","provider":p,"version":"1.0.0"});
        assert!(registry_latest(&one("aws"), &m(), false).is_ok());
        assert!(registry_latest(&one("google"), &m(), false).is_err());
        let list = json!({"modules":[one("google"), one("aws")]});
        assert!(registry_latest(&list, &m(), true).is_ok());
        assert!(registry_latest(&list, &m(), false).is_err());
    }

    #[test]
    fn the_module_is_found_by_name_and_namespace() {
        let list = json!({"modules":[{"namespace":"other","name":"network","provider":"aws"}]});
        assert!(!registry_holds_module(&list, &m()));
        let list = json!({"modules":[{"namespace":"acme","name":"network","provider":"aws"}]});
        assert!(registry_holds_module(&list, &m()));
        assert!(registry_holds_module(
            &json!({"source":"acme/network/aws"}),
            &m()
        ));
        assert!(!registry_holds_module(&json!({"modules":[]}), &m()));
    }
}
