//! The reference as a local TFE for real clients (issue 12): absolute URLs follow the client,
//! the state and run workflow terraform needs, TFE's words behind `Compat::Tfe`.

use crate::support::*;
use axum::http::{Method, StatusCode};
use axum::Router;
use conform_reference::{app, Config};
use http_body_util::BodyExt;
use serde_json::{json, Value};

/// A GET with extra headers; the answer's JSON.
async fn get_with(app: &Router, path: &str, headers: &[(&str, &str)]) -> Value {
    let res = raw(app, Method::GET, path, Some(TOKEN), headers, vec![]).await;
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

fn self_link(doc: &Value) -> String {
    doc["links"]["self"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn absolute_urls_follow_the_host_and_the_forwarding_headers() {
    let app = app(Config::default());
    let plain = get_with(&app, "/api/v2/organizations", &[("host", "tfe.test:8080")]).await;
    assert!(self_link(&plain).starts_with("http://tfe.test:8080/api/v2/organizations?"));
    let xf = get_with(
        &app,
        "/api/v2/organizations",
        &[
            ("host", "127.0.0.1:9"),
            ("x-forwarded-proto", "https"),
            ("x-forwarded-host", "tfe.example.test"),
        ],
    )
    .await;
    assert!(self_link(&xf).starts_with("https://tfe.example.test/api/v2/"));
    let fwd = get_with(
        &app,
        "/api/v2/organizations",
        &[
            ("host", "127.0.0.1:9"),
            (
                "forwarded",
                "for=192.0.2.1;proto=https;host=\"proxy.test:8443\", for=10.0.0.1",
            ),
        ],
    )
    .await;
    assert!(self_link(&fwd).starts_with("https://proxy.test:8443/api/v2/"));
    // A host that would change the URL's meaning is not used.
    let bad = get_with(&app, "/api/v2/organizations", &[("host", "a/b@c")]).await;
    assert!(self_link(&bad).starts_with("http://localhost/api/v2/"));
}

#[tokio::test]
async fn a_public_url_overrides_the_request() {
    let app = app(Config {
        public_url: Some("https://tfe.example.test/".into()),
        ..Config::default()
    });
    org(&app, "pub").await;
    let ws = workspace(&app, "pub", "w").await;
    let cv = call(
        &app,
        Method::POST,
        &format!("/api/v2/workspaces/{ws}/configuration-versions"),
        Some(json!({"data":{"type":"configuration-versions"}})),
    )
    .await;
    let url = cv.json()["data"]["attributes"]["upload-url"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        url.starts_with("https://tfe.example.test/v1/object/"),
        "{url}"
    );
}

/// Standard base64, for the tests' state bodies.
fn b64(bytes: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |a, (i, b)| a | (*b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[tokio::test]
async fn a_state_version_waits_for_its_upload_and_the_lock() {
    let app = app(Config::default());
    org(&app, "st").await;
    let ws = workspace(&app, "st", "w").await;
    let create =
        json!({"data":{"type":"state-versions","attributes":{"serial":1,"md5":"x","lineage":"l"}}});
    let path = format!("/api/v2/workspaces/{ws}/state-versions");
    let unlocked = call(&app, Method::POST, &path, Some(create.clone())).await;
    assert_eq!(unlocked.status, StatusCode::CONFLICT, "the lock is needed");
    let lock = format!("/api/v2/workspaces/{ws}/actions/lock");
    assert_eq!(
        call(&app, Method::POST, &lock, None).await.status,
        StatusCode::OK
    );
    let sv = call(&app, Method::POST, &path, Some(create)).await.json();
    let attrs = &sv["data"]["attributes"];
    assert_eq!(attrs["status"], "pending");
    let raw_url = attrs["hosted-state-upload-url"]
        .as_str()
        .unwrap()
        .to_string();
    let json_url = attrs["hosted-json-state-upload-url"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(raw_url, json_url);
    // Pending: not current, and the workspace stays locked.
    let current = format!("/api/v2/workspaces/{ws}/current-state-version");
    assert_eq!(get(&app, &current).await.status, StatusCode::NOT_FOUND);
    let unlock = format!("/api/v2/workspaces/{ws}/actions/unlock");
    let refused = call(&app, Method::POST, &unlock, None).await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(refused.bytes.windows(7).any(|w| w == b"pending"));
    let state = json!({"version":4,"serial":1,"lineage":"l","outputs":{
        "greeting":{"value":"hello","type":"string"},
        "secret":{"value":"s3","type":"string","sensitive":true},
        "list":{"value":[1,2],"type":["tuple",["number","number"]]}},"resources":[]});
    assert_eq!(upload(&app, &json_url, b"{}").await, StatusCode::OK);
    assert_eq!(
        upload(&app, &raw_url, state.to_string().as_bytes()).await,
        StatusCode::OK
    );
    let shown = get(&app, &current).await.json();
    assert_eq!(shown["data"]["attributes"]["status"], "finalized");
    assert!(shown["data"]["attributes"]["hosted-json-state-download-url"].is_string());
    assert!(shown["data"]["attributes"]["hosted-state-upload-url"].is_null());
    let outputs = get(
        &app,
        &format!("/api/v2/workspaces/{ws}/current-state-version-outputs"),
    )
    .await
    .json();
    let items = outputs["data"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    let by_name = |n: &str| {
        items
            .iter()
            .find(|o| o["attributes"]["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("greeting")["attributes"]["value"], "hello");
    assert_eq!(by_name("list")["attributes"]["type"], "array");
    assert_eq!(
        by_name("list")["attributes"]["detailed-type"],
        json!(["tuple", ["number", "number"]])
    );
    let secret = by_name("secret");
    assert!(
        secret["attributes"]["value"].is_null(),
        "sensitive values are left out of lists"
    );
    let one = call(
        &app,
        Method::GET,
        &format!(
            "/api/v2/state-version-outputs/{}",
            secret["id"].as_str().unwrap()
        ),
        None,
    )
    .await
    .json();
    assert_eq!(one["data"]["attributes"]["value"], "s3");
    let sv_id = sv["data"]["id"].as_str().unwrap();
    let by_version = get(&app, &format!("/api/v2/state-versions/{sv_id}/outputs"))
        .await
        .json();
    assert_eq!(by_version["data"].as_array().unwrap().len(), 3);
    assert_eq!(
        call(&app, Method::POST, &unlock, None).await.status,
        StatusCode::OK
    );
    // A state given inline is finalized and current at once.
    assert_eq!(
        call(&app, Method::POST, &lock, None).await.status,
        StatusCode::OK
    );
    let inline = json!({"data":{"type":"state-versions","attributes":{"serial":2,"md5":"x","state":b64(br#"{"version":4,"serial":2,"outputs":{}}"#)}}});
    let two = call(&app, Method::POST, &path, Some(inline)).await.json();
    assert_eq!(two["data"]["attributes"]["status"], "finalized");
    let shown = get(&app, &current).await.json();
    assert_eq!(shown["data"]["id"], two["data"]["id"]);
}

async fn uploaded_run(app: &Router, org_name: &str, attrs: Value, speculative: bool) -> Value {
    org(app, org_name).await;
    let ws = workspace(app, org_name, "w").await;
    uploaded_configuration(app, &ws, json!({"speculative": speculative})).await;
    let run = call(app, Method::POST, "/api/v2/runs", Some(json!({"data":{"type":"runs","attributes":attrs,"relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}}))).await;
    assert_eq!(run.status, StatusCode::CREATED);
    run.json()["data"].clone()
}

async fn log_of(app: &Router, kind: &str, id: &str) -> String {
    let step = get(app, &format!("/api/v2/{kind}/{id}")).await.json();
    let url = step["data"]["attributes"]["log-read-url"]
        .as_str()
        .unwrap()
        .to_string();
    let log = send(app, Method::GET, &path_of(&url), None, vec![]).await;
    assert_eq!(log.status, StatusCode::OK);
    String::from_utf8(log.bytes).unwrap()
}

#[tokio::test]
async fn runs_end_planned_then_applied_with_logs_and_events() {
    let app = app(Config::default());
    let run = uploaded_run(&app, "runs", json!({}), false).await;
    assert_eq!(run["attributes"]["status"], "planned");
    let id = run["id"].as_str().unwrap();
    let plan = run["relationships"]["plan"]["data"]["id"].as_str().unwrap();
    let log = log_of(&app, "plans", plan).await;
    assert!(
        log.starts_with('\u{2}') && log.ends_with('\u{3}'),
        "{log:?}"
    );
    assert!(log.contains("No changes."));
    let part = send(
        &app,
        Method::GET,
        &format!(
            "{}?offset=1&limit=9",
            path_of(
                get(&app, &format!("/api/v2/plans/{plan}")).await.json()["data"]["attributes"]
                    ["log-read-url"]
                    .as_str()
                    .unwrap()
            )
        ),
        None,
        vec![],
    )
    .await;
    assert_eq!(part.bytes, b"Terraform");
    let apply = call(
        &app,
        Method::POST,
        &format!("/api/v2/runs/{id}/actions/apply"),
        Some(json!({})),
    )
    .await;
    assert_eq!(apply.status, StatusCode::ACCEPTED);
    let shown = get(&app, &format!("/api/v2/runs/{id}")).await.json();
    assert_eq!(shown["data"]["attributes"]["status"], "applied");
    let apply_id = run["relationships"]["apply"]["data"]["id"]
        .as_str()
        .unwrap();
    assert!(log_of(&app, "applies", apply_id)
        .await
        .contains("Apply complete!"));
    let events = get(&app, &format!("/api/v2/runs/{id}/run-events"))
        .await
        .json();
    let events = events["data"].as_array().unwrap().clone();
    assert!(!events.is_empty());
    let one = call(
        &app,
        Method::GET,
        &format!("/api/v2/run-events/{}", events[0]["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(one.status, StatusCode::OK);
    // A speculative configuration's run ends planned_and_finished.
    let app2 = self::app(Config::default());
    let spec = uploaded_run(&app2, "spec", json!({}), true).await;
    assert_eq!(spec["attributes"]["status"], "planned_and_finished");
}

#[tokio::test]
async fn tfe_words_and_strictness_are_behind_compat_tfe() {
    // The spec's words by default.
    let spec = app(Config::default());
    let run = uploaded_run(&spec, "a", json!({}), false).await;
    let id = run["id"].as_str().unwrap();
    let forced = admin(
        &spec,
        Method::POST,
        &format!("/api/v2/admin/runs/{id}/actions/force-cancel"),
        None,
    )
    .await;
    assert_eq!(forced.json()["data"]["attributes"]["status"], "cancelled");
    let no_type = send(&spec, Method::POST, "/api/v2/ping", Some(TOKEN), vec![]).await;
    assert_ne!(no_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // TFE's under Compat::Tfe.
    let tfe = tfe();
    let run = uploaded_run(&tfe, "b", json!({}), false).await;
    let id = run["id"].as_str().unwrap();
    assert_eq!(run["attributes"]["actions"]["is-force-cancelable"], false);
    let refused = call(
        &tfe,
        Method::POST,
        &format!("/api/v2/runs/{id}/actions/force-cancel"),
        Some(json!({})),
    )
    .await;
    assert_eq!(
        refused.status,
        StatusCode::CONFLICT,
        "force-cancel of a run never cancelled"
    );
    let forced = admin(
        &tfe,
        Method::POST,
        &format!("/api/v2/admin/runs/{id}/actions/force-cancel"),
        None,
    )
    .await;
    assert_eq!(
        forced.json()["data"]["attributes"]["status"],
        "force_canceled"
    );
    let headers = [("content-type", "text/plain"), ("content-length", "2")];
    let path = "/api/v2/organizations";
    let bare = raw(
        &tfe,
        Method::POST,
        path,
        Some(TOKEN),
        &headers,
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(bare.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let slash = get(&tfe, "/api/v2/organizations/b/workspaces/").await;
    assert_eq!(slash.status, StatusCode::OK);
    let slash = get(&spec, "/api/v2/organizations/a/workspaces/").await;
    assert_eq!(slash.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn include_projects_varsets_and_tfe_reads() {
    let app = app(Config::default());
    org(&app, "inc").await;
    let ws = workspace(&app, "inc", "w").await;
    // include=: teams→users, workspaces→organization.
    let team = call(
        &app,
        Method::POST,
        "/api/v2/organizations/inc/teams",
        Some(json!({"data":{"type":"teams","attributes":{"name":"devs"}}})),
    )
    .await;
    let team = id(&team);
    let me = get(&app, "/api/v2/account/details").await.json();
    let user = me["data"]["id"].as_str().unwrap().to_string();
    let username = me["data"]["attributes"]["username"]
        .as_str()
        .unwrap()
        .to_string();
    let added = call(
        &app,
        Method::POST,
        &format!("/api/v2/teams/{team}/relationships/users"),
        Some(json!({"data":[{"type":"users","id":username}]})),
    )
    .await;
    assert!(added.status.is_success());
    // the team's members as organization memberships (pytfe's list_organization_memberships)
    let memberships = get(
        &app,
        &format!("/api/v2/teams/{team}/relationships/organization-memberships"),
    )
    .await
    .json();
    let listed = memberships["data"].as_array().expect("a list");
    assert_eq!(listed.len(), 1, "{memberships}");
    assert_eq!(listed[0]["type"], "organization-memberships");
    assert_eq!(
        listed[0]["relationships"]["user"]["data"]["id"],
        user.as_str()
    );
    let shown = get(&app, &format!("/api/v2/teams/{team}?include=users"))
        .await
        .json();
    assert!(shown["included"]
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["id"] == user.as_str()));
    let shown = get(
        &app,
        &format!("/api/v2/workspaces/{ws}?include=organization,current_run"),
    )
    .await
    .json();
    assert_eq!(shown["included"][0]["id"], "inc");
    // Projects: the default one is readable; create, update, delete.
    let o = get(&app, "/api/v2/organizations/inc").await.json();
    let default = o["data"]["relationships"]["default-project"]["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        get(&app, &format!("/api/v2/projects/{default}"))
            .await
            .status,
        StatusCode::OK
    );
    let prj = call(
        &app,
        Method::POST,
        "/api/v2/organizations/inc/projects",
        Some(json!({"data":{"type":"projects","attributes":{"name":"apps"}}})),
    )
    .await;
    assert_eq!(prj.status, StatusCode::CREATED);
    let prj = id(&prj);
    let list = get(&app, "/api/v2/organizations/inc/projects").await.json();
    assert_eq!(list["data"].as_array().unwrap().len(), 2);
    let upd = call(
        &app,
        Method::PATCH,
        &format!("/api/v2/projects/{prj}"),
        Some(json!({"data":{"type":"projects","attributes":{"description":"d"}}})),
    )
    .await;
    assert_eq!(upd.json()["data"]["attributes"]["description"], "d");
    assert_eq!(
        call(
            &app,
            Method::DELETE,
            &format!("/api/v2/projects/{default}"),
            None
        )
        .await
        .status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    assert_eq!(
        call(
            &app,
            Method::DELETE,
            &format!("/api/v2/projects/{prj}"),
            None
        )
        .await
        .status,
        StatusCode::NO_CONTENT
    );
    // Variable sets.
    let vs = call(
        &app,
        Method::POST,
        "/api/v2/organizations/inc/varsets",
        Some(json!({"data":{"type":"varsets","attributes":{"name":"shared","global":false}}})),
    )
    .await;
    assert_eq!(vs.status, StatusCode::CREATED);
    let vs = id(&vs);
    let v = call(
        &app,
        Method::POST,
        &format!("/api/v2/varsets/{vs}/relationships/vars"),
        Some(json!({"data":{"type":"vars","attributes":{"key":"k","value":"v","category":"env"}}})),
    )
    .await;
    assert_eq!(v.status, StatusCode::CREATED);
    let applied = call(
        &app,
        Method::POST,
        &format!("/api/v2/varsets/{vs}/relationships/workspaces"),
        Some(json!({"data":[{"type":"workspaces","id":ws}]})),
    )
    .await;
    assert_eq!(applied.status, StatusCode::NO_CONTENT);
    let for_ws = get(&app, &format!("/api/v2/workspaces/{ws}/varsets"))
        .await
        .json();
    assert_eq!(for_ws["data"][0]["id"], vs.as_str());
    // Reads TFE clients make.
    assert_eq!(
        get(&app, &format!("/api/v2/users/{user}")).await.status,
        StatusCode::OK
    );
    assert_eq!(
        admin(
            &app,
            Method::GET,
            &format!("/api/v2/admin/users/{user}"),
            None
        )
        .await
        .status,
        StatusCode::OK
    );
    assert_eq!(
        get(&app, "/api/v2/organizations/inc/oauth-tokens")
            .await
            .status,
        StatusCode::OK
    );
}
