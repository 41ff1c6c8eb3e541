//! Faults: deliberate breakages, each of exactly one behaviour, for the suite's self-validation.

use std::fmt;
use std::str::FromStr;

/// One entry of the fault catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultInfo {
    /// The name given on the command line (`drop-route`).
    pub name: &'static str,
    /// The argument it takes, if any (`ROUTE`, `N`).
    pub arg: Option<&'static str>,
    /// What it breaks.
    pub description: &'static str,
}

const fn info(
    name: &'static str,
    arg: Option<&'static str>,
    description: &'static str,
) -> FaultInfo {
    FaultInfo {
        name,
        arg,
        description,
    }
}

const ROUTE: Option<&str> = Some("ROUTE");

static CATALOG: &[FaultInfo] = &[
    info("no-api-v2", None, "every /api/v2 form answers 404"),
    info("no-bare", None, "every bare (unprefixed) form answers 404"),
    info("drop-route", ROUTE, "that route answers 404 (repeatable)"),
    info(
        "no-deprecated-registry",
        None,
        "the deprecated /registry-modules forms answer 404",
    ),
    info(
        "no-agent-pool-singular",
        None,
        "POST /organizations/:organization_name/agent-pool answers 404",
    ),
    info(
        "list-as-object",
        None,
        "list answers have data = their first item (or {})",
    ),
    info(
        "numeric-id",
        None,
        "single-resource data.id becomes a number",
    ),
    info("missing-id", None, "single-resource data.id is removed"),
    info("create-without-id", None, "201 create answers lose data.id"),
    info(
        "no-data",
        None,
        "the top-level data member is renamed to result",
    ),
    info(
        "non-json",
        ROUTE,
        "that route answers an HTML page (text/html)",
    ),
    info(
        "wrong-content-type",
        ROUTE,
        "that route answers its JSON body as text/plain",
    ),
    info(
        "huge-body",
        ROUTE,
        "that route streams 1 GiB of JSON-looking bytes",
    ),
    info(
        "delete-noop",
        None,
        "every DELETE answers 204 but keeps the resource",
    ),
    info(
        "list-omits-newest",
        None,
        "lists leave out the most recently created item",
    ),
    info(
        "update-not-persisted",
        None,
        "PATCH answers the updated document but stores nothing",
    ),
    info(
        "show-wrong-id",
        None,
        "GET of one resource answers with a different id",
    ),
    info(
        "force-cancel-noop",
        None,
        "admin force-cancel answers 200 but the run keeps its state",
    ),
    info(
        "suspend-noop",
        None,
        "admin suspend answers 200 but the user stays unsuspended",
    ),
    info(
        "upload-url-wrong-form",
        None,
        "upload URLs are <root>/uploads/<id>, not /v1/object/<id>",
    ),
    info("upload-refused", None, "PUT to the object URL answers 403"),
    info(
        "upload-not-applied",
        None,
        "PUT to the object URL answers 200 but stores nothing",
    ),
    info(
        "deprecated-acts-elsewhere",
        None,
        "deprecated registry forms answer success but change nothing / show another module",
    ),
    info(
        "action-ignores-state",
        None,
        "run actions succeed in any state (no 409)",
    ),
    info(
        "archive-noop",
        None,
        "configuration version archive answers 202, status unchanged",
    ),
    info(
        "page-ignored",
        None,
        "the page number is ignored: always page 1",
    ),
    info(
        "page-size-ignored",
        None,
        "the page size is ignored: everything on one page",
    ),
    info(
        "page-repeats-item",
        None,
        "each page after the first starts with the previous page's last item",
    ),
    info(
        "page-drops-item",
        None,
        "each page after the first skips its first item",
    ),
    info("server-error", ROUTE, "that route answers 500"),
    info("slow", ROUTE, "that route sleeps 30 s before answering"),
    info(
        "reset",
        ROUTE,
        "that route closes the connection without an answer",
    ),
    info(
        "rate-limit-first",
        Some("N"),
        "the first N requests answer 429 (Retry-After: 1)",
    ),
    info("rate-limit-forever", None, "every request answers 429"),
    info(
        "rate-limit-per-second",
        Some("N"),
        "a request after N others within one second answers 429 (a server limiting at N/s)",
    ),
    info(
        "wrong-status",
        None,
        "creates answer 200, deletes 200, run actions 200",
    ),
    info(
        "errors-not-jsonapi",
        None,
        "error answers are text/plain sentences",
    ),
    info("no-auth", None, "requests without a token are served"),
    info(
        "plain-json-media-type",
        None,
        "answers use application/json instead of application/vnd.api+json",
    ),
    info("no-pagination-meta", None, "lists carry no meta.pagination"),
    info(
        "update-wrong-id",
        None,
        "PATCH answers the update with a different id",
    ),
    info(
        "bare-snake-case",
        None,
        "reads on the bare (unprefixed) form answer snake_case attribute names",
    ),
    info(
        "page-params-refused",
        None,
        "the spec's `page` / `page_size` parameters answer 400 (only page[number] / page[size] work)",
    ),
    info(
        "gone-410",
        None,
        "a GET of an unknown or deleted resource answers 410 instead of 404",
    ),
    info(
        "filter-optional",
        None,
        "a list without its required filter answers 200 with an empty list instead of 400",
    ),
    info(
        "registry-download-no-header",
        None,
        "registry downloads answer 204 without X-Terraform-Get",
    ),
    info(
        "registry-hides-modules",
        None,
        "the registry protocol's module lists and search answer no modules",
    ),
    info(
        "registry-versions-empty",
        None,
        "the registry's `…/versions` lists the module with no version",
    ),
    info(
        "registry-version-wrong",
        None,
        "the registry's `…/:version` answers another version (its `version` and `id` name the next patch release)",
    ),
    info(
        "registry-latest-other-provider",
        None,
        "the registry's `…/:namespace/:name` and `…/:namespace/:name/:provider` answer the module under another provider",
    ),
    info(
        "registry-download-wrong-bytes",
        None,
        "the archive a registry download points at (GET /v1/object/<id> of a module version) answers other bytes than were uploaded",
    ),
    info(
        "registry-query-refused",
        None,
        "the registry's module lists and search answer 400 when sent offset, limit, provider or verified",
    ),
    info(
        "registry-search-q-only",
        None,
        "the registry's search reads only `q`: the spec's `query` is ignored, so every module matches",
    ),
    info(
        "registry-limit-ignored",
        None,
        "the registry's module lists and search ignore `limit`: the default (15) applies, as meta.limit says",
    ),
    info(
        "registry-filters-ignored",
        None,
        "the registry's module lists and search ignore `provider` and `verified`",
    ),
    info(
        "registry-reshaped",
        None,
        "the registry protocol's JSON answers come wrapped in a `data` member (JSON:API style) instead of its plain shapes",
    ),
    info(
        "registry-source-elsewhere",
        None,
        "registry downloads point X-Terraform-Get at another origin (https://archive.example.invalid/...), which a client must not be sent the token to",
    ),
    info(
        "list-holds-extra",
        None,
        "lists hold one item more than was made: a copy of the newest with another id",
    ),
    info(
        "accepts-wrong-type",
        None,
        "organization and workspace creates and updates store attributes of the wrong JSON type (`cost-estimation-enabled: {}`, a non-boolean `auto-apply`) instead of answering 422",
    ),
    info(
        "accepts-unknown-type",
        None,
        "creates and updates accept any `data.type` instead of answering 422",
    ),
    info(
        "accepts-missing-attribute",
        None,
        "an organization create without its required `email` is stored (with an empty email) instead of answered 422",
    ),
    info(
        "malformed-json-500",
        None,
        "a request body that is not JSON is answered 500 instead of 422",
    ),
    info(
        "accepts-any-media-type",
        None,
        "a body sent with a media type that is not JSON (text/plain) is read as JSON and acted on instead of answered 415",
    ),
];

