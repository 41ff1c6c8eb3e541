//! Teams and team access: teams (the organization's `owners` team comes with it), and
//! team-workspace grants between the sequence's teams and workspaces. A second grant for the
//! same pair is refused; deleting a team or a workspace takes its grants along.

use super::model::{route, Coll, Family, Foreign, UpdateDef};

const TEAM: usize = 0;
const WS: usize = 1;

const TEAM_COLL: Coll = Coll {
    show: Some("/teams/{id}"),
    list: Some("/organizations/{org}/teams"),
    paged: true,
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/teams/{id}",
            Some(r#"{"data":{"type":"teams","attributes":{"name":"{ns}-t{unique}"}}}"#),
        ),
        pointer: "/attributes/name",
        value: "{ns}-t{unique}",
    }),
    delete: Some(route("DELETE", "/teams/{id}", None)),
    unknown_id: "team-conformunknown",
    foreign: Foreign::Named("owners"),
    ..Coll::new(
        "team",
        route(
            "POST",
            "/organizations/{org}/teams",
            Some(
                r#"{"data":{"type":"teams","attributes":{"name":"{ns}-t{unique}","visibility":"secret"}}}"#,
            ),
        ),
    )
};

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

const TEAM_WORKSPACE: Coll = Coll {
    parent: Some(WS),
    with: Some(TEAM),
    show: Some("/team-workspaces/{id}"),
    list: Some("/team-workspaces?filter[workspace][id]={parent}"),
    paged: true,
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/team-workspaces/{id}",
            Some(r#"{"data":{"type":"team-workspaces","attributes":{"access":"write"}}}"#),
        ),
        pointer: "/attributes/access",
        value: "write",
    }),
    delete: Some(route("DELETE", "/team-workspaces/{id}", None)),
    unknown_id: "tws-conformunknown0",
    unique_pair: true,
    ..Coll::new(
        "team access",
        route(
            "POST",
            "/team-workspaces",
            Some(
                r#"{"data":{"type":"team-workspaces","attributes":{"access":"read"},"relationships":{"team":{"data":{"type":"teams","id":"{other}"}},"workspace":{"data":{"type":"workspaces","id":"{parent}"}}}}}"#,
            ),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "teams",
    namespace: true,
    colls: &[TEAM_COLL, WORKSPACE, TEAM_WORKSPACE],
};
