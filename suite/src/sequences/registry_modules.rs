//! Registry modules with versions. Modules are made under one of two names (so that deleting
//! a name takes several providers along), shown through the organization-scoped and the
//! deprecated `/registry-modules/show/...` forms (which must agree), listed, and deleted by
//! provider or by name through both the organization-scoped and the deprecated
//! `/registry-modules/actions/delete/...` forms. Versions are created through both create
//! forms, published by a PUT of a tarball to `links.upload` (`pending` → `ok`), read back
//! through the registry read protocol (`{registry}/:org/:name/:provider/versions` lists the
//! published versions, 404 while there are none) and deleted through both forms; deleting a
//! module's last version deletes the module (TFE).

use super::model::{route, ActionDef, AltDelete, Coll, Family, ListRead, Model, StateDef};

const MODULE: usize = 0;

const ORG_MODULE: &str = "/organizations/{org}/registry-modules/private/{org}/{name}/{provider}";

// The module's own operations are many (four delete forms); its versions are where the
// histories are.
const REGISTRY_MODULE: Coll = Coll {
    weight: 1,
    show: Some(ORG_MODULE),
    show_alt: Some("/registry-modules/show/{org}/{name}/{provider}"),
    list: Some("/organizations/{org}/registry-modules"),
    paged: true,
    delete: Some(route("DELETE", ORG_MODULE, None)),
    delete_alt: &[
        AltDelete {
            route: route(
                "POST",
                "/registry-modules/actions/delete/{org}/{name}/{provider}",
                None,
            ),
            same_name: false,
        },
        AltDelete {
            route: route(
                "DELETE",
                "/organizations/{org}/registry-modules/private/{org}/{name}",
                None,
            ),
            same_name: true,
        },
        AltDelete {
            route: route(
                "POST",
                "/registry-modules/actions/delete/{org}/{name}",
                None,
            ),
            same_name: true,
        },
    ],
    unknown_id: "conform-unknown-0000",
    remember: &[("provider", "/data/attributes/provider")],
    ..Coll::new(
        "registry module",
        route(
            "POST",
            "/organizations/{org}/registry-modules",
            Some(
                r#"{"data":{"type":"registry-modules","attributes":{"name":"{ns}-m{pick}","provider":"p{unique}","registry-name":"private"}}}"#,
            ),
        ),
    )
};

fn pending(_: &Model, _: Option<usize>) -> Option<String> {
    Some("pending".into())
}

const VERSION_BODY: &str =
    r#"{"data":{"type":"registry-module-versions","attributes":{"version":"1.0.{unique}"}}}"#;

const MODULE_VERSION: Coll = Coll {
    parent: Some(MODULE),
    weight: 2,
    list: Some("{org}/{parent_name}/{parent_provider}/versions"),
    list_read: Some(ListRead {
        registry: true,
        items: "/modules/0/versions",
        key: "version",
        field: Some("version"),
        only_state: Some("ok"),
        absent_when_empty: true,
    }),
    create_alt: Some(route(
        "POST",
        "/registry-modules/{org}/{parent_name}/{parent_provider}/versions",
        Some(VERSION_BODY),
    )),
    delete: Some(route(
        "DELETE",
        "/organizations/{org}/registry-modules/private/{org}/{parent_name}/{parent_provider}/{version}",
        None,
    )),
    delete_alt: &[AltDelete {
        route: route(
            "POST",
            "/registry-modules/actions/delete/{org}/{parent_name}/{parent_provider}/{version}",
            None,
        ),
        same_name: false,
    }],
    last_takes_parent: true,
    remember: &[
        ("upload", "/data/links/upload"),
        ("version", "/data/attributes/version"),
    ],
    state: Some(StateDef {
        pointer: "/attributes/status",
        initial: pending,
        read: None,
        actions: &[ActionDef {
            name: "publish (upload a tarball to)",
            route: route("PUT", "", None),
            upload: true,
            from: &["pending"],
            to: "ok",
            refused_elsewhere: false,
            transition: None,
        }],
    }),
    ..Coll::new(
        "module version",
        route(
            "POST",
            "/organizations/{org}/registry-modules/private/{org}/{parent_name}/{parent_provider}/versions",
            Some(VERSION_BODY),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "registry_modules",
    namespace: true,
    colls: &[REGISTRY_MODULE, MODULE_VERSION],
};
