//! The routes, one module per endpoint group, merged into one router (the gate goes in front
//! of it), and the shapes' seeds, made as the routes make them.

use axum::extract::DefaultBodyLimit;
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::shapes::{
    seeded_archive, Shape, Shapes, SEEDED_MODULE, SEEDED_ORGANIZATION, SEEDED_WORKSPACE,
};
use crate::state::AppState;
use crate::store::Store;

mod admin;
mod agents;
mod configs;
mod misc;
mod notifications;
mod oauth;
mod organizations;
mod policies;
mod projects;
mod registry;
mod reserved_tag_keys;
mod run_triggers;
mod runs;
mod ssh_keys;
mod teams;
mod tokens;
mod workspaces;
mod ws_extra;

use organizations::insert_organization;
use registry::seed_module_version;

/// Every route, with the answers to an unknown route or method.
pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .merge(organizations::router())
        .merge(workspaces::router())
        .merge(ws_extra::router())
        .merge(ssh_keys::router())
        .merge(reserved_tag_keys::router())
        .merge(teams::router())
        .merge(tokens::router())
        .merge(runs::router())
        .merge(run_triggers::router())
        .merge(configs::router())
        .merge(policies::router())
        .merge(oauth::router())
        .merge(notifications::router())
        .merge(agents::router())
        .merge(registry::router())
        .merge(admin::router())
        .merge(projects::router())
        .merge(misc::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.body_limit))
        .with_state(state)
}

async fn not_found() -> Response {
    ApiError::NotFound("route not found".into()).into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::MethodNotAllowed.into_response()
}

/// Seeds what `conform serve` was asked for: an organization, and a workspace in it in local
/// execution mode; records them in `store.seeded` (`organization`: its name, `workspace`:
/// its id).
pub(crate) fn seed_given(
    store: &mut Store,
    organization: Option<&str>,
    workspace: Option<&str>,
) -> ApiResult<()> {
    let Some(org) = organization else {
        return Ok(());
    };
    if store.get("organizations", org).is_none() {
        insert_organization(store, org, &format!("{org}@reference.test"), &Map::new())?;
    }
    store.seeded.push(("organization".into(), org.into()));
    if let Some(name) = workspace {
        let mut local = Map::new();
        local.insert("execution-mode".into(), Value::from("local"));
        let ws = workspaces::insert_workspace(store, org, name, None, &local)?;
        let id = ws["id"].as_str().unwrap_or_default().to_string();
        store.seeded.push(("workspace".into(), id));
    }
    Ok(())
}

/// Seeds what the shapes need into a fresh store (the organization `one-organization` and
/// `registry-only` hold, the module version of `registry-only`) and records it in
/// `store.seeded`.
pub(crate) fn seed(store: &mut Store, shapes: &Shapes) -> ApiResult<()> {
    let needs_org = shapes.has(Shape::OneOrganization)
        || shapes.has(Shape::RegistryOnly)
        || shapes.has(Shape::CloudBlockOnly);
    if needs_org {
        insert_organization(
            store,
            SEEDED_ORGANIZATION,
            &format!("{SEEDED_ORGANIZATION}@reference.test"),
            &Map::new(),
        )?;
    }
    if shapes.has(Shape::CloudBlockOnly) {
        let (name, id) = SEEDED_WORKSPACE;
        let ws = workspaces::insert_workspace(store, SEEDED_ORGANIZATION, name, None, &Map::new())?;
        let issued = ws["id"].as_str().unwrap_or_default().to_string();
        store.rekey("workspaces", &issued, id);
        store.seeded.push(("workspace".into(), id.into()));
    }
    if shapes.has(Shape::OneOrganization) || shapes.has(Shape::CloudBlockOnly) {
        store
            .seeded
            .push(("organization".into(), SEEDED_ORGANIZATION.into()));
    }
    if shapes.has(Shape::RegistryOnly) {
        let (ns, name, provider, version) = SEEDED_MODULE;
        seed_module_version(
            store,
            SEEDED_ORGANIZATION,
            name,
            provider,
            version,
            seeded_archive(),
        )?;
        store.seeded.push((
            "registry_module".into(),
            format!("{ns}/{name}/{provider}/{version}"),
        ));
    }
    Ok(())
}
