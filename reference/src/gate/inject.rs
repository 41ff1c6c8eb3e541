//! The fault injection layer, on the request side: the routing faults (and the routes the
//! shapes take away), the transport faults that act on a route, the faults that refuse a
//! request, and the behaviour faults that answer as if they acted but keep the store as it was.
//! The faults that rewrite answers are [`super::envelope`]'s.

use std::io;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde_json::Value;

use super::answer::rewrite_jsonapi;
use super::prefix::Target;
use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::paths::{is_bare_api, is_upload_path, RouteSpec};
use crate::state::AppState;
use crate::store::Store;

/// Whether a request is a route written as text.
fn pattern(at: &Target, route: &str) -> bool {
    RouteSpec::matches_text(route, at.method.as_str(), &at.bare)
}

fn is_deprecated_registry(bare: &str) -> bool {
    bare == "/registry-modules" || bare.starts_with("/registry-modules/")
}

/// The routing faults and the routes the shapes take away (404), then `server-error` (500).
pub(super) fn routing(state: &AppState, at: &Target) -> ApiResult<()> {
    let faults = &state.faults;
    let (method, bare) = (at.method.as_str(), at.bare.as_str());
    let dropped = (faults.has(&Kind::NoApiV2) && at.prefixed)
        || (faults.has(&Kind::NoBare) && is_bare_api(bare, at.prefixed))
        || state.shapes.refuses(&at.method, bare, at.prefixed, at.meta)
        || faults.route(Kind::DropRoute, method, bare)
        || (faults.has(&Kind::NoDeprecatedRegistry) && is_deprecated_registry(bare))
        || (faults.has(&Kind::NoAgentPoolSingular)
            && pattern(at, "POST /organizations/:organization_name/agent-pool"));
    if dropped {
        return Err(ApiError::NotFound("route not found".into()));
    }
    if faults.route(Kind::Handler404, method, bare) {
        return Err(ApiError::NotFound(
            "no workspace of that name here (or you may not see it)".into(),
        ));
    }
    if faults.route(Kind::ServerError, method, bare) {
        return Err(ApiError::Internal("injected server error".into()));
    }
    Ok(())
}

