//! Named checks: each has a stable id, a level and the spec section it enforces
//! (`conform checks` prints this table), and the pure functions that decide them, by family:
//! `status` (status codes and media types), `envelope` (JSON:API documents), `lists` (contains,
//! page size, partition), `lifecycle` (then-show, same id, persisted, then-gone, wrong state),
//! `uploads`, `registry` and `refuse`; `answer` decides which of them a single answer of an
//! endpoint's kind must pass. Nothing here sends a request: the runner and the
//! sequence engine send them, call these functions and record what they answer.
//!
//! A finding's text is a [`Message`], which only this module builds (with `message!` in
//! its functions): the recorders ([`Record::check`], [`Finding::new`], an
//! [`answer::Judgement`]) take nothing else, so a message written anywhere else does not
//! compile.

/// A [`Message`] formatted as `format!` would: the only way a finding's text is written,
/// and it is written here, in `checks`.
macro_rules! message {
    ($($arg:tt)*) => {
        $crate::checks::Message::new(format!($($arg)*))
    };
}

pub mod answer;
mod envelope;
pub mod lifecycle;
pub mod lists;
mod refuse;
mod registry;
mod schemas;
mod status;
#[cfg(test)]
pub(crate) mod testing;
mod uploads;

pub use envelope::*;
pub use refuse::*;
pub use registry::*;
pub use schemas::{SchemaError, Schemas};
pub use status::*;
pub use uploads::*;

use std::fmt;

/// A finding's message: what a check expected and what came, in a sentence or two. Only
/// `checks` builds one (its constructor is private to the module), so every message a
/// finding carries is written by a named function here and the runner, the sequence engine
/// and the proxy only pass it on; reading one (`Deref` to `str`, `Display`) is free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message(String);

impl Message {
    /// A message of `text`: only for the functions of `checks`.
    pub(in crate::checks) fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The text, to be kept in a report.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The message of a sequence's finding: the step of the sequence that shows it
    /// (`step 3: …`).
    pub fn at_step(self, step: usize) -> Self {
        message!("step {step}: {self}")
    }

    /// The message with what confirms it (`…; <why>`): a suspected fault read again and
    /// found so.
    pub fn because(self, why: &Message) -> Self {
        message!("{self}; {why}")
    }
}

impl std::ops::Deref for Message {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<&str> for Message {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// Tests outside `checks` (a report's, a verdict's) build findings of made-up text.
#[cfg(test)]
impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Self(text.into())
    }
}

/// How far a check may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Stated by the spec: a failure fails the run.
    Core,
    /// A public TFE convention where the spec says "not shown": fails the run only with `--profile tfe`.
    Tfe,
    /// Information: reported, never a failure at any profile (a spelling the spec only
    /// mentions and TFE does not serve).
    Info,
}