/// The catalog of every fault the reference can inject.
pub fn fault_catalog() -> &'static [FaultInfo] {
    CATALOG
}

/// A route as the spec writes it: a method and a path with `:param` segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    method: String,
    segments: Vec<String>,
}

impl RouteSpec {
    fn parse(text: &str) -> Result<Self, String> {
        let mut parts = text.split_whitespace();
        let (Some(method), Some(path), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("route `{text}` must be \"METHOD PATH\""));
        };
        let path = path
            .replace("{registry_url}", "/api/registry/v1/modules")
            .replace("{upload_url}", "/v1/object/:object_id");
        let path = bare_path(&path).0;
        Ok(RouteSpec {
            method: method.to_ascii_uppercase(),
            segments: segments(&path),
        })
    }

    /// Whether a request matches a route written as text (false when the text is no route).
    pub(crate) fn matches_text(route: &str, method: &str, bare: &str) -> bool {
        RouteSpec::parse(route).is_ok_and(|r| r.matches(method, bare))
    }

    /// Whether a request (method and bare path) is this route.
    pub fn matches(&self, method: &str, bare: &str) -> bool {
        if !self.method.eq_ignore_ascii_case(method) {
            return false;
        }
        let request = segments(bare);
        let same = |pattern: &[String]| {
            pattern.len() == request.len()
                && pattern
                    .iter()
                    .zip(&request)
                    .all(|(p, r)| p.starts_with(':') || p == r)
        };
        if same(&self.segments) {
            return true;
        }
        // The upload route also answers at the wrong-form address.
        if self.segments.len() == 3 && self.segments[0] == "v1" && self.segments[1] == "object" {
            let alt = vec!["uploads".to_string(), self.segments[2].clone()];
            return same(&alt);
        }
        false
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Strips the `/api/v2` prefix (and maps `/api/meta/...` to `/meta/...`). Answers the bare
/// path and whether the prefix was there.
pub fn bare_path(path: &str) -> (String, bool) {
    if path == "/api/v2" {
        return ("/".into(), true);
    }
    if let Some(rest) = path.strip_prefix("/api/v2/") {
        return (format!("/{rest}"), true);
    }
    if let Some(rest) = path.strip_prefix("/api/meta/") {
        return (format!("/meta/{rest}"), false);
    }
    (path.to_string(), false)
}

/// The kinds of fault, with their arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    NoApiV2,
    NoBare,
    DropRoute(RouteSpec),
    NoDeprecatedRegistry,
    NoAgentPoolSingular,
    ListAsObject,
    NumericId,
    MissingId,
    CreateWithoutId,
    NoData,
    NonJson(RouteSpec),
    WrongContentType(RouteSpec),
    HugeBody(RouteSpec),
    DeleteNoop,
    ListOmitsNewest,
    UpdateNotPersisted,
    ShowWrongId,
    ForceCancelNoop,
    SuspendNoop,
    UploadUrlWrongForm,
    UploadRefused,
    UploadNotApplied,
    DeprecatedActsElsewhere,
    ActionIgnoresState,
    ArchiveNoop,
    PageIgnored,
    PageSizeIgnored,
    PageRepeatsItem,
    PageDropsItem,
    ServerError(RouteSpec),
    Slow(RouteSpec),
    Reset(RouteSpec),
    RateLimitFirst(u64),
    RateLimitForever,
    RateLimitPerSecond(u64),
    WrongStatus,
    ErrorsNotJsonapi,
    NoAuth,
    PlainJsonMediaType,
    NoPaginationMeta,
    UpdateWrongId,
    BareSnakeCase,
    PageParamsRefused,
    Gone410,
    FilterOptional,
    RegistryDownloadNoHeader,
    RegistryHidesModules,
    RegistryVersionsEmpty,
    RegistryVersionWrong,
    RegistryLatestOtherProvider,
    RegistryDownloadWrongBytes,
    RegistryQueryRefused,
    RegistrySearchQOnly,
    RegistryLimitIgnored,
    RegistryFiltersIgnored,
    RegistryReshaped,
    RegistrySourceElsewhere,
    ListHoldsExtra,
    AcceptsWrongType,
    AcceptsUnknownType,
    AcceptsMissingAttribute,
    MalformedJson500,
    AcceptsAnyMediaType,
}

