//! The private module registry: the organization-scoped management API ([`modules`]), its
//! deprecated `/registry-modules/...` forms ([`deprecated`], same store), the read protocol
//! under `/api/registry/v1/modules/` and service discovery ([`protocol`]).

use axum::Router;

use crate::state::AppState;

mod deprecated;
mod modules;
mod protocol;

pub(crate) use modules::seed_module_version;

/// Every registry route.
pub(crate) fn router() -> Router<AppState> {
    modules::router()
        .merge(deprecated::router())
        .merge(protocol::router())
}
