//! The path prefix layer: TFE's ignored trailing slash, then `/api/v2` (and `/api/meta/...`)
//! off the request's URI, the original path kept for the handlers.

use axum::extract::Request;
use axum::http::{Method, Uri};

use crate::compat::Compat;
use crate::jsonapi::OriginalPath;
use crate::paths::bare_path;
use crate::state::AppState;

/// What the other layers read of a request: its method and its path with and without the
/// prefix.
pub(super) struct Target {
    /// The method.
    pub method: Method,
    /// The path without `/api/v2` (`/api/meta/...` as `/meta/...`).
    pub bare: String,
    /// Whether the path had `/api/v2`.
    pub prefixed: bool,
    /// Whether the path was TFE's `/api/meta/...` (outside `/api/v2`).
    pub meta: bool,
}

/// The request with the bare path as its URI and the original one as [`OriginalPath`], and
/// what the other layers read of it.
pub(super) fn strip(state: &AppState, mut req: Request) -> (Request, Target) {
    if state.compat == Compat::Tfe {
        // TFE's router ignores a trailing slash (`/vars/` is `/vars`).
        let path = req.uri().path();
        if path.len() > 1 && path.ends_with('/') {
            let trimmed = path.trim_end_matches('/').to_string();
            with_path(&mut req, if trimmed.is_empty() { "/" } else { &trimmed });
        }
    }
    let method = req.method().clone();
    let original = req.uri().path().to_string();
    let (bare, prefixed) = bare_path(&original);
    let meta = original.starts_with("/api/meta/");
    if bare != original {
        with_path(&mut req, &bare);
    }
    req.extensions_mut().insert(OriginalPath(original));
    (
        req,
        Target {
            meta,
            method,
            bare,
            prefixed,
        },
    )
}

/// Gives the request another path, its query kept.
fn with_path(req: &mut Request, path: &str) {
    let q = req
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    if let Ok(uri) = format!("{path}{q}").parse::<Uri>() {
        *req.uri_mut() = uri;
    }
}
