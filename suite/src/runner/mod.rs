//! Runs one test: resolve fixtures, send the request of the endpoint's variant, run the
//! checks that apply to its kind, and turn findings into a verdict.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::catalog::{path_for, BodyKind, Catalog, Endpoint, Kind, TestCase, Variant};
use crate::checks::{self as c, Check, Finding, Schemas};
use crate::fixtures::{auth_for, FixtureError, Fixtures, Scope};
use crate::pages::{Paging, Walk};
use crate::target::{Auth, Body, Exchange, Request, Target};
use crate::verdict::{Blocker, Profile, TestResult, Verdict};

mod refusals;
mod registry;

/// Pages a walk reads at most.
const MAX_PAGES: usize = 50;

/// What every test shares.
pub struct Context {
    /// The target.
    pub target: Arc<Target>,
    /// The catalog.
    pub catalog: Arc<Catalog>,
    /// Compiled schemas.
    pub schemas: Arc<Schemas>,
    /// The run's fixtures.
    pub fixtures: Arc<Fixtures>,
    /// Which levels fail the run.
    pub profile: Profile,
    /// Groups whose absence is a failure (`--require`).
    pub require: BTreeSet<String>,
    /// Time budget for eventually-consistent state.
    pub poll_budget: Duration,
    probes: Mutex<HashMap<String, Arc<OnceCell<Option<Exchange>>>>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Context {
    /// A context for one run.
    pub fn new(
        target: Arc<Target>,
        catalog: Arc<Catalog>,
        schemas: Arc<Schemas>,
        fixtures: Arc<Fixtures>,
        profile: Profile,
        require: BTreeSet<String>,
    ) -> Self {
        Self {
            target,
            catalog,
            schemas,
            fixtures,
            profile,
            require,
            poll_budget: Duration::from_secs(10),
            probes: Mutex::new(HashMap::new()),
            locks: Mutex::new(HashMap::new()),
        }
    }

    /// Runs one test to its result. Never panics on target behaviour.
    pub async fn run(&self, case: &TestCase) -> TestResult {
        let started = Instant::now();
        let lock = case.endpoint.lock.as_ref().and_then(|name| {
            let mut locks = self.locks.lock().ok()?;
            Some(locks.entry(name.clone()).or_default().clone())
        });
        let _guard = match &lock {
            Some(lock) => Some(lock.lock().await),
            None => None,
        };
        let mut run = TestRun::new(self, case);
        let outcome = run.execute().await;
        run.finish(outcome, started.elapsed())
    }

    /// True when the `require`d set names the group (or `all`).
    fn required(&self, group: &str) -> bool {
        self.require.contains(group) || self.require.contains("all")
    }

    /// Probes a group: `None` when some variant of its probe endpoint has a route, else
    /// the exchange that shows it missing.
    async fn group_missing(&self, group: &str) -> Option<Exchange> {
        let cell = {
            let mut probes = self.probes.lock().ok()?;
            probes.entry(group.to_string()).or_default().clone()
        };
        cell.get_or_init(|| self.probe(group)).await.clone()
    }

    /// A group is missing when none of its read endpoints has a route, on any path variant,
    /// and at least one of them shows it. The group's `probe` is tried first. A read whose
    /// fixture's create route of this group is absent counts as absent; a read that cannot be
    /// tried for another reason counts neither way; with no read tried the group counts as
    /// present (its tests are then blocked or fail, never hidden as unsupported).
    async fn probe(&self, group: &str) -> Option<Exchange> {
        let g = self.catalog.groups.iter().find(|g| g.group == group)?;
        let mut reads: Vec<&Endpoint> = g.endpoints.iter().filter(|e| e.method == "GET").collect();
        reads.sort_by_key(|e| Some(&e.id) != g.probe.as_ref());
        let mut last = None;
        for endpoint in reads {
            let mut scope = Scope::default();
            let kinds = self
                .fixtures
                .kinds_in(&endpoint.path, &[], Some(endpoint), None)
                .ok()?;
            match self
                .fixtures
                .resolve_all(&kinds, &BTreeSet::new(), &mut scope)
                .await
            {
                Ok(()) => {}
                // The read needs a resource of this group whose create route is absent too:
                // more evidence that the group is absent, not a reason to call it present.
                Err(FixtureError::Failed {
                    exchange: Some(ex), ..
                }) if c::route_exists(&ex).is_err() && self.judged_in(group, &ex) => {
                    last = Some(*ex);
                    continue;
                }
                // A read that cannot be tried for another reason proves nothing either way:
                // the group's other reads decide.
                Err(_) => continue,
            }
            let variants: &[Variant] = if endpoint.path.starts_with(crate::catalog::REGISTRY) {
                &[Variant::Registry]
            } else {
                &[Variant::Bare, Variant::ApiV2]
            };
            for variant in variants {
                let template = match variant {
                    Variant::Registry => endpoint
                        .path
                        .trim_start_matches(crate::catalog::REGISTRY)
                        .to_string(),
                    v => path_for(&endpoint.path, *v),
                };
                let path = self
                    .fixtures
                    .fill_path(&template, &scope, Some(endpoint), None)
                    .ok()?;
                let url = if *variant == Variant::Registry {
                    self.target.registry_url(&path)
                } else {
                    self.target.url(&path)
                };
                let ex = self
                    .target
                    .send(Request::new(Method::GET, url, auth_for(&path)))
                    .await;
                if c::route_exists(&ex).is_ok() && ex.response.is_ok() {
                    return None;
                }
                last = Some(ex);
            }
        }
        last
    }
}

impl Context {
    /// The test that judges an exchange's request (see [`Catalog::test_for`]).
    pub fn test_for(&self, ex: &Exchange) -> Option<String> {
        let path = self.relative_path(ex);
        self.catalog.test_for(&ex.request.method, &path)
    }

    /// True when the exchange's request is judged by a test of `group`.
    fn judged_in(&self, group: &str, ex: &Exchange) -> bool {
        self.test_for(ex)
            .is_some_and(|t| t.starts_with(&format!("{group}::")))
    }

    /// The URL path of an exchange relative to the service root.
    fn relative_path(&self, ex: &Exchange) -> String {
        let path = url::Url::parse(&ex.request.url)
            .map(|u| u.path().to_string())
            .unwrap_or_default();
        let root = self.target.config.root.path().trim_end_matches('/');
        path.strip_prefix(root).unwrap_or(&path).to_string()
    }

