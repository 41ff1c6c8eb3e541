//! Variables through the deprecated `/vars` group: create with a workspace relationship,
//! list by `filter[workspace][name]` (and the organization), update the value, delete.
//! The group has no show; lists verify what updates and deletes did.

use super::model::{route, Coll, Family, UpdateDef};

const WS: usize = 0;

const WORKSPACE: Coll = Coll {
    show: Some("/workspaces/{id}"),
    delete: Some(route("DELETE", "/workspaces/{id}", None)),
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

const VARIABLE: Coll = Coll {
    parent: Some(WS),
    list: Some("/vars?filter[workspace][name]={parent_name}&filter[organization][name]={org}"),
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/vars/{id}",
            Some(r#"{"data":{"type":"vars","id":"{id}","attributes":{"value":"v{unique}"}}}"#),
        ),
        pointer: "/attributes/value",
        value: "v{unique}",
    }),
    delete: Some(route("DELETE", "/vars/{id}", None)),
    unknown_id: "var-conformunknown0",
    ..Coll::new(
        "variable",
        route(
            "POST",
            "/vars",
            Some(
                r#"{"data":{"type":"vars","attributes":{"key":"conform_{unique}","value":"v","category":"env","hcl":false,"sensitive":false},"relationships":{"workspace":{"data":{"type":"workspaces","id":"{parent}"}}}}}"#,
            ),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "variables",
    namespace: true,
    colls: &[WORKSPACE, VARIABLE],
};
