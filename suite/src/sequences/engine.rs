//! Runs one sequence of operations against the target, keeping the model and checking the
//! properties after every step.
//!
//! A sequence works in an organization of its own, made at its start and deleted at its end,
//! or inside an organization the user gives, which holds others' items too: there its lists
//! are judged on the items named with its prefix, a page walk that the others' items moved is
//! confirmed on a list that stands still before it is reported, and its own items are deleted
//! one by one at its end. States the service reaches on its own (a run being planned) are
//! waited for, within the poll budget, before an action that depends on them.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::Method;
use serde_json::{json, Value};

use crate::catalog::families::model::{Family, Foreign, Item, ListRead, Model, Route};
use crate::checks::{self as c, Check, Finding};
use crate::pages::{self, Paging, Walk};
use crate::runner::Context;
use crate::target::{Auth, Body, Exchange, Request, TransportError};
use crate::verdict::Profile;

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Create an item (under a live parent).
    Create,
    /// Show an item (live or deleted), on both path forms.
    Show,
    /// List a parent's items.
    List,
    /// Page through a parent's items.
    Walk,
    /// Update an item.
    Update,
    /// Delete an item.
    Delete,
    /// Show an id that does not exist.
    ShowUnknown,
    /// An action of the collection's state machine.
    Action(usize),
}

/// One operation of a sequence. `slot` picks an item (or a parent) modulo how many there are,
/// so every subsequence of a sequence is again a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// What it does.
    pub kind: OpKind,
    /// On which collection.
    pub coll: usize,
    /// Which item or parent.
    pub slot: usize,
    /// Page size of a walk.
    pub page_size: u8,
    /// Use the `/api/v2` form.
    pub api_v2: bool,
    /// Which of a collection's create, show and delete forms (0: the first).
    pub form: u8,
}

impl Op {
    /// Simpler forms of this operation, for shrinking.
    pub fn simpler(&self) -> Vec<Op> {
        let mut out = Vec::new();
        if self.api_v2 {
            out.push(Op {
                api_v2: false,
                ..*self
            });
        }
        if self.slot > 0 {
            out.push(Op { slot: 0, ..*self });
        }
        if self.form > 0 {
            out.push(Op { form: 0, ..*self });
        }
        if self.page_size > 1 && self.kind == OpKind::Walk {
            out.push(Op {
                page_size: 1,
                ..*self
            });
        }
        out
    }
}

/// A failed property at the profile's level.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The check.
    pub check: &'static Check,
    /// Expected / received.
    pub message: String,
    /// The exchange that shows it.
    pub exchange: Option<usize>,
}

/// One executed step.
#[derive(Debug, Clone)]
pub struct Step {
    /// The operation.
    pub op: Op,
    /// What it did, in words.
    pub text: String,
    /// Its exchanges (indices into the run's).
    pub exchanges: Vec<usize>,
}

/// The result of running one sequence.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// The steps that were executed (operations that found nothing to act on are left out).
    pub steps: Vec<Step>,
    /// The namespace setup exchanges (step 0).
    pub setup: Vec<usize>,
    /// Every exchange.
    pub exchanges: Vec<Exchange>,
    /// The first failure at the profile's level (the run stops there).
    pub failure: Option<Failure>,
    /// Findings below the profile's level.
    pub notes: Vec<Finding>,
    /// Checks that passed.
    pub passed: BTreeSet<&'static str>,
    /// The target could not be reached: why.
    pub unreachable: Option<String>,
    /// The harness could not set the sequence up: why.
    pub error: Option<String>,
}

impl RunOutcome {
    /// The operations that were executed, in order.
    pub fn executed(&self) -> Vec<Op> {
        self.steps.iter().map(|s| s.op).collect()
    }
}

/// Stop the current step.
struct Stop;

type StepResult = Result<(), Stop>;

/// What a family's sequences learn about the target as they go, shared by its cases and by
/// the runs of shrinking.
#[derive(Debug, Default)]
pub struct Learned {
    /// States the service reaches on its own (see [`crate::catalog::families::model::StateDef::eventually`])
    /// that an item did not reach within the poll budget: later items are read once before an
    /// action, not waited for (a service without a runner never plans a run).
    unreached: std::sync::Mutex<BTreeSet<String>>,
}

impl Learned {
    fn gave_up_on(&self, state: &str) -> bool {
        self.unreached
            .lock()
            .map(|s| s.contains(state))
            .unwrap_or(false)
    }

    fn give_up_on(&self, state: &str) {
        if let Ok(mut s) = self.unreached.lock() {
            s.insert(state.to_string());
        }
    }
}

/// One sequence in progress.
pub struct Run<'a> {
    ctx: &'a Context,
    family: &'a Family,
    profile: Profile,
    org: String,
    ns: String,
    /// The sequence works inside an organization given with `--organization`, which holds
    /// other items than its own and which it must leave as it found it.
    given: bool,
    learned: &'a Learned,
    model: Model,
    unique: u64,
    out: RunOutcome,
    current: Vec<usize>,
    step_no: usize,
    /// The current step's requests carry the administrator token.
    admin: bool,
    /// `{pick}` of the current step: one of two names (`slot % 2`).
    pick: usize,
}

impl<'a> Run<'a> {
    /// A run in the namespace `ns`: an organization of its own named `ns` when the family has
    /// a namespace, or, when `organization` is given, that organization with `ns` as the
    /// prefix of every name the sequence gives.
    pub fn new(
        ctx: &'a Context,
        family: &'a Family,
        ns: String,
        organization: Option<String>,
        learned: &'a Learned,
    ) -> Self {
        let given = family.namespace && organization.is_some();
        Self {
            ctx,
            family,
            profile: ctx.profile,
            org: organization
                .filter(|_| family.namespace)
                .unwrap_or_else(|| ns.clone()),
            ns,
            given,
            learned,
            model: Model::default(),
            unique: 0,
            out: RunOutcome::default(),
            current: Vec::new(),
            step_no: 0,
            admin: false,
            pick: 0,
        }
    }

    /// Runs the operations, then deletes what the sequence made.
    pub async fn execute(mut self, ops: &[Op]) -> RunOutcome {
        if self.family.namespace && !self.given {
            self.setup().await;
        }
        if self.out.error.is_none() && self.out.unreachable.is_none() {
            for op in ops {
                self.current.clear();
                let Some(text) = self.describe(op) else {
                    continue;
                };
                self.step_no += 1;
                let result = self.step(op).await;
                self.out.steps.push(Step {
                    op: *op,
                    text,
                    exchanges: std::mem::take(&mut self.current),
                });
                if result.is_err()
                    || self.out.failure.is_some()
                    || self.out.unreachable.is_some()
                    || self.out.error.is_some()
                {
                    break;
                }
            }
        }
        self.cleanup().await;
        self.out
    }

    async fn setup(&mut self) {
        let body = json!({"data":{"type":"organizations","attributes":{
            "name": self.org, "email": format!("{}@example.com", self.org)}}});
        let ex = self
            .ctx
            .target
            .send(
                Request::new(
                    Method::POST,
                    self.ctx.target.api_url("/organizations"),
                    Auth::User,
                )
                .with_body(Body::Json(body)),
            )
            .await;
        let connection = matches!(ex.response, Err(TransportError::Connection(_)));
        let ok = ex.is_success();
        let why = ex
            .response
            .as_ref()
            .map(|r| format!("answered {}", r.status))
            .unwrap_or_else(|e| e.to_string());
        self.out.exchanges.push(ex);
        self.out.setup.push(self.out.exchanges.len() - 1);
        if ok {
            // into the run's ledger (crash-safe) and the guard's ids, before going on
            self.remember_organization(self.org.clone());
        }
        if connection {
            self.out.unreachable = Some(format!("the target cannot be reached: {why}"));
        } else if !ok {
            self.out.error = Some(format!(
                "could not make the sequence's organization `{}`: POST /organizations {why}",
                self.org
            ));
        }
    }

