//! The catalog's types: what `cases/` deserializes into.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One `cases/groups/<group>.toml` file: an endpoint group of the spec.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// snake_case group name; the first segment of every test name.
    pub group: String,
    /// The spec's heading for the group.
    pub title: String,
    /// The spec section the rows come from, cited by every check on them.
    pub spec: String,
    /// Id of an endpoint whose route proves the group is present.
    pub probe: Option<String>,
    /// Where TFE serves the group instead (the facts): a group absent at the spec's paths
    /// that answers there is no absent group.
    pub tfe_path: Option<TfePath>,
    /// The group's endpoints, in the spec's order.
    #[serde(default)]
    pub endpoints: Vec<Endpoint>,
}

/// TFE's path for a group the spec writes elsewhere.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfePath {
    /// The spec's path of the group's probe (`/admin/engine-versions`).
    pub spec: String,
    /// TFE's path of the same read, from the service root (`/api/v2/admin/terraform-versions`).
    pub tfe: String,
}

/// One method + path row of the spec.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// Stable snake_case id, unique in the group.
    pub id: String,
    /// HTTP method.
    pub method: HttpMethod,
    /// The path exactly as the spec writes it.
    pub path: String,
    /// What the endpoint does; drives the default expectation and the checks.
    pub kind: Kind,
    /// The resource kind the endpoint acts on.
    pub resource: Option<String>,
    /// What the request carries.
    #[serde(default)]
    pub body: BodyKind,
    /// Payload template under `payloads/`.
    pub payload: Option<String>,
    /// Query parameters the spec documents.
    #[serde(default)]
    pub query: Vec<QueryParam>,
    /// The spec marks the endpoint `paged`.
    #[serde(default)]
    pub paged: bool,
    /// Resource kinds made new for this test alone.
    #[serde(default)]
    pub fresh: Vec<String>,
    /// Endpoints sent first, with the same fixtures.
    #[serde(default)]
    pub before: Vec<String>,
    /// Endpoints sent afterwards to restore the state (e.g. unimpersonate after impersonate).
    #[serde(default)]
    pub after: Vec<String>,
    /// Tests naming the same lock never run at once (state the target keeps per session).
    pub lock: Option<String>,
    /// What the answer must be, beyond the kind's default.
    #[serde(default)]
    pub expect: Expect,
    /// The endpoint needs the administrator token.
    #[serde(default)]
    pub admin: bool,
    /// An update of something the run did not make (an instance-wide setting, the caller's
    /// account): these attributes are read first, sent with new values, read back, and then
    /// restored to the values read.
    pub restore: Option<Restore>,
    /// Values the user must give for this test (`notification_url`: `--notification-url`;
    /// `instance_changes`: `--allow-instance-changes`, always given against the embedded
    /// reference); without them the test is skipped with that reason.
    #[serde(default)]
    pub requires: Vec<String>,
    /// What the endpoint does that no request of the run can see (a test SMS sent, a
    /// password set to what it was): its test is sent and judged, and when nothing fails it
    /// is `skipped` with this reason, never `pass`.
    pub unobservable: Option<String>,
    /// A state the resource must reach before the request makes sense (apply needs a run
    /// awaiting confirmation): waited for within the poll budget; never reached, the test
    /// is blocked with the last state seen.
    pub precondition: Option<StateExpect>,
    /// The deprecated form of the same operation (Versioning 3).
    pub deprecated: Option<Route>,
    /// Another spelling the spec gives for the same endpoint (e.g. `agent-pool`).
    pub alias: Option<Route>,
    /// The spec's remark on the row.
    pub note: Option<String>,
    /// Path parameter -> `kind.field` overrides for this endpoint.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
}

impl Endpoint {
    /// A row no catalog file holds: `method path` of `kind` with nothing beyond it (no id,
    /// body, payload, query, set-up or expectation), for a request judged as its kind alone
    /// (`Matched::beyond_catalog`) and the fixtures' routes `conform openapi` describes.
    pub fn synthetic(method: HttpMethod, path: &str, kind: Kind) -> Self {
        Endpoint {
            id: String::new(),
            method,
            path: path.to_string(),
            kind,
            resource: None,
            body: BodyKind::None,
            payload: None,
            query: Vec::new(),
            paged: false,
            fresh: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            lock: None,
            expect: Expect::default(),
            admin: false,
            restore: None,
            requires: Vec::new(),
            unobservable: None,
            precondition: None,
            deprecated: None,
            alias: None,
            note: None,
            params: BTreeMap::new(),
        }
    }
}

