//! Runs one sequence of operations against the target, keeping the model and checking the
//! properties after every step.
//!
//! A sequence works in an organization of its own, made at its start and deleted at its end,
//! or inside an organization the user gives, which holds others' items too: there its lists
//! are read through their documented name filter, narrowed to the items named with its prefix,
//! and where a server has no such filter they are walked whole and judged on those items alone,
//! a page walk that the others' items moved being confirmed on a list that stands still before
//! it is reported, and its own items are deleted
//! one by one at its end. States the service reaches on its own (a run being planned) are
//! waited for, within the poll budget, before an action that depends on them.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::Method;
use serde_json::Value;

use crate::catalog::families::model::{Family, Model, Route};
use crate::catalog::{Matched, Organizations};
use crate::checks::{self as c, Finding};
use crate::runner::Context;
use crate::target::{Auth, Body, Exchange, Request, TransportError};
use crate::verdict::Profile;

mod actions;
mod items;
mod judge;
mod lists;
mod names;
mod narrowed;
mod setup;

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
    pub failure: Option<Finding>,
    /// The checks that passed, and the findings below the profile's level (the first of each
    /// check).
    pub record: c::Record,
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
    /// Where the sequence's own organizations are made.
    organizations: Organizations,
    /// The endpoint of each request sent through a family route, by exchange index: the
    /// catalog's (`None`: a TFE route the spec's tables do not list).
    matched: BTreeMap<usize, Option<Matched>>,
    /// The items whose expected state an action of the spec led to (its catalog endpoint
    /// names the state it leaves at core, `expect.state`): only such a state is judged at
    /// core ([`Run::state_level`]).
    spec_states: BTreeSet<usize>,
    /// A read that fails an eventual check is read again within the consistency window
    /// ([`Run::patient_step`]); a shrinking candidate reads once ([`Run::impatient`]).
    patient: bool,
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
            organizations: ctx.catalog.organizations(),
            matched: BTreeMap::new(),
            spec_states: BTreeSet::new(),
            patient: true,
        }
    }

    /// The same run reading once where it would wait within the consistency window: a
    /// shrinking candidate, whose failure only says which candidate to try next (the minimal
    /// sequence it ends with is run again patiently before it stands).
    pub fn impatient(mut self) -> Self {
        self.patient = false;
        self
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
                let result = self.patient_step(op).await;
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

    /// Runs one step. A read (show, list, walk) that fails on an observation the spec does
    /// not promise at once (`checks::EVENTUAL`: an item listed after its create, gone after its
    /// delete, an update shown) is read again within the consistency window
    /// (`crate::patience`, the run's one mechanism) before its failure stands; the step's
    /// transcript is its last read, and a failure that stands says how long it was waited for.
    async fn patient_step(&mut self, op: &Op) -> StepResult {
        let reads = self.patient && matches!(op.kind, OpKind::Show | OpKind::List | OpKind::Walk);
        let mut patience = self.ctx.target.patience();
        loop {
            let result = self.step(op).await;
            let eventual = self
                .out
                .failure
                .as_ref()
                .is_some_and(|f| c::is_eventual(f.check));
            let broken = self.out.unreachable.is_some() || self.out.error.is_some();
            if !reads || broken {
                return result;
            }
            if !eventual {
                patience.done(self.out.failure.is_none());
                return result;
            }
            if !patience.again().await {
                let waited = patience.done(false);
                if let Some(failure) = self.out.failure.as_mut() {
                    if let Err(message) = c::waited(Err(failure.message.clone()), waited) {
                        failure.message = message;
                    }
                }
                return result;
            }
            self.out.failure = None;
            // the reads superseded by the next keep only what a report shows
            for index in std::mem::take(&mut self.current) {
                self.out.exchanges[index].keep_evidence();
            }
        }
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

    /// Whether a list of the collection holds others' items as well as the sequence's: a list
    /// of the given organization's own items (its path names `{org}`), or an installation's
    /// list (`foreign = "installation"`), which holds them wherever its filter is not served.
    fn shared_list(
        &self,
        coll: &crate::catalog::families::model::Coll,
        parent: Option<usize>,
    ) -> bool {
        let organization_list = self.given
            && parent.is_none()
            && coll.list.as_deref().is_some_and(|l| l.contains("{org}"));
        organization_list || coll.foreign == crate::catalog::families::model::Foreign::Installation
    }

    /// Whether a list item carries a name the sequence gives (`{ns}-…`, at the collection's
    /// `name_pointer`), which no other sequence's names start with.
    fn own_named(&self, coll: &crate::catalog::families::model::Coll, object: &Value) -> bool {
        let prefix = self.own_prefix();
        object
            .pointer(&coll.name_pointer)
            .and_then(Value::as_str)
            .is_some_and(|name| name.starts_with(&prefix))
    }

    /// Sends a request; checks no 5xx and tells a broken connection from a target that is gone.
    async fn send(&mut self, request: Request) -> Result<usize, Stop> {
        let ex = self.ctx.target.send(request).await;
        let connection = matches!(ex.response, Err(TransportError::Connection(_)));
        let refused = match &ex.response {
            // conform did not send it (the run's deadline passed, the guard): nothing of the
            // target's to judge
            Err(e @ TransportError::Refused(_)) => Some(e.to_string()),
            _ => None,
        };
        self.out.exchanges.push(ex);
        let index = self.out.exchanges.len() - 1;
        self.current.push(index);
        if let Some(why) = refused {
            self.out.unreachable = Some(why);
            return Err(Stop);
        }
        if connection {
            // One route may drop connections; a target that answers nothing is gone.
            let probe = self
                .ctx
                .target
                .send(Request::new(
                    Method::GET,
                    self.ctx
                        .target
                        .api_url(&format!("{}?page_size=1", self.organizations.collection)),
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
        let method = route.method.method();
        let matched = self.ctx.catalog.find(method.as_str(), &path);
        let auth = if self.admin { Auth::Admin } else { Auth::User };
        let mut request = Request::new(method, self.ctx.target.url(&path), auth);
        if let Some(body) = &route.body {
            let text = env.fill(body);
            let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            request = request.with_body(Body::Json(value));
        }
        let index = self.send(request).await?;
        self.matched.insert(index, matched);
        Ok(index)
    }

    fn ex(&self, index: usize) -> &Exchange {
        &self.out.exchanges[index]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_simpler_operation_drops_one_complication_at_a_time() {
        let walk = Op {
            kind: OpKind::Walk,
            coll: 0,
            slot: 2,
            page_size: 3,
            api_v2: true,
            form: 1,
        };
        let simpler = walk.simpler();
        assert_eq!(simpler.len(), 4);
        assert!(simpler
            .iter()
            .all(|op| op.kind == OpKind::Walk && op.coll == 0));
        assert!(!simpler[0].api_v2 && simpler[1].slot == 0 && simpler[2].form == 0);
        assert_eq!(simpler[3].page_size, 1);
        let plain = Op {
            api_v2: false,
            slot: 0,
            form: 0,
            page_size: 1,
            ..walk
        };
        assert!(plain.simpler().is_empty());
    }

    #[test]
    fn templates_are_filled_and_queries_joined() {
        let env = Env(BTreeMap::from([
            ("org".to_string(), "acme".to_string()),
            ("id".to_string(), "ws-1".to_string()),
        ]));
        assert_eq!(
            env.fill("/organizations/{org}/workspaces/{id}"),
            "/organizations/acme/workspaces/ws-1"
        );
        assert_eq!(env.fill("{unknown}"), "{unknown}");
        assert_eq!(with_query("/x", ""), "/x");
        assert_eq!(with_query("/x", "page=1"), "/x?page=1");
        assert_eq!(with_query("/x?q=a", "page=1"), "/x?q=a&page=1");
    }
}
