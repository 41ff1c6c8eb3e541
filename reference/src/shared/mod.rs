//! What the route groups share, below every route (a route module never imports another):
//! the organization check, the names TFE allows, a workspace by name, a new team's attributes
//! ([`mod@self`]); organization tags ([`tags`]); a run's status ([`runs`]); what an upload to
//! the object store makes ready ([`uploads`]) and the archive it serves back ([`archive`]).

pub(crate) mod archive;
pub(crate) mod runs;
pub(crate) mod tags;
pub(crate) mod uploads;

use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::store::{now, Store};

/// 404 unless the organization exists.
pub(crate) fn org(store: &Store, name: &str) -> Result<(), ApiError> {
    store.find("organizations", name).map(|_| ())
}

/// Names allow letters, digits, `-` and `_` (TFE).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// The id of the workspace `name` of organization `org_name` (404 when either is not there).
pub(crate) fn ws_by_name(store: &Store, org_name: &str, name: &str) -> ApiResult<String> {
    org(store, org_name)?;
    store
        .list("workspaces", Some(org_name))
        .iter()
        .find(|w| w.str("name") == name)
        .map(|w| w.id.clone())
        .ok_or_else(|| ApiError::not_found("workspace", name))
}

/// The attributes of a new team.
pub(crate) fn team_defaults(name: &str) -> Value {
    json!({
        "name": name, "visibility": "secret", "users-count": 0, "sso-team-id": null,
        "allow-member-token-management": true, "created-at": now(),
        "organization-access": {
            "manage-policies": false, "manage-policy-overrides": false,
            "manage-workspaces": false, "manage-vcs-settings": false,
            "manage-providers": false, "manage-modules": false, "manage-run-tasks": false,
            "manage-projects": false, "read-workspaces": false, "read-projects": false,
            "manage-membership": false, "manage-teams": false, "manage-organization-access": false,
            "access-secret-teams": false, "manage-agent-pools": false,
        },
        "permissions": {"can-update-membership": true, "can-destroy": true,
            "can-update-organization-access": true, "can-update-api-token": true,
            "can-update-visibility": true},
    })
}