impl Level {
    /// `core`, `tfe` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Core => "core",
            Level::Tfe => "tfe",
            Level::Info => "info",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A named check.
#[derive(Debug)]
pub struct Check {
    /// Stable dotted id, the same in every report.
    pub id: &'static str,
    /// Its level.
    pub level: Level,
    /// One line: what it asserts.
    pub title: &'static str,
    /// The spec section (core) or TFE fact (tfe) it enforces.
    pub cites: &'static str,
}

macro_rules! checks {
    ($($name:ident = $id:literal, $level:ident, $cites:literal, $title:literal;)*) => {
        $(
            #[doc = $title]
            pub static $name: Check = Check { id: $id, level: Level::$level, title: $title, cites: $cites };
        )*
        /// Every check, in report order.
        pub static CHECKS: &[&Check] = &[$(&$name),*];
    };
}

checks! {
    ENDPOINT_EXISTS = "endpoint.exists", Core, "Endpoints",
        "the route exists: a request on real resources is not answered 404/405/501 on the route";
    ENDPOINT_SUCCEEDS = "endpoint.succeeds", Core, "Endpoints; Resources > Conventions 1",
        "a valid request on real resources is answered with success (2xx)";
    JSON_BODY = "json.body", Core, "Resources > Conventions 1",
        "the response is a JSON document: parseable, with a JSON content type";
    ENVELOPE_SINGLE = "envelope.single", Core, "Resources > Conventions 2",
        "a single-resource response has `data`, an object with a string `id`";
    ENVELOPE_LIST = "envelope.list", Core, "Resources > Conventions 3",
        "a list response has `data`, an array of objects with a string `id`";
    CREATE_RETURNS_ID = "create.returns-id", Core, "Resources > Conventions 4",
        "a create returns the created resource, including its `id`";
    CREATE_THEN_SHOW = "create.then-show", Core, "Resources > Conventions 4",
        "a show of the created id answers the same id";
    SHOW_SAME_ID = "show.same-id", Core, "Resources > Conventions 2; Identifiers used in paths",
        "a show answers the resource whose id is in the path";
    LIST_CONTAINS = "list.contains", Core, "Endpoints; Resources > Conventions 3",
        "a list holds a resource the run made in it";
    UPDATE_SAME_ID = "update.same-id", Core, "Resources > Conventions 2",
        "an update answers the resource it changed";
    DELETE_THEN_GONE = "delete.then-gone", Core, "Endpoints; RFC 9110 15.5.5",
        "after a delete, a show of the resource answers not found (404 or another 4xx; a 5xx is no proof)";
    UPDATE_PERSISTED = "update.persisted", Core, "Endpoints; Resources > Conventions 2; RFC 5789 2",
        "after an update, the resource is shown with what it was sent (a show, a list): every attribute the update's answer carried at the value sent, and at least one; an update that changes nothing observable did not do its job";
    READ_BACK = "read-back", Core, "Resources > Conventions 2 and 4",
        "a later show answers the resource as made or changed: its `type`, and every attribute its create or update was sent, where the show carries it, at the value that answer gave it (a show does not contradict the answer)";
    SHOW_UNKNOWN_ID = "show.unknown-id", Core, "Identifiers used in paths; RFC 9110 15.5.5",
        "a show of an id nothing has (the requested one with a suffix) answers not found (404 or another 4xx, not a success or a 5xx): a show answers the resource it names, not any id";
    LIST_EXACT = "list.exact", Core, "Endpoints; Resources > Conventions 3",
        "a list in the run's own organization holds only resources the run made there";
    VARIANTS_AGREE = "variants.agree", Core, "Versioning 1",
        "the paths with and without /api/v2 answer the same document (volatile fields aside)";
    DEPRECATED_SAME = "deprecated.same-operation", Core, "Versioning 3",
        "a deprecated registry form acts on the same module as its organization-scoped form";
    UPLOAD_URL_FORM = "upload.url-form", Core, "Versioning 2; What the service does, Rule 3",
        "the create response returns an upload address whose path has the form /v1/object/<object_id>";
    UPLOAD_ACCEPTED = "upload.accepted", Core, "What the service does, Rule 3",
        "a PUT of a tarball to the returned upload address succeeds";
    UPLOAD_APPLIED = "upload.applied", Core, "What the service does, Rule 3",
        "after the upload the version shows the uploaded content";
    PAGING_ACCEPTED = "paging.accepted", Core, "Endpoints conventions (paged); Limits 1",
        "a paged endpoint accepts `page` and `page_size` and answers a list";
    STATE_AFTER = "state.after-action", Core, "States and transitions",
        "after the action the resource is in the state the spec names";
    REGISTRY_READ = "registry.read", Core, "Registry modules, read endpoints",
        "a registry read endpoint answers a JSON document about the module (the one the run published, or `--module`): a list holds it (further pages read with `offset`), a module answer names it in its namespace";
    REGISTRY_VERSIONS = "registry.versions", Core, "Registry modules, read endpoints (…/:provider/versions)",
        "`…/:namespace/:name/:provider/versions` lists the module's published version (the version is a string of the answer): the endpoint names what it answers";
    REGISTRY_VERSION = "registry.version", Core, "Registry modules, read endpoints (…/:provider/:version); Identifiers used in paths",
        "`…/:namespace/:name/:provider/:version` answers that version of that module: it names the module, and no object named like it (`name`, the spec's identifier) states another `version`";
    REGISTRY_LATEST = "registry.latest", Core, "Registry modules, read endpoints (latest version for one provider, across providers)",
        "`…/:namespace/:name/:provider` answers that module with that provider (no object named like it states another `provider`); `…/:namespace/:name` lists it with its provider";
    REGISTRY_DOWNLOAD_SOURCE = "registry.download-source", Core, "Registry modules, read endpoints (latest source, version source); What the service does, Rule 3",
        "a download leads to the module's source: the address it gives (`X-Terraform-Get` or a JSON body's `location`, relative to the download URL) or its body, fetched as terraform fetches it (on another origin without the token; a source that gives no answer there is not observed, so the test is skipped), is an archive of the kind its address names (`archive=`, the file name: zip, tar.gz...; unnamed, any kind go-getter unpacks) that unpacks as terraform unpacks it: the compression stream whole (a truncated gzip fails), a tar (or zip) inside it with at least one regular file (a gzip of no tar, an empty tar or one of directories only fails), holding every file the run published with the bytes it published (for a `--module` module, whose files the run does not know: at least one regular file). An archive conform does not unpack (bzip2, xz, zstd), one past the response size cap or past 256 MiB unpacked is not judged: the test is skipped with the reason";
    REGISTRY_QUERY_ACCEPTED = "registry.query-accepted", Core, "Registry modules, read endpoints (Query column)",
        "the module lists and search accept the parameters the spec's Query column names for them (`offset`, `limit`, `provider`, `verified`) and answer JSON";
    REGISTRY_SEARCH = "registry.search", Core, "Registry modules, read endpoints (search: query (the search text))",
        "search reads the spec's `query`: `query=<name>` lists the module, a text matching nothing does not. Core: the Query column names `query` as it names `offset` and `limit`, and no gap statement counts it as not shown; where only TFE's `q` works, the finding says this registry reads `q`, not `query`; a search answered 400 on `query` is sent again with `q` and judged on that answer (a note says so), and fails only when `q` is refused too";
    RELATIONSHIP_LISTED = "relationship.listed", Core, "Endpoints (add users, add by membership, add policies, attach to workspaces, and their removals)",
        "after a relationship endpoint adds a member, the owner's show or list (a route of the spec) names the member's id; after one removes it, no longer. The spec shows no relationship document: the id may be anywhere in the answer's `data` (TFE's place is `tfe.linked`)";
    NO_SERVER_ERROR = "transport.no-5xx", Core, "Endpoints",
        "no request of a test is answered with a 5xx (its main request, set-up reads, polls and probes alike)";
    ALIAS_EXISTS = "alias.exists", Info, "Endpoints (Agents: \"one listing spells the segment agent-pool\")",
        "a spelling the spec only mentions answers like the endpoint: reported as information, required at no profile (TFE serves no such path)";
    TFE_STATUS = "tfe.status-code", Tfe, "tfe-api-facts 0.4",
        "create 201 (team/team access 200 too), delete and relationship changes 204, run actions and archive 202, others 200";
    TFE_MEDIA_TYPE = "tfe.media-type", Tfe, "tfe-api-facts 0.2",
        "JSON:API answers use the media type application/vnd.api+json";
    TFE_ERROR_DOCUMENT = "tfe.error-document", Tfe, "tfe-api-facts 0.3, 1.3",
        "an error answer is a JSON:API error document";
    TFE_UNAUTHORIZED = "tfe.unauthorized", Tfe, "tfe-api-facts 0.1",
        "a request without a token is answered 401";
    TFE_NOT_FOUND_AFTER_DELETE = "tfe.404-after-delete", Tfe, "tfe-api-facts 0.11",
        "a show after a delete is answered 404";
    TFE_RESOURCE_SHAPE = "tfe.resource-shape", Tfe, "tfe-api-facts 2, 5 (each schema under schemas/tfe/ cites its section)",
        "a resource TFE documents has the attributes TFE always answers for it, with their JSON types and documented values, and the relationships it documents (schemas/tfe/resources, schemas/tfe/admin); a document that is no resource (the IP ranges, the audit trail) has the shape TFE documents (schemas/tfe)";
    TFE_READ_BACK = "tfe.read-back", Tfe, "tfe-api-facts 6.4",
        "the create or update answer echoes every attribute sent at the value sent (the kind's `write_only` secrets aside), a later show carries them, and a show of what was made holds every to-one relationship its create sent and answered";
    TFE_LINKED = "tfe.linked", Tfe, "tfe-api-facts 2.9, 2.10, 6.10",
        "after a relationship endpoint adds a member, the owner's show lists it; after one removes it, the show (which listed it before) no longer does";
    TFE_TOKEN_SECRET = "tfe.token-secret", Tfe, "tfe-api-facts 2.14, 6.9",
        "a token's create answers its secret (a non-empty string) once: a later show answers it null or empty";
    TFE_TOKEN_AUTHENTICATES = "tfe.token-authenticates", Tfe, "tfe-api-facts 0.1, 2.1",
        "a token the run was issued authenticates the read it is meant for, and after its delete no longer does";
    TFE_STATE_AFTER = "tfe.state-after-action", Tfe, "tfe-api-facts 2.3, 2.8, 2.9, 2.10, 2.15, 6.10",
        "after an action, the resource is in the state TFE documents for it: a run action's status (apply: confirmed or on; discard: discarded; cancel: canceled; force-cancel: force_canceled; force-execute: out of pending), the counters of a relationship change (policy-count, workspace-count, users-count), a notification verify's delivery response, an uploaded module version's `ok`";
    TFE_CREATE_DEFAULTS = "tfe.create-defaults", Tfe, "tfe-api-facts 2 (each resource's create defaults)",
        "a create answers TFE's documented default for each attribute it was not sent (resources.toml `defaults`)";
    TFE_PAGINATION_META = "tfe.pagination-meta", Tfe, "tfe-api-facts 0.6, 1.4",
        "a paged list carries meta.pagination";
    TFE_PAGE_SIZE = "tfe.page-size", Tfe, "tfe-api-facts 0.5, 1.4",
        "with TFE's `page[number]`/`page[size]`, a page holds at most `page[size]` items, and the pages of a walk partition the list";
    TFE_LIST_FILTER = "tfe.list-filter", Tfe, "tfe-api-facts 0.11, 6.3; go-tfe v1.111.2 (OrganizationListOptions.Query: name or email; OrganizationMembershipListOptions.Emails: filter[email])",
        "a list sent with a filter TFE serves, naming the run's own item (`narrows` in cases/), holds that item; a filter naming one item exactly (an email) holds nothing else";
    TFE_INCLUDE_REFUSED = "tfe.include-refused", Tfe, "tfe-api-facts 0.4, 1.3; go-tfe v1.111.2 TestOrganizationMembershipsReadWithOptions (with invalid include option)",
        "a read sent with an `include` name the resource does not take (`expect.refuses_include`) is answered 400";
    TFE_UNPAGINATED = "tfe.unpaginated", Tfe, "tfe-api-facts 0.8; go-tfe v1.111.2 TestNotificationConfigurationList",
        "a list TFE answers whole when no page parameter is sent (`expect.unpaginated`) carries no `meta.pagination` then";
    TFE_REQUIRED_FILTER = "tfe.required-filter", Tfe, "tfe-api-facts 1.3",
        "a list without its required filter is answered 400";
    TFE_WRONG_STATE = "tfe.refused-in-wrong-state", Tfe, "tfe-api-facts 0.4, 2.3",
        "an action not allowed in the resource's state is refused (4xx)";
    TFE_REGISTRY_DOWNLOAD = "tfe.registry-download", Tfe, "tfe-api-facts 3.3",
        "a registry download answers 204 with X-Terraform-Get (or a redirect to it)";
    TFE_REGISTRY_PAGING = "tfe.registry-paging", Tfe, "tfe-api-facts 3.3",
        "registry lists and search page with `offset`/`limit`: `limit=1` answers at most one module with `meta.limit` 1, and `offset=1` moves past the first module (`meta.current_offset` 1). TFE level: the spec names the parameters, not what they do nor where an answer holds its modules";
    TFE_REGISTRY_FILTERS = "tfe.registry-filters", Tfe, "tfe-api-facts 3.3; TFE registry API docs",
        "`provider=P` lists only modules whose `provider` is P, `verified=true` only modules with `verified: true` (TFE level, as for paging)";
    TFE_REGISTRY_SHAPE = "tfe.registry-shape", Tfe, "tfe-api-facts 3.3",
        "registry answers have the protocol's plain JSON shapes: versions `{modules:[{versions:[{version}]}]}`; one module `{id: ns/name/provider/version, namespace, name, provider, version}`; lists and search `{meta:{limit, current_offset}, modules:[{namespace, name, provider, version}]}`";
    TFE_REFUSES_WRONG_TYPE = "tfe.refuses-wrong-type", Tfe, "tfe-api-facts 0.3, 1.3, 2.11",
        "a create or update with an attribute of the wrong JSON type (`cost-estimation-enabled: {}`, a non-boolean `auto-apply`) or outside its documented values (a team grant's custom permission) is answered 422, never 5xx, and nothing is stored (a show afterwards proves it)";
    TFE_REFUSES_UNKNOWN_TYPE = "tfe.refuses-unknown-type", Tfe, "tfe-api-facts 1.3, 1.5",
        "a create or update whose `data.type` is not the endpoint's is answered 409 or 422, never 5xx, and nothing is stored";
    TFE_REFUSES_MISSING_ATTRIBUTE = "tfe.refuses-missing-attribute", Tfe, "tfe-api-facts 1.3, 2.1",
        "a create without a required attribute (an organization without `email`) is answered 422, never 5xx, and nothing is stored";
    TFE_REFUSES_MALFORMED_JSON = "tfe.refuses-malformed-json", Tfe, "tfe-api-facts 1.3",
        "a body that is not JSON is answered 400 or 422 (\"malformed body\"), never 5xx, and nothing is stored";
    TFE_REFUSES_MEDIA_TYPE = "tfe.refuses-media-type", Tfe, "tfe-api-facts 0.2, 1.3",
        "a body sent with a media type that is not JSON (`text/plain`) is answered 415, never 5xx, and nothing is stored";
    TFE_ACCEPTS_INPUT = "tfe.accepts-input", Tfe, "go-tfe v1.111.2 (the vendor's client sends it and its tests of TFE take it); cases/accept.toml",
        "input TFE takes although a stricter reading would refuse it (an empty `data.type`, which go-tfe sends for options without a type; a team name with a space) is answered 2xx, and a show afterwards holds what it set";
}

/// The checks that observe what an endpoint did (made, changed, removed, linked, issued,
/// uploaded, moved to a state, or read back as made), rather than the form of its answer. A
/// pass that passed one of them certifies the effect it names; the reports list them.
pub static EFFECTS: &[&Check] = &[
    &CREATE_THEN_SHOW,
    &READ_BACK,
    &TFE_READ_BACK,
    &LIST_CONTAINS,
    &UPDATE_PERSISTED,
    &DELETE_THEN_GONE,
    &DEPRECATED_SAME,
    &UPLOAD_APPLIED,
    &STATE_AFTER,
    &TFE_STATE_AFTER,
    // the same action again is refused: the first one moved the state
    &TFE_WRONG_STATE,
    &TFE_LINKED,
    &RELATIONSHIP_LISTED,
    &TFE_TOKEN_SECRET,
    &TFE_TOKEN_AUTHENTICATES,
    &REGISTRY_READ,
    &REGISTRY_VERSIONS,
    &REGISTRY_VERSION,
    &REGISTRY_LATEST,
    &REGISTRY_DOWNLOAD_SOURCE,
    &REGISTRY_SEARCH,
    &LIST_EXACT,
];

/// The checks of observations the spec does not promise to hold at once (an item in its
/// list after the create, gone after the delete, a change visible after the update, a walk
/// that reads every item of the list): a read
/// that fails one is read again within the consistency window (`crate::patience`) before it is
/// a finding.
pub const EVENTUAL: &[&Check] = &[
    &CREATE_THEN_SHOW,
    &LIST_CONTAINS,
    &LIST_EXACT,
    &DELETE_THEN_GONE,
    &TFE_NOT_FOUND_AFTER_DELETE,
    &UPDATE_PERSISTED,
    &TFE_PAGE_SIZE,
];

/// Whether `check` is one of the [`EVENTUAL`] observations.
pub fn is_eventual(check: &Check) -> bool {
    EVENTUAL.iter().any(|c| c.id == check.id)
}

/// Whether the check `id` observes an effect ([`EFFECTS`]).
pub fn observes_effect(id: &str) -> bool {
    EFFECTS.iter().any(|c| c.id == id)
}

/// A check's result on an observation read again within the consistency window
/// (`crate::patience`): a finding says how long it was waited for (`waited`, `None` when the
/// first read decided), so a reader tells a lagging target from one that never does it.
pub fn waited(
    result: Result<(), Message>,
    waited: Option<std::time::Duration>,
) -> Result<(), Message> {
    match (result, waited) {
        (Err(message), Some(w)) => Err(message!(
            "{message} (still so after {} of reading again within the consistency window, --consistency-window)",
            crate::clock::human(w)
        )),
        (result, _) => result,
    }
}

/// The one recorder of check results: what a test (`TestRun`, and the registry probe it
/// lends it to) or a sequence found and which checks passed.
#[derive(Debug, Default)]
pub struct Record {
    /// The checks that failed, with their messages, in the order they were recorded.
    pub findings: Vec<Finding>,
    /// The ids of the checks that passed.
    pub passed: std::collections::BTreeSet<&'static str>,
}

impl Record {
    /// Records a check's result (`exchange`: the index of the exchange that shows it); true
    /// when it passed.
    pub fn check(
        &mut self,
        check: &'static Check,
        exchange: Option<usize>,
        result: Result<(), Message>,
    ) -> bool {
        match result {
            Ok(()) => {
                self.passed.insert(check.id);
                true
            }
            Err(message) => {
                self.findings.push(Finding::new(check, message, exchange));
                false
            }
        }
    }

