//! Before any test: the target answers, takes the token and speaks the API (exit 2
//! otherwise); which path forms it serves; where its module registry is.

use reqwest::Method;
use serde_json::Value;
use url::Url;

use crate::catalog::Organizations;
use crate::fixtures::auth_for;
use crate::settings::{ConfigError, PublishedModule, Settings};
use crate::target::{join, Auth, PathForms, Request, Target};

/// What preflight learned: the path forms the target serves, and what a person should know
/// (a target that rate-limits already, one that is only a registry).
#[derive(Debug)]
pub struct Preflight {
    /// The path forms served.
    pub forms: PathForms,
    /// Warnings for the console and every report.
    pub warnings: Vec<String>,
}

/// Fails fast (exit 2) when the target cannot be reached, refuses the token, or does not
/// speak the API, and learns which path forms it serves.
///
/// Speaking the API is proven by a JSON document with `data` from a read every
/// implementation has (the organization list, the account, `--organization`'s show), or,
/// for a registry without the rest of the API, by registry discovery (`modules.v1`) or a
/// JSON answer from `--registry-url`. A form is served when one of the reads answers it
/// with a route (not 404, 405 or 501).
pub async fn preflight(
    target: &Target,
    settings: &Settings,
    organizations: &Organizations,
    admin_read: Option<&str>,
) -> Result<Preflight, ConfigError> {
    let mut reads = vec![
        organizations.collection.clone(),
        "/account/details".to_string(),
    ];
    if let Some(org) = &settings.organization {
        reads.insert(0, organizations.named(org));
    }
    let named = settings
        .organization
        .as_ref()
        .map(|o| organizations.named(o));
    let read = read_forms(target, settings, organizations, &reads, named.as_deref()).await?;
    let Reads {
        proven,
        rate_limited,
        answers,
        organizations_listed,
        account_answered,
        organization_missing,
        ..
    } = read;
    let mut found = Preflight {
        forms: read.forms,
        warnings: Vec::new(),
    };
    // a path form that proved served, with an organization list, holds no such organization:
    // a typo, or another instance. Without a list the show's 404 may be the route's own
    // absence (a server that reads organizations another way): the name is taken as given.
    if let (Some(org), Some(path)) = (&settings.organization, &organization_missing) {
        if organizations_listed {
            return Err(ConfigError(format!(
                "--organization `{org}` is not on the target: GET {path} answered 404 (give an organization the token can see)"
            )));
        }
        found.warnings.push(format!(
            "--organization `{org}` is taken as given: GET {path} answered 404, and the target has no organization list to look it up in (its show route may be absent; a mistyped name blocks every test inside it)"
        ));
    }
    if let (Some(read), Some(_)) = (admin_read, &settings.admin_token) {
        if let Some(warning) = admin_token_taken(target, settings, &found.forms, read).await? {
            found.warnings.push(warning);
        }
    }
    if account_answered && !organizations_listed && settings.organization.is_none() {
        found.warnings.push(format!(
            "the target answers the account but has no organization list (GET {} answered no route): if organizations cannot be made here either, give an existing one with --organization NAME (the run then makes its resources inside it and removes them again)",
            organizations.collection
        ));
    }
    if rate_limited {
        found.warnings.push(
            "the target rate-limits already (429 in preflight); conform waits as it asks (Retry-After), bounded".into(),
        );
    }
    if !proven {
        found
            .warnings
            .extend(registry_spoken(target, settings, &answers, rate_limited).await?);
    }
    Ok(found)
}

/// What the preflight reads showed, under both path forms.
struct Reads {
    /// The forms a read showed served (a form counts only once a read shows it served).
    forms: PathForms,
    /// A read answered a JSON document with `data`: the target speaks the API.
    proven: bool,
    /// A read was answered 429.
    rate_limited: bool,
    /// Each read and its answer, for the message of a target that speaks no API.
    answers: Vec<String>,
    /// The organization list answered as a route.
    organizations_listed: bool,
    /// The account answered a document.
    account_answered: bool,
    /// `--organization`'s show answered 404 under a path form that proved served (its path).
    organization_missing: Option<String>,
}

