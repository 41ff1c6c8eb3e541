//! Workspaces with configuration versions and runs. Configuration versions are uploaded and
//! archived; runs follow the TFE run state machine (reference/README.md, "Runs"): a run
//! starts `planned` when the configuration version it runs (the workspace's newest) is
//! uploaded, else `pending`; apply, discard, cancel, force-cancel and force-execute move it
//! on, and are refused (409) in other states. A state the model cannot know (an action the
//! spec leaves open) is learnt from the next read.

use super::model::{route, ActionDef, Coll, Family, Foreign, Model, StateDef, UpdateDef};

const WS: usize = 0;
const CV: usize = 1;

const WORKSPACE: Coll = Coll {
    show: Some("/workspaces/{id}"),
    list: Some("/organizations/{org}/workspaces"),
    paged: true,
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/workspaces/{id}",
            Some(
                r#"{"data":{"type":"workspaces","attributes":{"description":"conform {unique}"}}}"#,
            ),
        ),
        pointer: "/attributes/description",
        value: "conform {unique}",
    }),
    delete: Some(route("DELETE", "/workspaces/{id}", None)),
    unknown_id: "ws-conformunknown00",
    foreign: Foreign::Fail,
    ..Coll::new(
        "workspace",
        route(
            "POST",
            "/organizations/{org}/workspaces",
            Some(
                r#"{"data":{"type":"workspaces","attributes":{"name":"{ns}-ws{unique}","auto-apply":false}}}"#,
            ),
        ),
    )
};

fn cv_initial(_: &Model, _: Option<usize>) -> Option<String> {
    Some("pending".into())
}

const CONFIGURATION_VERSION: Coll = Coll {
    parent: Some(WS),
    show: Some("/configuration-versions/{id}"),
    list: Some("/workspaces/{parent}/configuration-versions"),
    paged: true,
    unknown_id: "cv-conformunknown00",
    remember: &[("upload", "/data/attributes/upload-url")],
    state: Some(StateDef {
        pointer: "/attributes/status",
        initial: cv_initial,
        read: None,
        actions: &[
            ActionDef {
                name: "upload a tarball to",
                route: route("PUT", "", None),
                upload: true,
                from: &["pending"],
                to: "uploaded",
                refused_elsewhere: false,
                transition: None,
            },
            ActionDef {
                name: "archive",
                route: route("POST", "/configuration-versions/{id}/actions/archive", None),
                upload: false,
                from: &["pending", "uploaded"],
                to: "archived",
                refused_elsewhere: true,
                transition: None,
            },
        ],
    }),
    ..Coll::new(
        "configuration version",
        route(
            "POST",
            "/workspaces/{parent}/configuration-versions",
            Some(
                r#"{"data":{"type":"configuration-versions","attributes":{"auto-queue-runs":false}}}"#,
            ),
        ),
    )
};

/// A run of the workspace's newest configuration version: `planned` when it is uploaded,
/// `pending` when it is not (or there is none); unknown when its state is unknown.
fn run_initial(model: &Model, workspace: Option<usize>) -> Option<String> {
    let ws = workspace?;
    match model.newest_under(CV, ws) {
        None => Some("pending".into()),
        Some(cv) => match model.items[cv].state.as_deref() {
            Some("uploaded") => Some("planned".into()),
            Some(_) => Some("pending".into()),
            None => None,
        },
    }
}

const fn run_action(
    name: &'static str,
    path: &'static str,
    from: &'static [&'static str],
    to: &'static str,
) -> ActionDef {
    ActionDef {
        name,
        route: route("POST", path, Some(r#"{"comment":"conform {unique}"}"#)),
        upload: false,
        from,
        to,
        refused_elsewhere: true,
        transition: None,
    }
}

const RUN: Coll = Coll {
    parent: Some(WS),
    show: Some("/runs/{id}"),
    list: Some("/workspaces/{parent}/runs"),
    paged: true,
    unknown_id: "run-conformunknown0",
    state: Some(StateDef {
        pointer: "/attributes/status",
        initial: run_initial,
        read: None,
        actions: &[
            run_action("apply", "/runs/{id}/actions/apply", &["planned"], "applied"),
            run_action(
                "discard",
                "/runs/{id}/actions/discard",
                &["pending", "planned"],
                "discarded",
            ),
            run_action(
                "cancel",
                "/runs/{id}/actions/cancel",
                &["pending", "planned"],
                "canceled",
            ),
            run_action(
                "force-cancel",
                "/runs/{id}/actions/force-cancel",
                &["pending", "planned"],
                "force_canceled",
            ),
            ActionDef {
                name: "force-execute",
                route: route("POST", "/runs/{id}/actions/force-execute", None),
                upload: false,
                from: &["pending"],
                to: "planned",
                refused_elsewhere: true,
                transition: None,
            },
        ],
    }),
    ..Coll::new(
        "run",
        route(
            "POST",
            "/runs",
            Some(
                r#"{"data":{"type":"runs","attributes":{"message":"conform {unique}"},"relationships":{"workspace":{"data":{"type":"workspaces","id":"{parent}"}}}}}"#,
            ),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "workspaces",
    namespace: true,
    colls: &[WORKSPACE, CONFIGURATION_VERSION, RUN],
};