/// One enabled fault (parse it from `name` or `name=ARG`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub(crate) kind: Kind,
    name: &'static str,
    arg: Option<String>,
}

impl Fault {
    /// The catalog name of this fault.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, arg) = match s.split_once('=') {
            Some((n, a)) => (n.trim(), Some(a.trim().to_string())),
            None => (s.trim(), None),
        };
        let Some(entry) = CATALOG.iter().find(|f| f.name == name) else {
            let names: Vec<&str> = CATALOG.iter().map(|f| f.name).collect();
            return Err(format!(
                "unknown fault `{name}`; valid names: {}",
                names.join(", ")
            ));
        };
        let arg = match (entry.arg, arg) {
            (Some(want), None) => {
                return Err(format!("fault `{name}` needs an argument: {name}={want}"))
            }
            (None, Some(_)) => return Err(format!("fault `{name}` takes no argument")),
            (_, arg) => arg,
        };
        let route = || RouteSpec::parse(arg.as_deref().unwrap_or_default());
        let kind = match name {
            "no-api-v2" => Kind::NoApiV2,
            "no-bare" => Kind::NoBare,
            "drop-route" => Kind::DropRoute(route()?),
            "no-deprecated-registry" => Kind::NoDeprecatedRegistry,
            "no-agent-pool-singular" => Kind::NoAgentPoolSingular,
            "list-as-object" => Kind::ListAsObject,
            "numeric-id" => Kind::NumericId,
            "missing-id" => Kind::MissingId,
            "create-without-id" => Kind::CreateWithoutId,
            "no-data" => Kind::NoData,
            "non-json" => Kind::NonJson(route()?),
            "wrong-content-type" => Kind::WrongContentType(route()?),
            "huge-body" => Kind::HugeBody(route()?),
            "delete-noop" => Kind::DeleteNoop,
            "list-omits-newest" => Kind::ListOmitsNewest,
            "update-not-persisted" => Kind::UpdateNotPersisted,
            "show-wrong-id" => Kind::ShowWrongId,
            "force-cancel-noop" => Kind::ForceCancelNoop,
            "suspend-noop" => Kind::SuspendNoop,
            "upload-url-wrong-form" => Kind::UploadUrlWrongForm,
            "upload-refused" => Kind::UploadRefused,
            "upload-not-applied" => Kind::UploadNotApplied,
            "deprecated-acts-elsewhere" => Kind::DeprecatedActsElsewhere,
            "action-ignores-state" => Kind::ActionIgnoresState,
            "archive-noop" => Kind::ArchiveNoop,
            "page-ignored" => Kind::PageIgnored,
            "page-size-ignored" => Kind::PageSizeIgnored,
            "page-repeats-item" => Kind::PageRepeatsItem,
            "page-drops-item" => Kind::PageDropsItem,
            "server-error" => Kind::ServerError(route()?),
            "slow" => Kind::Slow(route()?),
            "reset" => Kind::Reset(route()?),
            "rate-limit-first" => {
                let text = arg.as_deref().unwrap_or_default();
                let n = text.parse::<u64>().map_err(|_| {
                    format!("fault `rate-limit-first` needs a number, not `{text}`")
                })?;
                Kind::RateLimitFirst(n)
            }
            "rate-limit-forever" => Kind::RateLimitForever,
            "rate-limit-per-second" => {
                let text = arg.as_deref().unwrap_or_default();
                let n = text.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("fault `rate-limit-per-second` needs a number above 0, not `{text}`")
                })?;
                Kind::RateLimitPerSecond(n)
            }
            "wrong-status" => Kind::WrongStatus,
            "errors-not-jsonapi" => Kind::ErrorsNotJsonapi,
            "no-auth" => Kind::NoAuth,
            "plain-json-media-type" => Kind::PlainJsonMediaType,
            "no-pagination-meta" => Kind::NoPaginationMeta,
            "update-wrong-id" => Kind::UpdateWrongId,
            "bare-snake-case" => Kind::BareSnakeCase,
            "page-params-refused" => Kind::PageParamsRefused,
            "gone-410" => Kind::Gone410,
            "filter-optional" => Kind::FilterOptional,
            "registry-download-no-header" => Kind::RegistryDownloadNoHeader,
            "registry-hides-modules" => Kind::RegistryHidesModules,
            "registry-versions-empty" => Kind::RegistryVersionsEmpty,
            "registry-version-wrong" => Kind::RegistryVersionWrong,
            "registry-latest-other-provider" => Kind::RegistryLatestOtherProvider,
            "registry-download-wrong-bytes" => Kind::RegistryDownloadWrongBytes,
            "registry-query-refused" => Kind::RegistryQueryRefused,
            "registry-search-q-only" => Kind::RegistrySearchQOnly,
            "registry-limit-ignored" => Kind::RegistryLimitIgnored,
            "registry-filters-ignored" => Kind::RegistryFiltersIgnored,
            "registry-reshaped" => Kind::RegistryReshaped,
            "registry-source-elsewhere" => Kind::RegistrySourceElsewhere,
            "list-holds-extra" => Kind::ListHoldsExtra,
            "accepts-wrong-type" => Kind::AcceptsWrongType,
            "accepts-unknown-type" => Kind::AcceptsUnknownType,
            "accepts-missing-attribute" => Kind::AcceptsMissingAttribute,
            "malformed-json-500" => Kind::MalformedJson500,
            "accepts-any-media-type" => Kind::AcceptsAnyMediaType,
            other => return Err(format!("fault `{other}` is in the catalog but not handled")),
        };
        Ok(Fault {
            kind,
            name: entry.name,
            arg,
        })
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.arg {
            Some(arg) => write!(f, "{}={arg}", self.name),
            None => f.write_str(self.name),
        }
    }
}

