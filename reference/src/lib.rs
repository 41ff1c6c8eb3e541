//! The embedded reference service of `conform`: an in-memory implementation of the whole
//! Infrastructure Automation Service API (`../shared/spec/000_02ffe03873a68711.txt`), written by
//! hand from the spec and the public TFE conventions, on axum and tokio.
//!
//! - [`start`] binds a loopback ephemeral port and serves in the background ([`Running`]);
//! - [`serve`] serves on a given listener until the process ends (`conform serve`);
//! - [`app()`] is the router itself, for tests that drive it with `tower::ServiceExt::oneshot`.
//!
//! [`Config::faults`] enables deliberate breakages ([`fault_catalog`]) so that the suite can
//! prove that each of its checks notices the behaviour it is about. [`Config::shapes`] makes
//! the reference imitate whole classes of real, partial servers ([`shape_catalog`]): one that
//! answers only under `/api/v2`, holds one organization, serves only the module registry,
//! issues numeric ids or has no runner. The behaviour contract the suite relies on is
//! `reference/README.md`.

#![warn(missing_docs)]

mod app;
mod compat;
mod config;
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

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use compat::Compat;
pub use config::Config;
pub use faults::{fault_catalog, Fault, FaultInfo};
pub use shapes::{seeded_archive, shape_catalog, Shape, ShapeInfo};
pub use tls::{generate_certificate, GeneratedCertificate};

use crate::state::AppState;

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

/// The whole service as a router (both `/api/v2/...` and bare paths, the registry protocol,
/// discovery and uploads).
pub fn app(config: Config) -> Router {
    app::service(app::state(config, false))
}

/// Binds `127.0.0.1:0` and serves there on the current tokio runtime.
pub async fn start(config: Config) -> std::io::Result<Running> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let state = app::state(config, false);
    let seeded = state.read().seeded.clone();
    let router = app::service(state);
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
            state: app::state(config, false),
        }
    }

    /// The things the service seeded that the API cannot create, as `(kind, id)` (see
    /// [`Running::seeded`]).
    pub fn seeded(&self) -> Vec<(String, String)> {
        self.state.read().seeded.clone()
    }

    /// Serves plain HTTP on `listener` until the process ends.
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        axum::serve(listener, app::service(self.state)).await
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
        tls::serve_tls(listener, app::service(self.state), tls)
            .await
            .map_err(|e| e.to_string())
    }
}