    /// Why a test is blocked by a failed exchange: what it needed, the request, the answer
    /// and the test that judges that request (for an upload, the kind's upload test).
    pub fn blocker(&self, needed: String, ex: &Exchange, kind: Option<&str>) -> Blocker {
        let path = self.relative_path(ex);
        let see = self.test_for(ex).or_else(|| {
            kind.filter(|_| ex.request.method == "PUT")
                .and_then(|k| self.catalog.upload_test_of(k))
        });
        Blocker {
            needed,
            request: format!("{} {path}", ex.request.method),
            answer: match &ex.response {
                Ok(r) => r.status.to_string(),
                Err(e) => e.to_string(),
            },
            see,
        }
    }
}

/// Turns a failed result into an `error` when a failing finding rests on an exchange that
/// cannot judge the target (throttled or refused by conform itself); for results made outside [`Context::run`]
/// (sequences).
pub fn not_judged(result: &mut TestResult, profile: Profile) {
    if result.verdict != Verdict::Fail {
        return;
    }
    let why = result
        .findings
        .iter()
        .filter(|f| profile.fails_on(f.check.level))
        .filter_map(|f| f.exchange.and_then(|i| result.exchanges.get(i)))
        .find_map(unjudgeable);
    if let Some(why) = why {
        result.verdict = Verdict::Error;
        result.reason = Some(why);
    }
}

/// Why an exchange cannot judge the target: conform refused to send it, or the target kept
/// rate-limiting it.
fn unjudgeable(ex: &Exchange) -> Option<String> {
    match &ex.response {
        Err(e @ crate::target::TransportError::Refused(_)) => Some(e.to_string()),
        Ok(r) if r.status == 429 => Some(format!(
            "{} {}: the target still answered 429 Too Many Requests after conform waited as asked (bounded retries{}); the test could not run",
            ex.request.method,
            ex.request.url,
            ex.header("retry-after")
                .map(|v| format!(", Retry-After: {v}"))
                .unwrap_or_default()
        )),
        _ => None,
    }
}

enum Outcome {
    /// The checks ran: the findings decide.
    Done,
    Skip(String),
    Error(String),
    /// Something the test needs failed elsewhere.
    Blocked(Blocker),
    /// The endpoint's whole group is absent (the evidence is in the reason).
    Unsupported(String),
}

struct TestRun<'a> {
    ctx: &'a Context,
    case: &'a TestCase,
    endpoint: &'a Endpoint,
    scope: Scope,
    fresh: BTreeSet<String>,
    exchanges: Vec<Exchange>,
    findings: Vec<Finding>,
    passed: BTreeSet<&'static str>,
    /// The body of an update that sends current values back (`echo`).
    echoed: Option<Value>,
    /// Said in the result's reason besides the checks (a registry source not followed).
    notes: Vec<String>,
}

impl<'a> TestRun<'a> {
    fn new(ctx: &'a Context, case: &'a TestCase) -> Self {
        let mut fresh: BTreeSet<String> = case.endpoint.fresh.iter().cloned().collect();
        // A test that changes its resource gets its own, so that no other test reads a
        // resource while it changes.
        if let Some(resource) = &case.endpoint.resource {
            let mutates = matches!(
                case.endpoint.kind,
                Kind::Update | Kind::Delete | Kind::Action | Kind::Relationship
            );
            if mutates && ctx.fixtures.is_creatable(resource) {
                fresh.insert(resource.clone());
            }
        }
        ctx.fixtures.expand_fresh(&mut fresh);
        Self {
            ctx,
            case,
            endpoint: &case.endpoint,
            scope: Scope::default(),
            fresh,
            exchanges: Vec::new(),
            findings: Vec::new(),
            passed: BTreeSet::new(),
            echoed: None,
            notes: Vec::new(),
        }
    }

    fn finish(self, outcome: Outcome, duration: Duration) -> TestResult {
        let profile = self.ctx.profile;
        let mut blocked_by = None;
        let (verdict, reason) = match outcome {
            Outcome::Skip(why) => (Verdict::Skipped, Some(why)),
            Outcome::Error(why) => (Verdict::Error, Some(why)),
            Outcome::Blocked(blocker) => {
                let line = blocker.line();
                blocked_by = Some(blocker);
                (Verdict::Blocked, Some(line))
            }
            Outcome::Unsupported(why) if !self.ctx.required(&self.case.group) => {
                (Verdict::Unsupported, Some(why))
            }
            Outcome::Unsupported(why) => (
                Verdict::Fail,
                Some(format!("{why} (the group is required)")),
            ),
            Outcome::Done => {
                let failing: Vec<&Finding> = self
                    .findings
                    .iter()
                    .filter(|f| profile.fails_on(f.check.level))
                    .collect();
                // A request conform refused, or one the target would not serve for rate
                // limiting, says nothing about conformance.
                let blocked = failing
                    .iter()
                    .filter_map(|f| f.exchange.and_then(|i| self.exchanges.get(i)))
                    .find_map(unjudgeable);
                let notes = (!self.notes.is_empty()).then(|| self.notes.join("; "));
                match (failing.is_empty(), blocked) {
                    (true, _) => (Verdict::Pass, notes),
                    (false, Some(why)) => (Verdict::Error, Some(why)),
                    (false, None) => (Verdict::Fail, notes),
                }
            }
        };
        let result = TestResult {
            name: self.case.name.clone(),
            group: self.case.group.clone(),
            verdict,
            reason,
            findings: self.findings,
            passed: self.passed.into_iter().collect(),
            requests: self.exchanges.len(),
            exchanges: self.exchanges,
            duration,
            blocked_by,
        };
        result.keep_evidence()
    }

    /// Records a check's result; true when it passed.
    fn check(
        &mut self,
        check: &'static Check,
        exchange: Option<usize>,
        result: Result<(), String>,
    ) -> bool {
        c::record(
            &mut self.findings,
            &mut self.passed,
            check,
            exchange,
            result,
        )
    }

    async fn send(&mut self, request: Request) -> usize {
        let ex = self.ctx.target.send(request).await;
        self.exchanges.push(ex);
        self.exchanges.len() - 1
    }

    fn ex(&self, index: usize) -> &Exchange {
        &self.exchanges[index]
    }

    fn url_for(&self, path: &str) -> url::Url {
        match self.case.variant {
            Variant::Registry => self.ctx.target.registry_url(path),
            _ => self.ctx.target.url(path),
        }
    }

    /// The path template of another endpoint under the same prefix choice as this test.
    fn sibling_path(&self, endpoint: &Endpoint) -> String {
        if let Some(rest) = endpoint.path.strip_prefix(crate::catalog::REGISTRY) {
            return rest.to_string();
        }
        let prefixed = match self.case.variant {
            // an upload has no path form of its own: its reads use the canonical one
            Variant::Upload => !self.ctx.target.config.forms.canonical().is_empty(),
            v => v.has_prefix(),
        };
        let variant = if prefixed {
            Variant::ApiV2
        } else {
            Variant::Bare
        };
        path_for(&endpoint.path, variant)
    }

    /// The URL of another endpoint in the target's canonical path form (registry endpoints
    /// under the registry address), with the filled path.
    fn canonical_url(&self, endpoint: &Endpoint) -> Result<(url::Url, String), String> {
        let template = match endpoint.path.strip_prefix(crate::catalog::REGISTRY) {
            Some(rest) => rest.to_string(),
            None => path_for(&endpoint.path, Variant::Bare),
        };
        let filled = self
            .ctx
            .fixtures
            .fill_path(&template, &self.scope, Some(endpoint), None)
            .map_err(|e| e.to_string())?;
        let url = if endpoint.path.starts_with(crate::catalog::REGISTRY) {
            self.ctx.target.registry_url(&filled)
        } else {
            self.ctx.target.api_url(&filled)
        };
        Ok((url, filled))
    }

    fn sibling_url(&self, endpoint: &Endpoint, path: &str) -> url::Url {
        if endpoint.path.starts_with(crate::catalog::REGISTRY) {
            self.ctx.target.registry_url(path)
        } else {
            self.ctx.target.url(path)
        }
    }