/// Sends the reads (`reads`; `named`: `--organization`'s show) under each path form, the
/// form's reads up to the first that shows it served.
async fn read_forms(
    target: &Target,
    settings: &Settings,
    organizations: &Organizations,
    reads: &[String],
    named: Option<&str>,
) -> Result<Reads, ConfigError> {
    let mut found = Reads {
        forms: PathForms {
            bare: false,
            api_v2: false,
        },
        proven: false,
        rate_limited: false,
        answers: Vec::new(),
        organizations_listed: false,
        account_answered: false,
        organization_missing: None,
    };
    for prefix in ["/api/v2", ""] {
        let mut missing_here = None;
        for read in reads {
            let path = format!("{prefix}{read}");
            let ex = target
                .send(Request::new(Method::GET, target.url(&path), Auth::User))
                .await;
            let status = reached_and_let_in(target, settings, &ex, &path)?;
            found.rate_limited |= status == 429;
            let document = (200..300)
                .contains(&status)
                .then(|| ex.json().ok())
                .flatten()
                .filter(|doc| doc.get("data").is_some());
            found.proven |= document.is_some();
            if read == &organizations.collection && !matches!(status, 404 | 405 | 501) {
                found.organizations_listed = true;
            }
            if read == "/account/details" && document.is_some() {
                found.account_answered = true;
            }
            let served = status == 429
                || document.is_some()
                || (status >= 400 && !matches!(status, 404 | 405 | 501) && status < 500);
            found
                .answers
                .push(format!("GET {path} answered {}", describe_answer(&ex)));
            if named == Some(read.as_str()) && status == 404 {
                missing_here = Some(path.clone());
            }
            if served {
                match prefix {
                    "" => found.forms.bare = true,
                    _ => found.forms.api_v2 = true,
                }
                found.organization_missing = found.organization_missing.or(missing_here.take());
                break;
            }
        }
    }
    Ok(found)
}

/// The status of a preflight read: an error of the configuration when the target cannot be
/// reached, or refuses the token (401, 403), saying where the token came from.
fn reached_and_let_in(
    target: &Target,
    settings: &Settings,
    ex: &crate::target::Exchange,
    path: &str,
) -> Result<u16, ConfigError> {
    let status = match &ex.response {
        Err(e) => {
            return Err(ConfigError(format!(
                "cannot reach the target {}: {e}",
                target.config.root
            )));
        }
        Ok(r) => r.status,
    };
    if status == 401 || status == 403 {
        let hint = match &settings.token_source {
            Some(source) if settings.token.is_some() => {
                format!("the token (from {source}) was refused")
            }
            _ => "no token was given (--token, CONFORM_TOKEN or TFE_TOKEN)".into(),
        };
        return Err(ConfigError(format!(
            "the target answered {status} to GET {path}: {hint}"
        )));
    }
    Ok(status)
}

/// When no API read proved the target speaks the API: a registry that does (the warning
/// that says so), nothing while it rate-limits, else an error of the configuration naming
/// every read's `answers`.
async fn registry_spoken(
    target: &Target,
    settings: &Settings,
    answers: &[String],
    rate_limited: bool,
) -> Result<Option<String>, ConfigError> {
    match registry_proof(target, settings).await {
        Some(proof) => Ok(Some(format!(
            "no API read answered a JSON document with `data` ({}); {proof}: the run goes on, and a registry-only target is judged by its registry tests{}",
            answers.join("; "),
            if settings.module.is_none() {
                " (give a module it holds with --module NAMESPACE/NAME/PROVIDER/VERSION, so that its read protocol is judged on it)"
            } else {
                ""
            }
        ))),
        None if rate_limited => Ok(None),
        None => Err(ConfigError(format!(
            "the target at {} does not answer like this API: no read answered a JSON document with `data` ({}), and it has no registry discovery (/.well-known/terraform.json with modules.v1). Is --target the service root?",
            target.config.root,
            answers.join("; ")
        ))),
    }
}

