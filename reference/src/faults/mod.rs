//! Faults: deliberate breakages, each of exactly one behaviour, for the suite's self-validation.

use std::fmt;
use std::str::FromStr;

use crate::paths::RouteSpec;

mod catalog;

pub use catalog::{fault_catalog, FaultInfo};

/// The kinds of fault, with their arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    NoApiV2,
    NoBare,
    DropRoute(RouteSpec),
    Handler404(RouteSpec),
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
    ShowForgetsAttributes,
    WrongDefaults,
    ModuleStatusStuck,
    DeliveriesForgotten,
    RunActionNoop,
    TokenShownAgain,
    TokenNotRevoked,
    TokenSecretWithheld,
    RelationshipNoop,
    ShowAltersAttributes,
    ShowAnyId,
    DropsPermissions,
    NoDefaultProject,
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
    ListFiltersIgnored,
    ListsNewestFirst,
    ShowRelinks,
    NoPaginationLinks,
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
    RouterText404,
    PlanErrorsAtOnce,
    NoAuth,
    PlainJsonMediaType,
    NoPaginationMeta,
    UpdateWrongId,
    BareSnakeCase,
    PageParamsRefused,
    Gone410,
    CreateAnswerFlipped,
    UnknownId500,
    FilterOptional,
    RegistryDownloadNoHeader,
    RegistryHidesModules,
    RegistryVersionsEmpty,
    RegistryVersionWrong,
    RegistryLatestOtherProvider,
    RegistryDownloadWrongBytes,
    ConfigurationDownloadWrongBytes,
    VersionDeleteNoop,
    TagWorkspacesNoop,
    RegistryQueryRefused,
    RegistrySearchQOnly,
    RegistryLimitIgnored,
    RegistryFiltersIgnored,
    RegistryReshaped,
    RegistrySourceElsewhere,
    RegistrySearchQuery400,
    RegistrySearchRefused,
    RegistrySourceZip,
    RegistryArchiveTruncated,
    RegistryArchiveNotTar,
    RegistryArchiveEmptyTar,
    RegistrySourceGit,
    RegistrySourceMisnamed,
    RegistryDownloadJsonLocation,
    ModuleConsumersNoop,
    UsersWithoutTwoFactor,
    TwoFactorDisableRefused,
    ArchiveAnyVersion,
    ListHoldsExtra,
    AcceptsWrongType,
    AcceptsUnknownType,
    AcceptsMissingAttribute,
    MalformedJson500,
    AcceptsAnyMediaType,
    MembershipEmailFilterIgnored,
    MembershipIncludeUnchecked,
    OrganizationQueryNameOnly,
    OrganizationAgentPoolDropped,
    TagWithoutOrganization,
    TeamNameNoSpace,
    LockConflict423,
    AccessValuesUnchecked,
    SamlMethodsUnchecked,
    AlwaysPaged,
    RunWithoutEvents,
    RefusesEmptyType,
    TokenWithoutCreator,
    NestedAccessReplaced,
    InviteWithoutUser,
    InviteStub,
    RenameOnUpdate,
    GrantMocksNone,
}

impl Kind {
    /// The route a route fault acts on.
    fn route(&self) -> Option<&RouteSpec> {
        match self {
            Kind::DropRoute(r)
            | Kind::Handler404(r)
            | Kind::NonJson(r)
            | Kind::WrongContentType(r)
            | Kind::HugeBody(r)
            | Kind::ServerError(r)
            | Kind::Slow(r)
            | Kind::Reset(r) => Some(r),
            _ => None,
        }
    }
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
        let Some(entry) = fault_catalog().iter().find(|f| f.name == name) else {
            let names: Vec<&str> = fault_catalog().iter().map(|f| f.name).collect();
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
        let kind = kind(name, arg.as_deref())?;
        Ok(Fault {
            kind,
            name: entry.name,
            arg,
        })
    }
}