    /// The outcome of a fixture that could not be had: skipped when the API cannot make it,
    /// `unsupported` when its create route is absent along with the whole of this test's
    /// group, else `blocked` by the request that failed (judged at its own test).
    async fn fixture_outcome(&mut self, error: FixtureError) -> Outcome {
        match error {
            FixtureError::Unavailable(why) => Outcome::Skip(why),
            FixtureError::Catalog(why) => Outcome::Error(format!("catalog: {why}")),
            FixtureError::Failed {
                kind,
                message,
                exchange: None,
            } => Outcome::Blocked(Blocker {
                needed: format!("the `{kind}` fixture"),
                request: format!("making the `{kind}`"),
                answer: message,
                see: None,
            }),
            FixtureError::Failed {
                kind,
                exchange: Some(ex),
                ..
            } => {
                if let Some(why) = unjudgeable(&ex) {
                    self.exchanges.push(*ex);
                    return Outcome::Error(format!("could not make the `{kind}` fixture: {why}"));
                }
                let route_missing = c::route_exists(&ex).is_err();
                let blocker = self
                    .ctx
                    .blocker(format!("the `{kind}` fixture"), &ex, Some(&kind));
                self.exchanges.push(*ex);
                // The test's own group may be absent as a whole: then it is unsupported, as
                // every test of that group, rather than blocked.
                if route_missing {
                    if let Some(why) = self.group_absent().await {
                        return Outcome::Unsupported(why);
                    }
                }
                Outcome::Blocked(blocker)
            }
        }
    }

    async fn execute(&mut self) -> Outcome {
        let e = self.endpoint;
        if e.admin && self.ctx.target.config.admin_token.is_none() {
            return Outcome::Skip("administrator endpoint: needs --admin-token".into());
        }
        if let Some(missing) = e.requires.iter().find(|r| !self.ctx.fixtures.is_given(r)) {
            let flag = format!("--{}", missing.replace('_', "-"));
            return Outcome::Skip(format!(
                "needs {flag} URL: a destination of yours the target will call (conform never points it at a third party)"
            ));
        }
        if self.case.variant == Variant::Upload {
            return self.upload().await;
        }
        if let Err(error) = self.prepare().await {
            return self.fixture_outcome(error).await;
        }
        for before in e.before.clone() {
            if let Err(outcome) = self.before_step(&before).await {
                return outcome;
            }
        }
        if let Err(outcome) = self.precondition().await {
            return outcome;
        }
        if let Err(outcome) = self.echo().await {
            return outcome;
        }
        if let (Kind::Create, Some(kind)) = (e.kind, e.resource.as_deref()) {
            // The created kind's own preconditions (e.g. TFE's workspace lock).
            match self.ctx.fixtures.before_create(kind, &self.scope).await {
                Ok(sent) => self.exchanges.extend(sent),
                Err((why, None)) => {
                    return Outcome::Error(format!("{why}, so this test could not run"));
                }
                Err((_, Some(ex))) => {
                    let needed = format!("the request sent before a `{kind}` is created");
                    let blocker = self.ctx.blocker(needed, &ex, None);
                    self.exchanges.push(ex);
                    return Outcome::Blocked(blocker);
                }
            }
        }
        let request = match self.main_request(&self.case.path, &self.case.method, true) {
            Ok(r) => r,
            Err(e) => return self.fixture_outcome(e).await,
        };
        let main = self.send(request).await;
        if !self.ex(main).is_success() {
            self.undo_set_up().await;
        }
        if self.ex(main).response.is_ok() && c::route_exists(self.ex(main)).is_err() {
            // A 404 may mean that a resource the path names is not found, not that the route
            // is absent: then the test is blocked by that resource, judged at its create.
            if let Some(blocker) = self.named_resource_missing().await {
                return Outcome::Blocked(blocker);
            }
            let result = c::route_exists(self.ex(main));
            // A spelling the spec only mentions is reported, not required at core.
            let check = match self.case.variant {
                Variant::Alias | Variant::AliasApiV2 => &c::ALIAS_EXISTS,
                _ => &c::ENDPOINT_EXISTS,
            };
            self.check(check, Some(main), result);
            return match self.group_absent().await {
                Some(why) => Outcome::Unsupported(why),
                None => Outcome::Done,
            };
        }
        self.passed.insert(c::ENDPOINT_EXISTS.id);
        let result = c::no_server_error(self.ex(main));
        self.check(&c::NO_SERVER_ERROR, Some(main), result);
        let success = self.ex(main).is_success()
            || (e.kind == Kind::Download
                && self
                    .ex(main)
                    .status()
                    .is_some_and(|s| (300..400).contains(&s)));
        let result = if success {
            Ok(())
        } else {
            c::succeeds(self.ex(main))
        };
        if !self.check(&c::ENDPOINT_SUCCEEDS, Some(main), result) {
            return Outcome::Done;
        }
        if let Some(status) = c::tfe_status(self.ex(main), e.kind, &e.expect.status) {
            self.check(&c::TFE_STATUS, Some(main), status);
        }
        match e.kind {
            Kind::Create => self.after_create(main).await,
            Kind::Show => self.after_show(main).await,
            Kind::List => self.after_list(main).await,
            Kind::Update => self.after_update(main).await,
            Kind::Delete => self.after_delete(main).await,
            Kind::Action | Kind::Relationship => self.after_action(main).await,
            Kind::Read => self.after_read(main).await,
            Kind::Download => self.after_download(main).await,
            Kind::Upload => {}
        }
        self.refusals().await;
        for after in e.after.clone() {
            if let Err(outcome) = self.before_step(&after).await {
                return match outcome {
                    Outcome::Blocked(b) => Outcome::Error(format!(
                        "restoring the state after the test: {} answered {}",
                        b.request, b.answer
                    )),
                    other => other,
                };
            }
        }
        Outcome::Done
    }

    /// `Some(evidence)` when the target lacks this test's whole group (its probe answered
    /// no route on any path form); the probe's exchange joins the test's.
    async fn group_absent(&mut self) -> Option<String> {
        let evidence = self.ctx.group_missing(&self.case.group).await?;
        let status = evidence
            .status()
            .map(|s| s.to_string())
            .unwrap_or_else(|| "no answer".into());
        let line = format!("{} {}", evidence.request.method, evidence.request.url);
        self.exchanges.push(evidence);
        Some(format!(
            "the target lacks the `{}` group: its probe {line} answered {status} on every path variant",
            self.case.group
        ))
    }