/// The administrator token, when given, is taken: one administrator read (`admin_read`, in
/// the path form served) that answers 401 or 403 stops the run before any test. A 404 is
/// what TFE answers a token that is not a site administrator's on the whole admin API (facts
/// 5), and also what a target without the admin API answers: the account the token belongs
/// to tells them apart. `is-site-admin: false` stops the run (exit 2), since every admin test
/// would be judged `unsupported` and what they made could not be removed; otherwise the
/// admin API is absent, and a warning says so. Any other answer lets the run go on.
async fn admin_token_taken(
    target: &Target,
    settings: &Settings,
    forms: &PathForms,
    admin_read: &str,
) -> Result<Option<String>, ConfigError> {
    let path = in_served_form(forms, admin_read);
    let ex = target
        .send(Request::new(Method::GET, target.url(&path), Auth::Admin))
        .await;
    let source = settings
        .admin_token_source
        .as_ref()
        .map(|s| format!(" (from {s})"))
        .unwrap_or_default();
    match ex.status() {
        Some(status @ (401 | 403)) => Err(ConfigError(format!(
            "the target answered {status} to GET {path}: the administrator token{source} was refused"
        ))),
        Some(404) => {
            let account = in_served_form(forms, "/account/details");
            let details = target
                .send(Request::new(Method::GET, target.url(&account), Auth::Admin))
                .await;
            let site_admin = details
                .is_success()
                .then(|| details.json().ok())
                .flatten()
                .and_then(|doc| doc.pointer("/data/attributes/is-site-admin")?.as_bool());
            if site_admin == Some(false) {
                return Err(ConfigError(format!(
                    "the administrator token{source} is not a site administrator's: GET {path} answered 404 (as TFE answers anyone else on the admin API) and GET {account} with it says is-site-admin false; give a site administrator's token, or leave --admin-token out"
                )));
            }
            Ok(Some(format!(
                "GET {path} answered 404 with the administrator token, whose account {}: the target has no administrator API here, and its admin groups are judged unsupported",
                match site_admin {
                    Some(_) => "is a site administrator's",
                    None => "does not say whether it is a site administrator's",
                }
            )))
        }
        _ => Ok(None),
    }
}

/// A catalog path in the path form the target serves: under `/api/v2` unless only the bare
/// form is served; a path the catalog writes with its prefix (TFE-only routes) as written.
fn in_served_form(forms: &PathForms, path: &str) -> String {
    if path.starts_with("/api/v2/") || (forms.bare && !forms.api_v2) {
        path.to_string()
    } else {
        format!("/api/v2{path}")
    }
}

/// What an answer was, in a few words: its status and, when it is not a JSON document with
/// `data`, what it is instead.
fn describe_answer(ex: &crate::target::Exchange) -> String {
    let Some(status) = ex.status() else {
        return "nothing".into();
    };
    if (300..400).contains(&status) {
        let to = ex.header("location").unwrap_or("nowhere (no Location)");
        return format!("{status}, a redirect to {to} (conform follows none: give the URL it names as --target)");
    }
    if !(200..300).contains(&status) {
        return format!("{status}");
    }
    let kind = ex.header("content-type").unwrap_or("no content type");
    match ex.json() {
        Ok(doc) if doc.get("data").is_some() => format!("{status}"),
        Ok(_) => format!("{status} ({kind}, JSON without `data`)"),
        Err(why) => format!("{status} ({kind}: {why})"),
    }
}

/// Proof that a target without the rest of the API is a module registry: its discovery
/// names `modules.v1`, or `--registry-url` answers JSON.
async fn registry_proof(target: &Target, settings: &Settings) -> Option<String> {
    let discovery = target.url("/.well-known/terraform.json");
    let ex = target
        .send(Request::new(Method::GET, discovery, Auth::None))
        .await;
    if ex
        .json()
        .ok()
        .is_some_and(|doc| doc.get("modules.v1").is_some_and(Value::is_string))
    {
        return Some("its registry discovery names modules.v1".into());
    }
    let registry = settings.registry_url.clone()?;
    let ex = target
        .send(Request::new(Method::GET, registry.clone(), Auth::User))
        .await;
    (ex.is_success() && ex.json().is_ok_and(|doc| doc.is_object()))
        .then(|| format!("--registry-url {registry} answers JSON"))
}

/// The groups served only at TFE's path (`tfe_path` in `cases/`): for each, the spec's path
/// and TFE's, where a GET of the spec's path (in the served form `forms`) answers 404 and a
/// GET of TFE's answers success. Fixtures and tests of such a group then reach it where it
/// is served ([`crate::target::Target::api_url`]), and its tests still fail `endpoint.exists`
/// at the spec's path.
pub async fn served_at_tfe_paths(
    target: &Target,
    catalog: &crate::catalog::Catalog,
    forms: PathForms,
) -> Vec<(String, String)> {
    let mut served = Vec::new();
    for tfe_path in catalog.groups.iter().filter_map(|g| g.tfe_path.as_ref()) {
        let spec = format!("{}{}", forms.canonical(), tfe_path.spec);
        let at_spec = target
            .send(Request::new(
                Method::GET,
                target.url(&spec),
                auth_for(&spec),
            ))
            .await;
        if at_spec.status() != Some(404) {
            continue;
        }
        let at_tfe = target
            .send(Request::new(
                Method::GET,
                target.url(&tfe_path.tfe),
                auth_for(&tfe_path.tfe),
            ))
            .await;
        if at_tfe.is_success() {
            served.push((tfe_path.spec.clone(), tfe_path.tfe.clone()));
        }
    }
    served
}