/// `slow` (30 s before going on) and `reset` (an answer whose body fails: the connection
/// closes without a whole answer, which nothing after may touch).
pub(super) async fn transport(state: &AppState, at: &Target) -> Option<Response> {
    let on_route = |kind| state.faults.route(kind, at.method.as_str(), &at.bare);
    if on_route(Kind::Slow) {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    let reset = on_route(Kind::Reset);
    reset.then(|| {
        let failing =
            stream::once(async { Err::<Bytes, io::Error>(io::Error::other("injected reset")) });
        Response::new(Body::from_stream(failing))
    })
}

/// `page-params-refused`: 400 for the spec's `page` and `page_size`.
pub(super) fn page_params(state: &AppState, req: &Request) -> ApiResult<()> {
    let spec_names = || {
        req.uri().query().unwrap_or("").split('&').any(|pair| {
            let key = pair.split('=').next().unwrap_or("");
            key == "page" || key == "page_size"
        })
    };
    if state.faults.has(&Kind::PageParamsRefused) && spec_names() {
        let err = ApiError::BadRequest("use page[number] and page[size]".into());
        return Err(err);
    }
    Ok(())
}

/// `upload-refused`: 403 for an upload.
pub(super) fn upload_refused(state: &AppState, at: &Target) -> ApiResult<()> {
    if state.faults.has(&Kind::UploadRefused) && is_object_put(at) {
        return Err(ApiError::Forbidden("uploads are refused".into()));
    }
    Ok(())
}

fn is_object_put(at: &Target) -> bool {
    at.method == Method::PUT && is_upload_path(&at.bare)
}

/// A request the behaviour faults act on, with the store as it was before it; held up to the
/// finished answer.
pub(super) struct Restore {
    /// The store before the request, when a fault undoes what the request does.
    snapshot: Option<Store>,
    archive: bool,
    /// Keeps the request alone (restoring) or apart from one that restores.
    _exclusive: Option<Exclusive>,
}

/// Guards of [`AppState::exclusive`].
enum Exclusive {
    Read(#[allow(dead_code)] tokio::sync::OwnedRwLockReadGuard<()>),
    Write(#[allow(dead_code)] tokio::sync::OwnedRwLockWriteGuard<()>),
}

impl Restore {
    /// Whether a behaviour fault undoes this request; takes the store as it is if so. A
    /// request that restores the store runs alone: a concurrent request's change must not be
    /// undone with it (the fault breaks one behaviour, not the others).
    pub(super) async fn begin(state: &AppState, at: &Target) -> Restore {
        let faults = &state.faults;
        let archive = pattern(at, "POST /configuration-versions/:id/actions/archive");
        let deprecated_write = is_deprecated_registry(&at.bare) && at.method == Method::POST;
        let restore = (faults.has(&Kind::UpdateNotPersisted) && at.method == Method::PATCH)
            || (faults.has(&Kind::DeleteNoop) && at.method == Method::DELETE)
            || (faults.has(&Kind::ForceCancelNoop)
                && pattern(at, "POST /admin/runs/:id/actions/force-cancel"))
            || (faults.has(&Kind::SuspendNoop)
                && pattern(at, "POST /admin/users/:id/actions/suspend"))
            || (faults.has(&Kind::ArchiveNoop) && archive)
            || (faults.has(&Kind::UploadNotApplied) && is_object_put(at))
            || (faults.has(&Kind::DeprecatedActsElsewhere) && deprecated_write)
            || (faults.has(&Kind::RunActionNoop)
                && at.method == Method::POST
                && at.bare.starts_with("/runs/")
                && at.bare.contains("/actions/"))
            || (faults.has(&Kind::RelationshipNoop)
                && matches!(at.method, Method::POST | Method::DELETE)
                && at.bare.contains("/relationships/"))
            || (faults.has(&Kind::ModuleConsumersNoop)
                && at.method == Method::PATCH
                && at.bare.ends_with("/module-consumers"));
        let exclusive = match faults.restores() {
            true if restore => Some(Exclusive::Write(
                state.exclusive.clone().write_owned().await,
            )),
            true => Some(Exclusive::Read(state.exclusive.clone().read_owned().await)),
            false => None,
        };
        Restore {
            snapshot: restore.then(|| state.read().clone()),
            archive,
            _exclusive: exclusive,
        }
    }

    /// The store put back as it was, and the answer the request would have had.
    pub(super) fn end(&mut self, state: &AppState, at: &Target, mut res: Response) -> Response {
        let Some(snapshot) = self.snapshot.take() else {
            return res;
        };
        *state.write() = snapshot;
        if res.status().is_success() || state.faults.has(&Kind::ArchiveNoop) && self.archive {
            if at.method == Method::DELETE {
                res = StatusCode::NO_CONTENT.into_response();
            } else if self.archive {
                res = StatusCode::ACCEPTED.into_response();
            } else if is_object_put(at) {
                res = StatusCode::OK.into_response();
            }
        }
        res
    }
}

/// `bare-snake-case`: every attribute name of a JSON:API answer to a bare GET in snake_case.
pub(super) async fn snake_case(state: &AppState, at: &Target, res: Response) -> Response {
    if at.prefixed || at.method != Method::GET || !state.faults.has(&Kind::BareSnakeCase) {
        return res;
    }
    rewrite_jsonapi(res, |doc| {
        let snake = |item: &mut Value| {
            if let Some(attrs) = item.get_mut("attributes").and_then(Value::as_object_mut) {
                let renamed: serde_json::Map<String, Value> = std::mem::take(attrs)
                    .into_iter()
                    .map(|(k, v)| (k.replace('-', "_"), v))
                    .collect();
                *attrs = renamed;
            }
        };
        match doc.get_mut("data") {
            Some(Value::Array(items)) => items.iter_mut().for_each(snake),
            Some(item) => snake(item),
            None => {}
        }
    })
    .await
}
