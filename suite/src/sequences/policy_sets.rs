//! Policy sets with versions and workspace attachments. Sets are created, shown, listed,
//! renamed and deleted through both delete paths (the spec's `DELETE /policies/:policy_set_id`
//! and `DELETE /policy-sets/:id`); a version starts `pending` and is `ready` once a tarball is
//! PUT to its upload address (`links.upload`); attachments link the sequence's workspaces to a
//! set (`POST` / `DELETE /policy-sets/:id/relationships/workspaces`) and are read back from
//! the set's `relationships.workspaces`.

use super::model::{
    route, ActionDef, AltDelete, Coll, Family, ListRead, Model, StateDef, UpdateDef,
};

const SET: usize = 0;
const WS: usize = 2;

// The set's own operations are many; its versions and attachments are where the histories are.
const POLICY_SET: Coll = Coll {
    weight: 1,
    show: Some("/policy-sets/{id}"),
    list: Some("/organizations/{org}/policy-sets"),
    paged: true,
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/policy-sets/{id}",
            Some(
                r#"{"data":{"type":"policy-sets","attributes":{"description":"conform {unique}"}}}"#,
            ),
        ),
        pointer: "/attributes/description",
        value: "conform {unique}",
    }),
    delete: Some(route("DELETE", "/policies/{id}", None)),
    delete_alt: &[AltDelete {
        route: route("DELETE", "/policy-sets/{id}", None),
        same_name: false,
    }],
    unknown_id: "polset-conformunknow",
    ..Coll::new(
        "policy set",
        route(
            "POST",
            "/organizations/{org}/policy-sets",
            Some(
                r#"{"data":{"type":"policy-sets","attributes":{"name":"{ns}-ps{unique}","kind":"sentinel"}}}"#,
            ),
        ),
    )
};

fn pending(_: &Model, _: Option<usize>) -> Option<String> {
    Some("pending".into())
}

const VERSION: Coll = Coll {
    parent: Some(SET),
    weight: 2,
    show: Some("/policy-set-versions/{id}"),
    unknown_id: "polsetver-conformunk",
    remember: &[("upload", "/data/links/upload")],
    state: Some(StateDef {
        pointer: "/attributes/status",
        initial: pending,
        read: None,
        actions: &[ActionDef {
            name: "upload a tarball to",
            route: route("PUT", "", None),
            upload: true,
            from: &["pending"],
            to: "ready",
            refused_elsewhere: false,
            transition: None,
        }],
    }),
    ..Coll::new(
        "policy set version",
        route("POST", "/policy-sets/{parent}/versions", None),
    )
};

const WORKSPACE: Coll = Coll {
    weight: 1,
    show: Some("/workspaces/{id}"),
    unknown_id: "ws-conformunknown00",
    ..Coll::new(
        "workspace",
        route(
            "POST",
            "/organizations/{org}/workspaces",
            Some(r#"{"data":{"type":"workspaces","attributes":{"name":"{ns}-ws{unique}"}}}"#),
        ),
    )
};

const ATTACHMENT: Coll = Coll {
    parent: Some(SET),
    weight: 2,
    with: Some(WS),
    list: Some("/policy-sets/{parent}"),
    list_read: Some(ListRead {
        registry: false,
        items: "/data/relationships/workspaces/data",
        key: "id",
        field: None,
        only_state: None,
        absent_when_empty: false,
    }),
    delete: Some(route(
        "DELETE",
        "/policy-sets/{parent}/relationships/workspaces",
        Some(r#"{"data":[{"type":"workspaces","id":"{id}"}]}"#),
    )),
    relation: true,
    ..Coll::new(
        "workspace attachment",
        route(
            "POST",
            "/policy-sets/{parent}/relationships/workspaces",
            Some(r#"{"data":[{"type":"workspaces","id":"{other}"}]}"#),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "policy_sets",
    namespace: true,
    colls: &[POLICY_SET, VERSION, WORKSPACE, ATTACHMENT],
};
