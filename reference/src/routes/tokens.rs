//! Team and user API tokens (TFE; issue 29), and the show and delete of any token by id.
//!
//! A team has several tokens (type `authentication-tokens`, owned by the team): the legacy one,
//! without a description, that `POST /teams/:id/authentication-token` replaces and the singular
//! route reads and deletes, and any number with a description (`POST
//! /teams/:id/authentication-tokens`, one description once per team). A user has any number of
//! tokens (`/users/:id/authentication-tokens`). Each answers `created-at`, `last-used-at`,
//! `description`, `expired-at` (two years after creation unless one is sent) and the
//! relationship `created-by`; a team token also `team`. The secret (`token`) is shown by the
//! create only; it authenticates like the user token (the store's `tokens`) until the token is
//! deleted (the store forgets the secrets of a removed record). Source: go-tfe's
//! `team_token.go` and `user_token.go` (the attributes TFE answers) and the public TFE API.

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::faults::Kind;
use crate::jsonapi::{answer, created, no_content, ok, paginate, Body, Ctx};
use crate::shared::org;
use crate::state::AppState;
use crate::store::{Record, Store};

const KIND: &str = "authentication-tokens";

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/teams/{id}/authentication-token",
            get(show_legacy).post(create_legacy).delete(destroy_legacy),
        )
        .route(
            "/teams/{id}/authentication-tokens",
            get(list_team_tokens).post(create_team_token),
        )
        .route(
            "/organizations/{org}/team-tokens",
            get(list_org_team_tokens),
        )
        .route(
            "/users/{id}/authentication-tokens",
            get(list_user_tokens).post(create_user_token),
        )
        .route("/authentication-tokens/{id}", get(show).delete(destroy))
}

/// What a create was sent: the description (absent or null: none) and the expiry.
struct Sent {
    description: Option<String>,
    expired_at: Option<String>,
}

fn sent(body: &Value) -> ApiResult<Sent> {
    if body.is_null() {
        return Ok(Sent {
            description: None,
            expired_at: None,
        });
    }
    // go-tfe's create options name no type (`"type": ""`), and TFE takes them: the
    // attributes are read whatever the type.
    let Some(data) = body.get("data").and_then(Value::as_object) else {
        return Err(ApiError::invalid("data must be a resource object"));
    };
    let attributes = match data.get("attributes") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(_) => return Err(ApiError::invalid("data.attributes must be an object")),
    };
    let text = |name: &str| -> ApiResult<Option<String>> {
        match attributes.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::attribute(
                name,
                format!("{name} must be a string"),
            )),
        }
    };
    Ok(Sent {
        description: text("description")?,
        expired_at: text("expired-at")?,
    })
}

/// Inserts a token owned by `owner` and answers its document with the secret, which from now
/// on authenticates.
fn insert_token(
    ctx: &Ctx,
    store: &mut Store,
    owner: &str,
    team: Option<&str>,
    sent: Sent,
) -> ApiResult<Value> {
    let t = time::OffsetDateTime::now_utc();
    let later = t
        .replace_year(t.year() + 2)
        .unwrap_or(t + time::Duration::days(730));
    let expired_at = sent.expired_at.unwrap_or_else(|| crate::store::iso(later));
    let attrs = json!({"created-at": crate::store::iso(t), "last-used-at": null,
        "description": sent.description, "expired-at": expired_at});
    let user = store.current_user.clone();
    let secret = format!("{}.atlasv1.{}", store.random(""), store.random(""));
    let id = store.insert(
        KIND,
        "at-",
        Some(owner),
        attrs.as_object().cloned().unwrap_or_default(),
        Map::new(),
    );
    store.tokens.insert(secret.clone(), id.clone());
    let rec = store.find_mut(KIND, &id)?;
    rec.set_rel("created-by", "users", &user);
    if let Some(team) = team {
        rec.set_rel("team", "teams", team);
    }
    let mut doc = rec.render();
    doc["attributes"]["token"] = if ctx.state.fault(Kind::TokenSecretWithheld) {
        Value::Null
    } else {
        json!(secret)
    };
    Ok(doc)
}

/// A token as shown after its create: without the secret.
fn render(t: &Record) -> Value {
    let mut doc = t.render();
    doc["attributes"]["token"] = Value::Null;
    doc
}

/// The ids of a team's tokens without a description (the legacy token; one at most).
fn legacy_ids(store: &Store, team: &str) -> Vec<String> {
    store
        .list(KIND, Some(team))
        .iter()
        .filter(|t| t.attributes.get("description").is_none_or(Value::is_null))
        .map(|t| t.id.clone())
        .collect()
}

