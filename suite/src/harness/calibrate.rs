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
/// [`Signature::is_routing_answer`]). With `read_only`, only GET is sent. Every question is
/// asked at once: none depends on another's answer, and at a distance they cost one round
/// trip, not one each.
pub async fn no_route(target: &Target, registry: &Url, read_only: bool) -> NoRoute {
    let root = target.config.root.clone();
    let api = join(&root, "/api/v2/");
    let mut asked: Vec<(Url, &[(usize, &str)])> = Vec::new();
    for (base, paths) in [
        (root, &ASKED[..]),
        (api, &ASKED[..]),
        (registry.clone(), &ASKED_OF_THE_REGISTRY[..]),
    ] {
        if !asked.iter().any(|(b, _)| b.as_str() == base.as_str()) {
            asked.push((base, paths));
        }
    }
    let addresses = asked
        .iter()
        .map(|(base, paths)| ask(target, base, paths, read_only));
    NoRoute {
        addresses: futures_util::future::join_all(addresses).await,
    }
}

/// The answers under one address, its questions asked at once and read in order.
async fn ask(target: &Target, base: &Url, paths: &[(usize, &str)], read_only: bool) -> Answers {
    let mut answers = Answers {
        prefix: base.as_str().to_string(),
        ..Answers::default()
    };
    let seed = unguessable();
    let requests: Vec<Request> = paths
        .iter()
        .enumerate()
        .filter(|(_, (_, method))| !read_only || *method == "GET")
        .map(|(n, (depth, method))| {
            let segments: Vec<String> = (0..*depth)
                .map(|d| format!("conform-no-route-{seed:x}-{n}{d}"))
                .collect();
            let url = join(base, &segments.join("/"));
            let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
            let request = Request::new(method.clone(), url, Auth::User);
            match method {
                Method::POST => request.with_body(Body::Json(serde_json::json!({}))),
                _ => request,
            }
        })
        .collect();
    let sent = requests.iter().map(|r| target.send(r.clone()));
    for (request, ex) in requests
        .iter()
        .zip(futures_util::future::join_all(sent).await)
    {
        answers
            .asked
            .push(format!("{} {}", request.method, request.url.path()));
        // a target that rate-limits: what it answered after its 429 is not its router's word
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
