//! The gate: one middleware in front of the routes, made of layers with one job each, called
//! in order:
//!
//! 1. [`prefix`]: TFE's trailing slash, then `/api/v2` off the path;
//! 2. [`limits`] and [`inject`]: the rate limits, the routing and transport faults, the token,
//!    then [`pretend`]'s answer when a shape implements nothing; the body's media type and
//!    size, the body read whole ([`ids`] turns its ids back into
//!    what the store knows), and the behaviour faults that undo what the request did;
//! 3. the route, then [`include`](mod@include)'s `included` documents;
//! 4. [`envelope`]: errors made JSON:API documents and the faults that rewrite answers, then
//!    [`ids`]' shaped ids.
//!
//! An answer a layer gives early is finished (4) like the routes' answers, except the
//! transport faults' (rate limits, resets), which nothing after touches.

use axum::extract::{Request, State};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower::Layer;

use crate::error::ApiResult;
use crate::state::AppState;
use prefix::Target;

mod answer;
mod envelope;
mod ids;
mod include;
mod inject;
mod later;
mod limits;
mod prefix;
mod pretend;

/// `routes` with the gate in front of them.
pub(crate) fn wrap(state: AppState, routes: Router) -> Router {
    let gated = from_fn_with_state(state, gate).layer(routes);
    Router::new().fallback_service(gated)
}

/// The middleware.
async fn gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let (req, at) = prefix::strip(&state, req);
    if let Some(res) = limits::rate_limited(&state) {
        return res;
    }
    if let Some(res) = limits::unavailable_now_and_then(&state) {
        return res;
    }
    if let Err(err) = inject::routing(&state, &at) {
        return finish(&state, &at, err.into_response()).await;
    }
    if let Some(res) = inject::transport(&state, &at).await {
        return res;
    }
    if let Err(err) = admit(&state, &at, &req) {
        return finish(&state, &at, err.into_response()).await;
    }
    let req = match pretend::answer(&state, &at, req).await {
        Ok(res) => return finish(&state, &at, res).await,
        Err(req) => req,
    };
    // Held up to the finished answer.
    let mut restore = inject::Restore::begin(&state, &at).await;
    let res = match read_body(&state, &at, req).await {
        Ok(req) => {
            let res = respond(&state, &at, req, next).await;
            restore.end(&state, &at, res)
        }
        Err(res) => res,
    };
    finish(&state, &at, res).await
}

/// What refuses a request before the route: `page-params-refused`, the token, the body's
/// media type and declared size, `upload-refused`.
fn admit(state: &AppState, at: &Target, req: &Request) -> ApiResult<()> {
    inject::page_params(state, req)?;
    limits::authenticated(state, at, req)?;
    limits::declared_body(state, at, req)?;
    inject::upload_refused(state, at)
}

/// The request with its body read whole, its shaped ids as the store knows them.
async fn read_body(state: &AppState, at: &Target, req: Request) -> Result<Request, Response> {
    let req = limits::buffered(state, at, req).await?;
    ids::request(state, at, req).await
}

/// The route's answer with `included` and `bare-snake-case`.
async fn respond(state: &AppState, at: &Target, req: Request, next: Next) -> Response {
    let include = include::param(&req);
    let res = later::delete_later(state, req, next).await;
    let res = include::decorate(state, include, res).await;
    let res = later::list_lag(state, at, res).await;
    inject::snake_case(state, at, res).await
}

/// Normalizes errors, applies the answer-rewriting faults, then the shapes' rendering.
async fn finish(state: &AppState, at: &Target, res: Response) -> Response {
    let res = envelope::apply(state, &at.method, &at.bare, res).await;
    ids::answer(state, res).await
}
