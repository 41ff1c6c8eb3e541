//! What an upload to the object store (`PUT /v1/object/<id>`) makes ready beyond a
//! configuration version or a state version: a policy set version, a module version.

use serde_json::{json, Value};

use crate::store::{now, Store};

/// After the tarball PUT: the version is `ready` and current.
pub(crate) fn policy_set_version_uploaded(store: &mut Store, id: &str) {
    let Some(v) = store.get_mut("policy-set-versions", id) else {
        return;
    };
    v.attributes.insert("status".into(), json!("ready"));
    v.attributes.insert("updated-at".into(), json!(now()));
    if let Some(Value::Object(ts)) = v.attributes.get_mut("status-timestamps") {
        ts.insert("ready-at".into(), json!(now()));
    }
    let set = v.owner.clone().unwrap_or_default();
    if let Some(s) = store.get_mut("policy-sets", &set) {
        s.set_rel("current-version", "policy-set-versions", id);
    }
}

/// After the tarball PUT: the version is `ok` and the module set up.
pub(crate) fn module_version_uploaded(store: &mut Store, id: &str) {
    let Some(v) = store.get_mut("registry-module-versions", id) else {
        return;
    };
    v.attributes.insert("status".into(), json!("ok"));
    v.attributes.insert("updated-at".into(), json!(now()));
    let module = v.owner.clone().unwrap_or_default();
    if let Some(m) = store.get_mut("registry-modules", &module) {
        m.attributes
            .insert("status".into(), json!("setup_complete"));
        m.attributes.insert("updated-at".into(), json!(now()));
    }
}
