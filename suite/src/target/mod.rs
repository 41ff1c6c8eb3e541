//! The HTTP side: one pooled client, the target's addresses and credentials, timeouts,
//! the response size cap, and a record of every exchange.

mod elsewhere;
mod exchange;
mod guard;
pub mod noroute;
mod pace;
mod route;
mod secret;
mod send;
mod throttle;
pub mod trust;
mod visible;

pub use exchange::{Exchange, RequestRecord, ResponseRecord, TransportError, REPORT_BODY_BYTES};
pub use guard::Guard;
pub use route::route_key;
pub use secret::{only_inside_words, redact, short_secret_warning, Secret, SAFE_SECRET_LEN};
pub use throttle::{
    parse_rate, requested_wait, Place, RouteWait, Throttle, ThrottleStats, MAX_RETRIES, MAX_WAIT,
};
pub use visible::visible;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::HeaderName;
use reqwest::Method;
use serde_json::Value;
use url::Url;

/// How often a transient connection error is retried (idempotent requests only).
pub const MAX_RECONNECTS: u32 = 2;

/// The JSON:API media type.
pub const JSONAPI: &str = "application/vnd.api+json";

/// The environment variable a reproduced request reads the user token from.
pub const TOKEN_VAR: &str = "CONFORM_TOKEN";

/// The environment variable a reproduced administrator request reads its token from.
pub const ADMIN_TOKEN_VAR: &str = "CONFORM_ADMIN_TOKEN";

/// The environment variable a reproduced request with a token the target issued during the
/// run (an organization token) reads it from.
pub const ISSUED_TOKEN_VAR: &str = "CONFORM_ISSUED_TOKEN";

/// Which credential a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// The user token.
    User,
    /// The administrator token.
    Admin,
    /// No credential (uploads, discovery, and the 401 check).
    None,
}

/// What a request carries.
#[derive(Debug, Clone)]
pub enum Body {
    /// Nothing.
    None,
    /// A JSON document.
    Json(Value),
    /// Bytes (a tarball).
    Bytes(Vec<u8>),
    /// A body sent byte for byte with this Content-Type (input that must be refused).
    Raw(String, Vec<u8>),
}

/// A request to send.
#[derive(Debug, Clone)]
pub struct Request {
    /// HTTP method.
    pub method: Method,
    /// Full URL, query included.
    pub url: Url,
    /// Credential to send.
    pub auth: Auth,
    /// Body.
    pub body: Body,
    /// A token the target issued during the run (an organization token), sent instead of
    /// `auth`'s; recorded as `$CONFORM_ISSUED_TOKEN`, never shown.
    pub issued: Option<Secret>,
}

impl Request {
    /// A request without a body.
    pub fn new(method: Method, url: Url, auth: Auth) -> Self {
        Self {
            method,
            url,
            auth,
            body: Body::None,
            issued: None,
        }
    }

    /// The same request, authenticated with a token the target issued.
    pub fn with_issued_token(mut self, token: Secret) -> Self {
        self.issued = Some(token);
        self
    }

    /// The same request with a body.
    pub fn with_body(mut self, body: Body) -> Self {
        self.body = body;
        self
    }
}

/// How to reach and authenticate to the target.
#[derive(Debug, Clone)]
pub struct TargetConfig {
    /// The service root (`{base_url}` without `/api/v2`).
    pub root: Url,
    /// The registry read address (`{registry_url}`), ending with `/`.
    pub registry: Url,
    /// The user token.
    pub token: Option<Secret>,
    /// The administrator token.
    pub admin_token: Option<Secret>,
    /// Header that carries the token.
    pub auth_header: String,
    /// Scheme before the token (`Bearer`); empty for none.
    pub auth_scheme: String,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Largest body read; longer bodies are cut and reported.
    pub max_body: usize,
    /// Extra CA certificate (PEM).
    pub ca_cert: Option<Vec<u8>>,
    /// Accept any certificate.
    pub insecure: bool,
    /// Client-side rate limit in requests per second (`--rate`), shared by every request.
    pub rate: Option<f64>,
    /// Whether the target's rate is learned from its 429s and headers (`pace`; off with
    /// `--no-rate-learning`).
    pub learn_rate: bool,
    /// How often a 429 is waited out and the request sent again ([`MAX_RETRIES`]; at most
    /// [`throttle::MAX_WAIT`] in all).
    pub max_retries: u32,
    /// The path forms the target serves (learned by preflight).
    pub forms: PathForms,
    /// Groups served only at TFE's path: the spec's path and TFE's (learned after
    /// preflight); [`Target::api_url`] reaches such a group where it is served.
    pub served_at_tfe_path: Vec<(String, String)>,
    /// What the target answers a path that cannot exist, by address (learned after
    /// preflight; empty until then: every 404 is then judged by its look alone).
    pub no_route: noroute::NoRoute,
}

/// Which path forms of the API a target answers (Versioning 1): the bare paths, the
/// `/api/v2` ones, or both. Fixtures, set-up steps, teardown and sequences use the
/// canonical form ([`PathForms::canonical`]); only a test of a form sends that form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathForms {
    /// `/organizations`, ...
    pub bare: bool,
    /// `/api/v2/organizations`, ...
    pub api_v2: bool,
}

