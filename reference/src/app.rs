//! The app that assembles the layers: the state made from a [`Config`] (the store seeded as
//! the routes make things), and the service, the gate in front of every route.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock};

use axum::Router;
use serde_json::{Map, Value};

use crate::compat::Compat;
use crate::config::Config;
use crate::error::ApiResult;
use crate::faults::Faults;
use crate::routes::{organizations, registry, workspaces};
use crate::shapes::{
    seeded_archive, Shape, Shapes, SEEDED_MODULE, SEEDED_ORGANIZATION, SEEDED_WORKSPACE,
};
use crate::state::AppState;
use crate::store::Store;
use crate::{gate, routes};

/// The whole service: the gate in front of every route.
pub(crate) fn service(state: AppState) -> Router {
    let routes = routes::router(state.clone());
    gate::wrap(state, routes)
}

/// The shared state a [`Config`] makes, its store seeded (`tls`: absolute URLs default to
/// `https`).
pub(crate) fn state(config: Config, tls: bool) -> AppState {
    let shapes = Shapes(config.shapes);
    let mut store = Store::new(&config.password, &shapes);
    let compat = if shapes.has(Shape::TfeWords) {
        Compat::Tfe
    } else {
        config.compat
    };
    store.tfe = compat == Compat::Tfe;
    seed(&mut store, &shapes).expect("the shapes' seeds fit a fresh store");
    seed_given(
        &mut store,
        config.seed_organization.as_deref(),
        config.seed_workspace.as_deref(),
    )
    .expect("the given seeds fit a fresh store (their names are checked first)");
    AppState {
        store: Arc::new(RwLock::new(store)),
        faults: Arc::new(Faults(config.faults)),
        shapes: Arc::new(shapes),
        token: config.token.into(),
        admin_token: config.admin_token.into(),
        body_limit: config.body_limit,
        requests: Arc::new(AtomicU64::new(0)),
        seen: Arc::new(AtomicU64::new(0)),
        arrivals: Default::default(),
        exclusive: Arc::new(tokio::sync::RwLock::new(())),
        public_url: config
            .public_url
            .map(|u| u.trim_end_matches('/').to_string().into()),
        tls,
        compat,
        kept: Default::default(),
        lagging: Default::default(),
    }
}

/// Seeds what `conform serve` was asked for: an organization, and a workspace in it in local
/// execution mode; records them in `store.seeded` (`organization`: its name, `workspace`:
/// its id).
fn seed_given(
    store: &mut Store,
    organization: Option<&str>,
    workspace: Option<&str>,
) -> ApiResult<()> {
    let Some(org) = organization else {
        return Ok(());
    };
    if store.get("organizations", org).is_none() {
        organizations::insert_organization(
            store,
            org,
            &format!("{org}@reference.test"),
            &Map::new(),
        )?;
    }
    store.seeded.push(("organization".into(), org.into()));
    if let Some(name) = workspace {
        let mut local = Map::new();
        local.insert("execution-mode".into(), Value::from("local"));
        let ws = workspaces::insert_workspace(store, org, name, None, &local)?;
        let id = ws["id"].as_str().unwrap_or_default().to_string();
        store.seeded.push(("workspace".into(), id));
    }
    Ok(())
}

/// Seeds what the shapes need into a fresh store (the organization `one-organization` and
/// `registry-only` hold, the module version of `registry-only`) and records it in
/// `store.seeded`.
fn seed(store: &mut Store, shapes: &Shapes) -> ApiResult<()> {
    let needs_org = shapes.has(Shape::OneOrganization)
        || shapes.has(Shape::RegistryOnly)
        || shapes.has(Shape::CloudBlockOnly);
    if needs_org {
        organizations::insert_organization(
            store,
            SEEDED_ORGANIZATION,
            &format!("{SEEDED_ORGANIZATION}@reference.test"),
            &Map::new(),
        )?;
    }
    if shapes.has(Shape::CloudBlockOnly) {
        let (name, id) = SEEDED_WORKSPACE;
        let ws = workspaces::insert_workspace(store, SEEDED_ORGANIZATION, name, None, &Map::new())?;
        let issued = ws["id"].as_str().unwrap_or_default().to_string();
        store.rekey("workspaces", &issued, id);
        store.seeded.push(("workspace".into(), id.into()));
    }
    if shapes.has(Shape::OneOrganization) || shapes.has(Shape::CloudBlockOnly) {
        store
            .seeded
            .push(("organization".into(), SEEDED_ORGANIZATION.into()));
    }
    if shapes.has(Shape::RegistryOnly) {
        let (ns, name, provider, version) = SEEDED_MODULE;
        registry::seed_module_version(
            store,
            SEEDED_ORGANIZATION,
            name,
            provider,
            version,
            seeded_archive(),
        )?;
        store.seeded.push((
            "registry_module".into(),
            format!("{ns}/{name}/{provider}/{version}"),
        ));
    }
    Ok(())
}