/// The faults that take no argument, by name.
const PLAIN: &[(&str, Kind)] = &[
    ("no-api-v2", Kind::NoApiV2),
    ("no-bare", Kind::NoBare),
    ("no-deprecated-registry", Kind::NoDeprecatedRegistry),
    ("no-agent-pool-singular", Kind::NoAgentPoolSingular),
    ("list-as-object", Kind::ListAsObject),
    ("numeric-id", Kind::NumericId),
    ("missing-id", Kind::MissingId),
    ("create-without-id", Kind::CreateWithoutId),
    ("no-data", Kind::NoData),
    ("delete-noop", Kind::DeleteNoop),
    ("list-omits-newest", Kind::ListOmitsNewest),
    ("update-not-persisted", Kind::UpdateNotPersisted),
    ("show-wrong-id", Kind::ShowWrongId),
    ("show-forgets-attributes", Kind::ShowForgetsAttributes),
    ("wrong-defaults", Kind::WrongDefaults),
    ("module-status-stuck", Kind::ModuleStatusStuck),
    ("deliveries-forgotten", Kind::DeliveriesForgotten),
    ("run-action-noop", Kind::RunActionNoop),
    ("token-shown-again", Kind::TokenShownAgain),
    ("token-not-revoked", Kind::TokenNotRevoked),
    ("token-secret-withheld", Kind::TokenSecretWithheld),
    ("relationship-noop", Kind::RelationshipNoop),
    ("show-alters-attributes", Kind::ShowAltersAttributes),
    ("show-any-id", Kind::ShowAnyId),
    ("drops-permissions", Kind::DropsPermissions),
    ("no-default-project", Kind::NoDefaultProject),
    ("force-cancel-noop", Kind::ForceCancelNoop),
    ("suspend-noop", Kind::SuspendNoop),
    ("upload-url-wrong-form", Kind::UploadUrlWrongForm),
    ("upload-refused", Kind::UploadRefused),
    ("upload-not-applied", Kind::UploadNotApplied),
    ("deprecated-acts-elsewhere", Kind::DeprecatedActsElsewhere),
    ("action-ignores-state", Kind::ActionIgnoresState),
    ("archive-noop", Kind::ArchiveNoop),
    ("page-ignored", Kind::PageIgnored),
    ("page-size-ignored", Kind::PageSizeIgnored),
    ("list-filters-ignored", Kind::ListFiltersIgnored),
    ("lists-newest-first", Kind::ListsNewestFirst),
    ("show-relinks", Kind::ShowRelinks),
    ("no-pagination-links", Kind::NoPaginationLinks),
    ("page-repeats-item", Kind::PageRepeatsItem),
    ("page-drops-item", Kind::PageDropsItem),
    ("rate-limit-forever", Kind::RateLimitForever),
    ("wrong-status", Kind::WrongStatus),
    ("errors-not-jsonapi", Kind::ErrorsNotJsonapi),
    ("router-text-404", Kind::RouterText404),
    ("plan-errors-at-once", Kind::PlanErrorsAtOnce),
    ("no-auth", Kind::NoAuth),
    ("plain-json-media-type", Kind::PlainJsonMediaType),
    ("no-pagination-meta", Kind::NoPaginationMeta),
    ("update-wrong-id", Kind::UpdateWrongId),
    ("bare-snake-case", Kind::BareSnakeCase),
    ("page-params-refused", Kind::PageParamsRefused),
    ("gone-410", Kind::Gone410),
    ("create-answer-flipped", Kind::CreateAnswerFlipped),
    ("unknown-id-500", Kind::UnknownId500),
    ("filter-optional", Kind::FilterOptional),
    (
        "registry-download-no-header",
        Kind::RegistryDownloadNoHeader,
    ),
    ("registry-hides-modules", Kind::RegistryHidesModules),
    ("registry-versions-empty", Kind::RegistryVersionsEmpty),
    ("registry-version-wrong", Kind::RegistryVersionWrong),
    (
        "registry-latest-other-provider",
        Kind::RegistryLatestOtherProvider,
    ),
    (
        "registry-download-wrong-bytes",
        Kind::RegistryDownloadWrongBytes,
    ),
    (
        "configuration-download-wrong-bytes",
        Kind::ConfigurationDownloadWrongBytes,
    ),
    ("version-delete-noop", Kind::VersionDeleteNoop),
    ("tag-workspaces-noop", Kind::TagWorkspacesNoop),
    ("registry-query-refused", Kind::RegistryQueryRefused),
    ("registry-search-q-only", Kind::RegistrySearchQOnly),
    ("registry-limit-ignored", Kind::RegistryLimitIgnored),
    ("registry-filters-ignored", Kind::RegistryFiltersIgnored),
    ("registry-reshaped", Kind::RegistryReshaped),
    ("registry-source-elsewhere", Kind::RegistrySourceElsewhere),
    ("registry-search-query-400", Kind::RegistrySearchQuery400),
    ("registry-search-refused", Kind::RegistrySearchRefused),
    ("registry-source-zip", Kind::RegistrySourceZip),
    ("registry-archive-truncated", Kind::RegistryArchiveTruncated),
    ("registry-archive-not-tar", Kind::RegistryArchiveNotTar),
    ("registry-archive-empty-tar", Kind::RegistryArchiveEmptyTar),
    ("registry-source-git", Kind::RegistrySourceGit),
    ("registry-source-misnamed", Kind::RegistrySourceMisnamed),
    (
        "registry-download-json-location",
        Kind::RegistryDownloadJsonLocation,
    ),
    ("module-consumers-noop", Kind::ModuleConsumersNoop),
    ("users-without-two-factor", Kind::UsersWithoutTwoFactor),
    ("two-factor-disable-refused", Kind::TwoFactorDisableRefused),
    ("archive-any-version", Kind::ArchiveAnyVersion),
    ("list-holds-extra", Kind::ListHoldsExtra),
    ("accepts-wrong-type", Kind::AcceptsWrongType),
    ("accepts-unknown-type", Kind::AcceptsUnknownType),
    ("accepts-missing-attribute", Kind::AcceptsMissingAttribute),
    ("malformed-json-500", Kind::MalformedJson500),
    ("accepts-any-media-type", Kind::AcceptsAnyMediaType),
    (
        "membership-email-filter-ignored",
        Kind::MembershipEmailFilterIgnored,
    ),
    (
        "membership-include-unchecked",
        Kind::MembershipIncludeUnchecked,
    ),
    (
        "organization-query-name-only",
        Kind::OrganizationQueryNameOnly,
    ),
    (
        "organization-agent-pool-dropped",
        Kind::OrganizationAgentPoolDropped,
    ),
    ("tag-without-organization", Kind::TagWithoutOrganization),
    ("team-name-no-space", Kind::TeamNameNoSpace),
    ("lock-conflict-423", Kind::LockConflict423),
    ("access-values-unchecked", Kind::AccessValuesUnchecked),
    ("saml-methods-unchecked", Kind::SamlMethodsUnchecked),
    ("always-paged", Kind::AlwaysPaged),
    ("run-without-events", Kind::RunWithoutEvents),
    ("refuses-empty-type", Kind::RefusesEmptyType),
    ("token-without-creator", Kind::TokenWithoutCreator),
    ("nested-access-replaced", Kind::NestedAccessReplaced),
    ("invite-without-user", Kind::InviteWithoutUser),
    ("invite-stub", Kind::InviteStub),
    ("rename-on-update", Kind::RenameOnUpdate),
    ("grant-mocks-none", Kind::GrantMocksNone),
];