/// An HTTP method, parsed when the catalog is read: a method no request can carry is an
/// error of the catalog there, never a default guessed when the request is built.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HttpMethod(reqwest::Method);

impl HttpMethod {
    /// Parses an upper-case method name.
    pub fn parse(text: &str) -> Result<Self, String> {
        const KNOWN: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
        if !KNOWN.contains(&text) {
            return Err(format!(
                "`{text}` is no HTTP method (one of {})",
                KNOWN.join(", ")
            ));
        }
        reqwest::Method::from_bytes(text.as_bytes())
            .map(HttpMethod)
            .map_err(|e| e.to_string())
    }

    /// `GET`.
    pub fn get() -> Self {
        HttpMethod(reqwest::Method::GET)
    }

    /// The method, for a request.
    pub fn method(&self) -> reqwest::Method {
        self.0.clone()
    }

    /// Its name, upper case.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl std::fmt::Display for HttpMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::ops::Deref for HttpMethod {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for HttpMethod {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for HttpMethod {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<'de> Deserialize<'de> for HttpMethod {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        HttpMethod::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A method and a path template.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// HTTP method.
    pub method: HttpMethod,
    /// Path template with `:params`.
    pub path: String,
    /// Payload template, for routes that carry a body.
    pub payload: Option<String>,
}

/// What an endpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Makes a resource and answers it.
    Create,
    /// Answers one resource.
    Show,
    /// Answers a list of resources.
    List,
    /// Changes a resource and answers it.
    Update,
    /// Removes a resource.
    Delete,
    /// Acts on a resource (run actions, archive, suspend, verify...).
    Action,
    /// Adds or removes members of a relationship.
    Relationship,
    /// Answers a JSON document that is not a JSON:API resource.
    Read,
    /// Answers bytes.
    Download,
    /// A PUT of a tarball to the upload URL.
    Upload,
}

impl Kind {
    /// True when the request changes nothing on the target.
    pub fn is_read_only(self) -> bool {
        matches!(self, Kind::Show | Kind::List | Kind::Read | Kind::Download)
    }
}

/// What a request carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BodyKind {
    /// No body.
    #[default]
    None,
    /// A JSON payload.
    Json,
    /// A tarball (uploads).
    Tarball,
}

/// A documented query parameter.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryParam {
    /// The parameter name, brackets included.
    pub name: String,
    /// Always sent.
    #[serde(default)]
    pub required: bool,
    /// A paging parameter.
    #[serde(default)]
    pub paged: bool,
    /// The value to send (placeholders allowed).
    pub value: Option<String>,
    /// A filter that narrows the list to one item the run made: the value (placeholders,
    /// `{{team.name}}`) sent when a test looks for that item in the list (`list.contains`),
    /// before it walks the whole list; the list's own request does not send it.
    pub finds: Option<String>,
    /// A filter TFE serves (`tfe.list-filter`): the list sent with this parameter alone, its
    /// value filled (`{{organization_membership.email}}`), holds the run's own item
    /// (`expect.contains`), and with `exact` only that item.
    pub narrows: Option<String>,
    /// With `narrows`: the filter names one item exactly (an email), so the answer holds
    /// nothing else.
    #[serde(default)]
    pub exact: bool,
}

/// Expectations beyond the kind's default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// A list holds this fixture kind's instance.
    pub contains: Option<String>,
    /// A show whose path does not name what it answers answers this fixture kind's instance
    /// (a workspace's current state version, where the run made its only one): its id, and
    /// what its create sent read back.
    pub shows: Option<String>,
    /// After the request, the resource shows this value at this pointer.
    pub state: Option<StateExpect>,
    /// A relationship change (TFE level: the spec shows no relationship): after it, the
    /// owner's show holds the member at the pointer (`absent`: no longer holds it, and held
    /// it before the request).
    pub linked: Option<StateExpect>,
    /// After the request, the resource is in this state as TFE documents it (TFE level: the
    /// spec names no transition): a run action's.
    pub tfe_state: Option<StateExpect>,
    /// A schema under `schemas/` the whole answer has at TFE's level (a document that is no
    /// resource: the IP ranges, the audit trail; or what a create answers beside its resource:
    /// an invite's included user).
    pub tfe_schema: Option<String>,
    /// A token: where its secret is, and what it must authenticate (TFE level).
    pub secret: Option<SecretExpect>,
    /// Status codes the TFE profile accepts, when they differ from the kind's default.
    #[serde(default)]
    pub status: Vec<u16>,
    /// Sending the same request again must be refused (the state no longer allows it).
    #[serde(default)]
    pub repeat_refused: bool,
    /// A refusal TFE documents for a state the run cannot always arrange (two-factor
    /// disabled on a user without it: 400, facts 5).
    pub refused_unless: Option<RefusedUnless>,
    /// An `include` name the resource has no relationship for: the read sent with it is
    /// answered 400 (`tfe.include-refused`, TFE level).
    pub refuses_include: Option<String>,
    /// A list TFE answers whole, without `meta.pagination`, when no page parameter is sent
    /// (`tfe.unpaginated`, TFE level: facts 0.8).
    #[serde(default)]
    pub unpaginated: bool,
}

