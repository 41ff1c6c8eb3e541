//! The embedded reference service of `conform`: an in-memory implementation of the whole
//! Infrastructure Automation Service API (`../shared/spec/000_02ffe03873a68711.txt`), written by
//! hand from the spec and the public TFE conventions, on axum and tokio.
//!
//! - [`start`] binds a loopback ephemeral port and serves in the background ([`Running`]);
//! - [`serve`] serves on a given listener until the process ends (`conform serve`);
//! - [`app`] is the router itself, for tests that drive it with `tower::ServiceExt::oneshot`.
//!
//! [`Config::faults`] enables deliberate breakages ([`fault_catalog`]) so that the suite can
//! prove that each of its checks notices the behaviour it is about. [`Config::shapes`] makes
//! the reference imitate whole classes of real, partial servers ([`shape_catalog`]): one that
//! answers only under `/api/v2`, holds one organization, serves only the module registry,
//! issues numeric ids or has no runner. The behaviour contract the suite relies on is
//! `reference/README.md`.

#![warn(missing_docs)]

mod compat;
mod error;
mod faults;
mod gate;
mod jsonapi;
mod paths;
mod render;
mod routes;
mod shapes;
mod shared;
mod state;
mod store;
mod tls;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock};

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use compat::Compat;
pub use faults::{fault_catalog, Fault, FaultInfo};
pub use shapes::{seeded_archive, shape_catalog, Shape, ShapeInfo};
pub use tls::{generate_certificate, GeneratedCertificate};

use crate::faults::Faults;
use crate::shapes::Shapes;
use crate::state::AppState;
use crate::store::Store;

/// How the reference behaves: its tokens, password, faults, shapes and body limit.
#[derive(Debug, Clone)]
pub struct Config {
    /// The user API token (`Authorization: Bearer <token>`).
    pub token: String,
    /// The administrator token, needed by the `/admin/...` routes.
    pub admin_token: String,
    /// The account password (`PATCH /account/password` checks `current_password` against it).
    pub password: String,
    /// The faults to inject.
    pub faults: Vec<Fault>,
    /// The shapes to take (several may be combined; see [`shape_catalog`] and the "Shapes"
    /// section of `reference/README.md`). Empty: the whole service.
    pub shapes: Vec<Shape>,
    /// The largest JSON request body, in bytes (larger ones get 413).
    pub body_limit: usize,
    /// The scheme, host and port every absolute URL the service hands out starts with
    /// (`https://tfe.example.test`). None: the scheme and host the client used (`Forwarded`,
    /// `X-Forwarded-Proto`/`X-Forwarded-Host`, else `Host`).
    pub public_url: Option<String>,
    /// Whose words the service uses where the spec and TFE disagree.
    pub compat: Compat,
    /// An organization to make at start (`conform serve --seed-organization`), for clients
    /// that expect one to exist (terraform's `cloud` block).
    pub seed_organization: Option<String>,
    /// A workspace to make at start in `seed_organization`, in local execution mode (so that
    /// terraform runs plan and apply on the client, with state kept here).
    pub seed_workspace: Option<String>,
}

impl Default for Config {
    /// Token `reference-token`, admin token `reference-admin-token`, password
    /// `reference-password`, no faults, no shapes, a 1 MiB body limit.
    fn default() -> Self {
        Config {
            token: "reference-token".into(),
            admin_token: "reference-admin-token".into(),
            password: "reference-password".into(),
            faults: Vec::new(),
            shapes: Vec::new(),
            body_limit: 1024 * 1024,
            public_url: None,
            compat: Compat::Spec,
            seed_organization: None,
            seed_workspace: None,
        }
    }
}

/// A reference started by [`start`], serving in the background until [`Running::shutdown`]
/// or the end of the runtime (dropping it does not stop the server).
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    seeded: Vec<(String, String)>,
    stop: Option<oneshot::Sender<()>>,
}

impl Running {
    /// The root URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The seeded things the API cannot create, as `(kind, id)`: `("vcs_installation", id)`
    /// and `("assessment_result", id)`, then what the shapes seed:
    /// `("organization", "acme")` under [`Shape::OneOrganization`] and
    /// `("registry_module", "acme/network/aws/1.0.0")` under [`Shape::RegistryOnly`] (whose
    /// archive is [`seeded_archive`]).
    pub fn seeded(&self) -> Vec<(String, String)> {
        self.seeded.clone()
    }

    /// Stops serving (graceful: open requests finish).
    pub fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn state(config: Config, tls: bool) -> AppState {
    let shapes = Shapes(config.shapes);
    let mut store = Store::new(&config.password, &shapes);
    let compat = if shapes.has(Shape::TfeWords) {
        Compat::Tfe
    } else {
        config.compat
    };
    store.tfe = compat == Compat::Tfe;
    routes::seed(&mut store, &shapes).expect("the shapes' seeds fit a fresh store");
    routes::seed_given(
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

/// The whole service as a router (both `/api/v2/...` and bare paths, the registry protocol,
/// discovery and uploads).
pub fn app(config: Config) -> Router {
    gate::app(state(config, false))
}

/// Binds `127.0.0.1:0` and serves there on the current tokio runtime.
pub async fn start(config: Config) -> std::io::Result<Running> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let state = state(config, false);
    let seeded = state.read().seeded.clone();
    let router = gate::app(state);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async {
                // Dropping the `Running` without `shutdown` keeps the server going.
                if stopped.await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await;
    });
    Ok(Running {
        addr,
        seeded,
        stop: Some(stop),
    })
}

/// Serves on `listener` until the process ends.
pub async fn serve(listener: TcpListener, config: Config) -> std::io::Result<()> {
    axum::serve(listener, app(config)).await
}

/// A service made but not serving yet (`conform serve`): what it seeded can be read first,
/// then it serves over plain HTTP or HTTPS.
pub struct Prepared {
    state: AppState,
}

impl Prepared {
    /// Makes the service (its store seeded) without serving it.
    pub fn new(config: Config) -> Self {
        Prepared {
            state: state(config, false),
        }
    }

    /// The things the service seeded that the API cannot create, as `(kind, id)` (see
    /// [`Running::seeded`]).
    pub fn seeded(&self) -> Vec<(String, String)> {
        self.state.read().seeded.clone()
    }

    /// Serves plain HTTP on `listener` until the process ends.
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        axum::serve(listener, gate::app(self.state)).await
    }

    /// Checks a PEM certificate chain and PEM private key, then serves HTTPS on `listener`
    /// until the process ends (absolute URLs default to `https`). An error before serving means
    /// the certificate or key is unusable.
    pub async fn serve_tls(
        mut self,
        listener: TcpListener,
        chain_pem: &str,
        key_pem: &str,
    ) -> Result<(), String> {
        let tls = tls::server_config(chain_pem, key_pem)?;
        self.state.tls = true;
        tls::serve_tls(listener, gate::app(self.state), tls)
            .await
            .map_err(|e| e.to_string())
    }
}
