//! Stub.

use axum::Router;

use crate::jsonapi::AppState;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
}