    async fn prepare(&mut self) -> Result<(), FixtureError> {
        let e = self.endpoint;
        let payload = e
            .payload
            .as_deref()
            .and_then(|p| self.ctx.catalog.payload(p))
            .unwrap_or("");
        let query_values: Vec<&str> = e.query.iter().filter_map(|q| q.value.as_deref()).collect();
        let mut texts = vec![payload];
        texts.extend(query_values);
        let mut kinds = self
            .ctx
            .fixtures
            .kinds_in(&self.case.path, &texts, Some(e), None)?;
        if e.kind == Kind::Create {
            // The created kind is this test's own product, not a fixture.
            if let Some(resource) = &e.resource {
                kinds.retain(|k| k != resource);
            }
        } else if let Some(resource) = &e.resource {
            kinds.push(resource.clone());
        }
        kinds.extend(e.expect.contains.iter().cloned());
        for before in &e.before {
            if let Some((_, b)) = self.ctx.catalog.endpoint(before, &self.case.group) {
                let payload = b
                    .payload
                    .as_deref()
                    .and_then(|p| self.ctx.catalog.payload(p))
                    .unwrap_or("");
                kinds.extend(
                    self.ctx
                        .fixtures
                        .kinds_in(&b.path, &[payload], Some(b), None)?,
                );
            }
        }
        let mut seen = BTreeSet::new();
        kinds.retain(|k| seen.insert(k.clone()));
        // Fresh kinds first, so that what depends on them is made for this test as well.
        kinds.sort_by_key(|k| !self.fresh.contains(k));
        let fresh = self.fresh.clone();
        self.ctx
            .fixtures
            .resolve_all(&kinds, &fresh, &mut self.scope)
            .await
    }

    fn main_request(
        &self,
        template: &str,
        method: &str,
        with_required_query: bool,
    ) -> Result<Request, FixtureError> {
        let e = self.endpoint;
        let fixtures = &self.ctx.fixtures;
        let path = fixtures.fill_path(template, &self.scope, Some(e), None)?;
        let mut url = self.url_for(&path);
        {
            let mut pairs = Vec::new();
            for q in &e.query {
                if let Some(value) = &q.value {
                    if q.required && !with_required_query {
                        continue;
                    }
                    pairs.push((q.name.clone(), fixtures.fill_text(value, &self.scope)?));
                }
            }
            if !pairs.is_empty() {
                url.query_pairs_mut().extend_pairs(pairs);
            }
        }
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
        let mut request = Request::new(method, url, auth_for(&path));
        if e.body == BodyKind::Json {
            let mut body = match &e.payload {
                Some(p) => fixtures.payload(p, &self.scope)?,
                None => serde_json::json!({}),
            };
            if let (Some(attributes), Some(echoed)) = (
                body.pointer_mut("/data/attributes")
                    .and_then(Value::as_object_mut),
                self.echoed.as_ref().and_then(Value::as_object),
            ) {
                attributes.extend(echoed.clone());
            }
            request = request.with_body(Body::Json(body));
        }
        Ok(request)
    }

    /// Sends a set-up (or restore) step; a step that fails blocks the test.
    async fn before_step(&mut self, reference: &str) -> Result<(), Outcome> {
        let Some((_, before)) = self.ctx.catalog.endpoint(reference, &self.case.group) else {
            return Err(Outcome::Error(format!(
                "catalog: unknown `before` endpoint {reference}"
            )));
        };
        // Set-up and restore steps use the target's canonical path form: they are not what
        // this test judges.
        let fixtures = &self.ctx.fixtures;
        let (url, filled) = self.canonical_url(before).map_err(Outcome::Error)?;
        let method = Method::from_bytes(before.method.as_bytes()).unwrap_or(Method::POST);
        let mut request = Request::new(method, url, auth_for(&filled));
        if before.body == BodyKind::Json {
            let body = match &before.payload {
                Some(p) => fixtures
                    .payload(p, &self.scope)
                    .map_err(|e| Outcome::Error(e.to_string()))?,
                None => serde_json::json!({}),
            };
            request = request.with_body(Body::Json(body));
        }
        let index = self.send(request).await;
        if self.ex(index).is_success() {
            return Ok(());
        }
        if let Some(why) = unjudgeable(self.ex(index)) {
            return Err(Outcome::Error(why));
        }
        let needed = format!("its set-up step {reference}");
        let blocker = self.ctx.blocker(needed, self.ex(index), None);
        Err(self.blocked_or_absent(blocker, index).await)
    }

    /// After a main request that did not succeed: the `after` steps of the `before` endpoints,
    /// best effort, so that what the set-up changed in the target's session (an
    /// impersonation) does not outlive the test. A main request that succeeds undoes it
    /// itself, or the test's own `after` steps do.
    async fn undo_set_up(&mut self) {
        let undo: Vec<String> = self
            .endpoint
            .before
            .iter()
            .filter_map(|b| self.ctx.catalog.endpoint(b, &self.case.group))
            .flat_map(|(_, b)| b.after.clone())
            .collect();
        for step in undo {
            let _ = self.before_step(&step).await;
        }
    }

    /// Blocked by a failed request, unless that request found no route and this test's whole
    /// group is absent: then unsupported, as every test of the group.
    async fn blocked_or_absent(&mut self, blocker: Blocker, index: usize) -> Outcome {
        if c::route_exists(self.ex(index)).is_err() {
            if let Some(why) = self.group_absent().await {
                return Outcome::Unsupported(why);
            }
        }
        Outcome::Blocked(blocker)
    }

    /// The JSON document of a 2xx answer; otherwise a failure of `check`: "expected {what},
    /// received {status}".
    fn answered_document(
        &mut self,
        index: usize,
        check: &'static Check,
        what: &str,
    ) -> Option<Value> {
        let answer = c::answered_json(self.ex(index), what);
        match answer {
            Ok(doc) => Some(doc),
            Err(message) => {
                self.check(check, Some(index), Err(message));
                None
            }
        }
    }

    /// Parses the main answer as JSON (check `json.body`).
    fn json(&mut self, index: usize) -> Option<Value> {
        let body = c::json_body(self.ex(index));
        let doc = body.as_ref().ok().cloned();
        self.check(&c::JSON_BODY, Some(index), body.map(|_| ()));
        doc
    }

    /// `tfe.error-document` on an error answer the test provoked on purpose.
    fn error_document(&mut self, index: usize) {
        let result = c::tfe_error_document(&self.ctx.schemas, self.ex(index));
        self.check(&c::TFE_ERROR_DOCUMENT, Some(index), result);
    }

    fn jsonapi_media_type(&mut self, index: usize) {
        let result = c::tfe_media_type(self.ex(index));
        self.check(&c::TFE_MEDIA_TYPE, Some(index), result);
    }

    /// After a 404: a resource the path names (other than through this very endpoint) that
    /// its own show, in the canonical form, does not find either.
    async fn named_resource_missing(&mut self) -> Option<Blocker> {
        let e = self.endpoint;
        let kinds: Vec<String> = crate::fixtures::path_params(&self.case.path)
            .filter_map(|p| match self.ctx.fixtures.param_source(p, Some(e), None) {
                Ok(crate::fixtures::ParamSource::Field(kind, field)) if field == "id" => Some(kind),
                _ => None,
            })
            .collect();
        for kind in kinds {
            let Some((_, show)) = self.ctx.catalog.show_of(&kind) else {
                continue;
            };
            let same_route = show.method == e.method
                && path_for(&show.path, Variant::Bare) == path_for(&e.path, Variant::Bare);
            if same_route {
                continue;
            }
            let show = show.clone();
            let Ok((url, filled)) = self.canonical_url(&show) else {
                continue;
            };
            let index = self
                .send(Request::new(Method::GET, url, auth_for(&filled)))
                .await;
            if self.ex(index).status() == Some(404) {
                let id = self
                    .scope
                    .get(&kind)
                    .map(|i| i.id.clone())
                    .unwrap_or_default();
                let mut blocker = self.ctx.blocker(
                    format!("the `{kind}` {id} its path names, which is not found"),
                    self.ex(index),
                    None,
                );
                let prefixed = !self.ctx.target.config.forms.canonical().is_empty();
                blocker.see = self.ctx.catalog.create_test_of(&kind, prefixed);
                return Some(blocker);
            }
        }
        None
    }

