//! Helpers shared by the reference's integration tests: one request through the router
//! (`app()` + `oneshot`) and a few fixtures.

#![allow(dead_code)]

use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use conform_reference::{app, Config, Fault};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

pub const TOKEN: &str = "reference-token";
pub const ADMIN: &str = "reference-admin-token";

pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }
    pub fn content_type(&self) -> &str {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

pub async fn send(
    app: &Router,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Vec<u8>,
) -> Answer {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, "127.0.0.1:9");
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    if !body.is_empty() {
        req = req.header(header::CONTENT_TYPE, "application/vnd.api+json");
    }
    let res = app
        .clone()
        .oneshot(req.body(Body::from(body)).expect("request"))
        .await
        .expect("infallible");
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    Answer {
        status,
        headers,
        bytes,
    }
}

pub async fn call(app: &Router, method: Method, path: &str, body: Option<Value>) -> Answer {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    send(app, method, path, Some(TOKEN), bytes).await
}

pub async fn admin(app: &Router, method: Method, path: &str, body: Option<Value>) -> Answer {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    send(app, method, path, Some(ADMIN), bytes).await
}

pub fn with_faults(faults: &[&str]) -> Router {
    app(Config {
        faults: faults
            .iter()
            .map(|f| f.parse::<Fault>().expect("fault"))
            .collect(),
        ..Config::default()
    })
}

pub async fn org(app: &Router, name: &str) {
    let a = call(app, Method::POST, "/api/v2/organizations", Some(json!({"data":{"type":"organizations","attributes":{"name":name,"email":"o@example.test"}}}))).await;
    assert_eq!(a.status, StatusCode::CREATED, "{:?}", a.json());
}

pub async fn workspace(app: &Router, org_name: &str, name: &str) -> String {
    let a = call(
        app,
        Method::POST,
        &format!("/api/v2/organizations/{org_name}/workspaces"),
        Some(json!({"data":{"type":"workspaces","attributes":{"name":name}}})),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED, "{:?}", a.json());
    a.json()["data"]["id"].as_str().unwrap().to_string()
}

pub fn id(a: &Answer) -> String {
    a.json()["data"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub fn path_of(url: &str) -> String {
    url.trim_start_matches("http://127.0.0.1:9").to_string()
}
