//! Drives the reference through its router (`app()` + `oneshot`), one test per behaviour.

use crate::support::*;
use axum::http::{header, Method, StatusCode};
use conform_reference::{app, Config};
use serde_json::json;

#[tokio::test]
async fn organization_lifecycle_on_both_prefixes() {
    let app = app(Config::default());
    org(&app, "acme").await;
    let a = get(&app, "/organizations/acme").await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.content_type(), "application/vnd.api+json");
    assert!(
        a.json()["data"]["relationships"]["default-project"]["data"]["id"]
            .as_str()
            .unwrap()
            .starts_with("prj-")
    );
    let teams = get(&app, "/api/v2/organizations/acme/teams").await;
    assert_eq!(teams.json()["data"][0]["attributes"]["name"], "owners");
    let list = get(&app, "/api/v2/organizations").await;
    assert_eq!(list.json()["meta"]["pagination"]["total-count"], 1);
    let dup = call(&app, Method::POST, "/organizations", Some(json!({"data":{"type":"organizations","attributes":{"name":"acme","email":"o@example.test"}}}))).await;
    assert_eq!(dup.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        dup.json()["errors"][0]["source"]["pointer"],
        "/data/attributes/name"
    );
    let ent = get(&app, "/organizations/acme/entitlement-set").await;
    assert_eq!(ent.json()["data"]["type"], "entitlement-sets");
    assert_eq!(
        call(&app, Method::DELETE, "/api/v2/organizations/acme", None)
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        get(&app, "/organizations/acme").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn request_errors_are_jsonapi_and_change_nothing() {
    let app = app(Config {
        body_limit: 200,
        ..Config::default()
    });
    let malformed = send(
        &app,
        Method::POST,
        "/api/v2/organizations",
        Some(TOKEN),
        b"{nope".to_vec(),
    )
    .await;
    assert_eq!(malformed.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(malformed.content_type(), "application/vnd.api+json");
    let wrong_type = call(
        &app,
        Method::POST,
        "/organizations",
        Some(json!({"data":{"type":"teams","attributes":{"name":"a","email":"b@c"}}})),
    )
    .await;
    assert_eq!(wrong_type.status, StatusCode::UNPROCESSABLE_ENTITY);
    let missing = call(
        &app,
        Method::POST,
        "/organizations",
        Some(json!({"data":{"type":"organizations","attributes":{"name":"a"}}})),
    )
    .await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    let list = get(&app, "/organizations").await;
    assert_eq!(list.json()["data"], json!([]));
    let big = send(
        &app,
        Method::POST,
        "/organizations",
        Some(TOKEN),
        vec![b' '; 300],
    )
    .await;
    assert_eq!(big.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(big.json()["errors"][0]["status"], "413");
    let unknown = get(&app, "/api/v2/nothing-here").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.json()["errors"][0]["status"], "404");
    let method = call(&app, Method::PUT, "/api/v2/organizations", None).await;
    assert_eq!(method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(method.content_type(), "application/vnd.api+json");
    let anonymous = send(&app, Method::GET, "/api/v2/organizations", None, vec![]).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let wrong = send(
        &app,
        Method::GET,
        "/api/v2/organizations",
        Some("nope"),
        vec![],
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        get(&app, "/api/v2/admin/users").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        admin(&app, Method::GET, "/api/v2/admin/users", None)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        admin(&app, Method::GET, "/admin/general-settings", None)
            .await
            .status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn run_state_machine() {
    let app = app(Config::default());
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    let run_body = json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}});
    let run = call(&app, Method::POST, "/runs", Some(run_body.clone())).await;
    assert_eq!(run.status, StatusCode::CREATED);
    assert_eq!(run.json()["data"]["attributes"]["status"], "pending");
    let run_id = id(&run);
    let action = |name: &str| format!("/api/v2/runs/{run_id}/actions/{name}");
    assert_eq!(
        call(&app, Method::POST, &action("apply"), None)
            .await
            .status,
        StatusCode::CONFLICT
    );
    assert_eq!(
        call(&app, Method::POST, &action("force-execute"), None)
            .await
            .status,
        StatusCode::ACCEPTED
    );
    let shown = get(&app, &format!("/runs/{run_id}")).await;
    assert_eq!(shown.json()["data"]["attributes"]["status"], "planned");
    assert_eq!(
        shown.json()["data"]["attributes"]["actions"]["is-confirmable"],
        true
    );
    let applied = call(
        &app,
        Method::POST,
        &action("apply"),
        Some(json!({"comment":"ship it"})),
    )
    .await;
    assert_eq!(applied.status, StatusCode::ACCEPTED);
    assert_eq!(
        call(&app, Method::POST, &action("discard"), None)
            .await
            .status,
        StatusCode::CONFLICT
    );
    let comments = get(&app, &format!("/runs/{run_id}/comments")).await;
    assert_eq!(comments.json()["data"][0]["attributes"]["body"], "ship it");
    let apply_id = get(&app, &format!("/runs/{run_id}")).await.json()["data"]["relationships"]
        ["apply"]["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        get(&app, &format!("/applies/{apply_id}")).await.json()["data"]["attributes"]["status"],
        "finished"
    );
    // Admin force-cancel of a fresh run.
    let second = id(&call(&app, Method::POST, "/runs", Some(run_body)).await);
    let cancelled = admin(
        &app,
        Method::POST,
        &format!("/api/v2/admin/runs/{second}/actions/force-cancel"),
        None,
    )
    .await;
    assert_eq!(cancelled.status, StatusCode::OK);
    assert_eq!(
        cancelled.json()["data"]["attributes"]["status"],
        "cancelled"
    );
    assert_eq!(
        call(
            &app,
            Method::POST,
            &format!("/runs/{second}/actions/cancel"),
            None
        )
        .await
        .status,
        StatusCode::CONFLICT
    );
}

#[tokio::test]
async fn configuration_upload_round_trip() {
    let app = app(Config::default());
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    let cv = call(
        &app,
        Method::POST,
        &format!("/api/v2/workspaces/{ws}/configuration-versions"),
        Some(json!({"data":{"type":"configuration-versions"}})),
    )
    .await;
    assert_eq!(cv.status, StatusCode::CREATED);
    let cv_id = id(&cv);
    let url = cv.json()["data"]["attributes"]["upload-url"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:9/v1/object/"), "{url}");
    let download = format!("/configuration-versions/{cv_id}/download");
    assert_eq!(get(&app, &download).await.status, StatusCode::NOT_FOUND);
    let put = send(
        &app,
        Method::PUT,
        &path_of(&url),
        None,
        b"tarball bytes".to_vec(),
    )
    .await;
    assert_eq!(put.status, StatusCode::OK);
    let shown = get(&app, &format!("/configuration-versions/{cv_id}")).await;
    assert_eq!(shown.json()["data"]["attributes"]["status"], "uploaded");
    assert!(shown.json()["data"]["attributes"]["upload-url"].is_null());
    let got = get(&app, &download).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.bytes, b"tarball bytes");
    let run = call(&app, Method::POST, "/runs", Some(json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}}))).await;
    assert_eq!(run.json()["data"]["attributes"]["status"], "planned");
    let archive = format!("/configuration-versions/{cv_id}/actions/archive");
    // the workspace's current version is kept (tfe-api-facts 2.4) ...
    assert_eq!(
        call(&app, Method::POST, &archive, None).await.status,
        StatusCode::CONFLICT
    );
    // ... a pending one cannot be archived ...
    let newer = id(&call(
        &app,
        Method::POST,
        &format!("/workspaces/{ws}/configuration-versions"),
        Some(json!({"data":{"type":"configuration-versions"}})),
    )
    .await);
    assert_eq!(
        call(
            &app,
            Method::POST,
            &format!("/configuration-versions/{newer}/actions/archive"),
            None
        )
        .await
        .status,
        StatusCode::CONFLICT
    );
    // ... and once a newer version exists, the uploaded one is archived
    assert_eq!(
        call(&app, Method::POST, &archive, None).await.status,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        call(&app, Method::POST, &archive, None).await.status,
        StatusCode::CONFLICT
    );
    let ingress = get(
        &app,
        &format!("/configuration-versions/{cv_id}/ingress-attributes"),
    )
    .await;
    assert_eq!(ingress.json()["data"]["type"], "ingress-attributes");
}