    /// Records that a check passed.
    pub fn pass(&mut self, check: &'static Check) {
        self.passed.insert(check.id);
    }

    /// `transport.no-5xx` on every exchange of a test, not its main request only: each
    /// exchange answered 5xx that carries no such finding yet gets one, so no test passes with
    /// a server error anywhere in its transcript (an unknown id's show answered 500 is not
    /// "not found").
    pub fn server_errors(&mut self, exchanges: &[crate::target::Exchange]) {
        for (index, ex) in exchanges.iter().enumerate() {
            let Err(message) = no_server_error(ex) else {
                continue;
            };
            let recorded = self
                .findings
                .iter()
                .any(|f| f.check.id == NO_SERVER_ERROR.id && f.exchange == Some(index));
            if !recorded {
                // only a finding: a test's other exchanges answering no 5xx observe nothing
                self.check(&NO_SERVER_ERROR, Some(index), Err(message));
            }
        }
    }

    /// `transport.no-5xx` on a probe only TFE documents (a `tfe.refuses-*` or
    /// `tfe.accepts-input` case), counted at `tfe`: the spec sends no such request, so its 5xx
    /// is no core failure of the endpoint whose test sent it ([`Record::server_errors`] then
    /// leaves it).
    pub fn tfe_probe_server_error(&mut self, exchange: &crate::target::Exchange, index: usize) {
        if let Err(message) = no_server_error(exchange) {
            let finding = Finding::new(&NO_SERVER_ERROR, message, Some(index)).at(Level::Tfe);
            self.findings.push(finding);
        }
    }

