//! What projects and variable sets share: an organization's page of them, a name free in it,
//! one made under its name.

use axum::response::Response;
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{merge, paginate, Ctx};
use crate::shared::org;
use crate::store::{Record, Store};

/// A page of an organization's projects or variable sets, those `keep` keeps.
pub(super) fn list_in_org(
    ctx: &Ctx,
    o: &str,
    kind: &'static str,
    keep: impl Fn(&Record) -> bool,
    render: fn(&Store, &Record) -> Value,
) -> ApiResult<Response> {
    let store = ctx.state.read();
    org(&store, o)?;
    let items: Vec<Value> = store
        .list(kind, Some(o))
        .into_iter()
        .filter(|r| keep(r))
        .map(|r| render(&store, r))
        .collect();
    drop(store);
    paginate(ctx, items)
}

/// 422 when another of the organization's projects or variable sets (not `except`) has the
/// name.
pub(super) fn name_free(
    store: &Store,
    kind: &'static str,
    o: &str,
    name: &str,
    except: &str,
) -> ApiResult<()> {
    if store
        .list(kind, Some(o))
        .iter()
        .any(|r| r.str("name") == name && r.id != except)
    {
        return Err(ApiError::attribute("name", "Name has already been taken"));
    }
    Ok(())
}

/// Creates an organization's project or variable set: `defaults` under the sent attributes,
/// 422 when the name is taken. Answers its id.
pub(super) fn insert_named(
    store: &mut Store,
    (kind, prefix): (&'static str, &str),
    o: &str,
    defaults: Value,
    sent: &Map<String, Value>,
) -> ApiResult<String> {
    org(store, o)?;
    name_free(store, kind, o, defaults["name"].as_str().unwrap_or(""), "")?;
    let attrs = merge(defaults, sent, &[]);
    Ok(store.insert(kind, prefix, Some(o), attrs, Map::new()))
}
