//! Each shape through the router (`app()` + `oneshot`): it changes exactly what it says, and
//! what it seeds is there. Without shapes nothing changes (`tests/api.rs`).

use crate::support;

use axum::http::{header, Method, StatusCode};

use conform_reference::{seeded_archive, shape_catalog, start, Config, Shape};
use serde_json::{json, Value};
use support::*;

/// The `seeded()` list of a reference started with these shapes.
async fn seeded(shapes: &[&str]) -> Vec<(String, String)> {
    let running = start(shaped_config(shapes)).await.expect("starts");
    let seeded = running.seeded();
    running.shutdown();
    seeded
}

fn absent_route(a: &Answer) {
    assert_eq!(a.status, StatusCode::NOT_FOUND, "{:?}", a.json());
    assert_eq!(a.content_type(), "application/vnd.api+json");
    assert_eq!(a.json()["errors"][0]["status"], "404");
    assert_eq!(a.json()["errors"][0]["detail"], "route not found");
}

fn org_body(name: &str) -> Value {
    json!({"data":{"type":"organizations","attributes":{"name":name,"email":"o@example.test"}}})
}

#[test]
fn the_catalog_names_every_shape_and_parsing_lists_them() {
    let names: Vec<&str> = shape_catalog().iter().map(|i| i.name).collect();
    assert_eq!(
        names,
        [
            "api-v2-only",
            "one-organization",
            "registry-only",
            "numeric-ids",
            "no-runner",
            "tfe-words",
            "no-admin",
            "opaque-organization-ids",
            "unavailable-now-and-then",
            "tfe-paths",
            "stores-nothing",
            "generic-store",
            "tfe-create-200",
            "registry-source-other-host",
            "typed-bodies",
            "membership-writes-only",
            "runs-need-configuration",
            "list-lag",
            "delete-202-later",
            "unconfigured",
            "cloud-block-only",
        ]
    );
    for info in shape_catalog() {
        let shape: Shape = info.name.parse().expect("parses");
        assert_eq!(shape.to_string(), info.name);
        assert!(!info.description.is_empty());
    }
    let err = "numeric".parse::<Shape>().unwrap_err();
    assert!(
        err.contains("numeric-ids") && err.contains("no-runner"),
        "{err}"
    );
    assert!(Config::default().shapes.is_empty());
}