    /// The request that deletes an item at the end of the sequence: its collection's
    /// `cleanup` (things an organization's deletion does not take along, such as users), and,
    /// inside a given organization, the `delete` of every item of the organization's own
    /// collections (their children go with them).
    fn cleanup_request(&self, index: usize) -> Option<(Method, url::Url, Auth)> {
        let item = &self.model.items[index];
        let coll = self.coll(item.coll);
        if coll.relation {
            return None;
        }
        let route = coll.cleanup.as_ref().or(coll
            .delete
            .as_ref()
            .filter(|_| self.given && coll.parent.is_none()))?;
        let env = self.env(Some(index), item.parent, None);
        let url = self.ctx.target.api_url(&env.fill(&route.path));
        let method = Method::from_bytes(route.method.as_bytes()).unwrap_or(Method::DELETE);
        let auth = if coll.admin { Auth::Admin } else { Auth::User };
        Some((method, url, auth))
    }

    /// The request that shows one item (its collection's `show`, when that is a show and
    /// not a list search), for teardown to tell whether it is gone.
    fn show_request(&self, index: usize) -> Option<(url::Url, Auth)> {
        let item = &self.model.items[index];
        let coll = self.coll(item.coll);
        if coll.show_list {
            return None;
        }
        let template = coll.show.as_ref()?;
        let env = self.env(Some(index), item.parent, None);
        let auth = if coll.admin { Auth::Admin } else { Auth::User };
        Some((self.ctx.target.api_url(&env.fill(template)), auth))
    }

    /// Deletes what the sequence made: the items [`Run::cleanup_request`] names (each is in
    /// the run's ledger from its create on), whatever the model says of them (a deleted item
    /// answers 404, which counts as gone; a failed sequence's model may be wrong), then the
    /// sequence's own organization (or, for the organizations family, every organization the
    /// sequence made). What is not gone is left in the ledger: teardown (or `conform sweep`)
    /// deletes it.
    async fn cleanup(&mut self) {
        for i in 0..self.model.items.len() {
            let Some((method, url, auth)) = self.cleanup_request(i) else {
                continue;
            };
            let ex = self.ctx.target.send(Request::new(method, url, auth)).await;
            if ex.is_success() || ex.status() == Some(404) {
                let item = &self.model.items[i];
                self.ctx
                    .fixtures
                    .note_gone(&self.coll(item.coll).kind, &item.id);
            }
        }
        let names: Vec<String> = if self.family.namespace {
            if self.given || self.out.setup.is_empty() || self.out.error.is_some() {
                return;
            }
            vec![self.org.clone()]
        } else {
            self.model.items.iter().map(|i| i.id.clone()).collect()
        };
        for name in names {
            let url = self.ctx.target.api_url(&format!("/organizations/{name}"));
            let ex = self
                .ctx
                .target
                .send(Request::new(Method::DELETE, url, Auth::User))
                .await;
            // what is not gone now, teardown deletes: it is in the run's ledger already
            if ex.is_success() || ex.status() == Some(404) {
                self.ctx.fixtures.note_gone("organization", &name);
            }
        }
    }

