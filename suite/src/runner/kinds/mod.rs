//! The checks of an endpoint's kind after its request answered: create, show, list, update,
//! delete, action and read; each sends the further requests its checks need and records
//! what the functions of [`crate::checks`] answer.
//! By job: this module (create, show, action, read, the answer's own judgement), `lists`
//! (a list: its own items, paging, filters, includes) and `writes` (an update read back, a
//! delete gone).

use std::sync::Arc;

use serde_json::Value;

use super::{registry, TestRun};
use crate::catalog::{path_for, Variant};
use crate::checks::answer::Judgement;
use crate::checks::{self as c, Check};
use crate::fixtures::sent_attributes;
use crate::target::{Auth, Exchange};

mod lists;
mod writes;

impl TestRun<'_> {
    /// The JSON document of a 2xx answer; otherwise a failure of `check`: "expected {what},
    /// received {status}".
    pub(super) fn answered_document(
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

    /// `tfe.error-document` on an error answer the test provoked on purpose.
    pub(super) fn error_document(&mut self, index: usize) {
        let result = c::tfe_error_document(&self.ctx.schemas, self.ex(index));
        self.check(&c::TFE_ERROR_DOCUMENT, Some(index), result);
    }

    pub(super) async fn after_create(&mut self, main: usize, judged: &[Judgement]) {
        let Some(doc) = self.main_document(main, judged) else {
            return;
        };
        if !c::answer::held(judged, &c::CREATE_RETURNS_ID) {
            return;
        }
        let (Ok(id), Some(kind)) = (
            c::lifecycle::returned_id(&doc),
            self.endpoint.resource.clone(),
        ) else {
            return;
        };
        let body = self.ex(main).request.body.clone();
        let sent = sent_attributes(body.as_deref()).unwrap_or_default();
        self.echoed(main, &kind, &sent, &doc, "the create's answer");
        let made = self
            .ctx
            .fixtures
            .instance_from(&kind, id.clone(), &doc, body.as_deref());
        let known = made.known.clone();
        let links = made.links.clone();
        let defaults = self
            .ctx
            .catalog
            .graph
            .resources
            .get(&kind)
            .map(|def| def.defaults.clone())
            .unwrap_or_default();
        if !defaults.is_empty() {
            let result = c::lifecycle::defaults_hold(&defaults, &sent, &doc);
            self.check(&c::TFE_CREATE_DEFAULTS, Some(main), result);
        }
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
        // a list or an index may show the new item a moment late: read again within the window
        let shown = self.show_until(&kind, Exchange::is_success).await;
        // a show route that answers the target's no-route answer is another endpoint's
        // absence (its own test fails `endpoint.exists`), not this create's failure
        let show_absent =
            shown.and_then(
                |(index, _)| match self.ctx.fixtures.presence(self.ex(index)) {
                    c::Presence::Absent(why) => Some(why),
                    _ => None,
                },
            );
        if let Some((index, waited)) = shown.filter(|_| show_absent.is_none()) {
            let what = format!("the show of the created {kind}");
            let result = c::lifecycle::shows(self.ex(index), &id, &what);
            if self.check(check, Some(index), c::waited(result, waited)) {
                let shown = self.ex(index).json().unwrap_or_default();
                self.read_back(index, &known, &doc, &shown, &what);
                self.links_read_back(index, &links, &shown, &what);
            }
        }
        self.token_created(main, &doc, shown.map(|(index, _)| index))
            .await;
        if let Some(linked) = self.endpoint.expect.linked.clone() {
            // what the create adds to another resource (a module's version)
            self.state_check(&linked, &c::TFE_LINKED).await;
        }
        // Created items are listed (go-tfe, facts 6.1), and where there is no show the list
        // shows what was made.
        if let Some(((index, item), waited)) = self.listed_until(&kind, &id, true).await {
            let ids: Vec<String> = item.iter().map(|_| id.clone()).collect();
            let listed = c::lists::holds(&ids, &id, &kind);
            if self.check(&c::LIST_CONTAINS, Some(index), c::waited(listed, waited))
                && self.list_instead_of_show(&kind).is_some()
            {
                let shown = item.unwrap_or_default();
                let what = format!("the created {kind} as its list shows it");
                self.read_back(index, &known, &doc, &shown, &what);
            }
        }
        if let Some(why) = show_absent.filter(|_| !self.record.passed.contains(c::LIST_CONTAINS.id))
        {
            self.unobserved.push(format!(
                "the show of the created {kind} {why}, and no list showed it"
            ));
        }
    }

    /// `tfe.read-back` of a create's or update's own answer (`doc`, at `index`): it echoes what
    /// was `sent`, but for the kind's write-only attributes (`write_only` in resources.toml).
    fn echoed(
        &mut self,
        index: usize,
        kind: &str,
        sent: &serde_json::Map<String, Value>,
        doc: &Value,
        what: &str,
    ) {
        if sent.is_empty() {
            return;
        }
        let write_only = self
            .ctx
            .catalog
            .graph
            .resources
            .get(kind)
            .map(|def| def.write_only.clone())
            .unwrap_or_default();
        let result = c::lifecycle::echoes_sent(sent, doc, &write_only, what);
        self.check(&c::TFE_READ_BACK, Some(index), result);
    }

    /// `read-back` (core: the values both carry) and `tfe.read-back` (every one echoed) of
    /// what a create or update sent and answered (`known`), on a later answer.
    fn read_back(
        &mut self,
        index: usize,
        known: &serde_json::Map<String, Value>,
        made: &Value,
        shown: &Value,
        what: &str,
    ) {
        let result = c::lifecycle::reads_back(known, data_type(made), shown, what);
        self.check(&c::READ_BACK, Some(index), result);
        let result = c::lifecycle::echoes(known, shown, what);
        self.check(&c::TFE_READ_BACK, Some(index), result);
    }

    pub(super) async fn after_show(&mut self, main: usize, judged: &[Judgement]) {
        let Some(doc) = self.main_document(main, judged) else {
            return;
        };
        let shows_other = self.endpoint.expect.shows.is_some();
        if !shows_other || c::answer::held(judged, &c::SHOW_SAME_ID) {
            self.shows_as_made(main, &doc);
        }
        self.include_refused().await;
        self.unknown_id().await;
        self.variants_agree(main, &doc).await;
        self.unauthorized().await;
    }

    /// `read-back` on a show of a resource the run made: the attributes its create sent and
    /// answered, and its type (nothing to compare for what the run found or was given). A
    /// show that names no id reads back the instance `expect.shows` names once it answered
    /// that one (`show.same-id`, judged with the main answer).
    fn shows_as_made(&mut self, main: usize, doc: &Value) {
        let Some(made) = self
            .endpoint
            .resource
            .as_deref()
            .filter(|kind| {
                self.path_names(kind) || self.endpoint.expect.shows.as_deref() == Some(kind)
            })
            .and_then(|kind| self.scope.get(kind))
            .filter(|made| !made.known.is_empty() || !made.links.is_empty())
            .cloned()
        else {
            return;
        };
        let what = format!("the show of {} {}", made.kind, made.id);
        if !made.known.is_empty() {
            self.read_back(main, &made.known, &made.document, doc, &what);
        }
        self.links_read_back(main, &made.links, doc, &what);
    }

    /// `tfe.read-back` of the to-one relationships a create sent and answered (`links`), on a
    /// later answer; nothing to judge when it sent none.
    fn links_read_back(
        &mut self,
        index: usize,
        links: &std::collections::BTreeMap<String, String>,
        shown: &Value,
        what: &str,
    ) {
        if !links.is_empty() {
            let result = c::lifecycle::links_held(links, shown, what);
            self.check(&c::TFE_READ_BACK, Some(index), result);
        }
    }

    /// Whether this test's path names the resource of `kind` (by its id, or by fields of it:
    /// a registry module's name and provider).
    fn path_names(&self, kind: &str) -> bool {
        crate::catalog::path_params(&self.case.path).any(|p| {
            matches!(self.ctx.fixtures.param_source(p, Some(self.endpoint), None),
                Ok(crate::fixtures::ParamSource::Field(ref k, _)) if k == kind)
        })
    }

    /// `show.unknown-id`: the same show with an id nothing has (the requested id with a
    /// suffix, in the same place of the path) does not succeed. A show of no resource of its
    /// own is asked under an owner nobody has (`owner_value`): a stub answering the same
    /// document for any organization's entitlement set does not pass.
    async fn unknown_id(&mut self) {
        let Some(id) = self.requested_id().or_else(|| self.owner_value()) else {
            return;
        };
        let Ok(mut request) = self.main_request(&self.case.path, "GET", true) else {
            return;
        };
        let encoded = crate::catalog::encode_segment(&id);
        let mut segments: Vec<String> = request.url.path().split('/').map(str::to_string).collect();
        let Some(at) = segments.iter().rposition(|s| *s == encoded) else {
            return;
        };
        segments[at] = format!("{encoded}-conform-none");
        request.url.set_path(&segments.join("/"));
        request.url.set_query(None);
        let index = self.send(request).await;
        let what = format!("{id}-conform-none");
        let result = c::lifecycle::not_there(self.ex(index).status(), &what);
        self.check(&c::SHOW_UNKNOWN_ID, Some(index), result);
    }

    /// Versioning 1: for reads under the prefixed form, the bare form answers alike.
    pub(super) async fn variants_agree(&mut self, main: usize, doc: &Value) {
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
        let Ok(again) = self.main_request(&self.case.path, &self.case.method, true) else {
            return;
        };
        // two reads of a list that changes meanwhile (other tests' items, an eventually
        // consistent list showing them late) may differ: both forms are read again side by
        // side within the consistency window before they count as disagreeing
        let mut patience = self.ctx.target.patience();
        let (mut main, mut doc) = (main, doc.clone());
        loop {
            let index = self.send(request.clone()).await;
            if self.ctx.route_exists(self.ex(index)).is_err() {
                // The other form is absent: its own test reports that (endpoint.exists), once.
                return;
            }
            let must_hold = self.held_on_first_page(&doc);
            let result = c::forms_agree(self.ex(main), &doc, self.ex(index), must_hold.as_deref());
            if result.is_ok() || !patience.again().await {
                let waited = patience.done(result.is_ok());
                self.check(&c::VARIANTS_AGREE, Some(index), c::waited(result, waited));
                return;
            }
            self.exchanges[index].keep_evidence();
            main = self.send(again.clone()).await;
            let Some(fresh) = self.ex(main).json().ok() else {
                return;
            };
            doc = fresh;
        }
    }

    /// The item this list test must find, when the list's first page holds it: a long list
    /// may keep it on a later page.
    fn held_on_first_page(&self, doc: &Value) -> Option<String> {
        self.endpoint
            .expect
            .contains
            .as_ref()
            .and_then(|k| self.scope.get(k))
            .map(|i| i.id.clone())
            .filter(|id| c::list_ids(doc).contains(id))
    }

    /// Whether this test's path form is the canonical one, the form the target serves
    /// (`/api/v2` where served, as TFE serves only it): what is checked once per endpoint is
    /// checked there, never on a form a TFE-like server does not serve.
    fn in_canonical_form(&self) -> bool {
        let canonical = self.ctx.target.config.forms.canonical();
        match self.case.variant {
            Variant::Bare => canonical.is_empty(),
            Variant::ApiV2 => !canonical.is_empty(),
            _ => false,
        }
    }

    /// TFE: a read without a token is answered 401 (checked once per endpoint, in the
    /// canonical form).
    pub(super) async fn unauthorized(&mut self) {
        if !self.in_canonical_form() {
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

    pub(super) async fn after_action(&mut self, main: usize, judged: &[Judgement]) {
        if !self.ex(main).body().is_empty() && !c::answer::held(judged, &c::JSON_BODY) {
            return;
        }
        if let Some(state) = self.endpoint.expect.state.clone() {
            self.state_check(&state, &c::STATE_AFTER).await;
        }
        if let Some(state) = self.endpoint.expect.tfe_state.clone() {
            self.state_check(&state, &c::TFE_STATE_AFTER).await;
        }
        if let Some(linked) = self.endpoint.expect.linked.clone() {
            let failing = self.already_failing();
            let read = match self.poll_state(&linked, false, failing.is_some()).await {
                Ok(index) => {
                    self.check(&c::TFE_LINKED, Some(index), Ok(()));
                    Some(index)
                }
                Err(not) if failing.is_some() && !not.ended => {
                    // (nor is the owner's read, not waited for, judged at core)
                    self.not_waited(&c::TFE_LINKED, failing.unwrap_or_default());
                    None
                }
                Err(not) => {
                    self.check(&c::TFE_LINKED, not.index, Err(not.message));
                    not.index
                }
            };
            // At core, through the spec's own route (the owner's show or list): the member
            // named anywhere in it. A read outside the spec (`path`) is TFE's alone.
            if self.endpoint.kind == crate::catalog::Kind::Relationship && linked.path.is_none() {
                if let Some(index) = read {
                    self.member_listed(&linked, index);
                }
            }
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

    /// `relationship.listed` on the owner's read (`index`) of a relationship change.
    fn member_listed(&mut self, linked: &crate::catalog::StateExpect, index: usize) {
        let Some(value) = linked.value.as_str() else {
            return;
        };
        let Ok(id) = self.ctx.fixtures.fill_text(value, &self.scope) else {
            return;
        };
        let ex = self.ex(index);
        let what = format!("the owner's read {} {}", ex.request.method, ex.request.url);
        let result = c::lifecycle::member_listed(ex, &id, linked.absent, &what);
        self.check(&c::RELATIONSHIP_LISTED, Some(index), result);
    }

    pub(super) async fn after_read(&mut self, main: usize, judged: &[Judgement]) {
        let Some(doc) = self.main_document(main, judged) else {
            return;
        };
        if self.case.variant == Variant::Registry {
            let subject = self.registry_subject();
            if let Some(subject) = subject {
                let endpoint = self.endpoint;
                let mut probe = self.registry_probe();
                registry::after_read(&mut probe, endpoint, &subject, main, &doc).await;
            }
        } else {
            self.variants_agree(main, &doc).await;
        }
    }
}

/// A document's `data.type`.
fn data_type(doc: &Value) -> Option<&str> {
    doc.pointer("/data/type").and_then(Value::as_str)
}
