//! The steps on one item: create (and adopt what a create made), show, a show that is a
//! search, a show of an unknown id, update, delete, and a relationship's link.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Env, Op, Run, StepResult, Stop};
use crate::catalog::families::model::{Item, Route};
use crate::catalog::Kind;
use crate::checks::{self as c};
use crate::pages;

impl<'a> Run<'a> {
    /// A new item of `coll`, made in this step under `parent` (and, for a relationship, with
    /// `other`), in the state its collection starts it in; `reached` unless the service gets
    /// it there on its own later.
    fn new_item(
        &self,
        coll: usize,
        id: String,
        name: Option<String>,
        (parent, other): (Option<usize>, Option<usize>),
        fields: BTreeMap<String, String>,
    ) -> Item {
        let def = self.coll(coll).state.as_ref();
        let state = def.and_then(|s| s.initial(self.family, &self.model, parent));
        let reached = match (def, &state) {
            (Some(def), Some(s)) => !def.is_eventual(s),
            _ => true,
        };
        Item {
            coll,
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
        }
    }

    pub(super) async fn create(&mut self, op: &Op) -> StepResult {
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
        let unmet = coll.needs.is_some_and(|needs| {
            !self
                .model
                .live_of(needs)
                .iter()
                .any(|&i| self.model.items[i].parent == parent)
        });
        if unmet && !self.ex(index).is_success() {
            // what the create needs is not there (a run of a workspace without a
            // configuration version): a refusal (4xx) is the documented answer
            let what = format!(
                "a {} without a {}",
                coll.kind,
                self.coll(coll.needs.unwrap_or_default()).kind
            );
            let result = c::lifecycle::refused(self.ex(index).status(), &what);
            return self.check(&c::ENDPOINT_SUCCEEDS, Some(index), result);
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
        self.exchange(index, Kind::Create)?;
        if coll.id_pointer != "/data/id" {
            let result = c::lifecycle::returned_id_at(item.is_some(), &coll.kind, &coll.id_pointer);
            self.check(&c::CREATE_RETURNS_ID, Some(index), result)?;
        }
        let Some(item) = item else { return Err(Stop) };
        let data = doc.get("data").cloned().unwrap_or(Value::Null);
        self.compare(index, item, &data, "the create answer")
    }

    /// Takes a made item into the model: the guard's ids, the run's ledger (an organization
    /// of the organizations family; an item the sequence's cleanup deletes), its remembered
    /// fields and its initial state. Answers its index.
    pub(super) fn adopt(
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
        let item = self.new_item(op.coll, id, name, (parent, other), fields);
        self.model.items.push(item);
        let item = self.model.items.len() - 1;
        if let Some(delete) = self.cleanup_request(item) {
            let show = self.show_request(item);
            let list = self.search_request(item);
            self.ctx.fixtures.note_made(crate::ledger::Made {
                kind: coll.kind.clone(),
                id: self.model.items[item].id.clone(),
                delete: Some(delete),
                show,
                list,
                parents: self.lives_in(parent),
                after: Vec::new(),
            });
        }
        item
    }

    /// What a made item lives in, as the ledger names it: its parent item, and the
    /// sequence's own organization (teardown removes the item before them).
    fn lives_in(&self, parent: Option<usize>) -> Vec<(String, String)> {
        let mut parents = Vec::new();
        if let Some(p) = parent {
            let item = &self.model.items[p];
            parents.push((self.coll(item.coll).kind.clone(), item.id.clone()));
        }
        if self.family.namespace && !self.given {
            parents.push(("organization".to_string(), self.org.clone()));
        }
        parents
    }

    /// The answer to a request that names no item is the route's absence, by the one rule of
    /// presence (`Context::route_exists`: the target's no-route answer, learned in preflight).
    pub(super) fn missing_route(&self, index: usize) -> bool {
        self.ctx.route_exists(self.ex(index)).is_err()
    }

    /// The organizations family before it made anything: a request that finds its route
    /// missing (a server with one organization, which cannot create organizations) blocks the
    /// family, as a sequence's organization that cannot be made does; the endpoint tests of
    /// that route judge it, once.
    pub(super) fn blocked_at(&mut self, index: usize) -> StepResult {
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

    pub(super) async fn show(&mut self, op: &Op) -> StepResult {
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
        let data = doc.get("data").cloned().unwrap_or(Value::Null);
        self.compare(index, item, &data, "the show")?;
        // The other path form answers the same document (where the target serves both: a
        // form it does not serve is reported once, by the endpoint tests of that form).
        if self.both_forms() {
            let other = self.send_route(&show, &env, !op.api_v2, "").await?;
            self.expect_success(&c::VARIANTS_AGREE, other, &format!("show {label}"))?;
            let doc2 = self.single(other, Kind::Show)?;
            let (with, without) = if op.api_v2 {
                (&doc, &doc2)
            } else {
                (&doc2, &doc)
            };
            let result =
                c::documents_agree_as(with, without, None, &format!("the show of {label}"));
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
        let doc3 = self.single(other, Kind::Show)?;
        let want = self.model.items[item].id.clone();
        let result = c::shows_agree(&doc, &doc3, &want, &label, path, alt);
        self.check(&c::DEPRECATED_SAME, Some(other), result)
    }

    /// A show that is a search: the list holds the item (and nothing else), or, once the
    /// item is deleted, does not hold it. An installation's list whose answer holds others'
    /// items did not serve the search: the whole list is read for the item (others' items
    /// are not judged), twice before a live item counts as absent, and a walk stopped at its
    /// bound without it judges nothing.
    pub(super) async fn show_in_list(
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
        let coll = self.coll(op.coll);
        let mut items = pages::items(&doc);
        let holds = |items: &[Value]| {
            items
                .iter()
                .any(|o| o.get("id").and_then(Value::as_str) == Some(want.as_str()))
        };
        let served = !self.shared_list(coll, None) || self.narrowed(op.coll, &items);
        let mut index = index;
        if !served {
            // the search is not served: the whole list, where only the sequence's own items
            // are judged; read twice before the item counts as absent (others change it)
            let own = |run: &Self, o: &Value| run.narrowed(op.coll, std::slice::from_ref(o));
            let Some(mut seen) = self.read_whole_kept(show, env, op.api_v2, own).await? else {
                return Ok(());
            };
            if self.model.live(item) && !holds(&seen.1) {
                let Some(again) = self.read_whole_kept(show, env, op.api_v2, own).await? else {
                    return Ok(());
                };
                seen = again;
            }
            (index, items) = seen;
        }
        let found = items
            .iter()
            .find(|o| o.get("id").and_then(Value::as_str) == Some(want.as_str()))
            .cloned();
        let live = self.model.live(item);
        let ids = c::item_ids(&items);
        match (live, found) {
            (false, found) => {
                let result = c::lists::gone_from(found.is_some(), &label, "the search");
                return self.check(&c::DELETE_THEN_GONE, Some(index), result);
            }
            (true, None) => {
                let what = format!("{label}, made in step {}", self.model.items[item].step);
                let result = c::lists::listed(false, &what, "the search", &ids);
                return self.check(&c::CREATE_THEN_SHOW, Some(index), result);
            }
            (true, Some(object)) => {
                self.check(&c::CREATE_THEN_SHOW, Some(index), Ok(()))?;
                self.compare(index, item, &object, "the search")?;
            }
        }
        if !served {
            // the whole list answered: what else it holds says nothing of the search
            return Ok(());
        }
        let extra = ids.iter().find(|id| **id != want).map(String::as_str);
        let place = format!("the search for {label}");
        self.check(
            &c::LIST_EXACT,
            Some(index),
            c::lists::only_made(extra, &place),
        )?;
        if !self.both_forms() {
            return Ok(());
        }
        let other = self.send_route(show, env, !op.api_v2, "").await?;
        self.expect_success(&c::VARIANTS_AGREE, other, &format!("search {label}"))?;
        let doc2 = self.list_doc(other)?;
        let what = format!("the search for {label}");
        let result = c::documents_agree_as(&doc, &doc2, Some(&want), &what);
        self.check(&c::VARIANTS_AGREE, Some(other), result)
    }

    pub(super) async fn show_unknown(&mut self, op: &Op) -> StepResult {
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

    pub(super) async fn update(&mut self, op: &Op) -> StepResult {
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
        let doc = self.single(index, Kind::Update)?;
        self.same_id(
            index,
            &doc,
            item,
            &c::UPDATE_SAME_ID,
            &format!("the update of {label}"),
        )?;
        self.model.items[item]
            .expect
            .insert(update.pointer.clone(), env.fill(&update.value));
        let data = doc.get("data").cloned().unwrap_or(Value::Null);
        self.compare(index, item, &data, "the update answer")
    }

    pub(super) async fn delete(&mut self, op: &Op) -> StepResult {
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
                return self.exchange(index, Kind::Relationship);
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
        self.exchange(index, Kind::Delete)
    }

    /// The answer to a link (a relationship POST): the pair is linked, whatever it was.
    pub(super) fn link(
        &mut self,
        op: &Op,
        index: usize,
        parent: Option<usize>,
        other: Option<usize>,
    ) -> StepResult {
        let (Some(p), Some(o)) = (parent, other) else {
            return Err(Stop);
        };
        let what = format!("link {} to {}", self.label(o), self.label(p));
        self.expect_success(&c::ENDPOINT_SUCCEEDS, index, &what)?;
        self.exchange(index, Kind::Relationship)?;
        let existing =
            self.model.of(op.coll).into_iter().find(|&i| {
                self.model.items[i].parent == parent && self.model.items[i].other == other
            });
        match existing {
            Some(i) => self.model.items[i].deleted = false,
            None => {
                let id = self.model.items[o].id.clone();
                let item = self.new_item(op.coll, id, None, (parent, other), BTreeMap::new());
                self.model.items.push(item);
            }
        }
        Ok(())
    }
}
