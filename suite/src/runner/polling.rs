//! Waiting for states: a precondition before the request, the state an action leads to,
//! polled within the budget.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use super::{unjudgeable, NotReached, Outcome, TestRun};
use crate::checks::{self as c, Check};
use crate::fixtures::auth_for;
use crate::target::{Body, Request};

impl TestRun<'_> {
    /// Polls the show endpoint of `state.show` until the pointer holds the value (or an
    /// array there holds it), within the poll budget; records `check` with the last answer.
    /// A check the profile does not fail on is read once: waiting cannot change the verdict
    /// (a TFE state at `--profile core` is reported, not waited for). Nor can it in a test that
    /// already fails ([`TestRun::already_failing`]): the state is read once, and where it
    /// does not hold yet the check is noted as not waited for, neither passed nor failed.
    pub(super) async fn state_check(
        &mut self,
        state: &crate::catalog::StateExpect,
        check: &'static Check,
    ) -> bool {
        let failing = self.already_failing();
        let once = !self.ctx.profile.fails_on(check.level) || failing.is_some();
        match self.poll_state(state, false, once).await {
            Ok(index) => self.check(check, Some(index), Ok(())),
            Err(not) => match failing {
                Some(failing) if !not.ended => {
                    self.not_waited(check, failing);
                    false
                }
                _ => self.check(check, not.index, Err(not.message)),
            },
        }
    }

    /// Waits for a state (`once`: reads it once): `Ok(index of the answer that shows it)`, or
    /// the last answer's index with a message naming the value last seen.
    pub(super) async fn poll_state(
        &mut self,
        state: &crate::catalog::StateExpect,
        canonical: bool,
        once: bool,
    ) -> Result<usize, NotReached> {
        let (mut url, filled) = self.state_url(state, canonical)?;
        // a read the spec does not list is named by its own path
        let read = match &state.path {
            Some(path) => format!("GET {path}"),
            None => state.show.clone(),
        };
        let wanted = match &state.value {
            Value::String(s) => Value::String(self.filled(s)),
            v => v.clone(),
        };
        for (name, value) in &state.query {
            url.query_pairs_mut().append_pair(name, &self.filled(value));
        }
        let item = state.item.as_ref().map(|i| self.filled(i));
        let Wait {
            key,
            timing,
            in_vain_before,
            once,
            budget,
            since,
        } = self.wait_for(state, &read, once, canonical);
        let polling = Instant::now();
        let mut slept = false;
        let started = since.unwrap_or(polling);
        let deadline = started + budget;
        let mut delay = Duration::from_millis(50);
        loop {
            let index = self
                .send(Request::new(Method::GET, url.clone(), auth_for(&filled)))
                .await;
            let (seen, holds) = self.state_seen(index, state, item.as_deref(), &wanted);
            if holds {
                self.ctx.waited.held(&key);
                if slept {
                    self.note_wait(&key, polling.elapsed(), true);
                }
                return Ok(index);
            }
            let settled = self.settled(index, state, seen.as_ref());
            if once || settled.any() || Instant::now() + delay > deadline {
                let timed_out = !(once || settled.any());
                let last = settled.last(seen.as_ref());
                let (tfes, ended) = (settled.tfes, settled.ended.is_some());
                if timed_out && !timing {
                    self.ctx.waited.in_vain(&key, &self.case.name);
                    self.window_spent |= !canonical;
                }
                // (a read once says how long since the window began, not the whole budget)
                let polled = match timed_out {
                    true => budget,
                    false => started.elapsed(),
                };
                if slept {
                    self.note_wait(&key, polling.elapsed(), false);
                }
                let mut message = c::lifecycle::state_not_reached(
                    &wanted,
                    state.absent,
                    &state.pointer,
                    &read,
                    &last,
                    polled,
                );
                if let Some(tfe) = tfes {
                    message = c::lifecycle::state_is_tfes(message, tfe);
                }
                if let Some(test) = &in_vain_before {
                    message = c::lifecycle::read_once_after(message, test);
                }
                return Err(NotReached {
                    index: Some(index),
                    message,
                    last,
                    ended,
                });
            }
            tokio::time::sleep(delay).await;
            slept = true;
            delay = (delay * 2).min(Duration::from_secs(1));
        }
    }

    /// What in the answer `index` (its value at the state's pointer `seen`) no wait can
    /// change: a request refused (the run's deadline), TFE's own value where the spec names
    /// another (final), a resource in a state it never leaves (`state.ends`: a run ended).
    fn settled<'s>(
        &self,
        index: usize,
        state: &'s crate::catalog::StateExpect,
        seen: Option<&Value>,
    ) -> Settled<'s> {
        let refused = matches!(
            self.ex(index).response,
            Err(crate::target::TransportError::Refused(_))
        );
        let tfes = state.tfe_answers.as_ref().filter(|v| seen == Some(*v));
        let ended = state.ends.as_ref().and_then(|ends| {
            let doc = self.ex(index).json().ok()?;
            let value = doc.pointer(&ends.pointer)?;
            ends.values
                .contains(value)
                .then(|| (ends.pointer.clone(), value.clone()))
        });
        Settled {
            refused,
            tfes,
            ended,
        }
    }

    /// What a state read (`index`) shows at the pointer, and whether the state holds (for
    /// an `absent` state: the read succeeded without it, or answered 404 where that counts).
    fn state_seen(
        &self,
        index: usize,
        state: &crate::catalog::StateExpect,
        item: Option<&str>,
        wanted: &Value,
    ) -> (Option<Value>, bool) {
        let ex = self.ex(index);
        let seen = ex
            .json()
            .ok()
            .and_then(|d| seen_at(&d, item, &state.pointer));
        let holds = c::lifecycle::state_holds(seen.as_ref(), wanted, &state.or);
        let holds = match state.absent {
            true => (ex.is_success() && !holds) || (state.or_gone && ex.status() == Some(404)),
            false => holds,
        };
        (seen, holds)
    }

    /// Notes in the run's wait log what this test waited for, when it waited at all.
    pub(super) fn note_wait(&self, what: &str, waited: Duration, held: bool) {
        if waited >= super::waited::NOTED {
            let how = if held { "held" } else { "in vain" };
            let what = format!("{what} ({how})");
            self.ctx.waited.note(&self.case.name, &what, waited);
        }
    }

    /// `text` with the test's placeholders filled, as it is where one cannot be.
    fn filled(&self, text: &str) -> String {
        self.ctx
            .fixtures
            .fill_text(text, &self.scope)
            .unwrap_or_else(|_| text.to_string())
    }

    /// How long a state read is waited for. A read that waited the whole budget in vain
    /// earlier in the run, and never held, is read once (a state that depends on timing, a
    /// status or an action, is always waited); a change the API makes at once (a member
    /// listed, a counter) is waited the consistency window at most, a state that takes time
    /// the poll budget.
    ///
    /// The reads of what the main request changed at once (not a precondition, `canonical`)
    /// share one window from its answer once one of them waited it in vain: the next read
    /// of the same action's effect reads once (one that held, late or not, leaves the next
    /// its whole window).
    fn wait_for(
        &self,
        state: &crate::catalog::StateExpect,
        read: &str,
        once: bool,
        canonical: bool,
    ) -> Wait {
        let key = format!("{read} {}", state.pointer);
        let timing = state.pointer.contains("status") || state.pointer.contains("/actions/");
        let in_vain_before = (!timing && !once)
            .then(|| self.ctx.waited.hopeless(&key))
            .flatten();
        let budget = match timing {
            true => self.ctx.poll_budget,
            false => self
                .ctx
                .poll_budget
                .min(self.ctx.target.consistency_window()),
        };
        let since = self
            .acted
            .filter(|_| !timing && !canonical && self.window_spent);
        Wait {
            since,
            once: once || in_vain_before.is_some(),
            key,
            timing,
            in_vain_before,
            budget,
        }
    }

    /// Where a state is read: the show endpoint `state.show` names (`group::id`), at its own
    /// path or at `state.path` (a read TFE documents that the spec does not list), in the
    /// canonical form (`canonical`: a precondition, not what the test judges) or in this
    /// test's own form.
    fn state_url(
        &self,
        state: &crate::catalog::StateExpect,
        canonical: bool,
    ) -> Result<(url::Url, String), NotReached> {
        let Some((_, mut show)) = self
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
        if let Some(path) = &state.path {
            // a read the spec does not list, at its own path, with the show's parameters
            show.path = path.clone();
        }
        // A precondition is not what the test judges: it is read in the canonical form.
        let (url, filled) = if canonical {
            self.canonical_url(&show).map_err(NotReached::harness)?
        } else {
            let path = self.sibling_path(&show);
            // the show's own parameters, else this test's (`params`: the pending run that
            // force-execute acted on is the run to show)
            let fixtures = &self.ctx.fixtures;
            let filled = fixtures
                .fill_path(&path, &self.scope, Some(&show), None)
                .or_else(|_| fixtures.fill_path(&path, &self.scope, Some(self.endpoint), None));
            let Ok(filled) = filled else {
                return Err(NotReached::harness(format!(
                    "cannot fill the path of {}",
                    state.show
                )));
            };
            (self.sibling_url(&show, &filled), filled)
        };
        Ok((url, filled))
    }

    /// Sends a GET of the endpoint `show` (of this test's group) in the canonical form.
    pub(super) async fn show_of(&mut self, show: &str) -> Result<usize, Outcome> {
        let Some((_, endpoint)) = self.ctx.catalog.endpoint(show, &self.case.group) else {
            return Err(Outcome::Error(format!("catalog: unknown show {show}")));
        };
        let endpoint = endpoint.clone();
        let (url, filled) = self.canonical_url(&endpoint).map_err(Outcome::Error)?;
        Ok(self
            .send(Request::new(Method::GET, url, auth_for(&filled)))
            .await)
    }

    /// Before an update of something the run did not make (`restore`): reads the current
    /// values (kept to restore them after the test) and decides the new ones the update
    /// sends (the payload's; for a boolean it leaves out, the opposite of the current one).
    /// A show that fails, or answers none of the values, blocks the test.
    pub(super) async fn restore_point(&mut self) -> Result<(), Outcome> {
        let Some(restore) = self.endpoint.restore.clone() else {
            return Ok(());
        };
        let index = self.show_of(&restore.show).await?;
        let current = match (self.ex(index).is_success(), self.ex(index).json()) {
            (true, Ok(doc)) => doc,
            _ => {
                if let Some(why) = unjudgeable(self.ex(index)) {
                    return Err(Outcome::Error(why));
                }
                let needed = "the current values it changes and restores".to_string();
                let blocker = self.ctx.blocker(needed, self.ex(index), None);
                return Err(self.blocked_or_absent(blocker, index).await);
            }
        };
        let mut before = serde_json::Map::new();
        let mut changes = serde_json::Map::new();
        for name in &restore.attributes {
            let Some(value) = current.pointer(&format!("/data/attributes/{name}")) else {
                continue;
            };
            before.insert(name.clone(), value.clone());
            if let Some(flag) = value.as_bool() {
                changes.insert(name.clone(), Value::Bool(!flag));
            }
        }
        if before.is_empty() {
            // nothing to change and read back: an update of nothing observes nothing
            let needed = format!(
                "the current values it changes and restores ({}), which the show did not answer",
                restore.attributes.join(", ")
            );
            let blocker = self.ctx.blocker(needed, self.ex(index), None);
            return Err(Outcome::Blocked(blocker));
        }
        self.restore_values = Some(before);
        self.new_values = Some(Value::Object(changes));
        Ok(())
    }

    /// After an update of something the run did not make: sends the values read before it
    /// back; a restore that does not succeed makes the test an `error` that says what is left
    /// changed.
    pub(super) async fn restore(&mut self) -> Result<(), Outcome> {
        let Some(values) = self.restore_values.take() else {
            return Ok(());
        };
        let (url, filled) = self.canonical_url(self.endpoint).map_err(Outcome::Error)?;
        let mut body = match &self.endpoint.payload {
            Some(p) => self
                .ctx
                .fixtures
                .payload(p, &self.scope)
                .map_err(|e| Outcome::Error(e.to_string()))?,
            None => serde_json::json!({"data": {}}),
        };
        body["data"]["attributes"] = Value::Object(values.clone());
        let method = Method::from_bytes(self.case.method.as_bytes()).unwrap_or(Method::PATCH);
        let request = Request::new(method, url, auth_for(&filled)).with_body(Body::Json(body));
        let index = self.send(request).await;
        if self.ex(index).is_success() {
            return Ok(());
        }
        Err(Outcome::Error(format!(
            "could not restore {} to the values read before the test ({}): the restore answered {}; set them back by hand",
            filled,
            Value::Object(values),
            c::status_text(self.ex(index).status())
        )))
    }

    /// Waits for the state the request needs (a run awaiting confirmation before apply): a
    /// read that fails blocks the test, pointing at the test that judges that read; a
    /// state never reached skips the test with the last state seen: nothing a test judges
    /// failed (a run whose plan cannot run where the target has no engine). Where the
    /// resource's create answered that state and it left it on its own before the first read
    /// (a run discardable only until its plan is queued), the skip says the verdict depends
    /// on timing.
    pub(super) async fn precondition(&mut self) -> Result<(), Outcome> {
        let Some(state) = self.endpoint.precondition.clone() else {
            return Ok(());
        };
        match self.poll_state(&state, true, false).await {
            Ok(_) => Ok(()),
            Err(NotReached {
                index: Some(index),
                last,
                ended,
                ..
            }) => {
                if let Some(why) = unjudgeable(self.ex(index)) {
                    return Err(Outcome::Error(why));
                }
                // the read itself failed: blocked by the test that judges that read
                if !self.ex(index).is_success() {
                    let needed = format!("{} = {} first", state.pointer, state.value);
                    let blocker = self.ctx.blocker(needed, self.ex(index), None);
                    return Err(match blocker.see {
                        Some(_) => Outcome::Blocked(blocker),
                        None => Outcome::Skip(format!(
                            "{} (no failing test is behind it)",
                            blocker.line()
                        )),
                    });
                }
                let poll = match state.show.contains("::") {
                    true => state.show.clone(),
                    false => format!("{}::{}", self.case.group, state.show),
                };
                let wanted = format!("{} = {}", state.pointer, state.value);
                let resource = self.endpoint.resource.as_deref().unwrap_or("resource");
                let held_when_made = self.scope.get(resource).is_some_and(|made| {
                    let seen = made.document.pointer(&state.pointer);
                    c::lifecycle::state_holds(seen, &state.value, &state.or)
                });
                // the action's own route, asked all the same: an absent route is judged there
                if let Some(absent) = self.unready_route_absent().await {
                    return Err(absent);
                }
                Err(Outcome::Skip(match held_when_made {
                    true => format!(
                        "{wanted} held when the {resource} was made (its create's answer), and it left that state on its own before {poll} read it ({last} until the poll budget ran out): whether the request can be sent in time depends on the target's timing, so nothing could be observed"
                    ),
                    false => format!(
                        "needs {wanted} first; {poll} read {last}{} (no failing test is behind it)",
                        if ended { "" } else { " until the poll budget ran out" }
                    ),
                }))
            }
            Err(not) => Err(Outcome::Error(not.message.into_string())),
        }
    }

    /// An action whose precondition never held is asked all the same, on the resource the run
    /// made: whatever state that resource is in, a route that gives the target's no-route
    /// answer is absent (`endpoint.exists` fails there; unsupported with its whole group),
    /// where the wait alone would have skipped it (a real server's bare forms). Any other answer, the
    /// refusal of a served route, leaves the skip. Only actions: asking makes nothing.
    async fn unready_route_absent(&mut self) -> Option<Outcome> {
        if self.endpoint.kind != crate::catalog::Kind::Action {
            return None;
        }
        let request = self
            .main_request(&self.case.path, &self.case.method, true)
            .ok()?;
        let main = self.send(request).await;
        let presence = self.ctx.fixtures.presence(self.ex(main));
        let c::Presence::Absent(_) = presence else {
            return None;
        };
        Some(self.route_absent(main, &presence).await)
    }

    /// Reads a state once, in the canonical form: `Some(true)` it holds, `Some(false)` it
    /// does not, `None` it could not be read.
    pub(super) async fn state_once(&mut self, state: &crate::catalog::StateExpect) -> Option<bool> {
        match self.poll_state(state, true, true).await {
            Ok(_) => Some(true),
            Err(NotReached {
                index: Some(index),
                last,
                ..
            }) if self.ex(index).is_success() && last != "nothing" => Some(false),
            Err(_) => None,
        }
    }

    /// The main request answered the refusal TFE documents where the state the action needs
    /// (`refused_unless`), but the answer is also how the target answers a path that cannot
    /// exist: the excuse holds only for a route that is there. Where the target's handlers
    /// answer "not found" unlike its router ([`Context::handlers_unlike_router`]), this answer
    /// to a path whose ids the run made proves the route absent: `None`, judged as a missing
    /// route. Where they answer as its router does (TFE's), nothing tells which: skipped,
    /// saying so. A route not shown absent takes the excuse ([`TestRun::documented_refusal`]).
    pub(super) async fn documented_or_absent(
        &mut self,
        main: usize,
        refusal: &crate::catalog::RefusedUnless,
        holds: Option<bool>,
    ) -> Option<Outcome> {
        let c::Presence::Absent(why) = self.ctx.fixtures.presence(self.ex(main)) else {
            return Some(self.documented_refusal(main, refusal, holds));
        };
        if self.ctx.handlers_unlike_router().await {
            return None;
        }
        Some(Outcome::Skip(format!(
            "answered {}, which {} gives where {}; but {why}, and its handlers answer an unknown id so too, so whether the route is served cannot be told from this answer: nothing could be observed",
            self.ex(main).status().unwrap_or_default(),
            refusal.source,
            refusal.unmet()
        )))
    }

    /// The main request answered the refusal TFE documents where the state the action needs
    /// (`holds`, read before it) is not there (`refused_unless`): the right answer, not a
    /// failure; skipped with the reason when the state could not be read.
    pub(super) fn documented_refusal(
        &mut self,
        main: usize,
        refusal: &crate::catalog::RefusedUnless,
        holds: Option<bool>,
    ) -> Outcome {
        let state = &refusal.state;
        let answered = self.ex(main).status().unwrap_or_default();
        let unmet = refusal.unmet();
        if refusal.judges_nothing(Some(answered)) {
            let read = match holds {
                Some(false) => format!("so it was before the request (read with {})", state.show),
                _ => format!("{} did not show otherwise before the request", state.show),
            };
            return Outcome::Skip(format!(
                "answered {answered}, which {} gives where {unmet}; {read}, and such an answer cannot show what the endpoint does, so nothing could be observed",
                refusal.source
            ));
        }
        self.record.pass(&c::ENDPOINT_EXISTS);
        self.error_document(main);
        match holds {
            Some(false) => {
                let what = format!("the action where {unmet}");
                let result = c::lifecycle::refused(self.ex(main).status(), &what);
                self.check(&c::TFE_WRONG_STATE, Some(main), result);
                self.notes.push(format!(
                    "before the request (read with {}) {unmet}, so {answered} is the answer {} documents: accepted as right; what the action does could not be observed on this resource",
                    state.show, refusal.source
                ));
                Outcome::Done
            }
            _ => Outcome::Skip(format!(
                "answered {answered}, the refusal {} documents where {unmet}; whether it was could not be read with {}, so nothing could be observed",
                refusal.source, state.show
            )),
        }
    }
}

