//! The deprecated `/registry-modules/...` forms of the registry module management
//! (Versioning 3), on the same store: a private module's namespace is its organization.

use axum::extract::Path;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::Value;

use super::modules::{
    created_from_vcs, from_vcs, module_id, new_version, remove_name, remove_version, render_module,
};
use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{created, no_content, ok, resource, Body, Ctx};
use crate::state::AppState;

/// The deprecated forms (Versioning 3), on the same store.
pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/registry-modules", post(create_vcs_deprecated))
        .route(
            "/registry-modules/actions/delete/{org}/{name}/{provider}/{version}",
            post(dep_delete_version),
        )
        .route(
            "/registry-modules/actions/delete/{org}/{name}/{provider}",
            post(dep_delete_provider),
        )
        .route(
            "/registry-modules/actions/delete/{org}/{name}",
            post(dep_delete_name),
        )
        .route(
            "/registry-modules/show/{org}/{name}/{provider}",
            get(dep_show),
        )
        .route(
            "/registry-modules/{org}/{name}/{provider}/versions",
            post(dep_create_version),
        )
}

// POST /registry-modules (deprecated): the organization comes from the OAuth token.
async fn create_vcs_deprecated(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    let doc = resource(&body, &["registry-modules"])?;
    let (name, provider, vcs) = from_vcs(&doc)?;
    let mut store = ctx.state.write();
    let token = vcs
        .get("oauth-token-id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let from_token = store
        .get("oauth-tokens", token)
        .and_then(|t| t.owner.clone())
        .and_then(|c| store.get("oauth-clients", &c).and_then(|c| c.owner.clone()));
    let from_identifier = vcs
        .get("identifier")
        .and_then(Value::as_str)
        .and_then(|i| i.split('/').next())
        .filter(|o| store.get("organizations", o).is_some())
        .map(String::from);
    let o = doc
        .opt("organization")
        .or(from_token)
        .or(from_identifier)
        .ok_or_else(|| {
            ApiError::attribute(
                "vcs-repo",
                "the OAuth token does not belong to an organization",
            )
        })?;
    created_from_vcs(&mut store, &o, (name, provider, vcs))
}

async fn dep_delete_version(
    ctx: Ctx,
    Path((o, name, provider, version)): Path<(String, String, String, String)>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    if !ctx.state.fault(crate::faults::Kind::VersionDeleteNoop) {
        remove_version(&mut store, &id, &version)?;
    }
    no_content()
}

async fn dep_delete_provider(
    ctx: Ctx,
    Path((o, name, provider)): Path<(String, String, String)>,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    store.delete("registry-modules", &id)?;
    no_content()
}

async fn dep_delete_name(ctx: Ctx, Path((o, name)): Path<(String, String)>) -> ApiResult<Response> {
    remove_name(&mut ctx.state.write(), &o, "private", &o, &name)?;
    no_content()
}

async fn dep_show(
    ctx: Ctx,
    Path((o, name, provider)): Path<(String, String, String)>,
) -> ApiResult<Response> {
    let store = ctx.state.read();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    ok(render_module(&store, store.find("registry-modules", &id)?))
}

async fn dep_create_version(
    ctx: Ctx,
    Path((o, name, provider)): Path<(String, String, String)>,
    Body(body): Body,
) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let id = module_id(&store, &o, "private", &o, &name, &provider)?;
    created(new_version(&ctx, &mut store, &id, &body)?)
}