    /// Whether a finding of `check` is recorded.
    pub fn failed(&self, check: &Check) -> bool {
        self.findings.iter().any(|f| f.check.id == check.id)
    }
}

/// Looks a check up by id.
pub fn by_id(id: &str) -> Option<&'static Check> {
    CHECKS.iter().copied().find(|c| c.id == id)
}

/// A check that failed, with what was expected and what came.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The check.
    pub check: &'static Check,
    /// Expected / received, in a sentence or two.
    pub message: Message,
    /// Index of the exchange that shows it, in the test's transcript.
    pub exchange: Option<usize>,
    /// The level it counts at: its check's, or higher where what it judged is not the
    /// spec's (a sequence's request on a TFE route the spec's tables do not list, a state
    /// only TFE documents: [`Finding::at`]).
    pub level: Level,
}

impl Finding {
    /// A finding of `check`, at the check's level.
    pub fn new(check: &'static Check, message: Message, exchange: Option<usize>) -> Self {
        Self {
            check,
            message,
            exchange,
            level: check.level,
        }
    }

    /// The same finding counted at `level` where that is above its check's.
    pub fn at(self, level: Level) -> Self {
        let level = self.level.max(level);
        Self { level, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::exchange;
    use super::*;

    #[test]
    fn every_5xx_of_a_test_is_a_finding_and_nothing_else_counts_as_observed() {
        let json = "application/vnd.api+json";
        let exchanges = [
            exchange(200, json, "{}"),
            exchange(500, json, "{}"),
            exchange(404, json, "{}"),
            exchange(503, json, "{}"),
        ];
        let mut record = Record::default();
        record.check(&NO_SERVER_ERROR, Some(3), no_server_error(&exchanges[3]));
        record.server_errors(&exchanges);
        let on: Vec<_> = record.findings.iter().map(|f| f.exchange).collect();
        assert_eq!(on, [Some(3), Some(1)]);
        assert!(record.passed.is_empty());
    }
}