#[tokio::test]
async fn registry_publish_discover_and_download() {
    let app = app(Config::default());
    org(&app, "acme").await;
    let module = call(&app, Method::POST, "/api/v2/organizations/acme/registry-modules", Some(json!({"data":{"type":"registry-modules","attributes":{"name":"net","provider":"aws","registry-name":"private"}}}))).await;
    assert_eq!(module.status, StatusCode::CREATED);
    let version = call(
        &app,
        Method::POST,
        "/api/v2/organizations/acme/registry-modules/private/acme/net/aws/versions",
        Some(json!({"data":{"type":"registry-module-versions","attributes":{"version":"1.0.0"}}})),
    )
    .await;
    assert_eq!(version.status, StatusCode::CREATED);
    let upload_url = version.json()["data"]["links"]["upload"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(upload(&app, &upload_url, b"module").await, StatusCode::OK);
    let discovery = send(
        &app,
        Method::GET,
        "/.well-known/terraform.json",
        None,
        vec![],
    )
    .await;
    assert_eq!(discovery.json()["modules.v1"], "/api/registry/v1/modules/");
    let versions = get(&app, "/api/registry/v1/modules/acme/net/aws/versions").await;
    assert_eq!(
        versions.json()["modules"][0]["versions"][0]["version"],
        "1.0.0"
    );
    let dl = get(&app, "/api/registry/v1/modules/acme/net/aws/1.0.0/download").await;
    assert_eq!(dl.status, StatusCode::NO_CONTENT);
    let source = dl
        .headers
        .get("x-terraform-get")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(source.contains("/v1/object/"));
    let latest = get(&app, "/api/registry/v1/modules/acme/net/aws/download").await;
    assert_eq!(latest.status, StatusCode::FOUND);
    let shown = get(&app, "/registry-modules/show/acme/net/aws").await;
    assert_eq!(id(&shown), id(&module));
    let search = get(&app, "/api/registry/v1/modules/search?q=net").await;
    assert_eq!(search.json()["modules"][0]["name"], "net");
    // Deprecated delete acts on the same store.
    assert_eq!(
        call(
            &app,
            Method::POST,
            "/registry-modules/actions/delete/acme/net",
            None
        )
        .await
        .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        get(
            &app,
            "/organizations/acme/registry-modules/private/acme/net/aws"
        )
        .await
        .status,
        StatusCode::NOT_FOUND
    );
}

/// A no-code module pins a version its registry module has (TFE's no-code provisioning API,
/// `version-pin`): a version it lacks is refused with 422, the published one is taken.
#[tokio::test]
async fn no_code_module_pins_a_version_of_its_module() {
    let app = app(Config::default());
    org(&app, "acme").await;
    let module = id(&call(&app, Method::POST, "/organizations/acme/registry-modules", Some(json!({"data":{"type":"registry-modules","attributes":{"name":"net","provider":"aws","registry-name":"private"}}}))).await);
    let body = |pin: &str| json!({"data":{"type":"no-code-modules","attributes":{"version-pin":pin,"enabled":true},"relationships":{"registry-module":{"data":{"type":"registry-modules","id":module}}}}});
    let refused = call(
        &app,
        Method::POST,
        "/organizations/acme/no-code-modules",
        Some(body("1.0.0")),
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    let version = call(
        &app,
        Method::POST,
        "/organizations/acme/registry-modules/private/acme/net/aws/versions",
        Some(json!({"data":{"type":"registry-module-versions","attributes":{"version":"1.0.0"}}})),
    )
    .await;
    assert_eq!(version.status, StatusCode::CREATED);
    let made = call(
        &app,
        Method::POST,
        "/organizations/acme/no-code-modules",
        Some(body("1.0.0")),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json()["data"]["attributes"]["version-pin"], "1.0.0");
}

#[tokio::test]
async fn paging_meta_and_links() {
    let app = app(Config::default());
    for n in ["a", "b", "c"] {
        org(&app, n).await;
    }
    let page = get(
        &app,
        "/api/v2/organizations?page%5Bnumber%5D=2&page%5Bsize%5D=1",
    )
    .await;
    let doc = page.json();
    assert_eq!(doc["data"][0]["id"], "b");
    assert_eq!(doc["meta"]["pagination"]["total-count"], 3);
    assert_eq!(doc["meta"]["pagination"]["prev-page"], 1);
    assert_eq!(doc["meta"]["pagination"]["next-page"], 3);
    let plain = get(&app, "/organizations?page=3&page_size=1").await;
    assert_eq!(plain.json()["data"][0]["id"], "c");
    let far = get(&app, "/organizations?page=999&page_size=100").await;
    assert_eq!(far.json()["data"], json!([]));
    assert_eq!(far.json()["meta"]["pagination"]["current-page"], 999);
}

#[tokio::test]
async fn admin_users_and_memberships() {
    let app = app(Config::default());
    org(&app, "acme").await;
    let m = call(&app, Method::POST, "/organizations/acme/organization-memberships", Some(json!({"data":{"type":"organization-memberships","attributes":{"email":"new@example.test"}}}))).await;
    assert_eq!(m.status, StatusCode::CREATED);
    let user = m.json()["data"]["relationships"]["user"]["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let act = |a: &str| format!("/api/v2/admin/users/{user}/actions/{a}");
    let s = admin(&app, Method::POST, &act("suspend"), None).await;
    assert_eq!(s.status, StatusCode::OK);
    assert_eq!(s.json()["data"]["attributes"]["is-suspended"], true);
    assert_eq!(
        admin(&app, Method::POST, &act("suspend"), None)
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        admin(&app, Method::POST, &act("disable_two_factor"), None)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        admin(
            &app,
            Method::POST,
            &act("impersonate"),
            Some(json!({"reason":"support"}))
        )
        .await
        .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        admin(
            &app,
            Method::POST,
            "/admin/users/actions/unimpersonate",
            None
        )
        .await
        .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        admin(
            &app,
            Method::POST,
            "/admin/users/actions/unimpersonate",
            None
        )
        .await
        .status,
        StatusCode::BAD_REQUEST
    );
}

// ---- one test per fault family ----

#[tokio::test]
async fn routing_faults_drop_routes() {
    let app = with_faults(&[
        "no-api-v2",
        "drop-route=GET /organizations/:organization_name",
    ]);
    assert_eq!(
        get(&app, "/api/v2/organizations").await.status,
        StatusCode::NOT_FOUND
    );
    let made = call(&app, Method::POST, "/organizations", Some(json!({"data":{"type":"organizations","attributes":{"name":"acme","email":"o@example.test"}}}))).await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(
        get(&app, "/organizations/acme").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&app, "/organizations/acme/teams").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn envelope_faults_break_documents() {
    let app = with_faults(&["numeric-id", "list-as-object"]);
    org(&app, "acme").await;
    assert!(get(&app, "/organizations/acme").await.json()["data"]["id"].is_number());
    assert!(get(&app, "/organizations").await.json()["data"].is_object());
    let app = with_faults(&[
        "no-data",
        "wrong-content-type=GET /organizations/:organization_name",
    ]);
    org(&app, "acme").await;
    let a = get(&app, "/organizations/acme").await;
    assert!(a.json().get("data").is_none() && a.json().get("result").is_some());
    assert!(a.content_type().starts_with("text/plain"));
    let app = with_faults(&["huge-body=GET /organizations"]);
    let res = raw(
        &app,
        Method::GET,
        "/organizations",
        Some(TOKEN),
        &[],
        vec![],
    )
    .await;
    assert_eq!(
        res.headers().get(header::CONTENT_LENGTH).unwrap(),
        "1073741824"
    );
}

#[tokio::test]
async fn behaviour_faults_pretend() {
    let app = with_faults(&[
        "delete-noop",
        "update-not-persisted",
        "action-ignores-state",
    ]);
    org(&app, "acme").await;
    assert_eq!(
        call(&app, Method::DELETE, "/organizations/acme", None)
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        get(&app, "/organizations/acme").await.status,
        StatusCode::OK
    );
    let patched = call(
        &app,
        Method::PATCH,
        "/organizations/acme",
        Some(json!({"data":{"type":"organizations","attributes":{"email":"x@y.test"}}})),
    )
    .await;
    assert_eq!(patched.json()["data"]["attributes"]["email"], "x@y.test");
    assert_eq!(
        get(&app, "/organizations/acme").await.json()["data"]["attributes"]["email"],
        "o@example.test"
    );
    let ws = workspace(&app, "acme", "app").await;
    let run = id(&call(&app, Method::POST, "/runs", Some(json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}}))).await);
    assert_eq!(
        call(
            &app,
            Method::POST,
            &format!("/runs/{run}/actions/apply"),
            None
        )
        .await
        .status,
        StatusCode::ACCEPTED
    );
    let app = with_faults(&["upload-url-wrong-form", "show-wrong-id"]);
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    let cv = call(
        &app,
        Method::POST,
        &format!("/workspaces/{ws}/configuration-versions"),
        None,
    )
    .await;
    let url = cv.json()["data"]["attributes"]["upload-url"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(url.contains("/uploads/"));
    assert_eq!(upload(&app, &url, b"x").await, StatusCode::OK);
    assert_ne!(id(&get(&app, &format!("/workspaces/{ws}")).await), ws);
}

#[tokio::test]
async fn paging_faults_shift_pages() {
    let app = with_faults(&["page-ignored"]);
    for n in ["a", "b"] {
        org(&app, n).await;
    }
    assert_eq!(
        get(&app, "/organizations?page=2&page_size=1").await.json()["data"][0]["id"],
        "a"
    );
    let app = with_faults(&["page-repeats-item", "list-omits-newest"]);
    for n in ["a", "b", "c"] {
        org(&app, n).await;
    }
    let doc = get(&app, "/organizations?page=2&page_size=1").await.json();
    assert_eq!(doc["data"][0]["id"], "a");
    assert_eq!(doc["meta"]["pagination"]["total-count"], 2);
}

#[tokio::test]
async fn transport_faults() {
    let app = with_faults(&["rate-limit-first=1", "server-error=GET /organizations"]);
    let limited = get(&app, "/organizations").await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.headers.get("retry-after").unwrap(), "1");
    assert_eq!(limited.headers.get("x-ratelimit-reset").unwrap(), "0.2");
    assert_eq!(
        get(&app, "/organizations").await.status,
        StatusCode::INTERNAL_SERVER_ERROR
    );
}

#[tokio::test]
async fn reset_closes_the_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let running = conform_reference::start(Config {
        faults: vec!["reset=GET /organizations".parse().unwrap()],
        ..Config::default()
    })
    .await
    .unwrap();
    let addr = running.root_url().trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(format!("GET /organizations HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got).await;
    let text = String::from_utf8_lossy(&got);
    // No complete answer: at most a head without a finished body.
    assert!(!text.contains("0\r\n\r\n"), "{text}");
    assert_eq!(running.seeded().len(), 2);
    running.shutdown();
}

#[tokio::test]
async fn tfe_profile_faults() {
    let app = with_faults(&[
        "wrong-status",
        "errors-not-jsonapi",
        "plain-json-media-type",
    ]);
    let a = call(&app, Method::POST, "/organizations", Some(json!({"data":{"type":"organizations","attributes":{"name":"acme","email":"o@example.test"}}}))).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.content_type(), "application/json");
    let missing = get(&app, "/organizations/none").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(missing.content_type().starts_with("text/plain"));
    let app = with_faults(&["no-auth", "no-pagination-meta"]);
    let anonymous = send(&app, Method::GET, "/organizations", None, vec![]).await;
    assert_eq!(anonymous.status, StatusCode::OK);
    assert!(anonymous.json()["meta"].get("pagination").is_none());
}

/// Every spec route answers something other than 404/405 with real ids.
#[tokio::test]
async fn spec_routes_are_present() {
    let app = app(Config::default());
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    let src = workspace(&app, "acme", "src").await;
    let prj = get(&app, "/organizations/acme").await.json()["data"]["relationships"]
        ["default-project"]["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let team = id(&call(
        &app,
        Method::POST,
        "/organizations/acme/teams",
        Some(json!({"data":{"type":"teams","attributes":{"name":"devs"}}})),
    )
    .await);
    let tws = id(&call(&app, Method::POST, "/team-workspaces", Some(json!({"data":{"type":"team-workspaces","attributes":{"access":"read"},"relationships":{"team":{"data":{"type":"teams","id":team}},"workspace":{"data":{"type":"workspaces","id":ws}}}}}))).await);
    let tprj = id(&call(&app, Method::POST, "/team-projects", Some(json!({"data":{"type":"team-projects","attributes":{"access":"read"},"relationships":{"team":{"data":{"type":"teams","id":team}},"project":{"data":{"type":"projects","id":prj}}}}}))).await);
    let run = call(&app, Method::POST, "/runs", Some(json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}}))).await.json();
    let run_id = run["data"]["id"].as_str().unwrap().to_string();
    let ce = run["data"]["relationships"]["cost-estimate"]["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let rt = id(&call(&app, Method::POST, &format!("/workspaces/{ws}/run-triggers"), Some(json!({"data":{"relationships":{"sourceable":{"data":{"type":"workspaces","id":src}}}}}))).await);
    // TFE wants the workspace locked by the caller before a state version.
    let lock = call(
        &app,
        Method::POST,
        &format!("/workspaces/{ws}/actions/lock"),
        Some(json!({"reason":"state"})),
    )
    .await;
    assert_eq!(lock.status, StatusCode::OK);
    let sv = call(&app, Method::POST, &format!("/workspaces/{ws}/state-versions"), Some(json!({"data":{"type":"state-versions","attributes":{"serial":1,"md5":"x","state":"e30="}}}))).await;
    assert_eq!(sv.status, StatusCode::CREATED);
    let var = call(&app, Method::POST, "/vars", Some(json!({"data":{"type":"vars","attributes":{"key":"k","value":"v","category":"env"},"relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}}))).await;
    assert_eq!(var.status, StatusCode::CREATED);
    let nc = id(&call(&app, Method::POST, &format!("/workspaces/{ws}/notification-configurations"), Some(json!({"data":{"type":"notification-configurations","attributes":{"name":"n","destination-type":"generic","enabled":false,"url":"https://hook.test/x"}}}))).await);
    let ps = id(&call(
        &app,
        Method::POST,
        "/organizations/acme/policy-sets",
        Some(json!({"data":{"type":"policy-sets","attributes":{"name":"ps"}}})),
    )
    .await);
    let psv = id(&call(
        &app,
        Method::POST,
        &format!("/policy-sets/{ps}/versions"),
        None,
    )
    .await);
    let oc = call(&app, Method::POST, "/organizations/acme/oauth-clients", Some(json!({"data":{"type":"oauth-clients","attributes":{"service-provider":"github","http-url":"https://github.com","api-url":"https://api.github.com","oauth-token-string":"t"}}}))).await.json();
    let oc_id = oc["data"]["id"].as_str().unwrap().to_string();
    let ot = oc["data"]["relationships"]["oauth-tokens"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let pool = id(&call(
        &app,
        Method::POST,
        "/organizations/acme/agent-pool",
        Some(json!({"data":{"type":"agent-pools","attributes":{"name":"p"}}})),
    )
    .await);
    let agent = get(&app, &format!("/agent-pools/{pool}/agents"))
        .await
        .json()["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let at = id(&call(
        &app,
        Method::POST,
        &format!("/agent-pools/{pool}/authentication-tokens"),
        Some(json!({"data":{"type":"authentication-tokens","attributes":{"description":"d"}}})),
    )
    .await);
    let module = id(&call(&app, Method::POST, "/organizations/acme/registry-modules", Some(json!({"data":{"type":"registry-modules","attributes":{"name":"net","provider":"aws"}}}))).await);
    let nocode = id(&call(&app, Method::POST, "/organizations/acme/no-code-modules", Some(json!({"data":{"type":"no-code-modules","relationships":{"registry-module":{"data":{"type":"registry-modules","id":module}}}}}))).await);
    let engine = id(&admin(&app, Method::POST, "/admin/engine-versions", Some(json!({"data":{"type":"terraform-versions","attributes":{"version":"9.9.9","url":"https://x","sha":"abc"}}}))).await);
    let gets = [
        "/account/details".to_string(), "/organizations/acme/entitlement-set".into(),
        "/organization-memberships".into(), "/organizations/acme/organization-memberships".into(),
        "/organizations/acme/tags".into(), format!("/teams/{team}"), format!("/team-workspaces?filter%5Bworkspace%5D%5Bid%5D={ws}"),
        format!("/team-workspaces/{tws}"), format!("/team-projects?filter%5Bproject%5D%5Bid%5D={prj}"), format!("/team-projects/{tprj}"),
        format!("/workspaces/{ws}/runs"), format!("/cost-estimates/{ce}"), format!("/workspaces/{ws}/run-triggers?filter%5Brun-trigger%5D%5Btype%5D=inbound"),
        format!("/run-triggers/{rt}"), format!("/workspaces/{ws}/current-state-version"),
        "/state-versions?filter%5Bworkspace%5D%5Bname%5D=app&filter%5Borganization%5D%5Bname%5D=acme".into(),
        "/vars?filter%5Bworkspace%5D%5Bname%5D=app".into(), "/organizations/acme/policy-sets".into(),
        format!("/policy-sets/{ps}"), format!("/policy-set-versions/{psv}"), format!("/oauth-clients/{oc_id}"),
        format!("/oauth-clients/{oc_id}/oauth-tokens"), format!("/oauth-tokens/{ot}"), format!("/notification-configurations/{nc}"),
        format!("/agent-pools/{pool}"), format!("/agents/{agent}"), format!("/authentication-tokens/{at}"),
        "/organizations/acme/registry-modules".into(), "/organization/audit-trail".into(), "/organizations/acme/invoices".into(),
        "/organizations/acme/invoices/next".into(), "/feature-sets".into(), "/organizations/acme/feature-sets".into(),
        "/meta/ip-ranges".into(), "/vcs-app/installations".into(), format!("/no-code-modules/{nocode}"),
        "/api/v2/admin/runs".into(), "/admin/organizations/acme".into(), format!("/admin/workspaces/{ws}"),
        format!("/admin/engine-versions/{engine}"), "/api/v2/admin/smtp-settings".into(),
    ];
    for path in gets {
        let a = admin(&app, Method::GET, &path, None).await;
        assert_eq!(a.status, StatusCode::OK, "GET {path}: {:?}", a.json());
    }
    let a = call(
        &app,
        Method::POST,
        &format!("/notification-configurations/{nc}/actions/verify"),
        None,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(
        call(
            &app,
            Method::POST,
            &format!("/runs/{run_id}/actions/discard"),
            Some(json!({"comment":"x"}))
        )
        .await
        .status,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        call(
            &app,
            Method::POST,
            "/organizations/acme/authentication-token",
            None
        )
        .await
        .status,
        StatusCode::CREATED
    );
    assert_eq!(
        call(
            &app,
            Method::DELETE,
            "/organizations/acme/authentication-token",
            None
        )
        .await
        .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        call(&app, Method::DELETE, &format!("/policies/{ps}"), None)
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        get(&app, &format!("/policy-sets/{ps}")).await.status,
        StatusCode::NOT_FOUND
    );
    let seeded = conform_reference::start(Config::default())
        .await
        .unwrap()
        .seeded();
    assert_eq!(seeded[0].0, "vcs_installation");
    assert_eq!(seeded[1].0, "assessment_result");
}