/// Creates a team's token: without a description it replaces the legacy token; a description
/// the team's tokens already have is 422.
fn create_for_team(ctx: &Ctx, team: &str, sent: Sent) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    store.find("teams", team)?;
    match &sent.description {
        None => {
            for id in legacy_ids(&store, team) {
                store.remove(KIND, &id);
            }
        }
        Some(d) => {
            if store
                .list(KIND, Some(team))
                .iter()
                .any(|t| t.attributes.get("description") == Some(&json!(d)))
            {
                // TFE's title here is "invalid attributes" (go-tfe matches the whole text).
                return Ok(answer(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    json!({"errors": [{"status": "422", "title": "invalid attributes",
                        "detail": "Validation failed: Description has already been taken",
                        "source": {"pointer": "/data/attributes/description"}}]}),
                ));
            }
        }
    }
    created(insert_token(ctx, &mut store, team, Some(team), sent)?)
}

// POST /teams/:team_id/authentication-token (the legacy token, replaced)
async fn create_legacy(
    ctx: Ctx,
    Path(team): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let mut sent = sent(&body)?;
    sent.description = None;
    create_for_team(&ctx, &team, sent)
}

// POST /teams/:team_id/authentication-tokens
async fn create_team_token(
    ctx: Ctx,
    Path(team): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let sent = sent(&body)?;
    create_for_team(&ctx, &team, sent)
}

// GET /teams/:team_id/authentication-token: the legacy token, 404 without one.
async fn show_legacy(ctx: Ctx, Path(team): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("teams", &team)?;
    let id = legacy_ids(&store, &team)
        .pop()
        .ok_or_else(|| ApiError::NotFound("the team has no token".into()))?;
    ok(render(store.find(KIND, &id)?))
}

// DELETE /teams/:team_id/authentication-token: the legacy token, 404 without one.
async fn destroy_legacy(ctx: Ctx, Path(team): Path<String>) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    store.find("teams", &team)?;
    let ids = legacy_ids(&store, &team);
    if ids.is_empty() {
        return Err(ApiError::NotFound("the team has no token".into()));
    }
    for id in ids {
        store.remove(KIND, &id);
    }
    no_content()
}

// GET /teams/:team_id/authentication-tokens
async fn list_team_tokens(ctx: Ctx, Path(team): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("teams", &team)?;
    let items: Vec<Value> = store
        .list(KIND, Some(&team))
        .into_iter()
        .map(render)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

/// The second-precision part of a timestamp, for sorting (`…T10:00:00Z` and
/// `…T10:00:00.000Z` alike).
fn sort_key(t: &Record, attr: &str) -> String {
    t.str(attr).chars().take(19).collect()
}

// GET /organizations/:organization_name/team-tokens: the tokens of the organization's teams;
// `q` keeps those of teams whose name contains it, `sort` orders by `created-at` or
// `expired-at` (`-` first: descending).
async fn list_org_team_tokens(ctx: Ctx, Path(o): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, &o)?;
    let q = ctx.q("q").map(str::to_lowercase);
    let mut tokens: Vec<&Record> = store
        .list("teams", Some(&o))
        .into_iter()
        .filter(|t| {
            q.as_ref()
                .is_none_or(|q| t.str("name").to_lowercase().contains(q))
        })
        .flat_map(|t| store.list(KIND, Some(&t.id)))
        .collect();
    tokens.sort_by_key(|t| t.seq);
    if let Some(sort) = ctx.q("sort") {
        let (attr, descending) = match sort.strip_prefix('-') {
            Some(a) => (a, true),
            None => (sort, false),
        };
        if !matches!(attr, "created-at" | "expired-at") {
            return Err(ApiError::BadRequest(format!(
                "invalid sort parameter: {sort}"
            )));
        }
        tokens.sort_by_key(|t| sort_key(t, attr));
        if descending {
            tokens.reverse();
        }
    }
    let items: Vec<Value> = tokens.into_iter().map(render).collect();
    drop(store);
    paginate(&ctx, items)
}

// POST /users/:user_id/authentication-tokens
async fn create_user_token(
    ctx: Ctx,
    Path(user): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let sent = sent(&body)?;
    let mut store = ctx.state.write();
    store.find("users", &user)?;
    created(insert_token(&ctx, &mut store, &user, None, sent)?)
}

// GET /users/:user_id/authentication-tokens
async fn list_user_tokens(ctx: Ctx, Path(user): Path<String>) -> ApiResult<Response> {
    let store = ctx.state.read();
    store.find("users", &user)?;
    let items: Vec<Value> = store
        .list(KIND, Some(&user))
        .into_iter()
        .map(render)
        .collect();
    drop(store);
    paginate(&ctx, items)
}

// GET /authentication-tokens/:id (any token: agent, team, user): never the secret.
async fn show(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    let mut doc = render(ctx.state.read().find(KIND, &id)?);
    if ctx.state.fault(Kind::TokenShownAgain) {
        doc["attributes"]["token"] = json!(format!("{id}.secret-again"));
    }
    ok(doc)
}

// DELETE /authentication-tokens/:id: the token, and its secret stops authenticating.
async fn destroy(ctx: Ctx, Path(id): Path<String>) -> ApiResult<Response> {
    ctx.state.write().delete(KIND, &id)?;
    no_content()
}
