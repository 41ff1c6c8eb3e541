//! The routes, one module per endpoint group, merged into one router behind the gate.

use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower::Layer;

use crate::error::ApiError;
use crate::gate::gate;
use crate::jsonapi::AppState;
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
mod runs;
mod teams;
mod workspaces;

pub(crate) use organizations::insert_organization;
pub(crate) use projects::render_project;
pub(crate) use registry::seed_module_version;
pub(crate) use workspaces::render_ws;

/// The service: the gate in front of every route.
pub(crate) fn app(state: AppState) -> Router {
    let routes = Router::new()
        .merge(organizations::router())
        .merge(workspaces::router())
        .merge(teams::router())
        .merge(runs::router())
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
        .with_state(state.clone());
    let gated = from_fn_with_state(state, gate).layer(routes);
    Router::new().fallback_service(gated)
}

async fn not_found() -> Response {
    ApiError::NotFound("route not found".into()).into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::MethodNotAllowed.into_response()
}

/// 404 unless the organization exists.
pub(crate) fn org(store: &Store, name: &str) -> Result<(), ApiError> {
    store.find("organizations", name).map(|_| ())
}
