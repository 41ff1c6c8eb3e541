//! Organizations: create, show, list (searched by the sequence's name prefix), page through,
//! update the email, delete. The namespace is the name prefix itself.

use super::model::{route, Coll, Family, Foreign, UpdateDef};

const ORGANIZATION: Coll = Coll {
    show: Some("/organizations/{id}"),
    list: Some("/organizations?q={ns}"),
    paged: true,
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/organizations/{id}",
            Some(
                r#"{"data":{"type":"organizations","attributes":{"email":"{ns}u{unique}@example.com"}}}"#,
            ),
        ),
        pointer: "/attributes/email",
        value: "{ns}u{unique}@example.com",
    }),
    delete: Some(route("DELETE", "/organizations/{id}", None)),
    unknown_id: "conform-no-such-organization",
    foreign: Foreign::OutsidePrefix,
    ..Coll::new(
        "organization",
        route(
            "POST",
            "/organizations",
            Some(
                r#"{"data":{"type":"organizations","attributes":{"name":"{ns}{unique}","email":"{ns}{unique}@example.com"}}}"#,
            ),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "organizations",
    namespace: false,
    colls: &[ORGANIZATION],
};
