//! The fault catalog: every fault's name, argument and what it breaks, in a fixed order.

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
        "handler-404",
        ROUTE,
        "that route is served but its handler answers 404 naming what it looked up (`no workspace of that name here`), as a handler does that finds the path's resource another way or refuses without the right",
    ),
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
        "show-forgets-attributes",
        None,
        "GET of one resource answers it without its string attributes (status aside)",
    ),
    info(
        "show-alters-attributes",
        None,
        "GET of one resource answers its string attributes (status aside) with `-altered` appended",
    ),
    info(
        "show-any-id",
        None,
        "GET of a resource that does not exist answers 200 with a document of that id",
    ),
    info(
        "relationship-noop",
        None,
        "POST and DELETE on /relationships/ paths answer success but change nothing",
    ),
    info(
        "token-shown-again",
        None,
        "a show of an agent token answers its secret again",
    ),
    info(
        "token-not-revoked",
        None,
        "a deleted organization token still authenticates",
    ),
    info(
        "run-action-noop",
        None,
        "run actions (apply, discard, cancel, force-cancel, force-execute) answer 202 but the run keeps its state",
    ),
    info(
        "wrong-defaults",
        None,
        "201 answers turn the booleans `refresh`, `global` and `organization-scoped` over (what is stored is right)",
    ),
    info(
        "module-status-stuck",
        None,
        "a registry module's `version-statuses` say `pending` for every version, uploaded or not (the registry protocol still serves them)",
    ),
    info(
        "deliveries-forgotten",
        None,
        "notification configurations show no `delivery-responses`, whatever verify sent",
    ),
    info(
        "drops-permissions",
        None,
        "resource answers leave out the `permissions` attribute TFE always answers",
    ),
    info(
        "no-default-project",
        None,
        "organization documents carry no `default-project` relationship (projects are listed as usual)",
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
        "token-secret-withheld",
        None,
        "organization and agent token creates answer no secret (`token` null)",
    ),
    info(
        "no-pagination-links",
        None,
        "lists carry no `links` (their paging is said by meta.pagination alone)",
    ),
    info(
        "show-relinks",
        None,
        "a single resource's GET answers its to-one relationships pointing at another id",
    ),
    info(
        "lists-newest-first",
        None,
        "the API's lists answer their items newest first",
    ),
    info(
        "list-filters-ignored",
        None,
        "the API's lists ignore their name filters (`q`, `q[name]`, `search[name]`, `search[version]`, `filter[names]`, `filter[version]`): the whole list answers",
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
    info(
        "plan-errors-at-once",
        None,
        "a run is answered pending (discardable) by its create, and its plan has failed before any read (a server with no engine to download)",
    ),
    info(
        "router-text-404",
        None,
        "a route not served answers a router's bare text `404 page not found` (Go's net/http); a handler's 404 stays an error document",
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
        "create-answer-flipped",
        None,
        "a create's answer negates every boolean attribute, while the resource holds what was sent (an answer that is not what was stored)",
    ),
    info(
        "unknown-id-500",
        None,
        "a GET of an unknown or deleted resource answers 500 instead of 404 (an id parser that raises)",
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
        "configuration-download-wrong-bytes",
        None,
        "GET /configuration-versions/:id/download answers half of the uploaded bytes",
    ),
    info(
        "version-delete-noop",
        None,
        "a registry module version's delete (both forms) answers 204 and keeps the version",
    ),
    info(
        "tag-workspaces-noop",
        None,
        "POST /tags/:id/relationships/workspaces answers 204 and tags no workspace (tagging through the workspace still works)",
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
        "registry-search-query-400",
        None,
        "the registry's search answers 400 to the spec's `query` and reads only `q` (as a TFE that knows only `q` may)",
    ),
    info(
        "registry-search-refused",
        None,
        "the registry's search answers 400 whether the text is in `query` or in `q`",
    ),
    info(
        "registry-source-zip",
        None,
        "registry downloads point X-Terraform-Get at a zip archive of the module (`?archive=zip`: the files of the uploaded gzip tarball, packed again), not the gzip tarball uploaded: a source the module registry protocol allows",
    ),
    info(
        "registry-archive-truncated",
        None,
        "the archive a registry download points at answers the first half of the uploaded gzip tarball (a stream cut short, with its Content-Length): terraform could not decompress it",
    ),
    info(
        "registry-archive-not-tar",
        None,
        "the archive a registry download points at answers a whole gzip stream that holds a line of text, no tar: terraform could not unpack it",
    ),
    info(
        "registry-archive-empty-tar",
        None,
        "the archive a registry download points at answers a whole gzip stream of an empty tar (its two zero blocks only): no file for terraform to find",
    ),
    info(
        "registry-source-git",
        None,
        "registry downloads point X-Terraform-Get at a git repository (`git::https://…?ref=…`): a source terraform's getter takes, which conform does not fetch",
    ),
    info(
        "registry-source-misnamed",
        None,
        "registry downloads name a zip archive (`?archive=zip`) but the address serves the gzip tarball",
    ),
    info(
        "registry-download-json-location",
        None,
        "registry downloads answer 200 with a JSON body `{\"location\": <source>}` instead of 204 with X-Terraform-Get: the module registry protocol's other form",
    ),
    info(
        "module-consumers-noop",
        None,
        "PATCH /admin/organizations/:name/module-consumers answers 204 but the organization's module consumers stay as they were",
    ),
    info(
        "users-without-two-factor",
        None,
        "users are made without two-factor authentication, as the users a run invites on TFE are: disable_two_factor answers 400 (tfe-api-facts 5)",
    ),
    info(
        "two-factor-disable-refused",
        None,
        "POST /admin/users/:id/actions/disable_two_factor answers 400 even for a user with two-factor enabled",
    ),
    info(
        "archive-any-version",
        None,
        "POST /configuration-versions/:id/actions/archive archives a pending version and the workspace's current one too, which TFE refuses (409)",
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
    // Behaviours go-tfe's integration tests showed (issue 29).
    info(
        "membership-email-filter-ignored",
        None,
        "GET /organizations/:organization_name/organization-memberships ignores `filter[email]`: the whole list answers",
    ),
    info(
        "membership-include-unchecked",
        None,
        "organization membership reads take any `include` name (adding nothing) instead of answering 400",
    ),
    info(
        "organization-query-name-only",
        None,
        "GET /organizations?q= matches names only, not emails",
    ),
    info(
        "organization-agent-pool-dropped",
        None,
        "PATCH /organizations/:organization_name ignores the `default-agent-pool` relationship (it stays null)",
    ),
    info(
        "tag-without-organization",
        None,
        "GET /organizations/:organization_name/tags answers tags without their `organization` relationship",
    ),
    info(
        "lock-conflict-423",
        None,
        "a lock of a workspace already locked answers 423 Locked, not TFE's 409 (some cloud-block backends)",
    ),
    info(
        "team-name-no-space",
        None,
        "team creates and updates refuse a name with a space (`foo bar`) as invalid (422)",
    ),
    info(
        "access-values-unchecked",
        None,
        "team workspace and project grants store any value of a custom permission (`runs: bogus`) instead of answering 422",
    ),
    info(
        "saml-methods-unchecked",
        None,
        "PATCH /admin/saml-settings stores any signature signing or digest method (`SHA1234`) instead of answering 422 (TFE takes SHA1 or SHA256)",
    ),
    info(
        "always-paged",
        None,
        "the notification configurations list answers `meta.pagination` and `links` even without page parameters (TFE answers it whole)",
    ),
    info(
        "run-without-events",
        None,
        "run documents carry no `run-events` relationship (GET /runs/:id/run-events still lists them)",
    ),
    info(
        "refuses-empty-type",
        None,
        "a body whose `data.type` is the empty string (what go-tfe sends for options without a JSON:API type) is answered 422",
    ),
    info(
        "token-without-creator",
        None,
        "the organization token (POST and GET /organizations/:organization_name/authentication-token) carries no `created-by` relationship",
    ),
    info(
        "nested-access-replaced",
        None,
        "PATCH /team-projects/:id replaces a nested permission object (`project-access`, `workspace-access`) with the keys sent, where TFE changes only those keys",
    ),
    info(
        "invite-without-user",
        None,
        "POST /organizations/:organization_name/organization-memberships answers the membership without its user `included`",
    ),
    info(
        "invite-stub",
        None,
        "an invitation (POST /organizations/:organization_name/organization-memberships) names a user that is never made: no read shows it",
    ),
    info(
        "rename-on-update",
        None,
        "PATCH /oauth-clients/:oauth_client_id moves the client to a new id and answers it there (as some servers do)",
    ),
    info(
        "grant-mocks-none",
        None,
        "a team's workspace access at `write` or `admin` answers `sentinel-mocks: none`, where TFE's levels read them",
    ),
];

/// The catalog of every fault the reference can inject.
pub fn fault_catalog() -> &'static [FaultInfo] {
    CATALOG
}