impl Default for PathForms {
    /// Both forms, as the spec says.
    fn default() -> Self {
        Self {
            bare: true,
            api_v2: true,
        }
    }
}

impl PathForms {
    /// The prefix of the canonical form: `/api/v2` where it is served (TFE serves only that
    /// one), else the bare form.
    pub fn canonical(self) -> &'static str {
        if self.api_v2 || !self.bare {
            "/api/v2"
        } else {
            ""
        }
    }

    /// For reports: which forms are served.
    pub fn describe(self) -> String {
        match (self.api_v2, self.bare) {
            (true, true) => "/api/v2 and bare".into(),
            (true, false) => "/api/v2 only (the bare forms are not served)".into(),
            (false, true) => "bare only (the /api/v2 forms are not served)".into(),
            (false, false) => "neither form answered preflight; fixtures use /api/v2".into(),
        }
    }
}

/// A configuration that cannot be turned into a client.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(String);

/// The target: a pooled client plus its configuration and request counters.
#[derive(Debug)]
pub struct Target {
    client: reqwest::Client,
    auth_header: HeaderName,
    /// The configuration in force.
    pub config: TargetConfig,
    requests: Arc<AtomicU64>,
    /// Microseconds the requests sent took to be answered (sending to the body read), in all.
    answering: Arc<AtomicU64>,
    guard: Guard,
    throttle: Arc<Throttle>,
    /// The consistency window and what it hid (`crate::patience`).
    consistency: Arc<crate::patience::Consistency>,
    /// Held by the one read at a time that buffers an answer beyond the free bytes.
    large_reads: tokio::sync::Mutex<()>,
    /// The other origins uploaded to, each said once.
    elsewhere: Arc<elsewhere::Elsewhere>,
}

impl Target {
    /// Builds the client (TLS, timeouts, no automatic redirects: a token must never follow
    /// a redirect to another origin, so redirects are the caller's decision).
    pub fn new(config: TargetConfig) -> Result<Self, TargetError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .pool_max_idle_per_host(64)
            .user_agent(concat!("conform/", env!("CARGO_PKG_VERSION")));
        if config.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
        if let Some(pem) = &config.ca_cert {
            builder = trust::trusting(builder, pem)
                .map_err(|e| TargetError(format!("--ca-cert: {e}")))?;
        }
        let client = builder
            .build()
            .map_err(|e| TargetError(format!("cannot build the HTTP client: {e}")))?;
        let auth_header = HeaderName::from_bytes(config.auth_header.as_bytes()).map_err(|_| {
            TargetError(format!(
                "`{}` is not a valid header name",
                config.auth_header
            ))
        })?;
        Ok(Self {
            client,
            auth_header,
            throttle: Arc::new(Throttle::new(config.rate, config.learn_rate)),
            consistency: Arc::default(),
            config,
            requests: Arc::new(AtomicU64::new(0)),
            answering: Arc::new(AtomicU64::new(0)),
            guard: Guard::default(),
            large_reads: tokio::sync::Mutex::new(()),
            elsewhere: Arc::default(),
        })
    }

    /// A target with another configuration that shares this one's rate limit, 429 pauses
    /// and request count: preflight's requests and the run's are one stream to the server.
    pub fn succeeded_by(&self, config: TargetConfig) -> Result<Self, TargetError> {
        let mut next = Self::new(config)?;
        next.throttle = self.throttle.clone();
        next.requests = self.requests.clone();
        next.answering = self.answering.clone();
        next.consistency = self.consistency.clone();
        next.elsewhere = self.elsewhere.clone();
        Ok(next)
    }

    /// The blast-radius guard every request passes.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Throttling so far: 429s, time held back, time paced, connection retries.
    pub fn throttle_stats(&self) -> ThrottleStats {
        self.throttle.stats()
    }

    /// Sets (or clears) the run's deadline: no 429 wait is started that would pass it.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        self.throttle.set_deadline(deadline);
    }

    /// Sets the consistency window (`--consistency-window`; a new target has none).
    pub fn set_consistency_window(&self, window: Duration) {
        self.consistency.set_window(window);
    }

    /// A fresh observation under the consistency window: read, and [`Patience::again`]
    /// while it does not hold (the one way the run waits for what the spec does not promise
    /// at once).
    ///
    /// [`Patience::again`]: crate::patience::Patience::again
    pub fn patience(&self) -> crate::patience::Patience {
        crate::patience::Patience::new(self.consistency.clone())
    }

    /// The consistency window in force (`--consistency-window`).
    pub fn consistency_window(&self) -> Duration {
        self.consistency.window()
    }

    /// What the consistency window hid so far.
    pub fn lag_stats(&self) -> crate::patience::LagStats {
        self.consistency.stats()
    }

    /// The warnings said (on stderr, before the first upload to each) about uploads to
    /// another origin than the target's, for the reports.
    pub fn elsewhere_warnings(&self) -> Vec<String> {
        self.elsewhere.warnings()
    }

    /// Requests sent so far.
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// What the requests sent so far took to be answered, added up: the run's latency
    /// bound is this over the threads ([`crate::report::Figures::latency_bound`]).
    pub fn answering_time(&self) -> Duration {
        Duration::from_micros(self.answering.load(Ordering::Relaxed))
    }

    /// The URL of `path` (with its query) under the service root.
    pub fn url(&self, path_and_query: &str) -> Url {
        join(&self.config.root, path_and_query)
    }

    /// The URL of an API path written without `/api/v2` (a fixture recipe, a set-up step, a
    /// teardown), in the target's canonical form. Paths that already start with `/api/`
    /// (the spec writes a few that way) are taken as they are.
    pub fn api_url(&self, path_and_query: &str) -> Url {
        if path_and_query.starts_with("/api/") {
            return self.url(path_and_query);
        }
        if let Some(at_tfe) = self.at_tfe_path(path_and_query) {
            return self.url(&at_tfe);
        }
        let prefix = self.config.forms.canonical();
        self.url(&format!("{prefix}{path_and_query}"))
    }

    /// `path` (bare, or with `/api/v2`) where its group is served when that is only TFE's
    /// path (`served_at_tfe_path`): `/admin/engine-versions/7` as
    /// `/api/v2/admin/terraform-versions/7`. `None` for every other path.
    pub fn at_tfe_path(&self, path: &str) -> Option<String> {
        let bare = path.strip_prefix("/api/v2").unwrap_or(path);
        self.config
            .served_at_tfe_path
            .iter()
            .find_map(|(spec, tfe)| moved(bare, spec, tfe))
    }

    /// The other way round from [`Target::at_tfe_path`]: a path at TFE's path of a group served
    /// only there, as the spec's (bare) path.
    fn at_spec_path(&self, path: &str) -> Option<String> {
        self.config
            .served_at_tfe_path
            .iter()
            .find_map(|(spec, tfe)| moved(path, tfe, spec))
    }

    /// The URL of `path` under the registry read address.
    pub fn registry_url(&self, path_and_query: &str) -> Url {
        join(&self.config.registry, path_and_query)
    }

    /// True when `url` has the target's origin (the only place a token is sent).
    pub fn same_origin(&self, url: &Url) -> bool {
        let root = &self.config.root;
        url.scheme() == root.scheme()
            && url.host_str() == root.host_str()
            && url.port_or_known_default() == root.port_or_known_default()
    }

    /// The secrets this target holds, for redaction.
    pub fn secrets(&self) -> Vec<&Secret> {
        self.config
            .token
            .iter()
            .chain(self.config.admin_token.iter())
            .collect()
    }
}