    /// The id of the endpoint's resource when the path names it.
    fn requested_id(&self) -> Option<String> {
        let resource = self.endpoint.resource.as_deref()?;
        let names_it = crate::fixtures::path_params(&self.case.path).any(|p| {
            matches!(self.ctx.fixtures.param_source(p, Some(self.endpoint), None),
                Ok(crate::fixtures::ParamSource::Field(ref k, ref f)) if k == resource && f == "id")
        });
        if names_it {
            self.scope.get(resource).map(|i| i.id.clone())
        } else {
            None
        }
    }

    async fn after_create(&mut self, main: usize) {
        let Some(doc) = self.json(main) else { return };
        self.jsonapi_media_type(main);
        let envelope = c::envelope_single(&self.ctx.schemas, &doc);
        self.check(&c::ENVELOPE_SINGLE, Some(main), envelope);
        let id = c::lifecycle::returned_id(&doc);
        let returned = id.as_ref().map(|_| ()).map_err(Clone::clone);
        if !self.check(&c::CREATE_RETURNS_ID, Some(main), returned) {
            return;
        }
        let (Ok(id), Some(kind)) = (id, self.endpoint.resource.clone()) else {
            return;
        };
        let made = self.ctx.fixtures.instance_from(&kind, id.clone(), &doc);
        for record in self.ctx.fixtures.made_records(&kind, &made, &self.scope) {
            self.ctx.fixtures.note_made(record);
        }
        self.scope.insert(Arc::new(made));
        let check = if matches!(
            self.case.variant,
            Variant::Deprecated | Variant::DeprecatedApiV2
        ) {
            &c::DEPRECATED_SAME
        } else {
            &c::CREATE_THEN_SHOW
        };
        if let Some(index) = self.show_resource(&kind).await {
            let what = format!("the show of the created {kind}");
            let result = c::lifecycle::shows(self.ex(index), &id, &what);
            self.check(check, Some(index), result);
        }
    }

    /// Sends the show endpoint of `kind` (same prefix choice); `None` when there is none.
    async fn show_resource(&mut self, kind: &str) -> Option<usize> {
        let (_, show) = self.ctx.catalog.show_of(kind)?;
        let show = show.clone();
        let path = self.sibling_path(&show);
        let filled = self
            .ctx
            .fixtures
            .fill_path(&path, &self.scope, Some(&show), None)
            .ok()?;
        let url = self.sibling_url(&show, &filled);
        Some(
            self.send(Request::new(Method::GET, url, auth_for(&filled)))
                .await,
        )
    }

    async fn after_show(&mut self, main: usize) {
        let Some(doc) = self.single_resource(main, &c::SHOW_SAME_ID) else {
            return;
        };
        self.variants_agree(main, &doc).await;
        self.unauthorized().await;
    }

    /// The checks of an answer about one named resource (show, update): JSON, the media
    /// type, the envelope, and `same_id` when the path names the resource. Returns the document.
    fn single_resource(&mut self, main: usize, same_id: &'static Check) -> Option<Value> {
        let doc = self.json(main)?;
        self.jsonapi_media_type(main);
        let envelope = c::envelope_single(&self.ctx.schemas, &doc);
        self.check(&c::ENVELOPE_SINGLE, Some(main), envelope);
        if let Some(expected) = self.requested_id() {
            let result = c::lifecycle::same_id(&doc, &expected, "the answer");
            self.check(same_id, Some(main), result);
        }
        Some(doc)
    }

    async fn after_list(&mut self, main: usize) {
        let Some(doc) = self.json(main) else { return };
        self.jsonapi_media_type(main);
        let envelope = c::envelope_list(&self.ctx.schemas, &doc);
        if !self.check(&c::ENVELOPE_LIST, Some(main), envelope) {
            return;
        }
        if let Some(kind) = self.endpoint.expect.contains.clone() {
            if let Some(wanted) = self.scope.get(&kind).map(|i| i.id.clone()) {
                let (mut ids, mut last) = self.find_in_list(main, &doc, &wanted).await;
                if !ids.contains(&wanted) {
                    // A list that other tests change while it is walked can move an item
                    // across a page boundary: walk it once more from the start.
                    if let Ok(request) = self.main_request(&self.case.path, "GET", true) {
                        let again = self.send(request).await;
                        if let Ok(fresh_doc) = self.ex(again).json() {
                            (ids, last) = self.find_in_list(again, &fresh_doc, &wanted).await;
                        }
                    }
                }
                let result = c::lists::holds(&ids, &wanted, &kind);
                self.check(&c::LIST_CONTAINS, Some(last), result);
            }
        }
        if self.endpoint.paged {
            self.paging(main).await;
        }
        self.required_filters().await;
        self.variants_agree(main, &doc).await;
        self.unauthorized().await;
    }

    /// The ids of the list up to `wanted`, following `links.next` (bounded), and the index
    /// of the last page read.
    async fn find_in_list(
        &mut self,
        main: usize,
        doc: &Value,
        wanted: &str,
    ) -> (Vec<String>, usize) {
        let mut doc = doc.clone();
        let mut last = main;
        let mut ids = Vec::new();
        for _ in 0..MAX_PAGES {
            ids.extend(c::list_ids(&doc));
            if ids.iter().any(|id| id == wanted) {
                break;
            }
            let Some(next) = crate::pages::next_link(&doc)
                .map(|n| url::Url::parse(n).unwrap_or_else(|_| self.ctx.target.url(n)))
            else {
                break;
            };
            if !self.ctx.target.same_origin(&next) {
                break;
            }
            last = self
                .send(Request::new(Method::GET, next, auth_for("")))
                .await;
            match self.ex(last).json() {
                Ok(d) if self.ex(last).is_success() => doc = d,
                _ => break,
            }
        }
        (ids, last)
    }

    fn list_request(&self, page: Option<(usize, usize)>, with_required: bool) -> Option<Request> {
        self.list_request_as(page, with_required, Paging::Spec)
    }

    fn list_request_as(
        &self,
        page: Option<(usize, usize)>,
        with_required: bool,
        params: Paging,
    ) -> Option<Request> {
        let mut request = self
            .main_request(&self.case.path, "GET", with_required)
            .ok()?;
        if let Some((page, size)) = page {
            let (number, per_page) = params.names();
            request
                .url
                .query_pairs_mut()
                .append_pair(number, &page.to_string())
                .append_pair(per_page, &size.to_string());
        }
        Some(request)
    }

