//! Before go-tfe's tests run against a target: it answers, speaks the API, and takes the token
//! as a user's (go-tfe's tests read `/account/details`). A target that fails here would fail
//! every test slowly (go-tfe retries); it is a configuration error instead, said in one line.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;

use crate::target::{Auth, PathForms, Request, Secret, Target, TargetConfig, TransportError};

fn url(root: &str, path: &str) -> Result<url::Url, String> {
    url::Url::parse(&format!("{}{path}", root.trim_end_matches('/')))
        .map_err(|e| format!("--target `{root}`: {e}"))
}

/// Reads `/api/v2/ping` and `/api/v2/account/details`; `from` says where the token came from.
pub async fn check(
    root: &str,
    token: &str,
    from: &str,
    ca_cert: Option<&Path>,
    insecure: bool,
) -> Result<(), String> {
    let ca_cert = match ca_cert {
        Some(path) => {
            Some(std::fs::read(path).map_err(|e| format!("--ca-cert {}: {e}", path.display()))?)
        }
        None => None,
    };
    let target = Target::new(TargetConfig {
        root: url(root, "/")?,
        registry: url(root, "/api/registry/v1/modules/")?,
        token: Some(Secret::new(token)),
        admin_token: None,
        auth_header: "Authorization".into(),
        auth_scheme: "Bearer".into(),
        timeout: Duration::from_secs(15),
        max_body: 64 * 1024,
        ca_cert,
        insecure,
        rate: None,
        learn_rate: true,
        max_retries: 3,
        forms: PathForms::default(),
        served_at_tfe_path: Vec::new(),
        no_route: Default::default(),
    })
    .map_err(|e| e.to_string())?;
    for path in ["/api/v2/ping", "/api/v2/account/details"] {
        let ex = target
            .send(Request::new(Method::GET, url(root, path)?, Auth::User))
            .await;
        let status = match &ex.response {
            Err(TransportError::Timeout(_)) => {
                return Err(format!("{root} did not answer {path} within 15 s"))
            }
            Err(e) => return Err(format!("cannot reach {root}: {e}")),
            Ok(r) => r.status,
        };
        let account = path.ends_with("details");
        match status {
            300..=399 => {
                return Err(format!(
                    "{root}{path} answered {status} (Location: {}): give --target the address the API is served at",
                    ex.header("location").unwrap_or("none")
                ))
            }
            401 => return Err(format!("{root} refused the token from {from} (401)")),
            403 | 404 if account => {
                return Err(format!(
                    "{root}{path} answered {status}: the token from {from} is not a user's token (go-tfe's tests need a user that is also a site administrator)"
                ))
            }
            200..=299 if account && ex.json().is_err() => {
                return Err(format!(
                    "{root}{path} answered {} that is not a JSON document: is this the API's root?",
                    ex.header("content-type").unwrap_or("a body")
                ))
            }
            200..=299 => {}
            _ if !account => {} // TFE's ping: any answer that is not a redirect or a refusal
            _ => return Err(format!("{root}{path} answered {status}")),
        }
    }
    Ok(())
}