/// An action TFE refuses unless the resource is in a state (`state`, read once before the
/// request): where the state does not hold, the documented refusal (`status`, with a TFE
/// error document) is the right answer, never a failure; where it cannot be read, such an
/// answer skips the test with the reason. Where it holds, the action must succeed. A refusal
/// that cannot be told from a missing route (404) or whose status TFE does not document
/// (`status` left out: any 4xx) judges nothing: the test is skipped with the reason.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedUnless {
    /// The status TFE documents for the refusal; none: any client error (4xx) but the
    /// answers of a missing route (404, 405).
    pub status: Option<u16>,
    /// Where TFE documents it (cited in the report).
    pub source: String,
    /// The state the action needs.
    pub state: StateExpect,
}

impl RefusedUnless {
    /// True when an answer's `status` is this refusal.
    pub fn refuses(&self, status: Option<u16>) -> bool {
        match (self.status, status) {
            (Some(documented), Some(got)) => documented == got,
            // a route that is not there is no refusal
            (None, Some(got)) => (400..500).contains(&got) && !matches!(got, 404 | 405),
            (_, None) => false,
        }
    }

    /// True when the refusal proves nothing of the endpoint: a 404 (a route that is not
    /// there answers it too) or a status TFE does not document.
    pub fn judges_nothing(&self, status: Option<u16>) -> bool {
        self.status.is_none() || status == Some(404)
    }

    /// Where the needed state does not hold, in words: `pointer` is (not) `value`.
    pub fn unmet(&self) -> String {
        let state = &self.state;
        let is = if state.absent { "is" } else { "is not" };
        format!("{} {is} {}", state.pointer, state.value)
    }
}

/// The attributes an update of something the run did not make changes and then restores:
/// read first with `show` (an endpoint id of the same group), sent with new values (the
/// payload's; for a boolean the payload leaves out, the opposite of the current one), read
/// back with `show`, and sent again with the values first read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Restore {
    /// The show endpoint that answers the current values.
    pub show: String,
    /// The attributes changed and restored.
    pub attributes: Vec<String>,
}

/// A token's secret: in the create's answer at `pointer` and nowhere later (a show answers it
/// null or empty); `reads`, a path (placeholders from the test's resources), is a GET the token
/// authenticates, and no longer does after the token's delete.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretExpect {
    /// JSON pointer to the secret in the create's answer (and in a show's).
    pub pointer: String,
    /// A read the token is meant for.
    pub reads: Option<String>,
}

/// A state the resource must be in after the request.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateExpect {
    /// JSON pointer into the show answer.
    pub pointer: String,
    /// The value expected there.
    pub value: serde_json::Value,
    /// The endpoint (`group::id`) that shows the resource.
    pub show: String,
    /// A read at another path than the `show` endpoint's, for a state only a read the spec
    /// does not list shows (TFE's `GET …/relationships/module-consumers`, facts 5): a GET of
    /// this path (the same parameters as `show`'s, the same token) stands for the show.
    #[serde(default)]
    pub path: Option<String>,
    /// Query parameters sent with the show (placeholders allowed), e.g. to narrow a list.
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// When the show is a list: the id (placeholders allowed) of the item the pointer applies to.
    #[serde(default)]
    pub item: Option<String>,
    /// The value must no longer be there (a removal); the show must still succeed.
    #[serde(default)]
    pub absent: bool,
    /// With `absent`: a show that answers 404 counts too, for an owner that goes with its
    /// last member (deleting a module's last version removes the module, facts 2.15).
    #[serde(default)]
    pub or_gone: bool,
    /// Other values that hold as well (the states a run may be in once an action took it on).
    #[serde(default)]
    pub or: Vec<serde_json::Value>,
    /// The value TFE itself answers where the spec names `value` (the facts): once seen it is
    /// final, so the wait ends, and the finding says that here TFE and the spec disagree.
    #[serde(default)]
    pub tfe_answers: Option<serde_json::Value>,
    /// Values after which the state is never reached (a run that has ended never becomes
    /// confirmable): once the show answers one, waiting changes nothing, so the wait ends.
    #[serde(default)]
    pub ends: Option<Ends>,
}

