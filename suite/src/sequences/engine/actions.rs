//! Actions and states: an action allowed or refused in the item's state, the state the
//! service reaches on its own, and reads of an item while it settles.

use reqwest::Method;
use serde_json::Value;

use super::{Op, Run, StepResult, Stop};
use crate::catalog::families::model::ActionDef;
use crate::checks::{self as c};
use crate::target::{Auth, Body, Request};

impl<'a> Run<'a> {
    pub(super) async fn action(&mut self, op: &Op, a: usize) -> StepResult {
        let item = self.target_item(op).ok_or(Stop)?;
        let coll = self.coll(op.coll);
        let state = coll.state.as_ref().ok_or(Stop)?;
        let action = state.actions.get(a).ok_or(Stop)?;
        let label = self.label(item);
        let Allowed { now, guard } = self.allowed(op, item, action).await?;
        let Some(index) = self.send_action(op, item, action, &label).await? else {
            return Ok(());
        };
        if !self.model.live(item) {
            return self.expect_gone(&c::TFE_NOT_FOUND_AFTER_DELETE, index, item);
        }
        if !action.upload {
            // an upload address is the create's answer to give, no endpoint of the catalog's
            self.exchange(index, crate::catalog::Kind::Action)?;
        }
        let success = self.ex(index).is_success();
        let current = self.model.items[item].current_state().map(str::to_string);
        let vetoed = now == Some(false) || guard == Some(Some(false));
        let next = match guard {
            // the model cannot tell: any answer, the next read tells the state
            Some(None) => None,
            _ => current
                .as_deref()
                .map(|s| leads_to(action, s).filter(|_| !vetoed)),
        };
        let in_state = format!("{label} in state `{}`", current.unwrap_or_default());
        match next {
            Some(Some(to)) => {
                // the model allows it by the state it expects: judged at that state's level
                let what = format!("{} {in_state}", action.name);
                let result = c::succeeds_as(self.ex(index), &what);
                let level = self.state_level(item);
                self.check_at(&c::ENDPOINT_SUCCEEDS, level, Some(index), result)?;
                if self.names_state(action.upload.then_some(op.coll), index) {
                    self.spec_states.insert(item);
                } else {
                    self.spec_states.remove(&item);
                }
                let it = &mut self.model.items[item];
                it.reached = !state.is_eventual(&to);
                it.state = Some(to);
                it.seen = None;
            }
            Some(None) if action.refused_elsewhere => {
                let status = self.ex(index).status();
                let why = match (vetoed, action.allowed_if.as_deref()) {
                    (true, Some(pointer)) if now == Some(false) => {
                        format!(" (where {pointer} is false)")
                    }
                    (true, _) if guard == Some(Some(false)) => {
                        " (its `allowed_when` guard refuses it now)".to_string()
                    }
                    _ => String::new(),
                };
                let what = format!("{} of {in_state}{why}", action.name);
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

    /// What the item's state allows now: the state the model expects, once the service has
    /// got it there (polled for), and the service's own word where the action has one.
    async fn allowed(&mut self, op: &Op, item: usize, action: &ActionDef) -> Result<Allowed, Stop> {
        let mut allowed = Allowed {
            now: None,
            guard: None,
        };
        if !self.model.live(item) {
            return Ok(allowed);
        }
        let object = self.settle(op, item).await?;
        let current = self.model.items[item].current_state().map(str::to_string);
        let model_allows = current
            .as_deref()
            .is_some_and(|s| leads_to(action, s).is_some());
        if let Some(allowed_when) = action.allowed_when.filter(|_| model_allows) {
            allowed.guard = Some(allowed_when(self.family, &self.model, item));
        }
        if let Some(pointer) = action.allowed_if.as_deref().filter(|_| model_allows) {
            let object = match object {
                Some(object) => Some(object),
                None => self.read_item(op, item, "a read before the action").await?,
            };
            allowed.now = object.and_then(|o| o.pointer(pointer).and_then(Value::as_bool));
        }
        Ok(allowed)
    }

    /// Sends the action's request: an upload to the address the item's create answered, or
    /// the action's route. `None` when there is no upload address to send to (judged).
    async fn send_action(
        &mut self,
        op: &Op,
        item: usize,
        action: &ActionDef,
        label: &str,
    ) -> Result<Option<usize>, Stop> {
        if !action.upload {
            let env = self.env(Some(item), self.model.items[item].parent, None);
            let index = self.send_route(&action.route, &env, op.api_v2, "").await?;
            return Ok(Some(index));
        }
        let Some(url) = self.model.items[item].fields.get("upload").cloned() else {
            let what = format!("the create answer of {label}");
            let result = c::upload_offered(&[], &what, &Value::Null);
            self.check(&c::UPLOAD_URL_FORM, None, result)?;
            return Ok(None);
        };
        let url = match c::upload_address(&url, &self.ctx.target.config.root) {
            Ok(url) => url,
            Err(message) => {
                self.check(&c::UPLOAD_URL_FORM, None, Err(message))?;
                return Ok(None);
            }
        };
        let request = Request::new(Method::PUT, url, Auth::None)
            .with_body(Body::Bytes(crate::tarball::config_tarball()));
        Ok(Some(self.send(request).await?))
    }

    /// Whether the action sent as exchange `index` is one whose catalog endpoint names the
    /// state it leaves at core (`expect.state`: an archive, a suspend, an upload of a
    /// configuration version), so that the state it leads to is the spec's. An upload
    /// (`upload`: its collection) is the catalog's upload endpoint of the resource the
    /// collection's create makes.
    fn names_state(&self, upload: Option<usize>, index: usize) -> bool {
        let catalog = &self.ctx.catalog;
        let endpoint = match upload {
            Some(coll) => {
                let create = &self.coll(coll).create;
                let path = create.path.replace(['{', '}'], "");
                catalog
                    .find(create.method.method().as_str(), &path)
                    .and_then(|m| m.row.resource)
                    .and_then(|kind| catalog.upload_of(&kind).cloned())
            }
            None => match self.matched.get(&index) {
                Some(Some(m)) => Some(m.row.clone()),
                _ => None,
            },
        };
        endpoint.is_some_and(|e| e.expect.state.is_some())
    }

    /// The model no longer knows the item's state: the next read tells.
    pub(super) fn forget_state(&mut self, item: usize) {
        self.spec_states.remove(&item);
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
    pub(super) async fn settle(&mut self, op: &Op, item: usize) -> Result<Option<Value>, Stop> {
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
    pub(super) fn shown(&mut self, index: usize, item: usize) -> Result<Value, Stop> {
        let label = self.label(item);
        self.expect_success(
            &c::CREATE_THEN_SHOW,
            index,
            &format!("show {label}, made in step {}", self.model.items[item].step),
        )?;
        let doc = self.single(index, crate::catalog::Kind::Show)?;
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
    pub(super) async fn read_item(
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

/// What an item's state allows of an action now ([`Run::action`]).
struct Allowed {
    /// The service's own word (`allowed_if`), where the action has one.
    now: Option<bool>,
    /// The model's own guard beyond the state (`allowed_when`; `Some(None)`: it cannot tell).
    guard: Option<Option<bool>>,
}
