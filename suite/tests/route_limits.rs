//! A target that limits one route hard while serving everything else: its 429s hold back
//! that route's requests only, and the summary names the route (issue 22, item 3).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::processes::{scratch, text, Served};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

/// The route the proxy limits, as the throttle names it.
const LIMITED: &str = "GET /organizations/:id/teams";

/// How many of the limited route's requests answer 429.
const LIMITED_ANSWERS: usize = 4;

/// What each 429 asks the client to wait.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// Requests the proxy passes before it limits anything (preflight's, sent one at a time).
const WARM_UP: usize = 20;

/// What every other request takes at the proxy, so that the run is still busy while the
/// limited route is held (a target at a distance).
const DISTANCE: Duration = Duration::from_millis(40);

/// What the proxy saw: each request's arrival, whether it was the limited route, and whether
/// it answered 429.
#[derive(Default)]
struct Seen {
    started: Option<Instant>,
    arrivals: Vec<(Duration, bool, bool)>,
    limited_so_far: usize,
}

#[derive(Clone)]
struct Proxy {
    upstream: String,
    client: reqwest::Client,
    seen: Arc<Mutex<Seen>>,
}

/// True for `GET /api/v2/organizations/{name}/teams` (any query).
fn is_limited(method: &str, path: &str) -> bool {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let segments = match segments.as_slice() {
        ["api", "v2", rest @ ..] => rest,
        rest => rest,
    };
    method == "GET" && matches!(segments, ["organizations", _, "teams"])
}

async fn pass(State(proxy): State<Proxy>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let limited = is_limited(method.as_str(), &path);
    let refuse = {
        let mut seen = proxy.seen.lock().unwrap();
        let started = *seen.started.get_or_insert_with(Instant::now);
        let refuse =
            limited && seen.arrivals.len() >= WARM_UP && seen.limited_so_far < LIMITED_ANSWERS;
        if refuse {
            seen.limited_so_far += 1;
        }
        seen.arrivals.push((started.elapsed(), limited, refuse));
        refuse
    };
    if refuse {
        let mut res = Response::new(Body::from("{\"errors\":[{\"status\":\"429\"}]}"));
        *res.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        res.headers_mut().insert(
            "retry-after",
            HeaderValue::from_str(&RETRY_AFTER.as_secs().to_string()).unwrap(),
        );
        return res;
    }
    if !limited {
        tokio::time::sleep(DISTANCE).await;
    }
    let host = request
        .headers()
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let query = request
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let mut forward = proxy
        .client
        .request(method, format!("{}{path}{query}", proxy.upstream))
        .header("x-forwarded-host", host)
        .header("x-forwarded-proto", "http");
    for (name, value) in request.headers() {
        if name != "host" {
            forward = forward.header(name, value);
        }
    }
    let body = axum::body::to_bytes(request.into_body(), 64 << 20)
        .await
        .unwrap_or_default();
    let Ok(answer) = forward.body(body).send().await else {
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

/// Starts the proxy on a loopback port on a runtime of its own; answers its URL.
fn start_proxy(upstream: &str, seen: Arc<Mutex<Seen>>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let proxy = Proxy {
        upstream: upstream.trim_end_matches('/').to_string(),
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        seen,
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
    format!("http://{addr}")
}

fn a_route_limited_hard_holds_back_only_its_own_requests() {
    let served = Served::start("routes-user", "routes-admin", &[]);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let url = start_proxy(&served.url, seen.clone());
    let dir = scratch("route-limits", "one-route");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &url, "--token", "routes-user"])
        .args(["--group", "teams,organizations,runs", "--reports"])
        .arg(&dir)
        .env_remove("CONFORM_TOKEN")
        .env_remove("CONFORM_ADMIN_TOKEN")
        .output()
        .expect("conform runs");
    let said = text(&out);
    assert!(out.status.success(), "{said}");

    let seen = seen.lock().unwrap();
    let refused: Vec<Duration> = seen
        .arrivals
        .iter()
        .filter(|(_, _, refused)| *refused)
        .map(|(at, _, _)| *at)
        .collect();
    assert_eq!(refused.len(), LIMITED_ANSWERS, "the limited route was used");
    // Requests of other routes arrived while the limited route was held (a whole-client
    // pause would have let none through but those already on their way).
    let margin = Duration::from_millis(200);
    let during_holds = seen
        .arrivals
        .iter()
        .filter(|(at, limited, _)| {
            !limited
                && refused
                    .iter()
                    .any(|r| *at > *r + margin && *at < *r + RETRY_AFTER)
        })
        .count();
    let last = seen.arrivals.last().map(|a| a.0);
    assert!(
        during_holds > 0,
        "no other request went on during the hold: 429s at {refused:?}, {} requests, the last at {last:?}",
        seen.arrivals.len()
    );

    let results: Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    let figures = &results["figures"];
    assert_eq!(figures["rate_limit_global"], false, "{figures}");
    let routes = figures["throttled_routes"].as_array().unwrap();
    assert_eq!(routes.len(), 1, "{figures}");
    assert_eq!(routes[0]["route"], LIMITED, "{figures}");
    assert!(
        routes[0]["waited_seconds"].as_f64().unwrap() >= 1.5,
        "{figures}"
    );
    let line = said
        .lines()
        .find(|l| l.starts_with("waiting by route: "))
        .unwrap_or_else(|| panic!("no route line:\n{said}"));
    assert!(line.contains(LIMITED), "{line}");
    assert!(line.contains("other routes went on"), "{line}");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![a_route_limited_hard_holds_back_only_its_own_requests]
}
