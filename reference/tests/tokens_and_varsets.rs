//! Team and user tokens, and what TFE clients need of variable sets (issue 29): tokens made
//! authenticate until deleted, the legacy team token is replaced and read, the organization's
//! team tokens filter and sort; variable sets filter by name, their variables carry a
//! `version-id` that every write renews.

use crate::support::*;
use axum::http::{Method, StatusCode};
use axum::Router;
use serde_json::{json, Value};

/// A team of the organization; its id.
async fn team(app: &Router, org_name: &str, name: &str) -> String {
    let a = call(
        app,
        Method::POST,
        &format!("/api/v2/organizations/{org_name}/teams"),
        Some(json!({"data":{"type":"teams","attributes":{"name":name}}})),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED, "{:?}", a.json());
    id(&a)
}

/// The status of `GET /account/details` with a token.
async fn with_token(app: &Router, token: &str) -> StatusCode {
    send(
        app,
        Method::GET,
        "/api/v2/account/details",
        Some(token),
        vec![],
    )
    .await
    .status
}

fn secret(doc: &Value) -> String {
    doc["data"]["attributes"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn team_tokens_authenticate_until_deleted() {
    let app = tfe();
    org(&app, "tt").await;
    let t = team(&app, "tt", "devs").await;
    // The legacy token: created (go-tfe sends `"type": ""`), replaced, read, deleted.
    let path = format!("/api/v2/teams/{t}/authentication-token");
    let body = json!({"data":{"type":"","attributes":{}}});
    let first = call(&app, Method::POST, &path, Some(body.clone())).await;
    assert_eq!(first.status, StatusCode::CREATED, "{:?}", first.json());
    let first = first.json();
    assert_eq!(
        first["data"]["relationships"]["team"]["data"]["id"],
        t.as_str()
    );
    assert_eq!(
        first["data"]["relationships"]["created-by"]["data"]["type"],
        "users"
    );
    assert!(first["data"]["attributes"]["description"].is_null());
    let created_at = first["data"]["attributes"]["created-at"].as_str().unwrap();
    let expired_at = first["data"]["attributes"]["expired-at"].as_str().unwrap();
    let years = |s: &str| s[..4].parse::<i32>().unwrap();
    assert_eq!(years(expired_at), years(created_at) + 2);
    assert_eq!(with_token(&app, &secret(&first)).await, StatusCode::OK);
    let second = call(&app, Method::POST, &path, Some(body)).await.json();
    assert_ne!(secret(&first), secret(&second));
    assert_eq!(
        with_token(&app, &secret(&first)).await,
        StatusCode::UNAUTHORIZED
    );
    let shown = get(&app, &path).await.json();
    assert_eq!(shown["data"]["id"], second["data"]["id"]);
    assert!(shown["data"]["attributes"]["token"].is_null());
    let a = call(&app, Method::DELETE, &path, None).await;
    assert_eq!(a.status, StatusCode::NO_CONTENT);
    assert_eq!(
        with_token(&app, &secret(&second)).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(get(&app, &path).await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        call(&app, Method::DELETE, &path, None).await.status,
        StatusCode::NOT_FOUND
    );
    // Tokens with a description: several per team, a description once, deleted by id.
    let many = format!("/api/v2/teams/{t}/authentication-tokens");
    let with = |d: &str, at: Option<&str>| {
        let mut attrs = json!({"description": d});
        if let Some(at) = at {
            attrs["expired-at"] = json!(at);
        }
        json!({"data":{"type":"authentication-tokens","attributes":attrs}})
    };
    let ci = call(&app, Method::POST, &many, Some(with("ci", None))).await;
    assert_eq!(ci.status, StatusCode::CREATED);
    let at = "2099-01-02T03:04:05Z";
    let ops = call(&app, Method::POST, &many, Some(with("ops", Some(at)))).await;
    assert_eq!(ops.json()["data"]["attributes"]["expired-at"], at);
    let again = call(&app, Method::POST, &many, Some(with("ci", None))).await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    let listed = get(&app, &many).await.json();
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(2));
    let by_id = format!("/api/v2/authentication-tokens/{}", id(&ci));
    let shown = get(&app, &by_id).await.json();
    assert_eq!(shown["data"]["attributes"]["description"], "ci");
    assert!(shown["data"]["attributes"]["token"].is_null());
    assert_eq!(with_token(&app, &secret(&ci.json())).await, StatusCode::OK);
    let a = call(&app, Method::DELETE, &by_id, None).await;
    assert_eq!(a.status, StatusCode::NO_CONTENT);
    assert_eq!(
        with_token(&app, &secret(&ci.json())).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(get(&app, &by_id).await.status, StatusCode::NOT_FOUND);
    // Deleting the team forgets its tokens' secrets.
    let a = call(&app, Method::DELETE, &format!("/api/v2/teams/{t}"), None).await;
    assert!(a.status.is_success());
    assert_eq!(
        with_token(&app, &secret(&ops.json())).await,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn an_organizations_team_tokens_filter_by_team_and_sort_by_expiry() {
    let app = tfe();
    org(&app, "tl").await;
    let mut ids = Vec::new();
    for (name, at) in [
        ("alpha", "2099-01-03T00:00:00Z"),
        ("beta", "2099-01-02T00:00:00Z"),
    ] {
        let t = team(&app, "tl", name).await;
        let a = call(
            &app,
            Method::POST,
            &format!("/api/v2/teams/{t}/authentication-token"),
            Some(json!({"data":{"type":"authentication-tokens","attributes":{"expired-at":at}}})),
        )
        .await;
        ids.push(id(&a));
    }
    let list = |q: &'static str| {
        let app = app.clone();
        async move {
            let doc = get(&app, &format!("/api/v2/organizations/tl/team-tokens{q}"))
                .await
                .json();
            doc["data"]
                .as_array()
                .map(|a| a.iter().map(|t| t["id"].as_str().unwrap().to_string()))
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(list("").await, ids);
    assert_eq!(list("?q=alph").await, vec![ids[0].clone()]);
    assert_eq!(
        list("?sort=expired-at").await,
        vec![ids[1].clone(), ids[0].clone()]
    );
    assert_eq!(
        list("?sort=-expired-at").await,
        vec![ids[0].clone(), ids[1].clone()]
    );
}

#[tokio::test]
async fn user_tokens_are_listed_read_and_revoked() {
    let app = tfe();
    let me = get(&app, "/api/v2/account/details").await.json();
    let user = me["data"]["id"].as_str().unwrap().to_string();
    let path = format!("/api/v2/users/{user}/authentication-tokens");
    let made = call(
        &app,
        Method::POST,
        &path,
        Some(json!({"data":{"type":"","attributes":{"description":"laptop"}}})),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.json());
    let made = made.json();
    assert_eq!(
        made["data"]["relationships"]["created-by"]["data"]["id"],
        user.as_str()
    );
    let token = made["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(with_token(&app, &secret(&made)).await, StatusCode::OK);
    let listed = get(&app, &path).await.json();
    assert!(listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == token.as_str()));
    let shown = get(&app, &format!("/api/v2/authentication-tokens/{token}"))
        .await
        .json();
    let mut expected = made["data"].clone();
    expected["attributes"]["token"] = Value::Null;
    assert_eq!(shown["data"]["attributes"], expected["attributes"]);
    let a = call(
        &app,
        Method::DELETE,
        &format!("/api/v2/authentication-tokens/{token}"),
        None,
    )
    .await;
    assert_eq!(a.status, StatusCode::NO_CONTENT);
    assert_eq!(
        with_token(&app, &secret(&made)).await,
        StatusCode::UNAUTHORIZED
    );
    let unknown = call(
        &app,
        Method::POST,
        "/api/v2/users/user-unknown/authentication-tokens",
        None,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn variable_sets_filter_by_name_and_their_variables_have_versions() {
    let app = tfe();
    org(&app, "vs").await;
    let ws = workspace(&app, "vs", "w").await;
    let mut sets = Vec::new();
    for name in ["shared-aws", "shared-gcp"] {
        let a = call(
            &app,
            Method::POST,
            "/api/v2/organizations/vs/varsets",
            Some(json!({"data":{"type":"varsets","attributes":{"name":name}}})),
        )
        .await;
        let set = id(&a);
        let a = call(
            &app,
            Method::POST,
            &format!("/api/v2/varsets/{set}/relationships/workspaces"),
            Some(json!({"data":[{"type":"workspaces","id":ws}]})),
        )
        .await;
        assert!(a.status.is_success());
        sets.push(set);
    }
    for path in [
        "/api/v2/organizations/vs/varsets?q=gcp".to_string(),
        format!("/api/v2/workspaces/{ws}/varsets?q=GCP"),
    ] {
        let doc = get(&app, &path).await.json();
        assert_eq!(doc["data"].as_array().map(Vec::len), Some(1), "{path}");
        assert_eq!(doc["data"][0]["id"], sets[1].as_str());
    }
    let vars = format!("/api/v2/varsets/{}/relationships/vars", sets[0]);
    let made = call(
        &app,
        Method::POST,
        &vars,
        Some(json!({"data":{"type":"vars","attributes":{"key":"k","value":"v","category":"terraform"}}})),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    let v1 = made.json()["data"]["attributes"]["version-id"].clone();
    assert!(v1.as_str().is_some_and(|v| !v.is_empty()));
    let var = format!("{vars}/{}", id(&made));
    let same = json!({"data":{"type":"vars","attributes":{"key":"k"}}});
    let updated = call(&app, Method::PATCH, &var, Some(same)).await.json();
    assert_ne!(updated["data"]["attributes"]["version-id"], v1);
    let long = "d".repeat(513);
    let a = call(
        &app,
        Method::POST,
        &vars,
        Some(json!({"data":{"type":"vars","attributes":{"key":"k2","category":"env","description":long}}})),
    )
    .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
}