/// The values at `pointer` of a show that end a wait for a state ([`StateExpect::ends`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ends {
    /// JSON pointer into the show answer (`/data/attributes/status`).
    pub pointer: String,
    /// The final values (a run `errored`, `discarded`, `applied`, ...).
    pub values: Vec<serde_json::Value>,
}

/// `cases/resources.toml`: the resource graph.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceGraph {
    /// Path parameter -> `kind.field` or `=literal`.
    pub params: BTreeMap<String, String>,
    /// Resource kinds by name.
    pub resources: BTreeMap<String, ResourceDef>,
}

/// How one kind of resource is made, found and torn down.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceDef {
    /// Kinds that must exist first.
    #[serde(default)]
    pub parents: Vec<String>,
    /// The values TFE documents for attributes a create leaves out (facts section 2): what a
    /// create answers for them when it was not sent them (`tfe.create-defaults`).
    #[serde(default)]
    pub defaults: serde_json::Map<String, serde_json::Value>,
    /// Attributes a create or update may leave out of its answer or answer null: secrets TFE
    /// never shows again (facts 6.9), not asked of `tfe.read-back`'s echo.
    #[serde(default)]
    pub write_only: Vec<String>,
    /// The request that makes it.
    pub create: Option<Route>,
    /// The request that removes it at the end of the run.
    pub delete: Option<Route>,
    /// Its own show, where the spec shows none but TFE documents one (facts section 2: a
    /// workspace by id): whether it exists is asked here, never of an administrator route.
    pub show: Option<Route>,
    /// JSON pointers into the create answer, by field name (`id` defaults to `/data/id`).
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    /// Where the create path comes from when the spec does not show it (`tfe`).
    pub source: Option<String>,
    /// Read from another resource's document.
    pub from: Option<FromDef>,
    /// Taken from a list.
    pub find: Option<FindDef>,
    /// Only through `--fixture kind=id`.
    #[serde(default)]
    pub fixture: bool,
    /// The caller's own (its account's user): found, never made or removed; a body may name
    /// it, as a resource the user gave, and nothing changes it.
    #[serde(default)]
    pub caller: bool,
    /// A separate instance of another kind.
    pub same_as: Option<String>,
    /// Requests sent before the create, with the same fixtures (e.g. TFE's workspace lock
    /// before a state version); an answer of 409 (already in that state) counts as done.
    #[serde(default)]
    pub before: Vec<Route>,
    /// The parents its create (or its `before` requests) changes: a state version locks its
    /// workspace and becomes its state, a run holds its workspace's lock while it waits. A
    /// given instance of these (`--fixture`, `--organization`) is read-only, so a test that
    /// makes one of this kind makes its own parent instead.
    #[serde(default)]
    pub changes: Vec<String>,
    /// A request sent after the create (e.g. an upload), with the same fixtures.
    #[serde(default)]
    pub after: Vec<Route>,
    /// Resources the create brings into being that outlive this one (an invitation's user
    /// account): each is recorded, and torn down after it.
    #[serde(default)]
    pub leaves: Vec<Leaves>,
    /// Requests that give back what the run holds at its end, where the resource is (or lives
    /// in) a `--scratch` resource the run may change but does not delete: a run is discarded,
    /// else cancelled; the workspace unlocked, else force-unlocked. Tried in order until one
    /// is taken; `:id` is the resource's id.
    #[serde(default)]
    pub release: Vec<Route>,
}

/// A resource a create brings into being besides the one it answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Leaves {
    /// Its kind.
    pub kind: String,
    /// JSON pointer to its id in the create answer.
    pub pointer: String,
    /// The request that deletes it; `:id` is its id.
    pub delete: Route,
}

/// A resource read from another resource's document.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FromDef {
    /// The kind whose document holds it.
    pub resource: String,
    /// JSON pointer to the id.
    pub pointer: String,
}