/// How a state read is waited for ([`TestRun::wait_for`]).
struct Wait {
    /// The read and its pointer, as [`super::waited::Waited`] knows it.
    key: String,
    /// The state depends on timing (a status, an action a run allows).
    timing: bool,
    /// The test that waited the whole budget in vain on this read earlier in the run.
    in_vain_before: Option<String>,
    /// Read once, not waited for.
    once: bool,
    /// How long it is waited for.
    budget: Duration,
    /// When the window began, where it is the action's (else at the first read).
    since: Option<Instant>,
}

/// The value at `pointer` of a document, or of its `data` list's item `item` (by id).
fn seen_at(doc: &Value, item: Option<&str>, pointer: &str) -> Option<Value> {
    match item {
        Some(id) => doc
            .get("data")?
            .as_array()?
            .iter()
            .find(|i| crate::fixtures::value_string(i.get("id")).as_deref() == Some(id))?
            .pointer(pointer)
            .cloned(),
        None => doc.pointer(pointer).cloned(),
    }
}

/// What an answer shows that no further wait for a state can change ([`TestRun::settled`]).
struct Settled<'s> {
    refused: bool,
    tfes: Option<&'s Value>,
    /// The pointer and the final value a resource never leaves.
    ended: Option<(String, Value)>,
}

impl Settled<'_> {
    fn any(&self) -> bool {
        self.refused || self.tfes.is_some() || self.ended.is_some()
    }

    /// The value last seen, as the reasons say it (with the state it never leaves).
    fn last(&self, seen: Option<&Value>) -> String {
        let last = seen.map_or_else(|| "nothing".into(), Value::to_string);
        match &self.ended {
            Some((pointer, value)) => {
                format!("{last} while {pointer} was {value}, a state it never leaves")
            }
            None => last,
        }
    }
}