/// `--module` is a module version the registry lists: its versions
/// (`GET {registry}NS/NAME/PROVIDER/versions`) name the version. A module the registry answers
/// 404 for (a JSON answer: its own word) or a version it does not list is an error of the
/// configuration (exit 2) that names what it does list (the module's versions, or the modules
/// of its namespace); a versions route that answers no JSON, or another status, is left to the
/// tests, with a warning.
pub async fn module_listed(
    target: &Target,
    registry: &Url,
    module: &PublishedModule,
) -> Result<Option<String>, ConfigError> {
    let url = registry_path(
        registry,
        &[
            &module.namespace,
            &module.name,
            &module.provider,
            "versions",
        ],
    );
    let ex = target
        .send(Request::new(Method::GET, url.clone(), Auth::User))
        .await;
    let leave = |why: String| {
        Ok(Some(format!(
            "--module {module} was not looked up: GET {url} {why}; the registry tests judge it"
        )))
    };
    let source = format!("{}/{}/{}", module.namespace, module.name, module.provider);
    let (Some(status), Ok(doc)) = (ex.status(), ex.json()) else {
        return leave(format!(
            "answered {} without a JSON document",
            answered(&ex)
        ));
    };
    if status == 404 {
        let listed = namespace_modules(target, registry, &module.namespace).await;
        return Err(ConfigError(format!(
            "--module {module}: the registry does not list the module {source} (GET {url} answered 404); {listed}"
        )));
    }
    if !(200..300).contains(&status) {
        return leave(format!("answered {status}"));
    }
    let versions = crate::checks::registry_listed_versions(&doc);
    if versions.contains(&module.version) {
        return Ok(None);
    }
    if versions.is_empty() && doc.get("modules").is_none() {
        return leave("answered a document that lists no version".into());
    }
    Err(ConfigError(format!(
        "--module {module}: the registry does not list version {} of {source}; it lists {} (GET {url})",
        module.version,
        if versions.is_empty() {
            "no version".to_string()
        } else {
            versions.join(", ")
        }
    )))
}

/// The modules the registry lists in a namespace (`GET {registry}NS`, its first page), said
/// for a message.
async fn namespace_modules(target: &Target, registry: &Url, namespace: &str) -> String {
    let url = registry_path(registry, &[namespace]);
    let ex = target
        .send(Request::new(Method::GET, url.clone(), Auth::User))
        .await;
    let names: Vec<String> = ex
        .json()
        .ok()
        .filter(|_| ex.is_success())
        .and_then(|doc| crate::checks::registry_modules(&doc).cloned())
        .unwrap_or_default()
        .iter()
        .map(crate::checks::registry_item_key)
        .collect();
    match (ex.is_success(), names.is_empty()) {
        (true, false) => format!("in namespace `{namespace}` it lists {}", names.join(", ")),
        (true, true) => format!("it lists no module in namespace `{namespace}`"),
        (false, _) => format!("GET {url} answered {}", answered(&ex)),
    }
}

/// A registry address under `registry` (which ends with `/`), each segment percent-encoded.
fn registry_path(registry: &Url, segments: &[&str]) -> Url {
    let mut url = registry.clone();
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(segments);
    }
    url
}

/// An answer's status, or the transport error, for a message.
fn answered(ex: &crate::target::Exchange) -> String {
    match &ex.response {
        Ok(r) => r.status.to_string(),
        Err(e) => e.to_string(),
    }
}

/// Service discovery: `/.well-known/terraform.json`, key `modules.v1`; else the TFE default.
pub async fn discover_registry(target: &Target) -> Url {
    let fallback = join(&target.config.root, crate::catalog::REGISTRY_DEFAULT);
    let discovery = target.url("/.well-known/terraform.json");
    let ex = target
        .send(Request::new(Method::GET, discovery.clone(), Auth::None))
        .await;
    let found = ex
        .json()
        .ok()
        .and_then(|doc| {
            doc.get("modules.v1")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .and_then(|v| discovery.join(&v).ok());
    with_trailing_slash(found.unwrap_or(fallback))
}

/// The URL with a `/` at the end of its path.
pub fn with_trailing_slash(mut url: Url) -> Url {
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url
}
