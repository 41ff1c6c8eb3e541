//! Administrator user actions. Users are made by inviting an email to the sequence's
//! organization (`POST /organizations/:org/organization-memberships`; the user id is at
//! `relationships.user`), read through the administrator search (`GET /admin/users?q=`),
//! suspended / unsuspended and granted / revoked administrator rights (each refused, TFE 400,
//! when the user is already in that state), and deleted. Users outlive the organization, so
//! the sequence deletes the ones it leaves. Needs the administrator token.

use serde_json::Value;

use super::model::{route, ActionDef, Coll, Family, Model, StateDef};

fn active(_: &Model, _: Option<usize>) -> Option<String> {
    Some("active".into())
}

/// `active`, `suspended`, `admin` or `suspended admin`, from `is-suspended` and `is-admin`.
fn read(object: &Value) -> Option<String> {
    let flag = |name: &str| {
        object
            .pointer(&format!("/attributes/{name}"))
            .and_then(Value::as_bool)
    };
    let state = match (flag("is-suspended")?, flag("is-admin")?) {
        (false, false) => "active",
        (true, false) => "suspended",
        (false, true) => "admin",
        (true, true) => "suspended admin",
    };
    Some(state.into())
}

fn suspend(s: &str) -> Option<&'static str> {
    match s {
        "active" => Some("suspended"),
        "admin" => Some("suspended admin"),
        _ => None,
    }
}

fn unsuspend(s: &str) -> Option<&'static str> {
    match s {
        "suspended" => Some("active"),
        "suspended admin" => Some("admin"),
        _ => None,
    }
}

fn grant_admin(s: &str) -> Option<&'static str> {
    match s {
        "active" => Some("admin"),
        "suspended" => Some("suspended admin"),
        _ => None,
    }
}

fn revoke_admin(s: &str) -> Option<&'static str> {
    match s {
        "admin" => Some("active"),
        "suspended admin" => Some("suspended"),
        _ => None,
    }
}

const fn user_action(
    name: &'static str,
    path: &'static str,
    transition: fn(&str) -> Option<&'static str>,
) -> ActionDef {
    ActionDef {
        name,
        route: route("POST", path, None),
        upload: false,
        from: &[],
        to: "",
        refused_elsewhere: true,
        transition: Some(transition),
    }
}

const USER: Coll = Coll {
    admin: true,
    id_pointer: "/data/relationships/user/data/id",
    show: Some("/admin/users?q={email}"),
    show_list: true,
    list: Some("/admin/users?q={ns}-u"),
    paged: true,
    delete: Some(route("DELETE", "/admin/users/{id}", None)),
    cleanup: Some(route("DELETE", "/admin/users/{id}", None)),
    unknown_id: "user-conformunknown",
    remember: &[("email", "/data/attributes/email")],
    state: Some(StateDef {
        pointer: "/attributes/is-suspended",
        initial: active,
        read: Some(read),
        actions: &[
            user_action("suspend", "/admin/users/{id}/actions/suspend", suspend),
            user_action(
                "unsuspend",
                "/admin/users/{id}/actions/unsuspend",
                unsuspend,
            ),
            user_action(
                "grant administrator rights to",
                "/admin/users/{id}/actions/grant_admin",
                grant_admin,
            ),
            user_action(
                "revoke administrator rights of",
                "/admin/users/{id}/actions/revoke_admin",
                revoke_admin,
            ),
        ],
    }),
    ..Coll::new(
        "user",
        route(
            "POST",
            "/organizations/{org}/organization-memberships",
            Some(
                r#"{"data":{"type":"organization-memberships","attributes":{"email":"{ns}-u{unique}@example.com"}}}"#,
            ),
        ),
    )
};

/// The family.
pub static FAMILY: Family = Family {
    name: "admin_users",
    namespace: true,
    colls: &[USER],
};