/// A route fault's kind, made from its route.
type OnRoute = fn(RouteSpec) -> Kind;

/// The faults that act on one route (`NAME=ROUTE`), by name.
const ON_ROUTE: &[(&str, OnRoute)] = &[
    ("drop-route", Kind::DropRoute),
    ("handler-404", Kind::Handler404),
    ("non-json", Kind::NonJson),
    ("wrong-content-type", Kind::WrongContentType),
    ("huge-body", Kind::HugeBody),
    ("server-error", Kind::ServerError),
    ("slow", Kind::Slow),
    ("reset", Kind::Reset),
];

/// The kind of the fault named `name`, with its argument (already checked present when the
/// catalog says it takes one).
fn kind(name: &str, arg: Option<&str>) -> Result<Kind, String> {
    if let Some((_, kind)) = PLAIN.iter().find(|(n, _)| *n == name) {
        return Ok(kind.clone());
    }
    if let Some((_, make)) = ON_ROUTE.iter().find(|(n, _)| *n == name) {
        return Ok(make(RouteSpec::parse(arg.unwrap_or_default())?));
    }
    Ok(match name {
        "rate-limit-first" => {
            let text = arg.unwrap_or_default();
            let n = text
                .parse::<u64>()
                .map_err(|_| format!("fault `rate-limit-first` needs a number, not `{text}`"))?;
            Kind::RateLimitFirst(n)
        }
        "rate-limit-per-second" => {
            let text = arg.unwrap_or_default();
            let n = text.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                format!("fault `rate-limit-per-second` needs a number above 0, not `{text}`")
            })?;
            Kind::RateLimitPerSecond(n)
        }
        other => return Err(format!("fault `{other}` is in the catalog but not handled")),
    })
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

    /// Whether a route fault of this kind (`Kind::DropRoute`) matches the request.
    pub fn route(&self, kind: fn(RouteSpec) -> Kind, method: &str, bare: &str) -> bool {
        let wanted = std::mem::discriminant(&kind(RouteSpec::default()));
        self.0
            .iter()
            .filter(|f| std::mem::discriminant(&f.kind) == wanted)
            .filter_map(|f| f.kind.route())
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
                    | Kind::RelationshipNoop
                    | Kind::ModuleConsumersNoop
                    | Kind::RunActionNoop
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
    fn a_route_fault_acts_only_as_its_kind() {
        let fault: Fault = "server-error=GET /runs/:run_id".parse().unwrap();
        let faults = Faults(vec![fault]);
        assert!(faults.route(Kind::ServerError, "GET", "/runs/run-1"));
        assert!(!faults.route(Kind::ServerError, "GET", "/runs"));
        assert!(!faults.route(Kind::DropRoute, "GET", "/runs/run-1"));
    }
}