#[tokio::test]
async fn no_admin_takes_away_every_admin_route_and_nothing_else() {
    let app = shaped(&["no-admin"]);
    absent_route(&admin(&app, Method::GET, "/admin/users", None).await);
    absent_route(&admin(&app, Method::GET, "/api/v2/admin/organizations", None).await);
    call(&app, Method::POST, "/organizations", Some(org_body("acme"))).await;
    assert_eq!(
        get(&app, "/organizations/acme").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn tfe_paths_serve_engine_versions_and_ip_ranges_only_where_tfe_does() {
    let app = shaped(&["tfe-paths"]);
    absent_route(&admin(&app, Method::GET, "/admin/engine-versions", None).await);
    absent_route(&admin(&app, Method::GET, "/api/v2/admin/engine-versions", None).await);
    absent_route(&get(&app, "/meta/ip-ranges").await);
    absent_route(&get(&app, "/api/v2/meta/ip-ranges").await);
    let tfe = admin(&app, Method::GET, "/api/v2/admin/terraform-versions", None).await;
    assert_eq!(tfe.status, StatusCode::OK);
    assert_eq!(
        get(&app, "/api/meta/ip-ranges").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn opaque_organization_ids_are_not_names_and_paths_take_names() {
    let app = shaped(&["opaque-organization-ids"]);
    let made = call(&app, Method::POST, "/organizations", Some(org_body("acme"))).await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json()["data"]["id"], "org-61636d65");
    assert_eq!(made.json()["data"]["attributes"]["name"], "acme");
    assert_eq!(
        get(&app, "/organizations/acme").await.status,
        StatusCode::OK
    );
    assert_eq!(
        get(&app, "/organizations/org-61636d65").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn unavailable_now_and_then_answers_every_40th_request_503() {
    let app = shaped(&["unavailable-now-and-then"]);
    let mut unavailable = Vec::new();
    for n in 1..=80 {
        let a = get(&app, "/account/details").await;
        if a.status == StatusCode::SERVICE_UNAVAILABLE {
            assert_eq!(
                a.headers.get("retry-after").map(|v| v.as_bytes()),
                Some(&b"1"[..])
            );
            unavailable.push(n);
        } else {
            assert_eq!(a.status, StatusCode::OK);
        }
    }
    assert_eq!(unavailable, [40, 80]);
}

#[tokio::test]
async fn api_v2_only_answers_only_under_the_prefix() {
    let app = shaped(&["api-v2-only"]);
    absent_route(&get(&app, "/organizations").await);
    absent_route(&call(&app, Method::POST, "/organizations", Some(org_body("bare"))).await);
    // An absent route answers 404 with or without a token.
    absent_route(&send(&app, Method::GET, "/organizations", None, vec![]).await);
    let made = call(
        &app,
        Method::POST,
        "/api/v2/organizations",
        Some(org_body("acme")),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(
        get(&app, "/api/v2/organizations").await.status,
        StatusCode::OK
    );
    absent_route(&get(&app, "/organizations/acme").await);
    assert_eq!(
        get(&app, "/api/v2/organizations/acme").await.status,
        StatusCode::OK
    );
    absent_route(&get(&app, "/ping").await);
    absent_route(&get(&app, "/api/meta/ip-ranges").await);
    absent_route(&admin(&app, Method::GET, "/admin/general-settings", None).await);
    assert_eq!(
        admin(&app, Method::GET, "/api/v2/admin/general-settings", None)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        get(&app, "/api/v2/meta/ip-ranges").await.status,
        StatusCode::OK
    );
    // The registry protocol, discovery and the object store keep working.
    assert_eq!(
        send(
            &app,
            Method::GET,
            "/.well-known/terraform.json",
            None,
            vec![]
        )
        .await
        .status,
        StatusCode::OK
    );
    let registry = get(&app, "/api/registry/v1/modules").await;
    assert_eq!(registry.status, StatusCode::OK);
    assert_eq!(registry.json()["modules"], json!([]));
    let ws = workspace(&app, "acme", "app").await;
    uploaded_configuration(&app, &ws, json!({})).await;
}

#[tokio::test]
async fn one_organization_holds_acme_and_no_other() {
    let app = shaped(&["one-organization"]);
    for prefix in ["", "/api/v2"] {
        absent_route(&get(&app, &format!("{prefix}/organizations")).await);
        let create = call(
            &app,
            Method::POST,
            &format!("{prefix}/organizations"),
            Some(org_body("other")),
        )
        .await;
        absent_route(&create);
        let path = format!("{prefix}/organizations/acme");
        let rename = json!({"data":{"type":"organizations","attributes":{"name":"renamed"}}});
        absent_route(&call(&app, Method::PATCH, &path, Some(rename.clone())).await);
        absent_route(&call(&app, Method::DELETE, &path, None).await);
        let admin_path = format!("{prefix}/admin/organizations/acme");
        absent_route(&admin(&app, Method::PATCH, &admin_path, Some(rename)).await);
        absent_route(&admin(&app, Method::DELETE, &admin_path, None).await);
        assert_eq!(
            admin(&app, Method::GET, &admin_path, None).await.status,
            StatusCode::OK
        );
    }
    let shown = get(&app, "/api/v2/organizations/acme").await;
    assert_eq!(shown.status, StatusCode::OK);
    assert_eq!(shown.json()["data"]["id"], "acme");
    assert!(
        shown.json()["data"]["relationships"]["default-project"]["data"]["id"]
            .as_str()
            .is_some_and(|p| p.starts_with("prj-"))
    );
    assert_eq!(
        get(&app, "/organizations/acme").await.status,
        StatusCode::OK
    );
    let teams = get(&app, "/api/v2/organizations/acme/teams").await;
    assert_eq!(teams.json()["data"][0]["attributes"]["name"], "owners");
    let ws = workspace(&app, "acme", "app").await;
    let listed = get(&app, "/api/v2/organizations/acme/workspaces").await;
    assert_eq!(listed.json()["data"][0]["id"], ws.as_str());
    assert_eq!(
        get(&app, "/api/v2/organizations/other").await.status,
        StatusCode::NOT_FOUND
    );
    let seeded = seeded(&["one-organization"]).await;
    assert!(seeded.contains(&("organization".into(), "acme".into())));
    assert_eq!(seeded.len(), 3, "{seeded:?}");
}

#[tokio::test]
async fn registry_only_serves_the_seeded_module_and_nothing_else() {
    let app = shaped(&["registry-only"]);
    for path in [
        "/api/v2/organizations",
        "/organizations",
        "/api/v2/organizations/acme",
        "/api/v2/ping",
        "/meta/ip-ranges",
        "/api/v2/organizations/acme/registry-modules",
    ] {
        absent_route(&get(&app, path).await);
    }
    let discovery = send(
        &app,
        Method::GET,
        "/.well-known/terraform.json",
        None,
        vec![],
    )
    .await;
    assert_eq!(discovery.status, StatusCode::OK);
    assert_eq!(
        discovery.json(),
        json!({"modules.v1": "/api/registry/v1/modules/"})
    );
    let base = "/api/registry/v1/modules/acme/network/aws";
    let versions = get(&app, &format!("{base}/versions")).await;
    assert_eq!(versions.status, StatusCode::OK);
    let modules = versions.json()["modules"].clone();
    assert_eq!(modules.as_array().map(Vec::len), Some(1));
    assert_eq!(modules[0]["source"], "acme/network/aws");
    let listed: Vec<Value> = modules[0]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .map(|v| v["version"].clone())
        .collect();
    assert_eq!(listed, [json!("1.0.0")]);
    let version = get(&app, &format!("{base}/1.0.0")).await;
    assert_eq!(version.status, StatusCode::OK);
    assert_eq!(version.json()["id"], "acme/network/aws/1.0.0");
    assert_eq!(version.json()["version"], "1.0.0");
    let latest = get(&app, base).await;
    assert_eq!(latest.json()["version"], "1.0.0");
    let search = get(&app, "/api/registry/v1/modules/search?q=network").await;
    assert_eq!(search.json()["modules"][0]["id"], "acme/network/aws/1.0.0");
    assert_eq!(search.json()["modules"].as_array().map(Vec::len), Some(1));

    let download = get(&app, &format!("{base}/1.0.0/download")).await;
    assert_eq!(download.status, StatusCode::NO_CONTENT);
    let source = download.headers["x-terraform-get"]
        .to_str()
        .expect("header")
        .to_string();
    assert!(
        source.starts_with("http://127.0.0.1:9/v1/object/"),
        "{source}"
    );
    // The archive answers without a token.
    let archive = send(&app, Method::GET, &path_of(&source), None, vec![]).await;
    assert_eq!(archive.status, StatusCode::OK);
    assert_eq!(archive.bytes, seeded_archive());
    // The latest download redirects to the version's, as without the shape.
    let latest = get(&app, &format!("{base}/download")).await;
    assert_eq!(latest.status, StatusCode::FOUND);
    let location = latest.headers[header::LOCATION].to_str().expect("location");
    assert_eq!(location, format!("{base}/1.0.0/download"));
    let followed = get(&app, location).await;
    assert_eq!(followed.status, StatusCode::NO_CONTENT);
    assert_eq!(followed.headers["x-terraform-get"], source.as_str());
    // The archive cannot be replaced.
    absent_route(
        &send(
            &app,
            Method::PUT,
            &path_of(&source),
            None,
            b"other".to_vec(),
        )
        .await,
    );
    let again = send(&app, Method::GET, &path_of(&source), None, vec![]).await;
    assert_eq!(again.bytes, seeded_archive());
    // The registry protocol still needs the token.
    let anonymous = send(&app, Method::GET, &format!("{base}/versions"), None, vec![]).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

    let seeded = seeded(&["registry-only"]).await;
    assert!(seeded.contains(&("registry_module".into(), "acme/network/aws/1.0.0".into())));
    assert!(!seeded.iter().any(|(kind, _)| kind == "organization"));
}

fn number(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not a JSON number"))
}

/// Every resource object and identifier in a document has a JSON number id, but an
/// organization's; answers how many it saw.
fn all_ids_numeric(doc: &Value) -> usize {
    match doc {
        Value::Array(items) => items.iter().map(all_ids_numeric).sum(),
        Value::Object(obj) => {
            let mut seen = 0;
            if let (Some(kind), Some(id)) = (obj.get("type").and_then(Value::as_str), obj.get("id"))
            {
                if kind == "organizations" {
                    assert!(id.is_string(), "{doc}");
                } else {
                    assert!(id.is_u64(), "{kind} id {id} in {doc}");
                }
                seen += 1;
            }
            seen + obj.values().map(all_ids_numeric).sum::<usize>()
        }
        _ => 0,
    }
}

#[tokio::test]
async fn numeric_ids_are_json_numbers_and_paths_take_them() {
    let app = shaped(&["numeric-ids"]);
    let made = call(
        &app,
        Method::POST,
        "/api/v2/organizations",
        Some(org_body("acme")),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    let org = made.json()["data"].clone();
    assert_eq!(org["id"], "acme", "organizations keep their name");
    number(&org["relationships"]["default-project"]["data"]["id"]);

    let a = call(
        &app,
        Method::POST,
        "/api/v2/organizations/acme/workspaces",
        Some(json!({"data":{"type":"workspaces","attributes":{"name":"app"}}})),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED);
    let ws = number(&a.json()["data"]["id"]);
    assert_eq!(
        a.json()["data"]["relationships"]["organization"]["data"]["id"],
        "acme"
    );
    let shown = get(&app, &format!("/api/v2/workspaces/{ws}")).await;
    assert_eq!(shown.status, StatusCode::OK);
    assert_eq!(number(&shown.json()["data"]["id"]), ws);
    let link = shown.json()["data"]["links"]["self"]
        .as_str()
        .expect("self link")
        .to_string();
    assert_eq!(get(&app, &link).await.status, StatusCode::OK);
    let other = call(
        &app,
        Method::POST,
        "/api/v2/organizations/acme/workspaces",
        Some(json!({"data":{"type":"workspaces","attributes":{"name":"other"}}})),
    )
    .await;
    assert_eq!(other.status, StatusCode::CREATED);
    let list = get(&app, "/api/v2/organizations/acme/workspaces").await;
    let items = list.json()["data"].as_array().cloned().expect("a list");
    assert_eq!(items.len(), 2);
    for item in &items {
        number(&item["id"]);
    }
    assert_eq!(number(&items[0]["id"]), ws);
    let orgs = get(&app, "/api/v2/organizations").await;
    assert_eq!(orgs.json()["data"][0]["id"], "acme");

    // A body may name ids as numbers (or as the same digits in a string).
    uploaded_configuration(&app, &ws.to_string(), json!({})).await;
    let run = call(
        &app,
        Method::POST,
        "/api/v2/runs",
        Some(json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}})),
    )
    .await;
    assert_eq!(run.status, StatusCode::CREATED, "{:?}", run.json());
    let doc = run.json()["data"].clone();
    let run_id = number(&doc["id"]);
    assert_eq!(number(&doc["relationships"]["workspace"]["data"]["id"]), ws);
    let cv = number(&doc["relationships"]["configuration-version"]["data"]["id"]);
    number(&doc["relationships"]["created-by"]["data"]["id"]);
    let link = doc["links"]["self"].as_str().expect("self link");
    assert_eq!(link, format!("/api/v2/runs/{run_id}"));
    assert_eq!(number(&get(&app, link).await.json()["data"]["id"]), run_id);
    let by_string = call(
        &app,
        Method::POST,
        "/api/v2/runs",
        Some(json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws.to_string()}}}}})),
    )
    .await;
    assert_eq!(by_string.status, StatusCode::CREATED);
    let apply = call(
        &app,
        Method::POST,
        &format!("/api/v2/runs/{run_id}/actions/apply"),
        None,
    )
    .await;
    assert_eq!(apply.status, StatusCode::ACCEPTED);

    // Whole documents: every id but an organization's is a number.
    for path in [
        format!("/api/v2/runs/{run_id}"),
        format!("/api/v2/workspaces/{ws}"),
        format!("/api/v2/workspaces/{ws}/configuration-versions"),
        format!("/api/v2/workspaces/{ws}/runs"),
        format!("/api/v2/configuration-versions/{cv}"),
        format!("/api/v2/configuration-versions/{cv}/ingress-attributes"),
        "/api/v2/organizations/acme".into(),
        "/api/v2/organizations/acme/teams".into(),
        "/api/v2/organizations/acme/organization-memberships".into(),
        "/api/v2/organizations/acme/entitlement-set".into(),
        "/api/v2/organizations/acme/invoices".into(),
        "/api/v2/account/details".into(),
    ] {
        let a = get(&app, &path).await;
        assert_eq!(a.status, StatusCode::OK, "{path}");
        assert!(all_ids_numeric(&a.json()) > 0, "{path}");
    }

    // Fixed ids get a number too, the same one every time.
    let general = admin(&app, Method::GET, "/api/v2/admin/general-settings", None).await;
    let n = number(&general.json()["data"]["id"]);
    let again = admin(&app, Method::GET, "/api/v2/admin/general-settings", None).await;
    assert_eq!(number(&again.json()["data"]["id"]), n);
    let feature_sets = get(&app, "/api/v2/feature-sets").await;
    for item in feature_sets.json()["data"].as_array().expect("a list") {
        number(&item["id"]);
    }

    // The seeded ids are the numbers as strings.
    for (kind, id) in seeded(&["numeric-ids"]).await {
        assert!(id.bytes().all(|b| b.is_ascii_digit()), "{kind} {id}");
    }
}