    async fn paging(&mut self, _main: usize) {
        let Some(first) = self.list_request(Some((1, 1)), true) else {
            return;
        };
        let index = self.send(first).await;
        let accepted = c::lists::paged(self.ex(index), &self.ctx.schemas, "`page=1&page_size=1`");
        if !self.check(&c::PAGING_ACCEPTED, Some(index), accepted.map(|_| ())) {
            return;
        }
        // The spec's `page`/`page_size` are judged above (core); TFE's conventions are judged
        // with TFE's own parameters, `page[number]`/`page[size]` (tfe-api-facts 0.5).
        let Some(first) = self.list_request_as(Some((1, 1)), true, Paging::Tfe) else {
            return;
        };
        let index = self.send(first).await;
        let what = "`page[number]=1&page[size]=1` to be answered with a list";
        let Some(doc) = self.answered_document(index, &c::TFE_PAGE_SIZE, what) else {
            return;
        };
        let meta = self
            .ctx
            .schemas
            .validate("tfe/pagination", &doc)
            .map_err(|e| format!("expected meta.pagination (schema tfe/pagination); {e}"));
        self.check(&c::TFE_PAGINATION_META, Some(index), meta);
        // Page 1 holds at most one item, and page 2 is another page: a server that ignores
        // `page` answers page 1 twice. The pair is read twice before that is concluded, so a
        // list that changes under the run's other tests does not give a false finding.
        let size = c::lists::page_size(c::list_ids(&doc).len(), 1, 1);
        if size.is_err() {
            self.check(&c::TFE_PAGE_SIZE, Some(index), size);
            return;
        }
        let mut repeated = Ok(());
        let mut last = index;
        for _attempt in 0..2 {
            let (Some((_, ids_one)), Some((two, ids_two))) =
                (self.page_ids(1, 1).await, self.page_ids(2, 1).await)
            else {
                return;
            };
            (last, repeated) = (two, c::lists::pages_differ(&ids_one, &ids_two));
            if repeated.is_ok() {
                break;
            }
        }
        if repeated.is_err() {
            self.check(&c::TFE_PAGE_SIZE, Some(last), repeated);
            return;
        }
        match self.page_walk().await {
            Some((index, result)) => self.check(&c::TFE_PAGE_SIZE, Some(index), result),
            None => self.check(&c::TFE_PAGE_SIZE, None, Ok(())),
        };
    }

    /// The ids of one page read with TFE's parameters (`None` when the answer is no list).
    async fn page_ids(&mut self, page: usize, size: usize) -> Option<(usize, Vec<String>)> {
        let request = self.list_request_as(Some((page, size)), true, Paging::Tfe)?;
        let index = self.send(request).await;
        if !self.ex(index).is_success() {
            return None;
        }
        let doc = self.ex(index).json().ok()?;
        doc.get("data")?.as_array()?;
        Some((index, c::list_ids(&doc)))
    }

    /// A walk with a small page size reads every item of the list exactly once
    /// ([`c::lists::partition`]). Lists that other tests change while they are walked can
    /// shift an item across a page boundary, so only items present before and after the walk
    /// count, and the walk is tried three times before a finding is made. `None` when the list
    /// cannot be walked (too short, too long, or not readable as a list): nothing is judged.
    async fn page_walk(&mut self) -> Option<(usize, Result<(), String>)> {
        let mut last = None;
        for _attempt in 0..3 {
            let (_, before) = self.page_ids(1, 100).await?;
            if before.len() < 2 || before.len() >= 100 {
                return None;
            }
            let mut walk = Walk::new(before.len().div_ceil(3), MAX_PAGES);
            let mut walked: Vec<String> = Vec::new();
            let mut index = 0;
            while let Some(page) = walk.next_page() {
                let request = self.list_request_as(Some((page, walk.size())), true, Paging::Tfe)?;
                index = self.send(request).await;
                let doc = self
                    .ex(index)
                    .json()
                    .ok()
                    .filter(|_| self.ex(index).is_success())?;
                doc.get("data")?.as_array()?;
                walked.extend(c::item_ids(&walk.read(&doc)));
                if walked.len() >= before.len() + walk.size() {
                    walk.stop();
                }
            }
            let (_, after) = self.page_ids(1, 100).await?;
            let stable: Vec<String> = before.into_iter().filter(|id| after.contains(id)).collect();
            let result = c::lists::partition(&stable, &walked, walk.size());
            let ok = result.is_ok();
            last = Some((index, result));
            if ok {
                break;
            }
        }
        last
    }

    async fn required_filters(&mut self) {
        if !self.endpoint.query.iter().any(|q| q.required) || self.case.variant != Variant::Bare {
            return;
        }
        let Some(request) = self.list_request(None, false) else {
            return;
        };
        let index = self.send(request).await;
        let result = c::answered(self.ex(index).status(), 400, "without the required filter");
        if self.check(&c::TFE_REQUIRED_FILTER, Some(index), result) {
            self.error_document(index);
        }
    }

    /// Versioning 1: for reads under the prefixed form, the bare form answers alike.
    async fn variants_agree(&mut self, main: usize, doc: &Value) {
        if !self.case.variant.has_prefix() {
            return;
        }
        let Some(other) = self.case.variant.counterpart() else {
            return;
        };
        let template = match other {
            Variant::Bare => path_for(&self.endpoint.path, Variant::Bare),
            Variant::Deprecated => self
                .endpoint
                .deprecated
                .as_ref()
                .map(|d| path_for(&d.path, Variant::Deprecated))
                .unwrap_or_default(),
            Variant::Alias => self
                .endpoint
                .alias
                .as_ref()
                .map(|d| path_for(&d.path, Variant::Alias))
                .unwrap_or_default(),
            _ => return,
        };
        let Ok(request) = self.main_request(&template, &self.case.method, true) else {
            return;
        };
        let must_hold = self
            .endpoint
            .expect
            .contains
            .as_ref()
            .and_then(|k| self.scope.get(k))
            .map(|i| i.id.clone())
            // Only when the first page holds it: a long list may keep it on a later page.
            .filter(|id| c::list_ids(doc).contains(id));
        let index = self.send(request).await;
        if c::route_exists(self.ex(index)).is_err() {
            // The other form is absent: its own test reports that (endpoint.exists), once.
            return;
        }
        let result = c::forms_agree(self.ex(main), doc, self.ex(index), must_hold.as_deref());
        self.check(&c::VARIANTS_AGREE, Some(index), result);
    }

    /// TFE: a read without a token is answered 401 (checked once per endpoint, bare form).
    async fn unauthorized(&mut self) {
        if self.case.variant != Variant::Bare {
            return;
        }
        let Ok(mut request) = self.main_request(&self.case.path, &self.case.method, true) else {
            return;
        };
        request.auth = Auth::None;
        let index = self.send(request).await;
        let result = c::answered(self.ex(index).status(), 401, "without a token");
        if self.check(&c::TFE_UNAUTHORIZED, Some(index), result) {
            self.error_document(index);
        }
    }

    async fn after_update(&mut self, main: usize) {
        if self.single_resource(main, &c::UPDATE_SAME_ID).is_some() {
            self.read_after_write(main).await;
        }
    }

    /// TFE (facts 6.4): a show after the update echoes every attribute the update sent
    /// that the show has at all (write-only attributes are not shown).
    async fn read_after_write(&mut self, main: usize) {
        let sent = self.ex(main).request.body.as_deref().and_then(|b| {
            serde_json::from_str::<Value>(b)
                .ok()?
                .pointer("/data/attributes")?
                .as_object()
                .cloned()
        });
        let (Some(sent), Some(kind)) = (sent, self.endpoint.resource.clone()) else {
            return;
        };
        if sent.is_empty() || self.requested_id().is_none() {
            return;
        }
        let Some(index) = self.show_resource(&kind).await else {
            return;
        };
        let what = format!("the show of the updated {kind} to answer a document");
        let Some(shown) = self.answered_document(index, &c::TFE_READ_AFTER_WRITE, &what) else {
            return;
        };
        let result = c::lifecycle::echoed(&sent, &shown);
        self.check(&c::TFE_READ_AFTER_WRITE, Some(index), result);
    }

