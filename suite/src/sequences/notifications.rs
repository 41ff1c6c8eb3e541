//! Notification configurations of a workspace: create, show, list, page through, update,
//! delete, and the verify action (which leaves the configuration as it was).

use super::model::{route, ActionDef, Coll, Family, Model, StateDef, UpdateDef};

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

fn unknown(_: &Model, _: Option<usize>) -> Option<String> {
    None
}

const NOTIFICATION: Coll = Coll {
    parent: Some(WS),
    show: Some("/notification-configurations/{id}"),
    list: Some("/workspaces/{parent}/notification-configurations"),
    paged: true,
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/notification-configurations/{id}",
            Some(
                r#"{"data":{"type":"notification-configurations","attributes":{"name":"{ns}-nc{unique}"}}}"#,
            ),
        ),
        pointer: "/attributes/name",
        value: "{ns}-nc{unique}",
    }),
    delete: Some(route("DELETE", "/notification-configurations/{id}", None)),
    unknown_id: "nc-conformunknown00",
    // verify changes nothing the model tracks: a state machine with no state pointer reads.
    state: Some(StateDef {
        pointer: "/attributes/conform-no-state",
        initial: unknown,
        read: None,
        actions: &[ActionDef {
            name: "verify",
            route: route(
                "POST",
                "/notification-configurations/{id}/actions/verify",
                None,
            ),
            upload: false,
            from: &[],
            to: "",
            refused_elsewhere: false,
            transition: None,
        }],
    }),
    ..Coll::new(
        "notification configuration",
        route(
            "POST",
            "/workspaces/{parent}/notification-configurations",
            Some(
                r#"{"data":{"type":"notification-configurations","attributes":{"name":"{ns}-nc{unique}","destination-type":"generic","enabled":false,"url":"https://example.com/","triggers":["run:completed"]}}}"#,
            ),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "notifications",
    namespace: true,
    colls: &[WORKSPACE, NOTIFICATION],
};