    /// Records an organization the sequence made in the run's ledger; teardown deletes it
    /// again if the sequence's own cleanup did not (404 then counts as gone).
    fn remember_organization(&self, name: String) {
        let mut url = self.ctx.target.api_url("/organizations");
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.push(&name);
        }
        self.ctx.fixtures.note_made(crate::ledger::Made {
            kind: "organization".into(),
            id: name,
            delete: Some((Method::DELETE, url.clone(), Auth::User)),
            show: Some((url, Auth::User)),
            parents: Vec::new(),
        });
    }

    fn coll(&self, coll: usize) -> &'a crate::catalog::families::model::Coll {
        &self.family.colls[coll]
    }

    /// The items a slot can pick for an operation, or `None` when the operation finds nothing.
    fn target_item(&self, op: &Op) -> Option<usize> {
        let all = self.model.of(op.coll);
        (!all.is_empty()).then(|| all[op.slot % all.len()])
    }

    /// The parent a create, list or walk acts under: `Some(None)` for the organization.
    fn target_parent(&self, op: &Op) -> Option<Option<usize>> {
        match self.coll(op.coll).parent {
            None => Some(None),
            Some(p) => {
                let live = self.model.live_of(p);
                (!live.is_empty()).then(|| Some(live[op.slot % live.len()]))
            }
        }
    }

    /// The live item of the collection's `with` a create names.
    fn with_item(&self, op: &Op) -> Option<usize> {
        let live = self.model.live_of(self.coll(op.coll).with?);
        (!live.is_empty()).then(|| live[op.slot % live.len()])
    }

    fn label(&self, index: usize) -> String {
        let item = &self.model.items[index];
        format!(
            "{} #{} ({})",
            self.coll(item.coll).kind,
            self.model.ordinal(index),
            item.id
        )
    }

    fn parent_label(&self, parent: Option<usize>) -> String {
        match parent {
            Some(p) => format!(" of {}", self.label(p)),
            None if self.family.namespace => format!(" of organization {}", self.org),
            None => String::new(),
        }
    }

    /// Whether a list of the collection holds others' items as well as the sequence's: a list
    /// of the given organization's own items (its path names `{org}`).
    fn shared_list(
        &self,
        coll: &crate::catalog::families::model::Coll,
        parent: Option<usize>,
    ) -> bool {
        self.given && parent.is_none() && coll.list.as_deref().is_some_and(|l| l.contains("{org}"))
    }

    /// Whether a list item carries a name the sequence gives (`{ns}-…`, at the collection's
    /// `name_pointer`), which no other sequence's names start with.
    fn own_named(&self, coll: &crate::catalog::families::model::Coll, object: &Value) -> bool {
        let prefix = format!("{}-", self.ns.trim_end_matches('-'));
        object
            .pointer(&coll.name_pointer)
            .and_then(Value::as_str)
            .is_some_and(|name| name.starts_with(&prefix))
    }

    /// The step in words, or `None` when the operation has nothing to act on now.
    fn describe(&self, op: &Op) -> Option<String> {
        let coll = self.coll(op.coll);
        let form = if op.api_v2 { " [/api/v2]" } else { "" };
        let text = match op.kind {
            OpKind::Create => {
                let parent = self.target_parent(op)?;
                let with = match coll.with {
                    Some(_) => format!(" for {}", self.label(self.with_item(op)?)),
                    None => String::new(),
                };
                let via = match &coll.create_alt {
                    Some(alt) if op.form % 2 == 1 => format!(" via {} {}", alt.method, alt.path),
                    _ => String::new(),
                };
                format!(
                    "create {}{}{with}{via}",
                    coll.kind,
                    self.parent_label(parent)
                )
            }
            OpKind::Show => {
                coll.show.as_ref()?;
                let via = match &coll.show_alt {
                    Some(alt) if op.form % 2 == 1 => format!(" via {alt}"),
                    _ => String::new(),
                };
                format!("show {}{via}", self.label(self.target_item(op)?))
            }
            OpKind::List => {
                coll.list.as_ref()?;
                let parent = self.target_parent(op)?;
                format!("list {}s{}", coll.kind, self.parent_label(parent))
            }
            OpKind::Walk => {
                coll.list.as_ref()?;
                if !coll.paged {
                    return None;
                }
                let parent = self.target_parent(op)?;
                format!(
                    "page through {}s{} with page_size {}",
                    coll.kind,
                    self.parent_label(parent),
                    op.page_size
                )
            }
            OpKind::Update => {
                coll.update.as_ref()?;
                format!("update {}", self.label(self.target_item(op)?))
            }
            OpKind::Delete => {
                coll.delete.as_ref()?;
                let via = match usize::from(op.form) % (1 + coll.delete_alt.len()) {
                    0 => String::new(),
                    n => {
                        let alt = &coll.delete_alt[n - 1];
                        let what = if alt.same_name { " (by name)" } else { "" };
                        format!("{what} via {} {}", alt.route.method, alt.route.path)
                    }
                };
                format!("delete {}{via}", self.label(self.target_item(op)?))
            }
            OpKind::ShowUnknown => {
                coll.show.as_ref()?;
                format!("show unknown {} {}", coll.kind, coll.unknown_id)
            }
            OpKind::Action(a) => {
                let action = coll.state.as_ref()?.actions.get(a)?;
                format!("{} {}", action.name, self.label(self.target_item(op)?))
            }
        };
        Some(format!("{text}{form}"))
    }

    fn env(&self, item: Option<usize>, parent: Option<usize>, other: Option<usize>) -> Env {
        let mut vars = BTreeMap::new();
        vars.insert("org".to_string(), self.org.clone());
        vars.insert("ns".to_string(), self.ns.clone());
        vars.insert("unique".to_string(), self.unique.to_string());
        vars.insert("pick".to_string(), self.pick.to_string());
        if let Some(i) = item {
            let it = &self.model.items[i];
            vars.insert("id".to_string(), it.id.clone());
            vars.insert("name".to_string(), it.name.clone().unwrap_or_default());
            for (k, v) in &it.fields {
                vars.insert(k.to_string(), v.clone());
            }
        }
        if let Some(p) = parent {
            let it = &self.model.items[p];
            vars.insert("parent".to_string(), it.id.clone());
            vars.insert(
                "parent_name".to_string(),
                it.name.clone().unwrap_or_default(),
            );
            for (k, v) in &it.fields {
                vars.insert(format!("parent_{k}"), v.clone());
            }
        }
        if let Some(o) = other {
            vars.insert("other".to_string(), self.model.items[o].id.clone());
        }
        Env(vars)
    }

    // ------------------------------------------------------------------ checks

    /// Records a check; `Err(Stop)` when it failed at the profile's level.
    fn check(
        &mut self,
        check: &'static Check,
        exchange: Option<usize>,
        result: Result<(), String>,
    ) -> StepResult {
        match result {
            Ok(()) => {
                self.out.passed.insert(check.id);
                Ok(())
            }
            Err(message) => {
                let message = format!("step {}: {message}", self.step_no);
                if self.profile.fails_on(check.level) {
                    self.out.failure = Some(Failure {
                        check,
                        message,
                        exchange,
                    });
                    Err(Stop)
                } else {
                    if !self.out.notes.iter().any(|n| n.check.id == check.id) {
                        self.out.notes.push(Finding {
                            check,
                            message,
                            exchange,
                        });
                    }
                    Ok(())
                }
            }
        }
    }

    /// True when the target serves both path forms (Versioning 1), so that they can be compared.
    fn both_forms(&self) -> bool {
        let forms = self.ctx.target.config.forms;
        forms.bare && forms.api_v2
    }

    /// Sends a request; checks no 5xx and tells a broken connection from a target that is gone.
    async fn send(&mut self, request: Request) -> Result<usize, Stop> {
        let ex = self.ctx.target.send(request).await;
        let connection = matches!(ex.response, Err(TransportError::Connection(_)));
        self.out.exchanges.push(ex);
        let index = self.out.exchanges.len() - 1;
        self.current.push(index);
        if connection {
            // One route may drop connections; a target that answers nothing is gone.
            let probe = self
                .ctx
                .target
                .send(Request::new(
                    Method::GET,
                    self.ctx.target.api_url("/organizations?page_size=1"),
                    Auth::User,
                ))
                .await;
            if let Err(e @ TransportError::Connection(_)) = &probe.response {
                self.out.unreachable = Some(format!("the target cannot be reached: {e}"));
                return Err(Stop);
            }
        }
        let result = c::no_server_error(&self.out.exchanges[index]);
        self.check(&c::NO_SERVER_ERROR, Some(index), result)?;
        Ok(index)
    }

    async fn send_route(
        &mut self,
        route: &Route,
        env: &Env,
        api_v2: bool,
        query: &str,
    ) -> Result<usize, Stop> {
        let path = env.fill(&route.path);
        let path = with_query(&path, query);
        let forms = self.ctx.target.config.forms;
        // a drawn form the target does not serve becomes the one it does
        let api_v2 = (api_v2 && forms.api_v2) || !forms.bare;
        let path = if api_v2 {
            format!("/api/v2{path}")
        } else {
            path
        };
        let method = Method::from_bytes(route.method.as_bytes()).unwrap_or(Method::GET);
        let auth = if self.admin { Auth::Admin } else { Auth::User };
        let mut request = Request::new(method, self.ctx.target.url(&path), auth);
        if let Some(body) = &route.body {
            let text = env.fill(body);
            let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            request = request.with_body(Body::Json(value));
        }
        self.send(request).await
    }

    fn ex(&self, index: usize) -> &Exchange {
        &self.out.exchanges[index]
    }

    /// 2xx, else a failure of `check`.
    fn expect_success(&mut self, check: &'static Check, index: usize, what: &str) -> StepResult {
        let result = c::succeeds(self.ex(index)).map_err(|e| format!("{what}: {e}"));
        self.check(check, Some(index), result)
    }

    /// The JSON body of a 2xx answer.
    fn document(&mut self, index: usize) -> Result<Value, Stop> {
        match c::json_body(self.ex(index)) {
            Ok(doc) => {
                self.out.passed.insert(c::JSON_BODY.id);
                Ok(doc)
            }
            Err(e) => {
                self.check(&c::JSON_BODY, Some(index), Err(e))?;
                Err(Stop)
            }
        }
    }

    fn single(&mut self, index: usize) -> Result<Value, Stop> {
        let doc = self.document(index)?;
        let result = c::envelope_single(&self.ctx.schemas, &doc);
        self.check(&c::ENVELOPE_SINGLE, Some(index), result)?;
        Ok(doc)
    }

    /// `check` that a single-resource answer (`what`, for the message) carries the id of
    /// the model's `item`.
    fn same_id(
        &mut self,
        index: usize,
        doc: &Value,
        item: usize,
        check: &'static Check,
        what: &str,
    ) -> StepResult {
        let want = self.model.items[item].id.clone();
        let result = c::lifecycle::same_id(doc, &want, what);
        self.check(check, Some(index), result)
    }

    fn list_doc(&mut self, index: usize) -> Result<Value, Stop> {
        let doc = self.document(index)?;
        let result = c::envelope_list(&self.ctx.schemas, &doc);
        self.check(&c::ENVELOPE_LIST, Some(index), result)?;
        Ok(doc)
    }

    fn status(&mut self, index: usize, kind: crate::catalog::Kind) -> StepResult {
        match c::tfe_status(self.ex(index), kind, &[]) {
            Some(result) => self.check(&c::TFE_STATUS, Some(index), result),
            None => Ok(()),
        }
    }

    /// A request on a deleted item must not succeed (TFE: 404).
    fn expect_gone(&mut self, check: &'static Check, index: usize, item: usize) -> StepResult {
        let what = format!("{}, deleted earlier in this sequence,", self.label(item));
        let status = self.ex(index).status();
        self.check(check, Some(index), c::lifecycle::gone(status, &what))?;
        let result = c::lifecycle::not_found(status, &what);
        self.check(&c::TFE_NOT_FOUND_AFTER_DELETE, Some(index), result)
    }

    /// Compares what a document says of an item with the model (updated attributes, state).
    fn compare(&mut self, index: usize, item: usize, object: &Value, whence: &str) -> StepResult {
        let label = self.label(item);
        let expect = self.model.items[item].expect.clone();
        for (pointer, value) in expect {
            let whence = format!("{whence} of {label}");
            let result = c::lifecycle::persisted(object, &pointer, &value, &whence);
            self.check(&c::UPDATE_PERSISTED, Some(index), result)?;
        }
        let coll = self.coll(self.model.items[item].coll);
        if let Some(state) = &coll.state {
            let got = match state.read {
                Some(read) => read(object),
                None => object
                    .pointer(&state.pointer)
                    .and_then(Value::as_str)
                    .map(str::to_string),
            };
            let it = &mut self.model.items[item];
            match (it.state.clone(), got) {
                (_, None) => {}
                (None, Some(g)) => {
                    it.state = Some(g);
                    it.reached = true;
                    it.seen = None;
                }
                (Some(want), Some(g)) if want == g => {
                    it.reached = true;
                    it.seen = None;
                    self.out.passed.insert(c::STATE_AFTER.id);
                }
                // The service has yet to get it there on its own (a run not planned yet).
                (Some(want), Some(g)) if !it.reached && state.on_the_way(&want, &g) => {
                    it.seen = Some(g);
                }
                (Some(want), Some(g)) => {
                    let via = match state.eventually.get(&want) {
                        Some(via) if !it.reached => via.clone(),
                        _ => Vec::new(),
                    };
                    let what = format!("{label}, after this sequence's actions,");
                    let result = c::lifecycle::in_state(&g, &want, &via, &what, whence);
                    self.check(&c::STATE_AFTER, Some(index), result)?;
                }
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------ steps

    async fn step(&mut self, op: &Op) -> StepResult {
        self.admin = self.coll(op.coll).admin && op.kind != OpKind::Create;
        self.pick = op.slot % 2;
        match op.kind {
            OpKind::Create => self.create(op).await,
            OpKind::Show => self.show(op).await,
            OpKind::List => self.list(op).await,
            OpKind::Walk => self.walk(op).await,
            OpKind::Update => self.update(op).await,
            OpKind::Delete => self.delete(op).await,
            OpKind::ShowUnknown => self.show_unknown(op).await,
            OpKind::Action(a) => self.action(op, a).await,
        }
    }

    async fn create(&mut self, op: &Op) -> StepResult {
        let coll = self.coll(op.coll);
        let parent = self.target_parent(op).flatten();
        let other = self.with_item(op);
        let duplicate = coll.unique_pair
            && self.model.live_of(op.coll).iter().any(|&i| {
                self.model.items[i].parent == parent && self.model.items[i].other == other
            });
        self.unique += 1;
        let env = self.env(None, parent, other);
        let create = match &coll.create_alt {
            Some(alt) if op.form % 2 == 1 => alt,
            _ => &coll.create,
        };
        let index = self.send_route(create, &env, op.api_v2, "").await?;
        if coll.relation {
            return self.link(op, index, parent, other);
        }
        if !self.family.namespace && self.model.items.is_empty() && self.missing_route(index) {
            return self.blocked_at(index);
        }
        if duplicate {
            let what = format!("a second {} for the same pair", coll.kind);
            let result = c::lifecycle::refused(self.ex(index).status(), &what);
            self.check(&c::TFE_STATUS, Some(index), result)?;
            if !self.ex(index).is_success() {
                return Ok(());
            }
        }
        self.expect_success(
            &c::ENDPOINT_SUCCEEDS,
            index,
            &format!("create {}", coll.kind),
        )?;
        let doc = self.document(index)?;
        // Into the model (and, where the sequence's cleanup deletes it, the run's ledger)
        // before anything else is checked: what was made is deleted again, even when a check
        // of its create answer ends the sequence.
        let id = crate::fixtures::value_string(doc.pointer(&coll.id_pointer));
        let item = id.map(|id| self.adopt(op, id, &doc, parent, other));
        let result = c::envelope_single(&self.ctx.schemas, &doc);
        self.check(&c::ENVELOPE_SINGLE, Some(index), result)?;
        let result = c::document_id(&doc)
            .map(|_| ())
            .ok_or_else(|| "expected the create answer to hold data.id".to_string());
        self.check(&c::CREATE_RETURNS_ID, Some(index), result)?;
        self.status(index, crate::catalog::Kind::Create)?;
        if coll.id_pointer != "/data/id" {
            let result = item.map(|_| ()).ok_or_else(|| {
                format!(
                    "expected the create answer to hold the {} id at {}",
                    coll.kind, coll.id_pointer
                )
            });
            self.check(&c::CREATE_RETURNS_ID, Some(index), result)?;
        }
        let Some(item) = item else { return Err(Stop) };
        let data = doc.get("data").cloned().unwrap_or(Value::Null);
        self.compare(index, item, &data, "the create answer")
    }

    /// Takes a made item into the model: the guard's ids, the run's ledger (an organization
    /// of the organizations family; an item the sequence's cleanup deletes), its remembered
    /// fields and its initial state. Answers its index.
    fn adopt(
        &mut self,
        op: &Op,
        id: String,
        doc: &Value,
        parent: Option<usize>,
        other: Option<usize>,
    ) -> usize {
        let coll = self.coll(op.coll);
        self.ctx.target.guard().allow(&id);
        let name = crate::fixtures::value_string(doc.pointer("/data/attributes/name"));
        if let Some(name) = &name {
            self.ctx.target.guard().allow(name);
        }
        if !self.family.namespace {
            // the organizations family: its items are organizations of their own
            self.remember_organization(id.clone());
        }
        let mut fields = BTreeMap::new();
        for (field, pointer) in &coll.remember {
            if let Some(v) = crate::fixtures::value_string(doc.pointer(pointer)) {
                // The fields a sequence remembers go into later paths (a module's provider,
                // a version): they are this run's own, as the fixtures' fields are.
                if !v.contains('/') {
                    self.ctx.target.guard().allow(&v);
                }
                fields.insert(field.clone(), v);
            }
        }
        let state = coll
            .state
            .as_ref()
            .and_then(|s| s.initial(self.family, &self.model, parent));
        let reached = match (&coll.state, &state) {
            (Some(def), Some(s)) => !def.is_eventual(s),
            _ => true,
        };
        self.model.items.push(Item {
            coll: op.coll,
            id,
            name,
            parent,
            other,
            deleted: false,
            expect: BTreeMap::new(),
            state,
            reached,
            seen: None,
            fields,
            step: self.step_no,
        });
        let item = self.model.items.len() - 1;
        if let Some(delete) = self.cleanup_request(item) {
            let show = self.show_request(item);
            self.ctx.fixtures.note_made(crate::ledger::Made {
                kind: coll.kind.clone(),
                id: self.model.items[item].id.clone(),
                delete: Some(delete),
                show,
                parents: Vec::new(),
            });
        }
        item
    }

    /// A 404, 405 or 501 to a request that names no item: the route is missing.
    fn missing_route(&self, index: usize) -> bool {
        matches!(self.ex(index).status(), Some(404 | 405 | 501))
    }

    /// The organizations family before it made anything: a request that finds its route
    /// missing (a server with one organization, which cannot create organizations) blocks the
    /// family, as a sequence's organization that cannot be made does; the endpoint tests of
    /// that route judge it, once.
    fn blocked_at(&mut self, index: usize) -> StepResult {
        self.out.setup.push(index);
        let ex = self.ex(index);
        let path = url::Url::parse(&ex.request.url)
            .map(|u| u.path().to_string())
            .unwrap_or_default();
        self.out.error = Some(format!(
            "{} {path} answered {}: the family cannot make organizations of its own",
            ex.request.method,
            ex.status().unwrap_or_default()
        ));
        Err(Stop)
    }

    async fn show(&mut self, op: &Op) -> StepResult {
        let item = self.target_item(op).ok_or(Stop)?;
        let coll = self.coll(op.coll);
        let primary = coll.show.as_deref().ok_or(Stop)?;
        let (path, alt) = match coll.show_alt.as_deref() {
            Some(a) if op.form % 2 == 1 => (a, Some(primary)),
            Some(a) => (primary, Some(a)),
            None => (primary, None),
        };
        let show = crate::catalog::families::model::get(path);
        let env = self.env(Some(item), self.model.items[item].parent, None);
        let index = self.send_route(&show, &env, op.api_v2, "").await?;
        if coll.show_list {
            return self.show_in_list(op, item, index, &show, &env).await;
        }
        if !self.model.live(item) {
            return self.expect_gone(&c::DELETE_THEN_GONE, index, item);
        }
        let label = self.label(item);
        let doc = self.shown(index, item)?;
        self.status(index, crate::catalog::Kind::Show)?;
        let data = doc.get("data").cloned().unwrap_or(Value::Null);
        self.compare(index, item, &data, "the show")?;
        // The other path form answers the same document (where the target serves both: a
        // form it does not serve is reported once, by the endpoint tests of that form).
        if self.both_forms() {
            let other = self.send_route(&show, &env, !op.api_v2, "").await?;
            self.expect_success(&c::VARIANTS_AGREE, other, &format!("show {label}"))?;
            let doc2 = self.document(other)?;
            let (with, without) = if op.api_v2 {
                (&doc, &doc2)
            } else {
                (&doc2, &doc)
            };
            let result = c::documents_agree(with, without, None)
                .map_err(|e| format!("the show of {label} with and without /api/v2: {e}"));
            self.check(&c::VARIANTS_AGREE, Some(other), result)?;
        }
        // The other show form (the deprecated one, or the current one after it) too.
        let Some(alt) = alt else { return Ok(()) };
        let other = self
            .send_route(
                &crate::catalog::families::model::get(alt),
                &env,
                op.api_v2,
                "",
            )
            .await?;
        self.expect_success(&c::DEPRECATED_SAME, other, &format!("show {label}"))?;
        let doc3 = self.single(other)?;
        let want = self.model.items[item].id.clone();
        let result = c::lifecycle::same_id(&doc3, &want, "it")
            .and_then(|()| c::documents_agree(&doc, &doc3, None))
            .map_err(|e| format!("the show of {label} through {path} and through {alt}: {e}"));
        self.check(&c::DEPRECATED_SAME, Some(other), result)
    }

    /// A show that is a search: the list holds the item (and nothing else), or, once the
    /// item is deleted, does not hold it.
    async fn show_in_list(
        &mut self,
        op: &Op,
        item: usize,
        index: usize,
        show: &Route,
        env: &Env,
    ) -> StepResult {
        let label = self.label(item);
        let want = self.model.items[item].id.clone();
        self.expect_success(&c::ENDPOINT_SUCCEEDS, index, &format!("search {label}"))?;
        let doc = self.list_doc(index)?;
        let items = doc
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let found = items
            .iter()
            .find(|o| o.get("id").and_then(Value::as_str) == Some(want.as_str()))
            .cloned();
        let live = self.model.live(item);
        match (live, found) {
            (false, Some(_)) => {
                return self.check(
                    &c::DELETE_THEN_GONE,
                    Some(index),
                    Err(format!(
                        "expected {label}, deleted earlier in this sequence, to be gone; the search still finds it"
                    )),
                )
            }
            (false, None) => return Ok(()),
            (true, None) => {
                let step = self.model.items[item].step;
                return self.check(
                    &c::CREATE_THEN_SHOW,
                    Some(index),
                    Err(format!(
                        "expected the search to find {label}, made in step {step}; it finds {} item(s)",
                        items.len()
                    )),
                );
            }
            (true, Some(object)) => {
                self.out.passed.insert(c::CREATE_THEN_SHOW.id);
                self.compare(index, item, &object, "the search")?;
            }
        }
        if let Some(extra) = items
            .iter()
            .filter_map(|o| o.get("id").and_then(Value::as_str))
            .find(|id| *id != want)
        {
            self.check(
                &c::LIST_EXACT,
                Some(index),
                Err(format!(
                    "expected the search for {label} to find it alone; it finds {extra} too"
                )),
            )?;
        }
        if !self.both_forms() {
            return Ok(());
        }
        let other = self.send_route(show, env, !op.api_v2, "").await?;
        self.expect_success(&c::VARIANTS_AGREE, other, &format!("search {label}"))?;
        let doc2 = self.document(other)?;
        let result = c::documents_agree(&doc, &doc2, Some(&want))
            .map_err(|e| format!("the search for {label} with and without /api/v2: {e}"));
        self.check(&c::VARIANTS_AGREE, Some(other), result)
    }

    async fn show_unknown(&mut self, op: &Op) -> StepResult {
        let coll = self.coll(op.coll);
        let show = crate::catalog::families::model::get(coll.show.as_deref().ok_or(Stop)?);
        let mut env = self.env(None, None, None);
        for key in ["id", "name", "provider", "email", "version"] {
            env.0.insert(key.to_string(), coll.unknown_id.to_string());
        }
        let index = self.send_route(&show, &env, op.api_v2, "").await?;
        let what = format!("the unknown id {}", coll.unknown_id);
        let result = c::lifecycle::unknown(self.ex(index).status(), &what);
        self.check(&c::TFE_NOT_FOUND_AFTER_DELETE, Some(index), result)
    }

    /// Checks the ids a list (or a whole walk) holds against the model.
    fn compare_list(
        &mut self,
        op: &Op,
        parent: Option<usize>,
        index: usize,
        items: &[Value],
        complete: bool,
        missing_check: &'static Check,
    ) -> StepResult {
        let coll = self.coll(op.coll);
        let mut listed: BTreeMap<String, Value> = BTreeMap::new();
        for it in items {
            if let Some(id) = it.get("id").and_then(Value::as_str) {
                listed.insert(id.to_string(), it.clone());
            }
        }
        for i in self.model.of(op.coll) {
            if self.model.items[i].parent != parent {
                continue;
            }
            let id = self.model.items[i].id.clone();
            let live = self.model.live(i);
            match (live, listed.get(&id).cloned()) {
                (true, None) if complete => {
                    let label = self.label(i);
                    let step = self.model.items[i].step;
                    self.check(
                        missing_check,
                        Some(index),
                        Err(format!(
                            "expected the list to hold {label}, made in step {step}; it holds {:?}",
                            listed.keys().collect::<Vec<_>>()
                        )),
                    )?;
                }
                (true, Some(object)) => self.compare(index, i, &object, "the list")?,
                (false, Some(_)) => {
                    let label = self.label(i);
                    self.check(
                        &c::DELETE_THEN_GONE,
                        Some(index),
                        Err(format!(
                            "expected {label}, deleted earlier in this sequence, to be gone from the list; it is still listed"
                        )),
                    )?;
                }
                _ => {}
            }
        }
        for (id, object) in &listed {
            if self.model.find(op.coll, id).is_some() {
                continue;
            }
            let foreign = if self.shared_list(coll, parent) {
                !self.own_named(coll, object)
            } else {
                match &coll.foreign {
                    Foreign::Fail => false,
                    Foreign::OutsidePrefix => !id.starts_with(&self.ns),
                    Foreign::Named(name) => {
                        object.pointer("/attributes/name").and_then(Value::as_str)
                            == Some(name.as_str())
                    }
                }
            };
            if !foreign {
                self.check(
                    &c::LIST_EXACT,
                    Some(index),
                    Err(format!(
                        "expected the list of {}s{} to hold only what this sequence made; it holds {id}",
                        coll.kind,
                        self.parent_label(parent)
                    )),
                )?;
            }
        }
        self.out.passed.insert(c::LIST_EXACT.id);
        Ok(())
    }

    async fn list(&mut self, op: &Op) -> StepResult {
        let coll = self.coll(op.coll);
        if let Some(read) = coll.list_read.clone() {
            return self.read_list(op, read).await;
        }
        let parent = self.target_parent(op).ok_or(Stop)?;
        let env = self.env(None, parent, None);
        let index = self
            .send_route(
                &crate::catalog::families::model::get(coll.list.as_deref().ok_or(Stop)?),
                &env,
                op.api_v2,
                "",
            )
            .await?;
        if !self.family.namespace && self.model.items.is_empty() && self.missing_route(index) {
            return self.blocked_at(index);
        }
        self.expect_success(
            &c::ENDPOINT_SUCCEEDS,
            index,
            &format!("list {}s", coll.kind),
        )?;
        let doc = self.list_doc(index)?;
        self.status(index, crate::catalog::Kind::List)?;
        let items = doc
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let complete = !pages::has_next(&doc).unwrap_or(false);
        self.compare_list(op, parent, index, &items, complete, &c::LIST_CONTAINS)
    }

    async fn walk(&mut self, op: &Op) -> StepResult {
        let coll = self.coll(op.coll);
        let parent = self.target_parent(op).ok_or(Stop)?;
        let env = self.env(None, parent, None);
        let shared = self.shared_list(coll, parent);
        let size = usize::from(op.page_size.max(1));
        let expected = self.model.of(op.coll).len();
        let mut walk = Walk::new(size, expected / size + 3);
        let mut resized = false;
        let mut seen: Vec<(String, usize)> = Vec::new();
        let mut all = Vec::new();
        let mut last = None;
        let list = crate::catalog::families::model::get(coll.list.as_deref().ok_or(Stop)?);
        while let Some(page) = walk.next_page() {
            let size = walk.size();
            let query = Paging::Spec.query(page, size);
            let index = self.send_route(&list, &env, op.api_v2, &query).await?;
            last = Some(index);
            if !self.family.namespace && self.model.items.is_empty() && self.missing_route(index) {
                return self.blocked_at(index);
            }
            self.expect_success(
                &c::PAGING_ACCEPTED,
                index,
                &format!("page {page} of the {}s", coll.kind),
            )?;
            let doc = self.list_doc(index)?;
            let count = pages::items(&doc).len();
            self.check(
                &c::TFE_PAGE_SIZE,
                Some(index),
                c::lists::page_size(count, size, page),
            )?;
            if shared && page == 1 {
                // The list holds others' items too: walk it all, in at most about
                // SHARED_WALK_PAGES pages (a larger page size for a long list).
                match pages::total_count(&doc) {
                    Some(total) if !resized && total.div_ceil(size) > SHARED_WALK_PAGES => {
                        resized = true;
                        walk.restart(total.div_ceil(SHARED_WALK_PAGES).min(100));
                        continue;
                    }
                    Some(total) => walk.allow_pages(total.div_ceil(size) + 3),
                    None => walk.allow_pages(SHARED_WALK_CAP),
                }
            }
            let items = walk.read(&doc);
            for id in c::item_ids(&items) {
                if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
                    // Inside a given organization others' items may move the list under
                    // the walk: a repeated item is judged after it (see below).
                    if !shared {
                        let result = c::lists::read_twice(&id, *first, page, size);
                        self.check(&c::TFE_PAGE_SIZE, Some(index), result)?;
                    }
                }
                seen.push((id, page));
            }
            all.extend(items);
        }
        // A walk stopped with pages left: what it did not reach is not judged.
        let complete = !(shared && walk.cut_short());
        let size = walk.size();
        let index = last.ok_or(Stop)?;
        let pages = seen.iter().map(|(_, p)| *p).max().unwrap_or(1);
        let missing_before = self.out.failure.is_none();
        let result = if shared {
            self.judge_shared_walk(op, parent, index, &list, &env, size, &seen, &all, complete)
                .await
        } else {
            self.compare_list(op, parent, index, &all, complete, &c::TFE_PAGE_SIZE)
        };
        if missing_before {
            if let Some(f) = &mut self.out.failure {
                f.message = format!("{} (a walk of {pages} page(s) of {size})", f.message);
            }
        }
        result
    }

    /// Inside a given organization, the list of the organization's items holds others' items
    /// too: only the sequence's own (by their name's prefix) are judged. Others' items may
    /// come and go during the walk and move the sequence's items across page boundaries, so a
    /// repeated or missing item of its own is confirmed first, on a list that stands still
    /// (see [`Run::confirm_paging`]); a walk the list moved under is judged as incomplete.
    #[allow(clippy::too_many_arguments)]
    async fn judge_shared_walk(
        &mut self,
        op: &Op,
        parent: Option<usize>,
        index: usize,
        list: &Route,
        env: &Env,
        size: usize,
        seen: &[(String, usize)],
        all: &[Value],
        complete: bool,
    ) -> StepResult {
        let coll = self.coll(op.coll);
        let own = |run: &Self, id: &str| {
            run.model.find(op.coll, id).is_some()
                || all.iter().any(|o| {
                    o.get("id").and_then(Value::as_str) == Some(id) && run.own_named(coll, o)
                })
        };
        let own_seen: Vec<(String, usize)> = seen
            .iter()
            .filter(|(id, _)| own(self, id))
            .cloned()
            .collect();
        let repeated = c::lists::repeated(&own_seen);
        let missing = self
            .model
            .live_of(op.coll)
            .into_iter()
            .filter(|&i| self.model.items[i].parent == parent)
            .map(|i| self.model.items[i].id.clone())
            .find(|id| !seen.iter().any(|(s, _)| s == id))
            .filter(|_| complete);
        let Some(suspect) = repeated
            .as_ref()
            .map(|(id, _, _)| id.clone())
            .or_else(|| missing.clone())
        else {
            return self.compare_list(op, parent, index, all, complete, &c::TFE_PAGE_SIZE);
        };
        match self
            .confirm_paging(list, env, op.api_v2, size, &suspect)
            .await?
        {
            Some(why) => {
                if let Some((id, first, again)) = repeated {
                    let result = c::lists::read_twice(&id, first, again, size)
                        .map_err(|e| format!("{e}; {why}"));
                    self.check(&c::TFE_PAGE_SIZE, Some(index), result)?;
                    return self.compare_list(op, parent, index, all, complete, &c::TFE_PAGE_SIZE);
                }
                let result = self.compare_list(op, parent, index, all, true, &c::TFE_PAGE_SIZE);
                if let Some(f) = &mut self.out.failure {
                    f.message = format!("{}; {why}", f.message);
                }
                result
            }
            None => self.compare_list(op, parent, index, all, false, &c::TFE_PAGE_SIZE),
        }
    }

    /// Whether the service pages a list wrongly around the item `id` while the list stands
    /// still: reads the whole list, then the pages of `size` around the one that should hold
    /// the item, then the whole list again; when both whole reads agree, `Some(what is
    /// wrong)`, or `None` when the pages hold the item once, where they should (the walk that
    /// suspected it saw the list move). Lists that keep moving (three tries) or cannot be read
    /// whole are not judged (`None`).
    async fn confirm_paging(
        &mut self,
        list: &Route,
        env: &Env,
        api_v2: bool,
        size: usize,
        id: &str,
    ) -> Result<Option<String>, Stop> {
        for _ in 0..3 {
            let Some(before) = self.read_whole(list, env, api_v2).await? else {
                return Ok(None);
            };
            let at = before.iter().position(|i| i == id);
            let mut on = Vec::new();
            let mut expected = 0;
            if let Some(p) = at {
                expected = p / size + 1;
                let pages = before.len().div_ceil(size).max(1);
                for page in expected.saturating_sub(1).max(1)..=(expected + 1).min(pages) {
                    let query = Paging::Spec.query(page, size);
                    let index = self.send_route(list, env, api_v2, &query).await?;
                    if !self.ex(index).is_success() {
                        return Ok(None);
                    }
                    let doc = self.document(index)?;
                    if c::list_ids(&doc).iter().any(|i| i == id) {
                        on.push(page);
                    }
                }
            }
            let after = self.read_whole(list, env, api_v2).await?;
            if after.as_ref() != Some(&before) {
                continue;
            }
            return Ok(match at {
                None => Some(format!(
                    "a read of the whole list, while it stood still, does not hold {id} either"
                )),
                Some(_) if on == [expected] => None,
                Some(p) => Some(format!(
                    "read again while the list stood still, {id} (item {} of {}) is on page(s) {on:?} of size {size}, where it belongs on page {expected} alone",
                    p + 1,
                    before.len()
                )),
            });
        }
        Ok(None)
    }

    /// The ids of a whole list, read in pages of 100 (`None`: it could not be read, or it is
    /// longer than 20 such pages).
    async fn read_whole(
        &mut self,
        list: &Route,
        env: &Env,
        api_v2: bool,
    ) -> Result<Option<Vec<String>>, Stop> {
        let mut ids = Vec::new();
        let mut walk = Walk::new(100, 20);
        while let Some(page) = walk.next_page() {
            let query = Paging::Spec.query(page, 100);
            let index = self.send_route(list, env, api_v2, &query).await?;
            if !self.ex(index).is_success() {
                return Ok(None);
            }
            let doc = self.document(index)?;
            ids.extend(c::item_ids(&walk.read(&doc)));
        }
        Ok((!walk.cut_short()).then_some(ids))
    }

    async fn update(&mut self, op: &Op) -> StepResult {
        let item = self.target_item(op).ok_or(Stop)?;
        let coll = self.coll(op.coll);
        let update = coll.update.as_ref().ok_or(Stop)?;
        self.unique += 1;
        let parent = self.model.items[item].parent;
        let env = self.env(Some(item), parent, None);
        let index = self.send_route(&update.route, &env, op.api_v2, "").await?;
        if !self.model.live(item) {
            return self.expect_gone(&c::TFE_NOT_FOUND_AFTER_DELETE, index, item);
        }
        let label = self.label(item);
        self.expect_success(&c::ENDPOINT_SUCCEEDS, index, &format!("update {label}"))?;
        let doc = self.single(index)?;
        self.same_id(
            index,
            &doc,
            item,
            &c::UPDATE_SAME_ID,
            &format!("the update of {label}"),
        )?;
        self.status(index, crate::catalog::Kind::Update)?;
        self.model.items[item]
            .expect
            .insert(update.pointer.clone(), env.fill(&update.value));
        let data = doc.get("data").cloned().unwrap_or(Value::Null);
        self.compare(index, item, &data, "the update answer")
    }

    async fn delete(&mut self, op: &Op) -> StepResult {
        let item = self.target_item(op).ok_or(Stop)?;
        let coll = self.coll(op.coll);
        let form = usize::from(op.form) % (1 + coll.delete_alt.len());
        let (delete, same_name) = match form {
            0 => (coll.delete.as_ref().ok_or(Stop)?, false),
            n => (
                &coll.delete_alt[n - 1].route,
                coll.delete_alt[n - 1].same_name,
            ),
        };
        let parent = self.model.items[item].parent;
        let env = self.env(Some(item), parent, None);
        let index = self.send_route(delete, &env, op.api_v2, "").await?;
        let label = self.label(item);
        if coll.relation && parent.is_none_or(|p| self.model.live(p)) {
            // Unlinking what is not linked is not specified; only a 5xx is wrong.
            if self.model.live(item) {
                self.expect_success(&c::ENDPOINT_SUCCEEDS, index, &format!("unlink {label}"))?;
                self.model.items[item].deleted = true;
                return self.status(index, crate::catalog::Kind::Relationship);
            }
            return Ok(());
        }
        // A delete by name deletes what lives under the name, even when this item is gone.
        let name = self.model.items[item].name.clone();
        let same: Vec<usize> = self
            .model
            .live_of(op.coll)
            .into_iter()
            .filter(|&i| {
                same_name
                    && self.model.items[i].name == name
                    && self.model.items[i].parent == parent
            })
            .collect();
        if !self.model.live(item) && same.is_empty() {
            return self.expect_gone(&c::TFE_NOT_FOUND_AFTER_DELETE, index, item);
        }
        let what = if same_name {
            format!("delete the name of {label}")
        } else {
            format!("delete {label}")
        };
        self.expect_success(&c::ENDPOINT_SUCCEEDS, index, &what)?;
        for i in same {
            self.model.items[i].deleted = true;
        }
        self.model.items[item].deleted = true;
        if let Some(p) = parent.filter(|_| coll.last_takes_parent) {
            let left = self
                .model
                .live_of(op.coll)
                .into_iter()
                .any(|i| self.model.items[i].parent == Some(p));
            if !left {
                self.model.items[p].deleted = true;
            }
        }
        self.status(index, crate::catalog::Kind::Delete)
    }

    async fn action(&mut self, op: &Op, a: usize) -> StepResult {
        let item = self.target_item(op).ok_or(Stop)?;
        let coll = self.coll(op.coll);
        let state = coll.state.as_ref().ok_or(Stop)?;
        let action = state.actions.get(a).ok_or(Stop)?;
        let label = self.label(item);
        // What the item's state allows now: the state the model expects, once the service has
        // got it there (polled for), and the service's own word where the action has one.
        let mut allowed_now = None;
        if self.model.live(item) {
            let object = self.settle(op, item).await?;
            let current = self.model.items[item].current_state().map(str::to_string);
            let model_allows = current
                .as_deref()
                .is_some_and(|s| leads_to(action, s).is_some());
            if let Some(pointer) = action.allowed_if.as_deref().filter(|_| model_allows) {
                let object = match object {
                    Some(object) => Some(object),
                    None => self.read_item(op, item, "a read before the action").await?,
                };
                allowed_now = object.and_then(|o| o.pointer(pointer).and_then(Value::as_bool));
            }
        }
        let index = if action.upload {
            let Some(url) = self.model.items[item].fields.get("upload").cloned() else {
                return self.check(
                    &c::UPLOAD_URL_FORM,
                    None,
                    Err(format!(
                        "the create answer of {label} gave no upload address"
                    )),
                );
            };
            let Ok(url) = url::Url::parse(&url).or_else(|_| {
                self.ctx
                    .target
                    .config
                    .root
                    .join(&url)
                    .map_err(|e| e.to_string())
            }) else {
                return self.check(
                    &c::UPLOAD_URL_FORM,
                    None,
                    Err(format!("the upload address of {label} is no URL: {url}")),
                );
            };
            let request = Request::new(Method::PUT, url, Auth::None)
                .with_body(Body::Bytes(crate::tarball::config_tarball()));
            self.send(request).await?
        } else {
            let env = self.env(Some(item), self.model.items[item].parent, None);
            self.send_route(&action.route, &env, op.api_v2, "").await?
        };
        if !self.model.live(item) {
            return self.expect_gone(&c::TFE_NOT_FOUND_AFTER_DELETE, index, item);
        }
        let success = self.ex(index).is_success();
        let current = self.model.items[item].current_state().map(str::to_string);
        let vetoed = allowed_now == Some(false);
        let next = current
            .as_deref()
            .map(|s| leads_to(action, s).filter(|_| !vetoed));
        match next {
            Some(Some(to)) => {
                self.expect_success(
                    &c::ENDPOINT_SUCCEEDS,
                    index,
                    &format!(
                        "{} {label} in state `{}`",
                        action.name,
                        current.unwrap_or_default()
                    ),
                )?;
                let it = &mut self.model.items[item];
                it.reached = !state.is_eventual(&to);
                it.state = Some(to);
                it.seen = None;
            }
            Some(None) if action.refused_elsewhere => {
                let status = self.ex(index).status();
                let why = match (vetoed, action.allowed_if.as_deref()) {
                    (true, Some(pointer)) => format!(" (where {pointer} is false)"),
                    _ => String::new(),
                };
                let what = format!(
                    "{} of {label} in state `{}`{why}",
                    action.name,
                    current.unwrap_or_default()
                );
                let result = c::lifecycle::refused(status, &what);
                self.check(&c::TFE_WRONG_STATE, Some(index), result)?;
                if success {
                    self.forget_state(item);
                }
            }
            _ => {
                if success {
                    self.forget_state(item);
                }
            }
        }
        Ok(())
    }

    /// The model no longer knows the item's state: the next read tells.
    fn forget_state(&mut self, item: usize) {
        let it = &mut self.model.items[item];
        it.state = None;
        it.reached = true;
        it.seen = None;
    }

    /// An item expected in a state the service reaches on its own (a run to be planned) that
    /// no read has shown there yet: reads it until it is there, within the poll budget. Once
    /// an item of the family did not get there in time, later ones are read once, not waited
    /// for (a service without a runner: the action is then judged by the state the service
    /// shows, which is consistent with the model). Answers the resource object last read.
    async fn settle(&mut self, op: &Op, item: usize) -> Result<Option<Value>, Stop> {
        let it = &self.model.items[item];
        let Some(want) = it.state.clone().filter(|_| !it.reached) else {
            return Ok(None);
        };
        let coll = self.coll(it.coll);
        if coll.show.is_none() || coll.show_list {
            return Ok(None);
        }
        let wait = !self.learned.gave_up_on(&want);
        let deadline = std::time::Instant::now() + self.ctx.poll_budget;
        let mut delay = std::time::Duration::from_millis(50);
        loop {
            let object = self.read_item(op, item, "a read before the action").await?;
            if self.model.items[item].reached {
                return Ok(object);
            }
            if !wait || std::time::Instant::now() + delay > deadline {
                if wait {
                    self.learned.give_up_on(&want);
                }
                return Ok(object);
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(std::time::Duration::from_secs(1));
        }
    }

    /// The document a show of a live item answered: it succeeds, is one resource, and is
    /// that item.
    fn shown(&mut self, index: usize, item: usize) -> Result<Value, Stop> {
        let label = self.label(item);
        self.expect_success(
            &c::CREATE_THEN_SHOW,
            index,
            &format!("show {label}, made in step {}", self.model.items[item].step),
        )?;
        let doc = self.single(index)?;
        self.same_id(
            index,
            &doc,
            item,
            &c::SHOW_SAME_ID,
            &format!("a show of {label}"),
        )?;
        Ok(doc)
    }

    /// Reads an item through its show and compares it with the model (`whence` names the
    /// read in messages); answers its resource object (`None`: it has no plain show).
    async fn read_item(
        &mut self,
        op: &Op,
        item: usize,
        whence: &str,
    ) -> Result<Option<Value>, Stop> {
        let coll = self.coll(self.model.items[item].coll);
        let Some(show) = coll.show.as_deref().filter(|_| !coll.show_list) else {
            return Ok(None);
        };
        let show = crate::catalog::families::model::get(show);
        let env = self.env(Some(item), self.model.items[item].parent, None);
        let index = self.send_route(&show, &env, op.api_v2, "").await?;
        let doc = self.shown(index, item)?;
        let data = doc.get("data").cloned().unwrap_or(Value::Null);
        self.compare(index, item, &data, whence)?;
        Ok(Some(data))
    }
}

/// The state an action leads to from `from` (`None`: the model does not allow it there).
fn leads_to(action: &crate::catalog::families::model::ActionDef, from: &str) -> Option<String> {
    match action.transition {
        Some(transition) => transition(from).map(str::to_string),
        None => action
            .from
            .iter()
            .any(|f| f == from)
            .then(|| action.to.clone()),
    }
}

impl Run<'_> {
    /// The answer to a link (a relationship POST): the pair is linked, whatever it was.
    fn link(
        &mut self,
        op: &Op,
        index: usize,
        parent: Option<usize>,
        other: Option<usize>,
    ) -> StepResult {
        let coll = self.coll(op.coll);
        let (Some(p), Some(o)) = (parent, other) else {
            return Err(Stop);
        };
        let what = format!("link {} to {}", self.label(o), self.label(p));
        self.expect_success(&c::ENDPOINT_SUCCEEDS, index, &what)?;
        self.status(index, crate::catalog::Kind::Relationship)?;
        let existing =
            self.model.of(op.coll).into_iter().find(|&i| {
                self.model.items[i].parent == parent && self.model.items[i].other == other
            });
        match existing {
            Some(i) => self.model.items[i].deleted = false,
            None => {
                let id = self.model.items[o].id.clone();
                let state = coll
                    .state
                    .as_ref()
                    .and_then(|s| s.initial(self.family, &self.model, parent));
                let reached = match (&coll.state, &state) {
                    (Some(def), Some(s)) => !def.is_eventual(s),
                    _ => true,
                };
                self.model.items.push(Item {
                    coll: op.coll,
                    id,
                    name: None,
                    parent,
                    other,
                    deleted: false,
                    expect: BTreeMap::new(),
                    state,
                    reached,
                    seen: None,
                    fields: BTreeMap::new(),
                    step: self.step_no,
                });
            }
        }
        Ok(())
    }

    /// A list read from another document (a parent's relationship, a registry answer).
    async fn read_list(&mut self, op: &Op, read: ListRead) -> StepResult {
        let coll = self.coll(op.coll);
        let parent = self.target_parent(op).ok_or(Stop)?;
        let env = self.env(None, parent, None);
        let path = env.fill(coll.list.as_deref().ok_or(Stop)?);
        let index = if read.registry {
            let url = self.ctx.target.registry_url(&path);
            self.send(Request::new(Method::GET, url, Auth::User))
                .await?
        } else {
            self.send_route(
                &crate::catalog::families::model::get(coll.list.as_deref().ok_or(Stop)?),
                &env,
                op.api_v2,
                "",
            )
            .await?
        };
        let listed = |run: &Self, i: usize| {
            run.model.items[i].parent == parent
                && run.model.live(i)
                && read
                    .only_state
                    .as_deref()
                    .is_none_or(|s| run.model.items[i].current_state().is_none_or(|st| st == s))
        };
        let expected: Vec<usize> = self
            .model
            .of(op.coll)
            .into_iter()
            .filter(|&i| listed(self, i))
            .collect();
        let check = if read.registry {
            &c::REGISTRY_READ
        } else {
            &c::LIST_CONTAINS
        };
        let status = self.ex(index).status();
        if read.absent_when_empty && status == Some(404) {
            let result = if expected.is_empty() {
                Ok(())
            } else {
                let labels: Vec<String> = expected.iter().map(|&i| self.label(i)).collect();
                Err(format!(
                    "expected {path} to list {}; it answered 404",
                    labels.join(", ")
                ))
            };
            return self.check(check, Some(index), result);
        }
        self.expect_success(check, index, &format!("read {path}"))?;
        let doc = self.document(index)?;
        if !read.registry {
            let result = c::envelope_single(&self.ctx.schemas, &doc);
            self.check(&c::ENVELOPE_SINGLE, Some(index), result)?;
        }
        let keys: Vec<String> = doc
            .pointer(&read.items)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.get(read.key.as_str()).and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let key_of = |run: &Self, i: usize| match &read.field {
            Some(f) => run.model.items[i]
                .fields
                .get(f)
                .cloned()
                .unwrap_or_default(),
            None => run.model.items[i].id.clone(),
        };
        for i in self.model.of(op.coll) {
            if self.model.items[i].parent != parent {
                continue;
            }
            let key = key_of(self, i);
            let holds = keys.contains(&key);
            let should = listed(self, i);
            let unknown = self.model.live(i)
                && read.only_state.is_some()
                && self.model.items[i].current_state().is_none();
            if unknown || holds == should {
                continue;
            }
            let label = self.label(i);
            let (check, message) = if should {
                (
                    check,
                    format!(
                        "expected {path} to list {label} (`{key}`), made in step {}; it lists {keys:?}",
                        self.model.items[i].step
                    ),
                )
            } else if !self.model.live(i) {
                (
                    &c::DELETE_THEN_GONE,
                    format!(
                        "expected {label} (`{key}`), deleted earlier in this sequence, to be gone from {path}; it is still listed"
                    ),
                )
            } else {
                (
                    check,
                    format!(
                        "expected {path} not to list {label} (`{key}`) in state `{}`; it does",
                        self.model.items[i].state.clone().unwrap_or_default()
                    ),
                )
            };
            self.check(check, Some(index), Err(message))?;
        }
        let known: Vec<String> = self
            .model
            .of(op.coll)
            .into_iter()
            .filter(|&i| self.model.items[i].parent == parent)
            .map(|i| key_of(self, i))
            .collect();
        if let Some(extra) = keys.iter().find(|k| !known.contains(k)) {
            self.check(
                &c::LIST_EXACT,
                Some(index),
                Err(format!(
                    "expected {path} to hold only what this sequence made; it holds `{extra}`"
                )),
            )?;
        }
        self.out.passed.insert(c::LIST_EXACT.id);
        Ok(())
    }
}

/// Template variables.
pub struct Env(BTreeMap<String, String>);

impl Env {
    /// Fills `{name}` placeholders.
    pub fn fill(&self, template: &str) -> String {
        let mut out = template.to_string();
        for (k, v) in &self.0 {
            out = out.replace(&format!("{{{k}}}"), v);
        }
        out
    }
}

fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else if path.contains('?') {
        format!("{path}&{query}")
    } else {
        format!("{path}?{query}")
    }
}

/// About how many pages a walk over a given organization's list takes at most: a longer list
/// is walked with a larger page size (up to 100).
const SHARED_WALK_PAGES: usize = 20;

/// The most pages a walk over a given organization's list takes when the list does not say
/// how long it is (`meta.pagination.total-count`); a walk stopped there is incomplete.
const SHARED_WALK_CAP: usize = 200;