    async fn after_delete(&mut self, main: usize) {
        let Some(kind) = self.endpoint.resource.clone() else {
            return;
        };
        let deleted = self.scope.get(&kind).map(|i| i.id.clone());
        let Some(index) = self.show_resource(&kind).await else {
            // no show to ask: the delete's success is all there is
            if let Some(id) = deleted {
                self.ctx.fixtures.note_gone(&kind, &id);
            }
            return;
        };
        let ex = self.ex(index);
        let (gone, status) = (!ex.is_success(), ex.status());
        if let Some(id) = deleted.filter(|_| gone) {
            // shown gone: teardown has nothing left to do for it
            self.ctx.fixtures.note_gone(&kind, &id);
        }
        let check = if matches!(
            self.case.variant,
            Variant::Deprecated | Variant::DeprecatedApiV2
        ) {
            &c::DEPRECATED_SAME
        } else {
            &c::DELETE_THEN_GONE
        };
        let what = format!(
            "the {kind} deleted (the delete answered {})",
            c::status_text(self.ex(main).status())
        );
        if self.check(check, Some(index), c::lifecycle::gone(status, &what)) {
            let result = c::lifecycle::not_found(status, &what);
            if self.check(&c::TFE_NOT_FOUND_AFTER_DELETE, Some(index), result) {
                self.error_document(index);
            }
        }
    }

    async fn after_action(&mut self, main: usize) {
        if !self.ex(main).body().is_empty() && self.json(main).is_none() {
            return;
        }
        if let Some(state) = self.endpoint.expect.state.clone() {
            self.state_check(&state, &c::STATE_AFTER).await;
        }
        if self.endpoint.expect.repeat_refused {
            if let Ok(request) = self.main_request(&self.case.path, &self.case.method, true) {
                let index = self.send(request).await;
                let what = "the same action, now that the state no longer allows it,";
                let result = c::lifecycle::refused(self.ex(index).status(), what);
                if self.check(&c::TFE_WRONG_STATE, Some(index), result) {
                    self.error_document(index);
                }
            }
        }
    }

    /// Polls the show endpoint of `state.show` until the pointer holds the value (or an
    /// array there holds it), within the poll budget; records `check` with the last answer.
    async fn state_check(
        &mut self,
        state: &crate::catalog::StateExpect,
        check: &'static Check,
    ) -> bool {
        match self.poll_state(state, false).await {
            Ok(index) => self.check(check, Some(index), Ok(())),
            Err(not) => self.check(check, not.index, Err(not.message)),
        }
    }

