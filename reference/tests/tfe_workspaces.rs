//! TFE routes around workspaces that real clients use and the spec does not list (issue 29):
//! workspace tags and execution settings, safe delete, remote state consumers, SSH keys, a
//! workspace's resources and outputs, projects' execution settings and tag bindings, reserved
//! tag keys; TFE's stricter rules behind `Compat::Tfe`.

use crate::support::*;
use axum::http::{Method, StatusCode};
use axum::Router;
use conform_reference::{app, Config};
use serde_json::{json, Value};

async fn create_ws(app: &Router, org_name: &str, data: Value) -> Answer {
    call(
        app,
        Method::POST,
        &format!("/api/v2/organizations/{org_name}/workspaces"),
        Some(json!({ "data": data })),
    )
    .await
}

async fn patch_ws(app: &Router, ws: &str, attributes: Value) -> Answer {
    call(
        app,
        Method::PATCH,
        &format!("/api/v2/workspaces/{ws}"),
        Some(json!({"data":{"type":"workspaces","attributes":attributes}})),
    )
    .await
}

#[tokio::test]
async fn a_workspace_is_created_with_its_tags_and_tfe_execution_settings() {
    let app = tfe();
    org(&app, "o").await;
    let made = create_ws(
        &app,
        "o",
        json!({"type":"workspaces","attributes":{"name":"w","operations":false},
            "relationships":{"tags":{"data":[
                {"type":"tags","attributes":{"name":"tag1"}},
                {"type":"tags","attributes":{"name":"tag2"}}]}}}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.json());
    let attrs = &made.json()["data"]["attributes"];
    assert_eq!(attrs["tag-names"], json!(["tag1", "tag2"]));
    assert_eq!(
        attrs["execution-mode"], "local",
        "operations false is local"
    );
    assert_eq!(attrs["setting-overwrites"]["execution-mode"], true);
    assert_eq!(attrs["permissions"]["can-force-delete"], true);
    let ws = id(&made);
    let tags = get(&app, &format!("/api/v2/workspaces/{ws}/relationships/tags")).await;
    assert_eq!(tags.json()["data"].as_array().unwrap().len(), 2);
    // With setting-overwrites false the organization's default execution mode comes back.
    let inherit = patch_ws(
        &app,
        &ws,
        json!({"setting-overwrites":{"execution-mode":false,"agent-pool":false}}),
    )
    .await;
    assert_eq!(
        inherit.json()["data"]["attributes"]["execution-mode"],
        "remote"
    );
    assert_eq!(inherit.json()["data"]["attributes"]["operations"], true);
}

#[tokio::test]
async fn tfe_refuses_a_bad_terraform_version_and_both_remote_state_sharings() {
    let spec = app(Config::default());
    org(&spec, "s").await;
    let ws = workspace(&spec, "s", "w").await;
    let loose = patch_ws(&spec, &ws, json!({"terraform-version":"nonexisting"})).await;
    assert_eq!(loose.status, StatusCode::OK, "the spec states no such rule");
    let app = tfe();
    org(&app, "o").await;
    let bad = create_ws(
        &app,
        "o",
        json!({"type":"workspaces","attributes":{"name":"w","terraform-version":"nonexisting"}}),
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let ws = workspace(&app, "o", "w").await;
    for good in ["0.11.0", "1.9.5", "~> 1.5", ">= 1.0, < 2.0", "latest"] {
        let a = patch_ws(&app, &ws, json!({ "terraform-version": good })).await;
        assert_eq!(a.status, StatusCode::OK, "{good}");
    }
    let both = patch_ws(
        &app,
        &ws,
        json!({"project-remote-state":true,"global-remote-state":true}),
    )
    .await;
    assert_eq!(both.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(String::from_utf8_lossy(&both.bytes).contains("Project remote state cannot be enabled"));
}

#[tokio::test]
async fn safe_delete_refuses_a_locked_workspace_and_one_with_resources() {
    let app = tfe();
    org(&app, "o").await;
    let ws = workspace(&app, "o", "w").await;
    let lock = format!("/api/v2/workspaces/{ws}/actions/lock");
    assert_eq!(
        call(&app, Method::POST, &lock, None).await.status,
        StatusCode::OK
    );
    let safe = format!("/api/v2/workspaces/{ws}/actions/safe-delete");
    let locked = call(&app, Method::POST, &safe, None).await;
    assert_eq!(locked.status, StatusCode::CONFLICT);
    assert!(String::from_utf8_lossy(&locked.bytes).contains("locked"));
    // A state with a resource: the workspace manages resources.
    let state = json!({"version":4,"serial":1,"lineage":"l","outputs":{
        "n":{"value":1,"type":"number"}},
        "resources":[{"module":"module.bucket","mode":"managed","type":"aws_s3_bucket","name":"this",
            "provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances":[{"index_key":0,"attributes":{}}]}]});
    let encoded = base64(state.to_string().as_bytes());
    let sv = call(
        &app,
        Method::POST,
        &format!("/api/v2/workspaces/{ws}/state-versions"),
        Some(json!({"data":{"type":"state-versions","attributes":{"serial":1,"md5":"x","state":encoded}}})),
    )
    .await;
    assert_eq!(sv.status, StatusCode::CREATED, "{:?}", sv.json());
    let unlock = format!("/api/v2/workspaces/{ws}/actions/unlock");
    assert_eq!(
        call(&app, Method::POST, &unlock, None).await.status,
        StatusCode::OK
    );
    let resources = get(&app, &format!("/api/v2/workspaces/{ws}/resources"))
        .await
        .json();
    let r = &resources["data"][0]["attributes"];
    assert_eq!(r["address"], "bucket.aws_s3_bucket.this[0]");
    assert_eq!(r["module"], "bucket");
    assert_eq!(r["provider"], "hashicorp/aws");
    assert_eq!(resources["meta"]["pagination"]["total-count"], 1);
    let with_outputs = get(&app, "/api/v2/organizations/o/workspaces/w?include=outputs").await;
    let included = &with_outputs.json()["included"];
    assert_eq!(included[0]["type"], "workspace-outputs");
    assert_eq!(included[0]["attributes"]["output-type"], "number");
    let managing = call(&app, Method::POST, &safe, None).await;
    assert_eq!(managing.status, StatusCode::CONFLICT);
    assert!(String::from_utf8_lossy(&managing.bytes).contains("still managing resources"));
    // An empty workspace goes, by id or by name.
    workspace(&app, "o", "empty").await;
    let by_name = "/api/v2/organizations/o/workspaces/empty/actions/safe-delete";
    assert_eq!(
        call(&app, Method::POST, by_name, None).await.status,
        StatusCode::NO_CONTENT
    );
    let gone = get(&app, "/api/v2/organizations/o/workspaces/empty").await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

fn base64(bytes: &[u8]) -> String {
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

fn ids(doc: &Value) -> Vec<String> {
    doc["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["id"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn remote_state_consumers_are_added_replaced_and_removed() {
    let app = tfe();
    org(&app, "o").await;
    let producer = workspace(&app, "o", "p").await;
    let (a, b) = (
        workspace(&app, "o", "a").await,
        workspace(&app, "o", "b").await,
    );
    let path = format!("/api/v2/workspaces/{producer}/relationships/remote-state-consumers");
    let body = |ws: &[&str]| json!({"data": ws.iter().map(|w| json!({"type":"workspaces","id":w})).collect::<Vec<_>>()});
    let add = call(&app, Method::POST, &path, Some(body(&[&a, &b]))).await;
    assert_eq!(add.status, StatusCode::NO_CONTENT);
    assert_eq!(
        ids(&get(&app, &path).await.json()),
        vec![a.clone(), b.clone()]
    );
    let replace = call(&app, Method::PATCH, &path, Some(body(&[&b]))).await;
    assert_eq!(replace.status, StatusCode::NO_CONTENT);
    assert_eq!(ids(&get(&app, &path).await.json()), vec![b.clone()]);
    let remove = call(&app, Method::DELETE, &path, Some(body(&[&b]))).await;
    assert_eq!(remove.status, StatusCode::NO_CONTENT);
    assert!(ids(&get(&app, &path).await.json()).is_empty());
    let unknown = call(&app, Method::POST, &path, Some(body(&["ws-nope"]))).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn ssh_keys_are_kept_without_their_value_and_assigned_to_workspaces() {
    let app = tfe();
    org(&app, "o").await;
    let made = call(
        &app,
        Method::POST,
        "/api/v2/organizations/o/ssh-keys",
        Some(json!({"data":{"type":"ssh-keys","attributes":{"name":"k","value":"secret"}}})),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert!(made.json()["data"]["attributes"].get("value").is_none());
    let key = id(&made);
    let missing = call(
        &app,
        Method::POST,
        "/api/v2/organizations/o/ssh-keys",
        Some(json!({"data":{"type":"ssh-keys","attributes":{"name":"k"}}})),
    )
    .await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    let renamed = call(
        &app,
        Method::PATCH,
        &format!("/api/v2/ssh-keys/{key}"),
        Some(json!({"data":{"type":"ssh-keys","attributes":{"name":"k2"}}})),
    )
    .await;
    assert_eq!(renamed.json()["data"]["attributes"]["name"], "k2");
    let listed = get(&app, "/api/v2/organizations/o/ssh-keys").await.json();
    assert_eq!(ids(&listed), vec![key.clone()]);
    let ws = workspace(&app, "o", "w").await;
    let rel = format!("/api/v2/workspaces/{ws}/relationships/ssh-key");
    let assign = |k: Value| json!({"data":{"type":"workspaces","attributes":{"id":k}}});
    let on = call(&app, Method::PATCH, &rel, Some(assign(json!(key)))).await;
    assert_eq!(
        on.json()["data"]["relationships"]["ssh-key"]["data"]["id"],
        json!(key)
    );
    let off = call(&app, Method::PATCH, &rel, Some(assign(Value::Null))).await;
    assert!(off.json()["data"]["relationships"]["ssh-key"]["data"].is_null());
    let bad = call(
        &app,
        Method::PATCH,
        &rel,
        Some(assign(json!("sshkey-nope"))),
    )
    .await;
    assert_eq!(bad.status, StatusCode::NOT_FOUND);
    let gone = call(
        &app,
        Method::DELETE,
        &format!("/api/v2/ssh-keys/{key}"),
        None,
    )
    .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    assert_eq!(
        get(&app, &format!("/api/v2/ssh-keys/{key}")).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn projects_keep_execution_settings_and_tag_bindings() {
    let app = tfe();
    org(&app, "o").await;
    let pool = call(
        &app,
        Method::POST,
        "/api/v2/organizations/o/agent-pools",
        Some(json!({"data":{"type":"agent-pools","attributes":{"name":"pool"}}})),
    )
    .await;
    let pool = id(&pool);
    let create = |attrs: Value, rels: Value| json!({"data":{"type":"projects","attributes":attrs,"relationships":rels}});
    let path = "/api/v2/organizations/o/projects";
    let made = call(
        &app,
        Method::POST,
        path,
        Some(create(
            json!({"name":"agent-project","default-execution-mode":"agent","default-agent-pool-id":pool}),
            json!({"tag-bindings":{"data":[{"type":"tag-bindings","attributes":{"key":"foo","value":"bar"}}]}}),
        )),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.json());
    let doc = made.json();
    assert_eq!(doc["data"]["attributes"]["default-execution-mode"], "agent");
    assert!(doc["data"]["attributes"]
        .get("default-agent-pool-id")
        .is_none());
    assert_eq!(
        doc["data"]["relationships"]["default-agent-pool"]["data"]["id"],
        json!(pool)
    );
    let p = id(&made);
    let read = get(
        &app,
        &format!("/api/v2/projects/{p}?include=effective_tag_bindings"),
    )
    .await;
    let included = &read.json()["included"];
    assert_eq!(included[0]["type"], "effective-tag-bindings");
    assert_eq!(included[0]["attributes"]["key"], "foo");
    assert_eq!(included[0]["attributes"]["value"], "bar");
    let one = format!("/api/v2/projects/{p}");
    let update = |attrs: Value| {
        call(
            &app,
            Method::PATCH,
            &one,
            Some(json!({"data":{"type":"projects","attributes":attrs}})),
        )
    };
    let refused =
        update(json!({"default-execution-mode":"local","default-agent-pool-id":pool})).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    let remote = update(json!({"default-execution-mode":"remote"}))
        .await
        .json();
    assert!(remote["data"]["relationships"]["default-agent-pool"]["data"].is_null());
    let inherit = update(json!({"setting-overwrites":{"default-execution-mode":false}}))
        .await
        .json();
    assert_eq!(
        inherit["data"]["attributes"]["default-execution-mode"],
        "remote"
    );
    assert_eq!(
        inherit["data"]["attributes"]["setting-overwrites"]["default-execution-mode"],
        false
    );
    let bad_name = update(json!({"name":"! / nope"})).await;
    assert!(String::from_utf8_lossy(&bad_name.bytes).contains("Name may only contain"));
}

#[tokio::test]
async fn reserved_tag_keys_are_unique_in_their_organization() {
    let app = tfe();
    org(&app, "o").await;
    let path = "/api/v2/organizations/o/reserved-tag-keys";
    let body = |key: &str| json!({"data":{"type":"reserved-tag-keys","attributes":{"key":key,"disable-overrides":true}}});
    let made = call(&app, Method::POST, path, Some(body("env"))).await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.json()["data"]["attributes"]["disable-overrides"], true);
    let taken = call(&app, Method::POST, path, Some(body("env"))).await;
    assert_eq!(taken.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(String::from_utf8_lossy(&taken.bytes).contains("Key has already been taken"));
    let invalid = call(&app, Method::POST, path, Some(body("! / nope"))).await;
    assert!(String::from_utf8_lossy(&invalid.bytes).contains("Key is invalid"));
    let key = id(&made);
    let one = format!("/api/v2/reserved-tag-keys/{key}");
    let changed = call(
        &app,
        Method::PATCH,
        &one,
        Some(json!({"data":{"type":"reserved-tag-keys","attributes":{"key":"team","disable-overrides":false}}})),
    )
    .await;
    assert_eq!(changed.json()["data"]["attributes"]["key"], "team");
    assert_eq!(
        changed.json()["data"]["attributes"]["disable-overrides"],
        false
    );
    assert_eq!(ids(&get(&app, path).await.json()), vec![key.clone()]);
    assert_eq!(
        call(&app, Method::DELETE, &one, None).await.status,
        StatusCode::NO_CONTENT
    );
    assert!(ids(&get(&app, path).await.json()).is_empty());
}