#[tokio::test]
async fn no_runner_leaves_runs_pending() {
    let app = shaped(&["no-runner"]);
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    uploaded_configuration(&app, &ws, json!({})).await;
    let body = json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}});
    let run = call(&app, Method::POST, "/api/v2/runs", Some(body.clone())).await;
    assert_eq!(run.status, StatusCode::CREATED);
    let attrs = run.json()["data"]["attributes"].clone();
    assert_eq!(attrs["status"], "pending");
    assert_eq!(attrs["actions"]["is-confirmable"], false);
    assert_eq!(attrs["actions"]["is-discardable"], false);
    assert_eq!(attrs["actions"]["is-cancelable"], true);
    let run_id = id(&run);
    let action = |name: &str| format!("/api/v2/runs/{run_id}/actions/{name}");
    for refused in ["apply", "discard"] {
        let a = call(&app, Method::POST, &action(refused), None).await;
        assert_eq!(a.status, StatusCode::CONFLICT, "{refused}");
        assert_eq!(a.content_type(), "application/vnd.api+json");
        assert_eq!(a.json()["errors"][0]["status"], "409");
    }
    let executed = call(&app, Method::POST, &action("force-execute"), None).await;
    assert_eq!(executed.status, StatusCode::ACCEPTED);
    let shown = get(&app, &format!("/api/v2/runs/{run_id}")).await;
    assert_eq!(shown.json()["data"]["attributes"]["status"], "pending");
    let plan = shown.json()["data"]["relationships"]["plan"]["data"]["id"]
        .as_str()
        .expect("plan")
        .to_string();
    let plan = get(&app, &format!("/api/v2/plans/{plan}")).await;
    assert_eq!(plan.json()["data"]["attributes"]["status"], "pending");
    let canceled = call(&app, Method::POST, &action("cancel"), None).await;
    assert_eq!(canceled.status, StatusCode::ACCEPTED);
    let shown = get(&app, &format!("/api/v2/runs/{run_id}")).await;
    assert_eq!(shown.json()["data"]["attributes"]["status"], "canceled");
    let second = id(&call(&app, Method::POST, "/api/v2/runs", Some(body)).await);
    let forced = call(
        &app,
        Method::POST,
        &format!("/api/v2/runs/{second}/actions/force-cancel"),
        None,
    )
    .await;
    assert_eq!(forced.status, StatusCode::ACCEPTED);
}

