//! How the reference behaves ([`Config`]): what `conform` and `conform serve` give it.

use crate::compat::Compat;
use crate::faults::Fault;
use crate::shapes::Shape;

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
    /// The shapes to take (several may be combined; see [`shape_catalog`](crate::shape_catalog) and the "Shapes"
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
