//! A rate-limiting server, as the run meets one: a loopback reverse proxy in front of
//! `conform serve` that notes each request when its limiter sees it (after a queue in front,
//! if its [`Policy`] has one), answers 429 where its policy says so and passes the rest on.
//! The tests of pacing and 429s read what it saw.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

/// A request as the limiter saw it.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// When the limiter saw it, on the wall clock (a server counts its seconds so).
    pub wall: SystemTime,
    /// When the limiter saw it, from the first request.
    pub at: Duration,
    /// Its method and path (`POST /api/v2/organizations/x/teams`).
    pub route: String,
    /// The `Retry-After` of the 429 it was answered, if it was refused.
    pub refused: Option<Duration>,
}

/// What a server does with each request.
pub trait Policy: Send + Sync + 'static {
    /// How long the `n`th request (from 0) waits in a queue before the limiter sees it.
    fn queue(&self, _n: usize) -> Duration {
        Duration::ZERO
    }

    /// The `Retry-After` of a 429 for a request of `method` and `path`, seeing `seen` before
    /// it (and `now`), or `None` to pass it on.
    fn refuse(&self, seen: &[Arrival], now: Duration, method: &str, path: &str)
        -> Option<Duration>;

    /// How long a request passed on takes before it is passed on (a target at a distance).
    fn distance(&self, _method: &str, _path: &str) -> Duration {
        Duration::ZERO
    }
}

/// The running limiter: its URL and what it saw.
pub struct Limiter {
    /// Its root URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// What it saw, in the order its limiter saw it.
    pub seen: Arc<Mutex<Vec<Arrival>>>,
}

#[derive(Clone)]
struct Proxy {
    upstream: String,
    client: reqwest::Client,
    policy: Arc<dyn Policy>,
    started: Instant,
    count: Arc<std::sync::atomic::AtomicUsize>,
    seen: Arc<Mutex<Vec<Arrival>>>,
}

/// Starts the limiter in front of `upstream` on a loopback port, on a runtime of its own.
pub fn start(upstream: &str, policy: impl Policy) -> Limiter {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let proxy = Proxy {
        upstream: upstream.trim_end_matches('/').to_string(),
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        policy: Arc::new(policy),
        started: Instant::now(),
        count: Arc::default(),
        seen: seen.clone(),
    };
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let app = axum::Router::new().fallback(pass).with_state(proxy);
            let _ = axum::serve(listener, app).await;
        });
    });
    Limiter {
        url: format!("http://{addr}"),
        seen,
    }
}

async fn pass(State(proxy): State<Proxy>, request: Request) -> Response {
    let n = proxy
        .count
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(proxy.policy.queue(n)).await;
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let refused = {
        let mut seen = proxy.seen.lock().unwrap();
        let at = proxy.started.elapsed();
        let refused = proxy.policy.refuse(&seen, at, method.as_str(), &path);
        seen.push(Arrival {
            wall: SystemTime::now(),
            at,
            route: format!("{method} {path}"),
            refused,
        });
        refused
    };
    if let Some(wait) = refused {
        let mut res = Response::new(Body::from("{\"errors\":[{\"status\":\"429\"}]}"));
        *res.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
        res.headers_mut()
            .insert("retry-after", HeaderValue::from(secs));
        return res;
    }
    tokio::time::sleep(proxy.policy.distance(method.as_str(), &path)).await;
    forward(&proxy, request).await
}

/// Passes `request` on to the upstream and answers what it answered.
async fn forward(proxy: &Proxy, request: Request) -> Response {
    let host = request
        .headers()
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let path = request.uri().path().to_string();
    let query = request
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let mut out = proxy
        .client
        .request(
            request.method().clone(),
            format!("{}{path}{query}", proxy.upstream),
        )
        .header("x-forwarded-host", host)
        .header("x-forwarded-proto", "http");
    for (name, value) in request.headers() {
        if name != "host" {
            out = out.header(name, value);
        }
    }
    let body = axum::body::to_bytes(request.into_body(), 64 << 20)
        .await
        .unwrap_or_default();
    let Ok(answer) = out.body(body).send().await else {
        let mut res = Response::new(Body::empty());
        *res.status_mut() = StatusCode::BAD_GATEWAY;
        return res;
    };
    let mut res = Response::builder().status(answer.status().as_u16());
    for (name, value) in answer.headers() {
        res = res.header(name, value);
    }
    let bytes = answer.bytes().await.unwrap_or_default();
    res.body(Body::from(bytes)).unwrap()
}

/// The most requests the limiter saw in one wall-clock second (as a server that counts per
/// second counts them), and in any one second (a sliding window).
pub fn busiest_seconds(seen: &[Arrival]) -> (usize, usize) {
    let mut per_second = std::collections::HashMap::<u64, usize>::new();
    for a in seen {
        let second = a
            .wall
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        *per_second.entry(second).or_default() += 1;
    }
    let mut at: Vec<Duration> = seen.iter().map(|a| a.at).collect();
    at.sort();
    let sliding = (0..at.len())
        .map(|i| {
            at[i..]
                .iter()
                .take_while(|t| **t < at[i] + Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap_or(0);
    (per_second.into_values().max().unwrap_or(0), sliding)
}

/// The route of a path as a limiter keys it: the path without `/api/v2`, its segments
/// matched against `pattern` (`*` for any one segment): `matches("/api/v2/organizations/x/teams",
/// "organizations/*/teams")`.
pub fn matches(path: &str, pattern: &str) -> bool {
    let path = path.strip_prefix("/api/v2").unwrap_or(path);
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let wanted: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    segments.len() == wanted.len()
        && segments
            .iter()
            .zip(&wanted)
            .all(|(s, w)| *w == "*" || s == w)
}