tokio::task_local! {
    /// When the test running on this task stops sending requests (`--test-timeout`).
    static TEST_STOP: Option<Instant>;
}

/// Runs `run` (one test) with every request it sends from `stop` on refused, as the run's
/// deadline refuses them: the test ends by itself, and no create is cut off in flight.
pub async fn stop_sending_at<F: std::future::Future>(stop: Instant, run: F) -> F::Output {
    TEST_STOP.scope(Some(stop), run).await
}

/// Runs `run`, work a test does for the whole run (a shared fixture, a group's probe, all
/// remembered for every later test), free of that test's `--test-timeout`: a refusal must
/// not be remembered as the target's answer.
pub async fn for_the_whole_run<F: std::future::Future>(run: F) -> F::Output {
    TEST_STOP.scope(None, run).await
}

/// True when the test running on this task is past its `--test-timeout`.
fn test_stop_passed() -> bool {
    TEST_STOP
        .try_with(|stop| stop.is_some_and(|stop| Instant::now() >= stop))
        .unwrap_or(false)
}

/// Joins a path (and query) onto a base URL, keeping the base's own path.
pub fn join(base: &Url, path_and_query: &str) -> Url {
    let mut url = base.clone();
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_and_query, None),
    };
    let base_path = base.path().trim_end_matches('/');
    let joined = if path.is_empty() {
        format!("{base_path}/")
    } else if path.starts_with('/') {
        format!("{base_path}{path}")
    } else {
        format!("{base_path}/{path}")
    };
    url.set_path(&joined);
    url.set_query(query);
    url
}

/// `path` with its leading `from` (whole segments only) replaced by `to`.
fn moved(path: &str, from: &str, to: &str) -> Option<String> {
    let rest = path.strip_prefix(from)?;
    let boundary = rest.is_empty() || rest.starts_with(['/', '?']);
    boundary.then(|| format!("{to}{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_test_past_its_timeout_sends_nothing_but_what_the_whole_run_shares() {
        let past = Instant::now();
        assert!(stop_sending_at(past, async { test_stop_passed() }).await);
        let shared = stop_sending_at(past, for_the_whole_run(async { test_stop_passed() }));
        assert!(!shared.await);
        let later = Instant::now() + Duration::from_secs(60);
        assert!(!stop_sending_at(later, async { test_stop_passed() }).await);
        assert!(!test_stop_passed(), "outside a test, nothing is stopped");
    }
}
