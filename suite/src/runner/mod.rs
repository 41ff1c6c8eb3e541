//! Runs one test: resolve fixtures, send the request of the endpoint's variant, run the
//! checks that apply to its kind, and turn findings into a verdict.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::catalog::{Catalog, Endpoint, Kind, StateExpect, TestCase, Variant};
use crate::checks::{self as c, Check, Schemas};
use crate::fixtures::{auth_for, FixtureError, Fixtures, Scope};
use crate::target::{Exchange, Request, Target};
use crate::verdict::{Blocker, Profile, TestResult, Verdict};

mod fixture;
mod judge;
mod kinds;
mod observe;
mod paging;
mod patient;
mod polling;
mod probe;
mod refusals;
mod registry;
mod request;
mod tokens;
mod uploads;
mod waited;

pub use judge::{judge, not_judged};
use judge::{observed_only_above, unjudgeable};

// Pages a walk reads at most: the one cap of every walk.
use crate::pages::MAX_PAGES;

/// How the reason of a test of an absent group that `--require` names ends: it fails (what
/// `conform certify` counts as a group not implemented).
pub const GROUP_REQUIRED: &str = "(the group is required)";

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
    /// Whether a finding may yet be waived check by check (the run has waivers): then a test
    /// that already fails still waits for what its other checks observe
    /// (`TestRun::already_failing`).
    pub waivers: bool,
    probes: Mutex<HashMap<String, Arc<OnceCell<Option<Exchange>>>>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// What the state reads learned about waiting.
    waited: waited::Waited,
    /// Whether the target's handlers answer an unknown id unlike its router
    /// ([`Context::handlers_unlike_router`]), asked once.
    handlers_unlike_router: OnceCell<bool>,
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
            waivers: false,
            probes: Mutex::new(HashMap::new()),
            locks: Mutex::new(HashMap::new()),
            waited: waited::Waited::default(),
            handlers_unlike_router: OnceCell::new(),
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
        if let Some(name) = &case.endpoint.lock {
            let what = format!("its turn at the lock `{name}` (tests that change it take turns)");
            if started.elapsed() >= waited::NOTED {
                self.waited.note(&case.name, &what, started.elapsed());
            }
        }
        let mut run = TestRun::new(self, case);
        let outcome = run.execute().await;
        run.finish(outcome, started.elapsed())
    }

    /// What each test waited for, by test, longest first (`waited::Waited::log`).
    pub fn wait_log(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        self.waited.log()
    }

    /// True when the `require`d set names the group (or `all`): its absence is a failure.
    pub fn required(&self, group: &str) -> bool {
        self.require.contains(group) || self.require.contains("all")
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
    record: c::Record,
    /// New values an update of something the run did not make sends (`restore`).
    new_values: Option<Value>,
    /// The values it had before, sent back after the test (`restore`).
    restore_values: Option<serde_json::Map<String, Value>>,
    /// Said in the result's reason besides the checks (a registry source not followed).
    notes: Vec<String>,
    /// Effects this run set out to observe and could not (a list that runs past the walk's
    /// bound): a test that fails nothing is then `skipped` with these, never `pass`.
    unobserved: Vec<String>,
    /// The group is judged at TFE's path (served only there): the test's own requests after
    /// the first go there.
    at_tfe: bool,
    /// A delete's show of what it deletes, before the delete: the exchange that proves (2xx)
    /// or not the show route answers for the kind, so that its 404 after may mean "gone".
    show_before: Option<usize>,
    /// This test's turn inside a `--scratch` resource, held until it ends.
    scratch_turn: Option<tokio::sync::OwnedMutexGuard<()>>,
    /// When the main request was answered: the reads of what it changed at once share one
    /// consistency window from then (`polling::wait_for`).
    acted: Option<std::time::Instant>,
    /// A read of the main request's effect waited the whole window from `acted` in vain.
    window_spent: bool,
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
        let own = case.endpoint.resource.as_deref();
        ctx.fixtures.scratch_stands_in(&mut fresh, own);
        Self {
            ctx,
            case,
            endpoint: &case.endpoint,
            scope: Scope::default(),
            fresh,
            exchanges: Vec::new(),
            record: c::Record::default(),
            new_values: None,
            restore_values: None,
            notes: Vec::new(),
            unobserved: Vec::new(),
            at_tfe: false,
            show_before: None,
            scratch_turn: None,
            acted: None,
            window_spent: false,
        }
    }

    fn finish(mut self, outcome: Outcome, duration: Duration) -> TestResult {
        let profile = self.ctx.profile;
        if matches!(outcome, Outcome::Done) {
            self.record.server_errors(&self.exchanges);
        }
        self.ctx.fixtures.note_answering(&self.exchanges);
        let mut blocked_by = None;
        let passed: Vec<&'static str> = self.record.passed.iter().copied().collect();
        // a change whose effect only a check beyond the profile saw (`judge::observed_only_above`)
        let only_above = (!self.endpoint.kind.is_read_only())
            .then(|| observed_only_above(&passed, profile))
            .flatten();
        let (verdict, reason) = match outcome {
            Outcome::Skip(why) => (Verdict::Skipped, Some(why)),
            Outcome::Error(why) => (Verdict::Error, Some(why)),
            // settled when the run is over (`attribution::settle`); until then, blocked
            // where the request's own test is known
            Outcome::Blocked(blocker) => {
                let verdict = match blocker.see {
                    Some(_) => Verdict::Blocked,
                    None => Verdict::Skipped,
                };
                let line = blocker.line();
                blocked_by = Some(blocker);
                (verdict, Some(line))
            }
            Outcome::Unsupported(why) if !self.ctx.required(&self.case.group) => {
                (Verdict::Unsupported, Some(why))
            }
            Outcome::Unsupported(why) => (
                Verdict::Fail,
                Some(format!("{why} {GROUP_REQUIRED}")),
            ),
            Outcome::Done => match judge(
                &self.record.findings,
                &passed,
                &self.exchanges,
                profile,
            ) {
                (Verdict::Error, why) => (Verdict::Error, why),
                (Verdict::Skipped, why) => (Verdict::Skipped, why),
                (Verdict::Pass, _) if self.endpoint.unobservable.is_some() => (
                    Verdict::Skipped,
                    self.endpoint
                        .unobservable
                        .as_ref()
                        .map(|why| format!("{}: {why}", crate::verdict::UNOBSERVABLE)),
                ),
                (Verdict::Pass, _) if only_above.is_some() => (
                    Verdict::Skipped,
                    Some(format!(
                        "{}: at --profile {} the spec names nothing that shows it; only {} saw it, which count at --profile tfe",
                        crate::verdict::UNOBSERVABLE,
                        profile.as_str(),
                        only_above.unwrap_or_default().join(", ")
                    )),
                ),
                (Verdict::Pass, _) if !self.unobserved.is_empty() => (
                    Verdict::Skipped,
                    Some(format!(
                        "answered as documented, but not observed: {}",
                        self.unobserved.join("; ")
                    )),
                ),
                (verdict, _) => (
                    verdict,
                    (!self.notes.is_empty()).then(|| self.notes.join("; ")),
                ),
            },
        };
        let result = TestResult {
            name: self.case.name.clone(),
            group: self.case.group.clone(),
            verdict,
            reason,
            findings: self.record.findings,
            passed: self.record.passed.into_iter().collect(),
            requests: self.exchanges.len(),
            exchanges: self.exchanges,
            duration,
            blocked_by,
            minimal: None,
            draws: None,
        };
        result.keep_evidence()
    }

    /// The check of this test's route being there: `alias.exists` for a spelling the spec
    /// only mentions (reported, not required at core), else `endpoint.exists`.
    fn existence_check(&self) -> &'static Check {
        match self.case.variant {
            Variant::Alias | Variant::AliasApiV2 => &c::ALIAS_EXISTS,
            _ => &c::ENDPOINT_EXISTS,
        }
    }

    /// Records a check's result; true when it passed.
    fn check(
        &mut self,
        check: &'static Check,
        exchange: Option<usize>,
        result: Result<(), c::Message>,
    ) -> bool {
        self.record.check(check, exchange, result)
    }

    async fn send(&mut self, request: Request) -> usize {
        let ex = self.ctx.target.send(request).await;
        self.exchanges.push(ex);
        self.exchanges.len() - 1
    }

    fn ex(&self, index: usize) -> &Exchange {
        &self.exchanges[index]
    }

    /// The test's own route, asked before a fixture is blamed: a read as it is, a create
    /// with an empty document (which no create takes), its path filled from the fixtures had
    /// so far, else with ids nobody made. `Some` when the route is absent: `endpoint.exists`
    /// fails there (`unsupported` when the whole group is absent, blocked when a resource the
    /// path names is not found). Filled with made-up ids, or at the registry's address (where
    /// an unknown module is a 404 too), only the target's no-route answer (learned in
    /// preflight) shows the route absent.
    async fn own_route_absent(&mut self) -> Option<Outcome> {
        if self.case.variant == Variant::Upload {
            return None;
        }
        let method = Method::from_bytes(self.case.method.as_bytes()).ok()?;
        let create = method == Method::POST && self.endpoint.kind == Kind::Create;
        if method != Method::GET && !create {
            return None;
        }
        let filled = self
            .ctx
            .fixtures
            .fill_path(&self.case.path, &self.scope, Some(self.endpoint), None)
            .ok();
        let made_up = filled.is_none() || self.case.variant == Variant::Registry;
        let path =
            filled.unwrap_or_else(|| crate::runner::probe::with_unknown_ids(&self.case.path));
        let mut request = Request::new(method, self.url_for(&path), auth_for(&path));
        if create {
            request = request.with_body(crate::target::Body::Json(serde_json::json!({})));
        }
        let main = self.send(request).await;
        let presence = self.ctx.fixtures.presence(self.ex(main));
        if self.ex(main).response.is_err()
            || presence.served()
            || (made_up && presence == c::Presence::Unproven)
        {
            return None;
        }
        if !made_up {
            if let Some(blocker) = self.named_resource_missing().await {
                return Some(Outcome::Blocked(blocker));
            }
        }
        Some(self.route_absent(main, &presence).await)
    }

    /// The route of the answer `main` shown absent (`presence`): the existence check fails
    /// there, and the test is unsupported when its whole group is absent, else done.
    async fn route_absent(&mut self, main: usize, presence: &c::Presence) -> Outcome {
        let check = self.existence_check();
        let result = c::route_exists(self.ex(main), presence);
        self.check(check, Some(main), result);
        match self.group_absent().await {
            Some(why) => Outcome::Unsupported(why),
            None => Outcome::Done,
        }
    }

    async fn execute(&mut self) -> Outcome {
        let e = self.endpoint;
        if e.admin && self.ctx.target.config.admin_token.is_none() {
            return Outcome::Skip("administrator endpoint: needs --admin-token".into());
        }
        if let Some(missing) = e.requires.iter().find(|r| !self.ctx.fixtures.is_given(r)) {
            return Outcome::Skip(crate::settings::requirement_missing(missing));
        }
        if self.case.variant == Variant::Upload {
            return self.upload().await;
        }
        if let Err(error) = self.prepare().await {
            return self.fixture_outcome(error).await;
        }
        if let Err(outcome) = self.set_up().await {
            return outcome;
        }
        // the state a documented refusal depends on, read before the action changes it
        let holds = match e.expect.refused_unless.clone() {
            Some(refusal) => Some(self.state_once(&refusal.state).await),
            None => None,
        };
        let request = match self.main_request(&self.case.path, &self.case.method, true) {
            Ok(r) => r,
            Err(e) => return self.fixture_outcome(e).await,
        };
        let mut main = self.send(request).await;
        self.acted = Some(std::time::Instant::now());
        if !self.ex(main).is_success() {
            self.undo_set_up().await;
        }
        if self.case.variant == Variant::Registry && !self.ex(main).is_success() {
            let endpoint = self.endpoint;
            let mut probe = self.registry_probe();
            if let Some(retry) = registry::q_instead(&mut probe, endpoint, main).await {
                main = retry;
            }
        }
        if let (Some(refusal), Some(holds)) = (e.expect.refused_unless.as_ref(), holds) {
            if holds != Some(true) && refusal.refuses(self.ex(main).status()) {
                if let Some(outcome) = self.documented_or_absent(main, refusal, holds).await {
                    return outcome;
                }
            }
        }
        let main = match self.route_judged(main).await {
            Ok(main) => main,
            Err(outcome) => return outcome,
        };
        let Some(judged) = self.judged_main(main) else {
            return Outcome::Done;
        };
        match e.kind {
            Kind::Create => self.after_create(main, &judged).await,
            Kind::Show => self.after_show(main, &judged).await,
            Kind::List => self.after_list(main, &judged).await,
            Kind::Update => self.after_update(main, &judged).await,
            Kind::Delete => self.after_delete(main).await,
            Kind::Action | Kind::Relationship => self.after_action(main, &judged).await,
            Kind::Read => self.after_read(main, &judged).await,
            Kind::Download => self.after_download(main).await,
            Kind::Upload => {}
        }
        self.refusals().await;
        self.acceptances().await;
        match self.restored().await {
            Ok(()) => Outcome::Done,
            Err(outcome) => outcome,
        }
    }

    /// Everything before the main request, once the fixtures are made (a test that waits
    /// for a state first asks whether its group is there at all): the `before` steps,
    /// the precondition, the restore point, a removal's member listed first, what a delete
    /// removes seen first, and a create's own preconditions. `Err` ends the test there.
    async fn set_up(&mut self) -> Result<(), Outcome> {
        let e = self.endpoint;
        let removal = e.expect.linked.as_ref().is_some_and(|l| l.absent);
        if e.precondition.is_some() || removal {
            // a state waited for before the request: only where the group is there at all
            // (its probe is the run's one per group), or the wait is for nothing
            if let Some(why) = self.group_absent().await {
                return Err(Outcome::Unsupported(why));
            }
        }
        let mut set_up = None;
        for before in e.before.clone() {
            set_up = Some(self.before_step(&before).await?);
        }
        self.precondition().await?;
        self.restore_point().await?;
        if let Some(linked) = e.expect.linked.as_ref().filter(|l| l.absent) {
            self.member_listed_first(linked.clone(), set_up).await?;
        }
        if e.kind == Kind::Delete {
            // what the delete removes must be seen first, or its absence after proves nothing
            self.token_before_delete().await?;
            self.listed_before_delete().await;
            if let Some(kind) = e.resource.as_deref() {
                self.show_before = self.show_resource(kind).await;
            }
        }
        if let (Kind::Create, Some(kind)) = (e.kind, e.resource.as_deref()) {
            self.before_create(kind).await?;
        }
        Ok(())
    }

    /// A removal: what it removes must be there first (read as set-up is, in the canonical
    /// path form: the form this test judges is its own request's).
    async fn member_listed_first(
        &mut self,
        mut before: StateExpect,
        set_up: Option<usize>,
    ) -> Result<(), Outcome> {
        before.absent = false;
        match self.poll_state(&before, true, false).await {
            Ok(index) => {
                self.check(&c::TFE_LINKED, Some(index), Ok(()));
            }
            Err(not) => {
                let read = not.index.filter(|i| self.ex(*i).is_success());
                if read.is_none() {
                    // the read itself failed (an absent group's list): judged as before,
                    // the main request's own route decides
                    self.check(&c::TFE_LINKED, not.index, Err(not.message));
                } else {
                    return Err(self.never_there(not, set_up));
                }
            }
        }
        Ok(())
    }

    /// The created kind's own preconditions (e.g. TFE's workspace lock), sent before the
    /// create; a failed one blocks the test, or skips it when no test judges its route.
    async fn before_create(&mut self, kind: &str) -> Result<(), Outcome> {
        match self.ctx.fixtures.before_create(kind, &self.scope).await {
            Ok(sent) => {
                self.exchanges.extend(sent);
                Ok(())
            }
            // held by someone else: skipped, and nothing of the test's own is sent under it
            Err(FixtureError::Unavailable(why)) => Err(Outcome::Skip(why)),
            Err(FixtureError::Failed {
                exchange: Some(ex), ..
            }) => {
                let ex = *ex;
                let needed = format!("the request sent before a `{kind}` is created");
                let blocker = self.ctx.blocker(needed, &ex, None);
                self.exchanges.push(ex);
                // a route outside the spec (TFE's workspace lock): no test of its own judges
                // it; whether one failed on it is settled when the run is over
                if blocker.see.is_none() {
                    if let Some(outcome) = self.own_route_absent().await {
                        return Err(outcome);
                    }
                }
                Err(Outcome::Blocked(blocker))
            }
            Err(other) => Err(Outcome::Error(format!(
                "{other}, so this test could not run"
            ))),
        }
    }

    /// Whether the main request's route answered; a 404 may mean that a resource the path
    /// names is not found (the test is blocked by it), or the group is absent, or the route
    /// is missing here but served at TFE's path (judged there: its exchange is the main one
    /// from then on). `Err` ends the test.
    async fn route_judged(&mut self, main: usize) -> Result<usize, Outcome> {
        if self.ex(main).response.is_err() || self.ctx.route_exists(self.ex(main)).is_ok() {
            // a served route's 404 may still be about a resource its path names
            if self.ex(main).status() == Some(404) {
                if let Some(blocker) = self.named_resource_missing().await {
                    return Err(Outcome::Blocked(blocker));
                }
            }
            self.record.pass(&c::ENDPOINT_EXISTS);
            return Ok(main);
        }
        // A 404 may mean that a resource the path names is not found, not that the route
        // is absent: then the test is blocked by that resource, judged at its create.
        if let Some(blocker) = self.named_resource_missing().await {
            return Err(Outcome::Blocked(blocker));
        }
        let result = self.ctx.route_exists(self.ex(main));
        let check = self.existence_check();
        self.check(check, Some(main), result);
        if let Some(why) = self.group_absent().await {
            return Err(Outcome::Unsupported(why));
        }
        // a group served at TFE's path is judged there as well
        self.at_tfe_path().await.ok_or(Outcome::Done)
    }

    /// The one judgement of the main answer ([`c::answer::exchange`], seen as a test's: no
    /// server error, success, TFE's status, the document of its kind, the id it shows),
    /// recorded. `None` when it did not succeed: nothing after is judged.
    fn judged_main(&mut self, main: usize) -> Option<Vec<c::answer::Judgement>> {
        let ex = self.ex(main);
        let path = url::Url::parse(&ex.request.url).map(|u| u.path().to_string());
        let (group, e) = (&self.case.group, self.endpoint);
        let m = self.ctx.catalog.matched_test(
            group,
            e,
            self.case.variant,
            &self.case.path,
            &path.unwrap_or_default(),
        );
        let shown = e.expect.shows.as_deref().and_then(|k| self.scope.get(k));
        let seen = c::answer::Seen::Test {
            shown: shown.map(|made| made.id.as_str()),
        };
        let judged = c::answer::exchange(&self.ctx.schemas, &m, ex, seen);
        for (check, result) in &judged {
            self.check(check, Some(main), result.clone());
        }
        c::answer::held(&judged, &c::ENDPOINT_SUCCEEDS).then_some(judged)
    }

    /// The main answer's JSON document, where it held `json.body` in `judged`.
    fn main_document(&self, main: usize, judged: &[c::answer::Judgement]) -> Option<Value> {
        c::answer::held(judged, &c::JSON_BODY)
            .then(|| self.ex(main).json().ok())
            .flatten()
    }

    /// What the test changed beyond its own resource set back (`restore`), then its `after`
    /// steps; a step that fails is an error of the run, not of the target.
    async fn restored(&mut self) -> Result<(), Outcome> {
        self.restore().await?;
        for after in self.endpoint.after.clone() {
            if let Err(outcome) = self.before_step(&after).await {
                return Err(match outcome {
                    Outcome::Blocked(b) => Outcome::Error(format!(
                        "restoring the state after the test: {} answered {}",
                        b.request, b.answer
                    )),
                    other => other,
                });
            }
        }
        Ok(())
    }

    /// `Some(evidence)` when the target lacks this test's whole group (its probe answered
    /// no route on any path form); the probe's exchange joins the test's.
    /// A removal whose member is not listed before it: its absence after would prove nothing,
    /// so nothing is observed and the test is blocked, at every profile, by the test of the
    /// set-up step that should have put the member there (`set_up`: that step's exchange), or
    /// by the read's own test when there is no such step.
    fn never_there(&mut self, not: NotReached, set_up: Option<usize>) -> Outcome {
        if let Some(why) = not.index.and_then(|i| unjudgeable(self.ex(i))) {
            return Outcome::Error(why);
        }
        let needed = format!(
            "the member it removes listed before the removal ({})",
            not.message
        );
        match set_up.or(not.index) {
            Some(index) => Outcome::Blocked(self.ctx.blocker(needed, self.ex(index), None)),
            None => Outcome::Error(not.message.into_string()),
        }
    }

    async fn group_absent(&mut self) -> Option<String> {
        let (why, evidence) = self.ctx.group_absence(&self.case.group).await?;
        self.exchanges.push(evidence);
        Some(why)
    }
}

/// A state not reached: the last answer read (none when the poll could not start), the
/// finding's message and the value last seen.
struct NotReached {
    index: Option<usize>,
    message: c::Message,
    last: String,
    /// The wait ended on a state the resource never leaves (`StateExpect::ends`), not on the
    /// budget.
    ended: bool,
}

impl NotReached {
    /// The poll could not start (a catalog or path problem).
    fn harness(message: String) -> Self {
        Self {
            index: None,
            message: c::lifecycle::state_unread(message),
            last: String::new(),
            ended: false,
        }
    }
}
