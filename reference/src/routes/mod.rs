//! The routes, one module per endpoint group, merged into one router (the gate goes in front
//! of it, in the app). A group's module never imports another's: what two groups share is
//! below every route (`render`, `shared`).

use axum::extract::DefaultBodyLimit;
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::error::ApiError;
use crate::state::AppState;

mod admin;
mod agents;
mod configs;
mod misc;
mod notifications;
mod oauth;
pub(crate) mod organizations;
mod policies;
mod projects;
pub(crate) mod registry;
mod reserved_tag_keys;
mod run_triggers;
mod runs;
mod ssh_keys;
mod teams;
mod tokens;
pub(crate) mod workspaces;
mod ws_extra;

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