/// A resource taken from a list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindDef {
    /// HTTP method (GET).
    pub method: HttpMethod,
    /// The list's path template (or a single document's, such as the account's: its one
    /// resource is the only item).
    pub path: String,
    /// `first`, or `match` with `pointer` and `equals`.
    #[serde(default = "default_pick")]
    pub pick: String,
    /// JSON pointer into each item, for `pick = "match"`.
    pub pointer: Option<String>,
    /// The value (placeholders allowed) the item must have there.
    pub equals: Option<String>,
}

fn default_pick() -> String {
    "first".to_string()
}

/// `cases/refuse.toml`: input that must be refused (tfe-api-facts 0.2, 1.3).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefuseFile {
    /// The cases, in file order.
    #[serde(default)]
    pub refuse: Vec<Refusal>,
}

/// One request that must be refused: sent by the test of `endpoint` (both its path forms),
/// after that test's own request succeeded, with its fixtures.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    /// The endpoint (`group::id`) whose test sends it.
    pub endpoint: String,
    /// What is wrong with it; names the check that judges it.
    pub what: RefuseKind,
    /// HTTP method (default: the endpoint's).
    pub method: Option<HttpMethod>,
    /// Path template without `/api/v2` (default: the endpoint's); `:params` come from the
    /// test's fixtures.
    pub path: Option<String>,
    /// The body, sent byte for byte after its placeholders are filled in (`{{refused}}`: a
    /// name unique to this case, with the run's prefix; the usual `{{prefix}}`, `{{unique}}`,
    /// `{{kind.field}}`). It need not be JSON.
    pub body: String,
    /// The Content-Type sent (default `application/vnd.api+json`).
    pub content_type: Option<String>,
    /// The statuses that count as refused (default: those the facts name for `what`).
    #[serde(default)]
    pub status: Vec<u16>,
    /// A path that must not answer success afterwards (what a create would have made).
    pub absent: Option<String>,
    /// The resource kind a wrongly accepted create makes, so that teardown deletes it.
    pub kind: Option<String>,
    /// A value that must be the same before and after (what an update would have changed).
    pub unchanged: Option<Unchanged>,
    /// Why this case, for the report.
    pub note: Option<String>,
}

/// `cases/accept.toml`: input TFE takes although a stricter reading would refuse it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptFile {
    /// The cases, in file order.
    #[serde(default)]
    pub accept: Vec<Acceptance>,
}

/// One request TFE takes: sent by the test of `endpoint` (both its path forms), after that
/// test's own request succeeded, with its fixtures; then a show proves what it set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Acceptance {
    /// The endpoint (`group::id`) whose test sends it, with the endpoint's method and path.
    pub endpoint: String,
    /// The body, its placeholders filled in (`{{accepted}}`: a name unique to this case, with
    /// the run's prefix; the usual `{{prefix}}`, `{{kind.field}}`).
    pub body: String,
    /// The show afterwards: its path template, the JSON pointer read and the value it must
    /// hold (`{{accepted}}` as in the body; `{{answer}}`: the `data.id` the request answered).
    pub then: AcceptedShow,
    /// Where TFE is seen to take it (the facts or go-tfe), for the report.
    pub note: String,
}

/// What a show holds after input TFE took.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptedShow {
    /// The path template of the show.
    pub show: String,
    /// The JSON pointer into the show's answer.
    pub pointer: String,
    /// The value it holds.
    pub value: String,
}

/// A value read before and after a refused request.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unchanged {
    /// The path template of the show.
    pub show: String,
    /// The JSON pointer into the show's answer.
    pub pointer: String,
}

/// What makes a request one that must be refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefuseKind {
    /// An attribute of the wrong JSON type.
    WrongType,
    /// A `data.type` the endpoint does not take.
    UnknownType,
    /// A required attribute left out.
    MissingAttribute,
    /// A body that is not JSON.
    MalformedJson,
    /// A body sent with a media type that is not JSON.
    MediaType,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_parsed_when_read() {
        let route: Route = toml::from_str("method = \"PATCH\"\npath = \"/x\"").unwrap();
        assert_eq!(route.method.method(), reqwest::Method::PATCH);
        assert!(route.method == "PATCH");
        let wrong = toml::from_str::<Route>("method = \"FETCH\"\npath = \"/x\"").unwrap_err();
        assert!(
            wrong.to_string().contains("`FETCH` is no HTTP method"),
            "{wrong}"
        );
        assert!(HttpMethod::parse("get").is_err());
    }
}
