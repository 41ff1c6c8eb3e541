//! How a sequence judges what it sees: [`Run::check_at`], the one rule of the level a
//! finding counts at, the judgement of each answer to a family route's request
//! (`checks::answer::exchange`), and the comparison of what the target shows with the model.

use serde_json::Value;

use super::{Run, StepResult, Stop};
use crate::catalog::{HttpMethod, Kind, Matched};
use crate::checks::answer::Seen;
use crate::checks::{self as c, Check, Finding, Level};

impl Run<'_> {
    /// Records a check; `Err(Stop)` when it failed at the profile's level.
    pub(super) fn check(
        &mut self,
        check: &'static Check,
        exchange: Option<usize>,
        result: Result<(), c::Message>,
    ) -> StepResult {
        self.check_at(check, check.level, exchange, result)
    }

    /// Records a check counted at `level`, or higher: the one rule of what a sequence judges
    /// at core. A finding on an exchange whose request is on a route the spec's tables do not
    /// list (a workspace's: [`Run::route_level`]) counts at `tfe` (but a 5xx, which is right
    /// nowhere: `transport.no-5xx` keeps its level), as does a comparison with
    /// a state only TFE documents (the caller's `level`: [`Run::state_level`]). `Err(Stop)`
    /// when it failed at the profile's level; below it, the first finding of each check is
    /// noted, at the level it counts at.
    pub(super) fn check_at(
        &mut self,
        check: &'static Check,
        level: Level,
        exchange: Option<usize>,
        result: Result<(), c::Message>,
    ) -> StepResult {
        // a server error is no answer anywhere: `transport.no-5xx` stays at its own level
        let level = match exchange {
            Some(i) if check.id != c::NO_SERVER_ERROR.id => level.max(self.route_level(i)),
            _ => level,
        };
        let result = result.map_err(|message| message.at_step(self.step_no));
        match result {
            Err(message) if self.profile.fails_on(level.max(check.level)) => {
                self.out.failure = Some(Finding::new(check, message, exchange).at(level));
                Err(Stop)
            }
            Err(_) if self.out.record.failed(check) => Ok(()),
            Err(message) => {
                let finding = Finding::new(check, message, exchange).at(level);
                self.out.record.findings.push(finding);
                Ok(())
            }
            // a pass counts only at a level the profile fails on, as a finding does: what a
            // sequence observed on a TFE route proves nothing of the spec's
            Ok(()) if self.profile.fails_on(level.max(check.level)) => {
                self.out.record.pass(check);
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }

    /// The level what an exchange shows counts at: `tfe` for a request on a family route the
    /// spec's tables do not list (`Catalog::find` matched no endpoint: a TFE route such as a
    /// workspace's, `suite/tests/sequence_files.rs`), else `core`.
    pub(super) fn route_level(&self, index: usize) -> Level {
        match self.matched.get(&index) {
            Some(None) => Level::Tfe,
            _ => Level::Core,
        }
    }

    /// The level a comparison with an item's expected state counts at: `core` only where an
    /// action of the spec led to it ([`Run::spec_states`]); a state it starts in, reaches on
    /// its own or was last read in is TFE's state machine (the spec: "The full list of
    /// states of any resource: not shown").
    pub(super) fn state_level(&self, item: usize) -> Level {
        if self.spec_states.contains(&item) {
            Level::Core
        } else {
            Level::Tfe
        }
    }

    /// True when the target serves both path forms (Versioning 1), so that they can be compared.
    pub(super) fn both_forms(&self) -> bool {
        let forms = self.ctx.target.config.forms;
        forms.bare && forms.api_v2
    }

    /// 2xx, else a failure of `check`.
    /// An answer that is the target's no-route answer is no failure of the step but the
    /// route's absence, and says so: `endpoint.exists` (a cloud-block backend answers a
    /// workspace create with its router's 404 page).
    pub(super) fn expect_success(
        &mut self,
        check: &'static Check,
        index: usize,
        what: &str,
    ) -> StepResult {
        let ex = self.ex(index);
        if !ex.is_success() {
            if let Err(absent) = self.ctx.route_exists(ex) {
                return self.check(&c::ENDPOINT_EXISTS, Some(index), Err(absent));
            }
        }
        let result = c::succeeds_as(self.ex(index), what);
        self.check(check, Some(index), result)
    }

    /// The JSON body of a 2xx answer.
    pub(super) fn document(&mut self, index: usize) -> Result<Value, Stop> {
        match c::json_body(self.ex(index)) {
            Ok(doc) => {
                self.out.record.pass(&c::JSON_BODY);
                Ok(doc)
            }
            Err(e) => {
                self.check(&c::JSON_BODY, Some(index), Err(e))?;
                Err(Stop)
            }
        }
    }

    /// Records the judgement of the answer to a family route's request ([`c::answer::exchange`]:
    /// the status the catalog expects, the JSON body, the media type, the envelope, the
    /// resource's documented shape, the ids), in order: the first that fails at the profile
    /// ends the sequence. The request is the catalog endpoint [`crate::catalog::Catalog::find`]
    /// matched it to, else a TFE route the spec's tables do not list (a workspace's), judged as
    /// the step's `kind` ([`Matched::beyond_catalog`]). The error answers and the paging a
    /// sequence provokes are its steps' to judge ([`Seen::InRun`]).
    pub(super) fn exchange(&mut self, index: usize, kind: Kind) -> StepResult {
        let m = match self.matched.get(&index) {
            Some(Some(m)) => m.clone(),
            _ => {
                let request = &self.ex(index).request;
                let method = HttpMethod::parse(&request.method).map_err(|_| Stop)?;
                let path = url::Url::parse(&request.url)
                    .map(|u| u.path().to_string())
                    .unwrap_or_default();
                Matched::beyond_catalog(method, &path, kind, self.admin)
            }
        };
        let judged = c::answer::exchange(&self.ctx.schemas, &m, self.ex(index), Seen::InRun);
        for (check, result) in judged {
            self.check(check, Some(index), result)?;
        }
        Ok(())
    }

    /// The document of a single-resource answer of `kind`, judged ([`Run::exchange`]).
    pub(super) fn single(&mut self, index: usize, kind: Kind) -> Result<Value, Stop> {
        let doc = self.document(index)?;
        self.exchange(index, kind)?;
        Ok(doc)
    }

    /// `check` that a single-resource answer (`what`, for the message) carries the id of
    /// the model's `item`.
    pub(super) fn same_id(
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

    /// The document of a list answer, judged ([`Run::exchange`]).
    pub(super) fn list_doc(&mut self, index: usize) -> Result<Value, Stop> {
        let doc = self.document(index)?;
        self.exchange(index, Kind::List)?;
        Ok(doc)
    }

    /// A request on a deleted item must not succeed (TFE: 404).
    pub(super) fn expect_gone(
        &mut self,
        check: &'static Check,
        index: usize,
        item: usize,
    ) -> StepResult {
        let what = format!("{}, deleted earlier in this sequence,", self.label(item));
        let status = self.ex(index).status();
        self.check(check, Some(index), c::lifecycle::gone(status, &what))?;
        let result = c::lifecycle::not_found(status, &what);
        self.check(&c::TFE_NOT_FOUND_AFTER_DELETE, Some(index), result)
    }

    /// Compares what a document says of an item with the model (updated attributes, state).
    pub(super) fn compare(
        &mut self,
        index: usize,
        item: usize,
        object: &Value,
        whence: &str,
    ) -> StepResult {
        let label = self.label(item);
        let expect = self.model.items[item].expect.clone();
        for (pointer, value) in expect {
            let whence = format!("{whence} of {label}");
            let result = c::lifecycle::persisted(object, &pointer, &value, &whence);
            self.check(&c::UPDATE_PERSISTED, Some(index), result)?;
        }
        let coll = self.coll(self.model.items[item].coll);
        let level = self.state_level(item);
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
                (Some(want), Some(g))
                    if c::lifecycle::state_holds(
                        Some(&g.as_str().into()),
                        &want.as_str().into(),
                        &[],
                    ) =>
                {
                    it.reached = true;
                    it.seen = None;
                    if self.profile.fails_on(level) {
                        self.out.record.pass(&c::STATE_AFTER);
                    }
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
                    self.check_at(&c::STATE_AFTER, level, Some(index), result)?;
                    // below the profile's level: the model follows the state the service shows
                    self.spec_states.remove(&item);
                    let it = &mut self.model.items[item];
                    it.state = Some(g);
                    it.reached = true;
                    it.seen = None;
                }
            }
        }
        Ok(())
    }
}
