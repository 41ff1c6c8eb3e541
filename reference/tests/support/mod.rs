//! What the reference's integration tests share: the service made from a few settings, one
//! request through the router (`app()` + `oneshot`) and a few fixtures.

#![allow(dead_code)]

use std::str::FromStr;

use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::response::Response;
use axum::Router;
use conform_reference::{app, Compat, Config, Fault, Shape};
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

/// One request with the token (if any) and the headers given, nothing else; the answer as is.
pub async fn raw(
    app: &Router,
    method: Method,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Response {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    app.clone()
        .oneshot(req.body(Body::from(body)).expect("request"))
        .await
        .expect("infallible")
}

/// One request from `127.0.0.1:9`, its body (if any) said to be JSON:API; the whole answer.
pub async fn send(
    app: &Router,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Vec<u8>,
) -> Answer {
    let mut headers = vec![(header::HOST.as_str(), "127.0.0.1:9")];
    if !body.is_empty() {
        headers.push((header::CONTENT_TYPE.as_str(), "application/vnd.api+json"));
    }
    let res = raw(app, method, path, token, &headers, body).await;
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

/// A GET with the user token.
pub async fn get(app: &Router, path: &str) -> Answer {
    call(app, Method::GET, path, None).await
}

/// A PUT of bytes to an upload URL (no token); its status.
pub async fn upload(app: &Router, url: &str, body: &[u8]) -> StatusCode {
    send(app, Method::PUT, &path_of(url), None, body.to_vec())
        .await
        .status
}

/// Catalog names (faults, shapes) parsed.
fn parsed<T: FromStr<Err = String>>(names: &[&str]) -> Vec<T> {
    names
        .iter()
        .map(|n| n.parse().expect("a catalog name"))
        .collect()
}

/// The service with these faults.
pub fn with_faults(faults: &[&str]) -> Router {
    app(Config {
        faults: parsed::<Fault>(faults),
        ..Config::default()
    })
}

/// The settings with these shapes.
pub fn shaped_config(shapes: &[&str]) -> Config {
    Config {
        shapes: parsed::<Shape>(shapes),
        ..Config::default()
    }
}

/// The service with these shapes.
pub fn shaped(shapes: &[&str]) -> Router {
    app(shaped_config(shapes))
}

/// The service in TFE's words (`Compat::Tfe`).
pub fn tfe() -> Router {
    app(Config {
        compat: Compat::Tfe,
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

/// Creates a configuration version (these attributes) in a workspace and uploads a tarball
/// to it; answers the version's document.
pub async fn uploaded_configuration(app: &Router, ws: &str, attributes: Value) -> Value {
    let cv = call(
        app,
        Method::POST,
        &format!("/api/v2/workspaces/{ws}/configuration-versions"),
        Some(json!({"data":{"type":"configuration-versions","attributes":attributes}})),
    )
    .await;
    assert_eq!(cv.status, StatusCode::CREATED, "{:?}", cv.json());
    let url = cv.json()["data"]["attributes"]["upload-url"]
        .as_str()
        .expect("upload-url")
        .to_string();
    assert_eq!(upload(app, &url, b"tarball").await, StatusCode::OK);
    cv.json()
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