/// The enabled faults, with quick questions about them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Faults(pub Vec<Fault>);

impl Faults {
    /// Whether a fault without argument is on.
    pub fn has(&self, kind: &Kind) -> bool {
        self.0.iter().any(|f| &f.kind == kind)
    }

    /// Whether a route fault of this kind matches the request.
    pub fn route(&self, pick: fn(&Kind) -> Option<&RouteSpec>, method: &str, bare: &str) -> bool {
        self.0
            .iter()
            .filter_map(|f| pick(&f.kind))
            .any(|r| r.matches(method, bare))
    }

    /// Whether a fault that acts and then restores the store is on (those requests then run
    /// alone, so that the restore cannot undo what concurrent requests did).
    pub fn restores(&self) -> bool {
        self.0.iter().any(|f| {
            matches!(
                f.kind,
                Kind::UpdateNotPersisted
                    | Kind::DeleteNoop
                    | Kind::ForceCancelNoop
                    | Kind::SuspendNoop
                    | Kind::ArchiveNoop
                    | Kind::UploadNotApplied
                    | Kind::DeprecatedActsElsewhere
            )
        })
    }

    /// The `rate-limit-per-second` limit, if on.
    pub fn rate_limit_per_second(&self) -> Option<u64> {
        self.0.iter().find_map(|f| match f.kind {
            Kind::RateLimitPerSecond(n) => Some(n),
            _ => None,
        })
    }