    /// Waits for a state: `Ok(index of the answer that shows it)`, or the last answer's index
    /// with a message naming the value last seen.
    async fn poll_state(
        &mut self,
        state: &crate::catalog::StateExpect,
        canonical: bool,
    ) -> Result<usize, NotReached> {
        let Some((_, show)) = self
            .ctx
            .catalog
            .endpoint(&state.show, &self.case.group)
            .map(|(g, e)| (g.clone(), e.clone()))
        else {
            return Err(NotReached::harness(format!(
                "catalog: unknown show endpoint {}",
                state.show
            )));
        };
        let wanted = match &state.value {
            Value::String(s) => Value::String(
                self.ctx
                    .fixtures
                    .fill_text(s, &self.scope)
                    .unwrap_or_else(|_| s.clone()),
            ),
            v => v.clone(),
        };
        // A precondition is not what the test judges: it is read in the canonical form.
        let (mut url, filled) = if canonical {
            self.canonical_url(&show).map_err(NotReached::harness)?
        } else {
            let path = self.sibling_path(&show);
            let Ok(filled) = self
                .ctx
                .fixtures
                .fill_path(&path, &self.scope, Some(&show), None)
            else {
                return Err(NotReached::harness(format!(
                    "cannot fill the path of {}",
                    state.show
                )));
            };
            (self.sibling_url(&show, &filled), filled)
        };
        for (name, value) in &state.query {
            let value = self
                .ctx
                .fixtures
                .fill_text(value, &self.scope)
                .unwrap_or_else(|_| value.clone());
            url.query_pairs_mut().append_pair(name, &value);
        }
        let item = state.item.as_ref().map(|i| {
            self.ctx
                .fixtures
                .fill_text(i, &self.scope)
                .unwrap_or_else(|_| i.clone())
        });
        let deadline = Instant::now() + self.ctx.poll_budget;
        let mut delay = Duration::from_millis(50);
        loop {
            let index = self
                .send(Request::new(Method::GET, url.clone(), auth_for(&filled)))
                .await;
            let seen = self.ex(index).json().ok().and_then(|d| match &item {
                Some(id) => d
                    .get("data")?
                    .as_array()?
                    .iter()
                    .find(|i| {
                        crate::fixtures::value_string(i.get("id")).as_deref() == Some(id.as_str())
                    })?
                    .pointer(&state.pointer)
                    .cloned(),
                None => d.pointer(&state.pointer).cloned(),
            });
            let holds = match &seen {
                Some(Value::Array(items)) => items.iter().any(|i| {
                    i == &wanted
                        || i.as_object()
                            .is_some_and(|o| o.values().any(|v| v == &wanted))
                }),
                Some(v) => v == &wanted,
                None => false,
            };
            if holds {
                return Ok(index);
            }
            // a refused request (the run's deadline) will not change by waiting
            let refused = matches!(
                self.ex(index).response,
                Err(crate::target::TransportError::Refused(_))
            );
            if refused || Instant::now() + delay > deadline {
                let last = seen
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "nothing".into());
                return Err(NotReached {
                    index: Some(index),
                    message: format!(
                        "expected {} at {} of {}, last seen {last} (polled for {} s)",
                        wanted,
                        state.pointer,
                        state.show,
                        self.ctx.poll_budget.as_secs()
                    ),
                    last,
                });
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(1));
        }
    }

    /// Reads the current values an `echo` update sends back; a show that fails blocks the
    /// test (the update would otherwise change something, or send nothing).
    async fn echo(&mut self) -> Result<(), Outcome> {
        let Some(echo) = self.endpoint.echo.clone() else {
            return Ok(());
        };
        let Some((_, show)) = self
            .ctx
            .catalog
            .endpoint(&echo.show, &self.case.group)
            .map(|(g, e)| (g.clone(), e.clone()))
        else {
            return Err(Outcome::Error(format!(
                "catalog: unknown echo show {}",
                echo.show
            )));
        };
        let (url, filled) = self.canonical_url(&show).map_err(Outcome::Error)?;
        let index = self
            .send(Request::new(Method::GET, url, auth_for(&filled)))
            .await;
        let current = match (self.ex(index).is_success(), self.ex(index).json()) {
            (true, Ok(doc)) => doc,
            _ => {
                if let Some(why) = unjudgeable(self.ex(index)) {
                    return Err(Outcome::Error(why));
                }
                let needed = "the current values it sends back".to_string();
                let blocker = self.ctx.blocker(needed, self.ex(index), None);
                return Err(self.blocked_or_absent(blocker, index).await);
            }
        };
        let mut values = serde_json::Map::new();
        for name in &echo.attributes {
            if let Some(v) = current.pointer(&format!("/data/attributes/{name}")) {
                values.insert(name.clone(), v.clone());
            }
        }
        self.echoed = Some(Value::Object(values));
        Ok(())
    }

    /// Waits for the state the request needs (a run awaiting confirmation before apply); a
    /// state never reached blocks the test with the last state seen.
    async fn precondition(&mut self) -> Result<(), Outcome> {
        let Some(state) = self.endpoint.precondition.clone() else {
            return Ok(());
        };
        match self.poll_state(&state, true).await {
            Ok(_) => Ok(()),
            Err(NotReached {
                index: Some(index),
                last,
                ..
            }) => {
                if let Some(why) = unjudgeable(self.ex(index)) {
                    return Err(Outcome::Error(why));
                }
                Err(Outcome::Blocked(Blocker {
                    needed: format!("{} = {} first", state.pointer, state.value),
                    request: match state.show.contains("::") {
                        true => format!("polling {}", state.show),
                        false => format!("polling {}::{}", self.case.group, state.show),
                    },
                    answer: format!("{last} until the poll budget ran out"),
                    see: None,
                }))
            }
            Err(not) => Err(Outcome::Error(not.message)),
        }
    }

    async fn after_read(&mut self, main: usize) {
        let Some(doc) = self.json(main) else { return };
        if self.case.variant == Variant::Registry {
            let subject = self.registry_subject();
            if let Some(subject) = subject {
                let mut probe = registry::Probe {
                    target: &self.ctx.target,
                    exchanges: &mut self.exchanges,
                    findings: &mut self.findings,
                    passed: &mut self.passed,
                    notes: &mut self.notes,
                };
                registry::after_read(&mut probe, self.endpoint, &subject, main, &doc).await;
            }
        } else {
            self.variants_agree(main, &doc).await;
        }
    }

    async fn after_download(&mut self, main: usize) {
        let mut index = main;
        // Follow redirects ourselves: the token goes only to the target's own origin.
        for _ in 0..5 {
            let Some(location) = self
                .ex(index)
                .status()
                .filter(|s| (300..400).contains(s))
                .and_then(|_| self.ex(index).header("location").map(str::to_string))
            else {
                break;
            };
            let base = url::Url::parse(&self.ex(index).request.url).ok();
            let Some(next) = base.and_then(|b| b.join(&location).ok()) else {
                break;
            };
            let auth = if self.ctx.target.same_origin(&next) {
                auth_for(next.path())
            } else {
                Auth::None
            };
            index = self.send(Request::new(Method::GET, next, auth)).await;
        }
        if self.case.variant == Variant::Registry {
            let subject = self.registry_subject();
            let mut probe = registry::Probe {
                target: &self.ctx.target,
                exchanges: &mut self.exchanges,
                findings: &mut self.findings,
                passed: &mut self.passed,
                notes: &mut self.notes,
            };
            registry::after_download(&mut probe, subject.as_ref(), index).await;
        } else {
            let result = c::downloaded(self.ex(index), None);
            self.check(&c::ENDPOINT_SUCCEEDS, Some(index), result);
        }
    }

    /// The registry module a registry test reads (its `resource`'s instance).
    fn registry_subject(&self) -> Option<registry::Subject> {
        let kind = self.endpoint.resource.as_deref()?;
        let given = self.ctx.fixtures.is_given(kind);
        registry::Subject::of(&self.scope, kind, given)
    }

    /// Rule 3 and Versioning 2: create a version, find its upload address, PUT a tarball,
    /// then see the effect.
    async fn upload(&mut self) -> Outcome {
        let Some(kind) = self.endpoint.resource.clone() else {
            return Outcome::Error("catalog: the upload endpoint names no resource".into());
        };
        let fresh = self.fresh.clone();
        let made = match self
            .ctx
            .fixtures
            .make_fresh(&kind, &fresh, &mut self.scope, true)
            .await
        {
            Ok(made) => made,
            Err(e) => return self.fixture_outcome(e).await,
        };
        let candidates = c::upload_candidates(&made.document);
        let Some((pointer, url)) = candidates.first().cloned() else {
            return {
                let what = format!("the create answer of the {kind}");
                self.check(
                    &c::UPLOAD_URL_FORM,
                    None,
                    c::upload_offered(&candidates, &what, &made.document),
                );
                Outcome::Done
            };
        };
        let form = c::upload_url_form(&url).map_err(|e| format!("{e} (at {pointer})"));
        self.check(&c::UPLOAD_URL_FORM, None, form);
        let target_url = url::Url::parse(&url).unwrap_or_else(|_| self.ctx.target.url(&url));
        let tarball = crate::tarball::config_tarball();
        let put = self
            .send(
                Request::new(Method::PUT, target_url, Auth::None)
                    .with_body(Body::Bytes(tarball.clone())),
            )
            .await;
        let accepted = c::succeeds(self.ex(put));
        if !self.check(&c::UPLOAD_ACCEPTED, Some(put), accepted) {
            return Outcome::Done;
        }
        if let Some(state) = self.endpoint.expect.state.clone() {
            self.state_check(&state, &c::UPLOAD_APPLIED).await;
        }
        // Where the group can download the version, the bytes must come back.
        let download = self
            .ctx
            .catalog
            .endpoints()
            .find(|(_, e)| e.kind == Kind::Download && e.resource.as_deref() == Some(kind.as_str()))
            .map(|(_, e)| e.clone());
        if let Some(download) = download {
            if let Ok((url, filled)) = self.canonical_url(&download) {
                let mut index = self
                    .send(Request::new(Method::GET, url, auth_for(&filled)))
                    .await;
                if let Some(location) = self
                    .ex(index)
                    .status()
                    .filter(|s| (300..400).contains(s))
                    .and_then(|_| self.ex(index).header("location").map(str::to_string))
                {
                    if let Some(next) = url::Url::parse(&self.ex(index).request.url)
                        .ok()
                        .and_then(|b| b.join(&location).ok())
                    {
                        let auth = if self.ctx.target.same_origin(&next) {
                            Auth::User
                        } else {
                            Auth::None
                        };
                        index = self.send(Request::new(Method::GET, next, auth)).await;
                    }
                }
                if c::route_exists(self.ex(index)).is_err() {
                    // An absent download route is the download test's finding, once.
                    return Outcome::Done;
                }
                let result = c::downloaded(self.ex(index), Some(&tarball));
                self.check(&c::UPLOAD_APPLIED, Some(index), result);
            }
        }
        Outcome::Done
    }
}

/// A state not reached: the last answer read (none when the poll could not start), the
/// finding's message and the value last seen.
struct NotReached {
    index: Option<usize>,
    message: String,
    last: String,
}

impl NotReached {
    /// The poll could not start (a catalog or path problem).
    fn harness(message: String) -> Self {
        Self {
            index: None,
            message,
            last: String::new(),
        }
    }
}