#[tokio::test]
async fn shapes_combine() {
    let app = shaped(&["api-v2-only", "one-organization", "numeric-ids"]);
    absent_route(&get(&app, "/organizations/acme").await);
    absent_route(&get(&app, "/api/v2/organizations").await);
    let a = call(
        &app,
        Method::POST,
        "/api/v2/organizations/acme/workspaces",
        Some(json!({"data":{"type":"workspaces","attributes":{"name":"app"}}})),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED);
    let ws = number(&a.json()["data"]["id"]);
    absent_route(&get(&app, &format!("/workspaces/{ws}")).await);
    assert_eq!(
        get(&app, &format!("/api/v2/workspaces/{ws}")).await.status,
        StatusCode::OK
    );

    let app = shaped(&["registry-only", "one-organization"]);
    absent_route(&get(&app, "/api/v2/organizations/acme").await);
    let versions = get(&app, "/api/registry/v1/modules/acme/network/aws/versions").await;
    assert_eq!(versions.status, StatusCode::OK);
    let seeded = seeded(&["registry-only", "one-organization"]).await;
    assert!(seeded.contains(&("organization".into(), "acme".into())));
    assert!(seeded.contains(&("registry_module".into(), "acme/network/aws/1.0.0".into())));
}

#[tokio::test]
async fn stores_nothing_answers_everything_plausibly_and_keeps_nothing() {
    let app = shaped(&["stores-nothing"]);
    let made = call(&app, Method::POST, "/organizations", Some(org_body("acme"))).await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json()["data"]["attributes"]["name"], "acme");
    assert_eq!(made.content_type(), "application/vnd.api+json");
    // nothing was kept: the list is empty, and any id shows an empty resource of that id
    let listed = get(&app, "/organizations").await;
    assert_eq!(listed.json()["data"], json!([]));
    assert_eq!(listed.json()["meta"]["pagination"]["total-count"], 0);
    let shown = get(&app, "/organizations/never-made-1").await;
    assert_eq!(shown.status, StatusCode::OK);
    assert_eq!(shown.json()["data"]["id"], "never-made-1");
    assert_eq!(shown.json()["data"]["attributes"], json!({}));
    let gone = call(&app, Method::DELETE, "/organizations/never-made-1", None).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    // it still wants a token, and still says where the registry is
    let anonymous = support::send(&app, Method::GET, "/organizations", None, Vec::new()).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        get(&app, "/.well-known/terraform.json").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn generic_store_keeps_documents_without_their_meaning() {
    let app = shaped(&["generic-store"]);
    let made = call(&app, Method::POST, "/organizations", Some(org_body("acme"))).await;
    assert_eq!(made.status, StatusCode::CREATED);
    let id = made.json()["data"]["id"]
        .as_str()
        .expect("an id")
        .to_string();
    // kept under its id (not its name), listed where it was posted, on both path forms
    assert_eq!(
        get(&app, &format!("/organizations/{id}")).await.status,
        StatusCode::OK
    );
    assert_eq!(
        get(&app, "/organizations/acme-2").await.status,
        StatusCode::NOT_FOUND
    );
    let listed = get(&app, "/api/v2/organizations").await;
    assert_eq!(listed.json()["data"][0]["id"], id.as_str());
    let patch = json!({"data":{"type":"organizations","attributes":{"email":"new@example.test"}}});
    let merged = call(
        &app,
        Method::PATCH,
        &format!("/organizations/{id}"),
        Some(patch),
    )
    .await;
    assert_eq!(merged.json()["data"]["attributes"]["name"], "acme");
    assert_eq!(
        merged.json()["data"]["attributes"]["email"],
        "new@example.test"
    );
    // no domain meaning: no default project, no owners team, no runs
    assert_eq!(
        get(&app, &format!("/organizations/{id}/projects"))
            .await
            .json()["data"],
        json!([])
    );
    let deleted = call(&app, Method::DELETE, &format!("/organizations/{id}"), None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(
        get(&app, &format!("/organizations/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn typed_bodies_refuses_a_document_without_a_type_and_nothing_else() {
    let app = shaped(&["typed-bodies"]);
    let untyped = json!({"data":{"attributes":{"name":"acme","email":"o@example.test"}}});
    let refused = call(&app, Method::POST, "/organizations", Some(untyped)).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused.json()["errors"][0]["source"]["pointer"],
        "/data/type"
    );
    let made = call(&app, Method::POST, "/organizations", Some(org_body("acme"))).await;
    assert_eq!(made.status, StatusCode::CREATED);
}

#[tokio::test]
async fn membership_writes_only_creates_and_deletes_but_reads_nothing() {
    let app = shaped(&["membership-writes-only"]);
    org(&app, "acme").await;
    let body =
        json!({"data":{"type":"organization-memberships","attributes":{"email":"m@example.test"}}});
    let made = call(
        &app,
        Method::POST,
        "/api/v2/organizations/acme/organization-memberships",
        Some(body),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.json());
    let membership = id(&made);
    absent_route(
        &get(
            &app,
            &format!("/api/v2/organization-memberships/{membership}"),
        )
        .await,
    );
    absent_route(&get(&app, "/api/v2/organizations/acme/organization-memberships").await);
    absent_route(&get(&app, "/api/v2/organization-memberships").await);
    let deleted = call(
        &app,
        Method::DELETE,
        &format!("/api/v2/organization-memberships/{membership}"),
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn runs_need_configuration_refuses_a_run_of_a_workspace_without_one() {
    let app = shaped(&["runs-need-configuration"]);
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    let body = json!({"data":{"type":"runs","relationships":{"workspace":{"data":{"type":"workspaces","id":ws}}}}});
    let refused = call(&app, Method::POST, "/api/v2/runs", Some(body.clone())).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    uploaded_configuration(&app, &ws, json!({})).await;
    let run = call(&app, Method::POST, "/api/v2/runs", Some(body)).await;
    assert_eq!(run.status, StatusCode::CREATED);
}

/// The ids of a list answer.
fn listed(a: &Answer) -> Vec<String> {
    a.json()["data"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn list_lag_lists_a_new_item_only_after_the_lag() {
    let app = shaped(&["list-lag"]);
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    // shown at once, listed only later
    assert_eq!(
        get(&app, &format!("/api/v2/workspaces/{ws}")).await.status,
        StatusCode::OK
    );
    let early = get(&app, "/api/v2/organizations/acme/workspaces").await;
    assert_eq!(early.status, StatusCode::OK);
    assert!(!listed(&early).contains(&ws), "{:?}", early.json());
    tokio::time::sleep(std::time::Duration::from_millis(1600)).await;
    let late = get(&app, "/api/v2/organizations/acme/workspaces").await;
    assert!(listed(&late).contains(&ws), "{:?}", late.json());
}

#[tokio::test]
async fn delete_202_later_accepts_a_delete_and_does_it_after_the_lag() {
    let app = shaped(&["delete-202-later"]);
    org(&app, "acme").await;
    let ws = workspace(&app, "acme", "app").await;
    let path = format!("/api/v2/workspaces/{ws}");
    let deleted = call(&app, Method::DELETE, &path, None).await;
    assert_eq!(deleted.status, StatusCode::ACCEPTED);
    assert_eq!(get(&app, &path).await.status, StatusCode::OK, "not yet");
    tokio::time::sleep(std::time::Duration::from_millis(1700)).await;
    assert_eq!(get(&app, &path).await.status, StatusCode::NOT_FOUND);
    // what is not there is refused at once, as without the shape
    let again = call(&app, Method::DELETE, &path, None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
}
