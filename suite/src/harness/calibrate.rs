//! The target's no-route fingerprint, learned once after preflight: each address the API
//! lives under (the service root, `/api/v2`, the registry's) asked for paths that cannot
//! exist, at depths 1 to 3 with GET and (unless `--read-only`) with POST, and their answers
//! kept (`target::noroute`).

use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::Method;
use url::Url;

use crate::target::noroute::{Answers, NoRoute, Signature};
use crate::target::{join, Auth, Body, Request, Target};

/// The paths asked under the root and `/api/v2`: depth and method.
const ASKED: [(usize, &str); 5] = [(1, "GET"), (2, "GET"), (3, "GET"), (1, "POST"), (2, "POST")];

/// The paths asked under the registry's address, deeper than any route of its protocol
/// (`:namespace/:name/:provider/:version/download` is 5 deep, and every segment of it a
/// parameter: a shallower random path may be a route).
const ASKED_OF_THE_REGISTRY: [(usize, &str); 3] = [(6, "GET"), (7, "GET"), (6, "POST")];

/// Asks `target` at its root, under `/api/v2` and at `registry` for paths that cannot
/// exist and keeps the answers a router gives (see
/// [`Signature::is_routing_answer`]). With `read_only`, only GET is sent.
pub async fn no_route(target: &Target, registry: &Url, read_only: bool) -> NoRoute {
    let root = target.config.root.clone();
    let api = join(&root, "/api/v2/");
    let mut addresses = Vec::new();
    let asked: [(Url, &[(usize, &str)]); 3] = [
        (root, &ASKED),
        (api, &ASKED),
        (registry.clone(), &ASKED_OF_THE_REGISTRY),
    ];
    for (base, paths) in asked {
        let prefix = base.as_str().to_string();
        if addresses.iter().any(|a: &Answers| a.prefix == prefix) {
            continue;
        }
        addresses.push(ask(target, &base, paths, read_only).await);
    }
    NoRoute { addresses }
}

/// The answers under one address.
async fn ask(target: &Target, base: &Url, paths: &[(usize, &str)], read_only: bool) -> Answers {
    let mut answers = Answers {
        prefix: base.as_str().to_string(),
        ..Answers::default()
    };
    let seed = unguessable();
    for (n, (depth, method)) in paths.iter().enumerate() {
        if read_only && *method != "GET" {
            continue;
        }
        let segments: Vec<String> = (0..*depth)
            .map(|d| format!("conform-no-route-{seed:x}-{n}{d}"))
            .collect();
        let url = join(base, &segments.join("/"));
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
        let mut request = Request::new(method.clone(), url.clone(), Auth::User);
        if method == Method::POST {
            request = request.with_body(Body::Json(serde_json::json!({})));
        }
        let ex = target.send(request).await;
        answers.asked.push(format!("{method} {}", url.path()));
        // a target that still rate-limits is asked no more here: the run's time is its tests'
        if ex.status() == Some(429) {
            break;
        }
        if let Some(signature) = Signature::of(&ex).filter(Signature::is_routing_answer) {
            answers.learn(signature);
        }
    }
    answers
}

/// A number no server has seen in a path: the time in nanoseconds and the process id.
fn unguessable() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    nanos ^ (u64::from(std::process::id()) << 40)
}