    /// The `rate-limit-first` count, if on.
    pub fn rate_limit_first(&self) -> Option<u64> {
        self.0.iter().find_map(|f| match f.kind {
            Kind::RateLimitFirst(n) => Some(n),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_name_parses() {
        for entry in fault_catalog() {
            let text = match entry.arg {
                Some("N") => format!("{}=3", entry.name),
                Some(_) => format!("{}=GET /runs/:run_id", entry.name),
                None => entry.name.to_string(),
            };
            let fault: Fault = text.parse().expect("catalog entries parse");
            assert_eq!(fault.to_string(), text);
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = "nope".parse::<Fault>().unwrap_err();
        assert!(err.contains("no-api-v2") && err.contains("rate-limit-forever"));
        assert!("drop-route".parse::<Fault>().is_err());
        assert!("no-auth=1".parse::<Fault>().is_err());
        assert!("rate-limit-first=x".parse::<Fault>().is_err());
    }

    #[test]
    fn routes_match_segment_wise_on_both_prefixes() {
        let r = RouteSpec::parse("GET /runs/:run_id").unwrap();
        assert!(r.matches("GET", "/runs/run-1"));
        assert!(!r.matches("POST", "/runs/run-1"));
        assert!(!r.matches("GET", "/runs/run-1/comments"));
        let r = RouteSpec::parse("GET /api/v2/assessment-results/:assessment_result_id").unwrap();
        assert!(r.matches("GET", "/assessment-results/x"));
        let r = RouteSpec::parse("PUT {upload_url}").unwrap();
        assert!(r.matches("PUT", "/v1/object/abc"));
        assert!(r.matches("PUT", "/uploads/abc"));
    }
}
