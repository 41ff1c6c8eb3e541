//! Agent pools with their authentication tokens: pools (created at `agent-pools`, updated by
//! name, deleted) and tokens (created, shown, listed per pool, deleted; they go with the pool).

use super::model::{route, Coll, Family, UpdateDef};

const POOL: usize = 0;

const AGENT_POOL: Coll = Coll {
    show: Some("/agent-pools/{id}"),
    list: Some("/organizations/{org}/agent-pools"),
    paged: true,
    update: Some(UpdateDef {
        route: route(
            "PATCH",
            "/agent-pools/{id}",
            Some(r#"{"data":{"type":"agent-pools","attributes":{"name":"{ns}-ap{unique}"}}}"#),
        ),
        pointer: "/attributes/name",
        value: "{ns}-ap{unique}",
    }),
    delete: Some(route("DELETE", "/agent-pools/{id}", None)),
    unknown_id: "apool-conformunknow",
    ..Coll::new(
        "agent pool",
        route(
            "POST",
            "/organizations/{org}/agent-pools",
            Some(r#"{"data":{"type":"agent-pools","attributes":{"name":"{ns}-ap{unique}"}}}"#),
        ),
    )
};

const TOKEN: Coll = Coll {
    parent: Some(POOL),
    show: Some("/authentication-tokens/{id}"),
    list: Some("/agent-pools/{parent}/authentication-tokens"),
    paged: true,
    delete: Some(route("DELETE", "/authentication-tokens/{id}", None)),
    unknown_id: "at-conformunknown00",
    ..Coll::new(
        "agent token",
        route(
            "POST",
            "/agent-pools/{parent}/authentication-tokens",
            Some(
                r#"{"data":{"type":"authentication-tokens","attributes":{"description":"conform {unique}"}}}"#,
            ),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "agents",
    namespace: true,
    colls: &[AGENT_POOL, TOKEN],
};
