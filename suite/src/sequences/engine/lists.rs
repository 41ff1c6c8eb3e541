//! The steps on a list: a list read against the model, a page walk through
//! [`crate::pages::Walk`] (inside a given organization, narrowed to the sequence's own items
//! by the list's name filter; where the server ignores it, the whole list walked with only the
//! sequence's own items kept and a suspected paging fault confirmed on a list that stands
//! still), and the family's list reads.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::Value;

use super::{Env, Op, Run, StepResult, Stop};
use crate::catalog::families::model::{Foreign, ListRead, Route};
use crate::checks::{self as c, Check};
use crate::pages::{self, Paging, Walk};
use crate::target::{Auth, Request};

/// About how many pages a walk over a given organization's list takes at most: a longer list
/// is walked with a larger page size (up to 100).
const SHARED_WALK_PAGES: usize = 20;

/// The most pages a walk over a given organization's list takes when the list does not say
/// how long it is (`meta.pagination.total-count`): the one cap of every walk; a walk stopped
/// there is incomplete.
const SHARED_WALK_CAP: usize = pages::MAX_PAGES;

impl<'a> Run<'a> {
    /// Checks the ids a list (or a whole walk) holds against the model.
    pub(super) fn compare_list(
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
                    let what = format!(
                        "{}, made in step {}",
                        self.label(i),
                        self.model.items[i].step
                    );
                    let ids: Vec<String> = listed.keys().cloned().collect();
                    let result = c::lists::listed(false, &what, "the list", &ids);
                    self.check(missing_check, Some(index), result)?;
                }
                (true, Some(object)) => self.compare(index, i, &object, "the list")?,
                (false, Some(_)) => {
                    let result = c::lists::gone_from(true, &self.label(i), "the list");
                    self.check(&c::DELETE_THEN_GONE, Some(index), result)?;
                }
                _ => {}
            }
        }
        let mut extra = None;
        for (id, object) in &listed {
            if self.model.find(op.coll, id).is_some() || extra.is_some() {
                continue;
            }
            let foreign = if self.shared_list(coll, parent) {
                !self.own_named(coll, object)
            } else {
                match &coll.foreign {
                    Foreign::Fail => false,
                    Foreign::Installation => !self.own_named(coll, object),
                    Foreign::Named(name) => {
                        object.pointer("/attributes/name").and_then(Value::as_str)
                            == Some(name.as_str())
                    }
                }
            };
            if !foreign {
                extra = Some(id.as_str());
            }
        }
        let place = format!("the list of {}s{}", coll.kind, self.parent_label(parent));
        let result = c::lists::only_made(extra, &place);
        self.check(&c::LIST_EXACT, Some(index), result)
    }

    pub(super) async fn list(&mut self, op: &Op) -> StepResult {
        let coll = self.coll(op.coll);
        if let Some(read) = coll.list_read.clone() {
            return self.read_list(op, read).await;
        }
        let parent = self.target_parent(op).ok_or(Stop)?;
        let env = self.env(None, parent, None);
        let route = crate::catalog::families::model::get(coll.list.as_deref().ok_or(Stop)?);
        // Inside a given organization, the list narrowed to the sequence's names first: it
        // holds the sequence's own items only, so it is judged whole.
        if let Some(filter) = self.own_filter(coll, parent) {
            let index = self.send_route(&route, &env, op.api_v2, &filter).await?;
            if self.ex(index).is_success() {
                let doc = self.list_doc(index)?;
                let items = pages::items(&doc);
                if self.narrowed(op.coll, &items) {
                    let complete = !pages::has_next(&doc).unwrap_or(false);
                    return self.compare_list(
                        op,
                        parent,
                        index,
                        &items,
                        complete,
                        &c::LIST_CONTAINS,
                    );
                }
            }
            // the filter is not served here: the list as it is, below
        }
        let index = self.send_route(&route, &env, op.api_v2, "").await?;
        if !self.family.namespace && self.model.items.is_empty() && self.missing_route(index) {
            return self.blocked_at(index);
        }
        self.expect_success(
            &c::ENDPOINT_SUCCEEDS,
            index,
            &format!("list {}s", coll.kind),
        )?;
        let doc = self.list_doc(index)?;
        let items = doc
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let complete = !pages::has_next(&doc).unwrap_or(false);
        self.compare_list(op, parent, index, &items, complete, &c::LIST_CONTAINS)
    }

    /// A page walk. Inside a given organization it walks the list narrowed to the sequence's
    /// names (its own items, paged as any list is), and the whole shared list only where the
    /// collection has no name filter or the server ignores it.
    pub(super) async fn walk(&mut self, op: &Op) -> StepResult {
        let coll = self.coll(op.coll);
        let parent = self.target_parent(op).ok_or(Stop)?;
        if let Some(filter) = self.own_filter(coll, parent) {
            if self.walk_in(op, parent, Some(&filter)).await? {
                return Ok(());
            }
        }
        self.walk_in(op, parent, None).await.map(|_| ())
    }

    /// Walks the list's pages at the operation's page size, narrowed by `filter` when given,
    /// and judges the walk. `Ok(false)`: the narrowed list was not served narrowed (an item of
    /// others', or no 2xx), and nothing was judged.
    async fn walk_in(
        &mut self,
        op: &Op,
        parent: Option<usize>,
        filter: Option<&str>,
    ) -> Result<bool, Stop> {
        let coll = self.coll(op.coll);
        let env = self.env(None, parent, None);
        let shared = filter.is_none() && self.shared_list(coll, parent);
        let size = usize::from(op.page_size.max(1));
        let expected = self.model.of(op.coll).len();
        let mut walk = Walk::new(size, expected / size + 3);
        let mut resized = false;
        let mut seen: Vec<(String, usize)> = Vec::new();
        let mut all = Vec::new();
        let mut narrowed = Vec::new();
        let mut last = None;
        let list = crate::catalog::families::model::get(coll.list.as_deref().ok_or(Stop)?);
        while let Some(page) = walk.next_page() {
            let size = walk.size();
            let mut query = Paging::of(self.profile).query(page, size);
            if let Some(filter) = filter {
                query = format!("{query}&{filter}");
            }
            let index = self.send_route(&list, &env, op.api_v2, &query).await?;
            last = Some(index);
            if filter.is_some() && !self.ex(index).is_success() {
                return Ok(false);
            }
            if !self.family.namespace && self.model.items.is_empty() && self.missing_route(index) {
                return self.blocked_at(index).map(|()| true);
            }
            self.expect_success(
                &c::PAGING_ACCEPTED,
                index,
                &format!("page {page} of the {}s", coll.kind),
            )?;
            let doc = self.list_doc(index)?;
            if filter.is_some() {
                // judged once the whole walk is known narrowed: a page that holds others'
                // items shows the filter ignored, and the list may move under such a walk
                if !self.narrowed(op.coll, &pages::items(&doc)) {
                    return Ok(false);
                }
                let items = walk.read(&doc);
                narrowed.push((index, page, size, items.len(), c::item_ids(&items)));
                all.extend(items);
                continue;
            }
            let count = pages::items(&doc).len();
            self.check(
                &c::TFE_PAGE_SIZE,
                Some(index),
                c::lists::page_size(count, size, page),
            )?;
            if shared && page == 1 && sized_whole(&mut walk, &doc, &mut resized) {
                continue;
            }
            let items = walk.read(&doc);
            if shared {
                let own = self.own_items(op, items);
                // Others' items may move the list under the walk: a repeated item of the
                // sequence's own is judged after it (see below).
                seen.extend(c::item_ids(&own).into_iter().map(|id| (id, page)));
                all.extend(own);
                // and of the page's answer, only what a report shows
                self.out.exchanges[index].keep_evidence();
                continue;
            }
            self.read_once(index, page, size, c::item_ids(&items), &mut seen)?;
            all.extend(items);
        }
        for (index, page, size, count, ids) in narrowed {
            self.check(
                &c::TFE_PAGE_SIZE,
                Some(index),
                c::lists::page_size(count, size, page),
            )?;
            self.read_once(index, page, size, ids, &mut seen)?;
        }
        let walked = Walked {
            index: last.ok_or(Stop)?,
            list: &list,
            env: &env,
            walk: &walk,
            shared,
            seen: &seen,
            all: &all,
        };
        self.judge_walk(op, parent, walked).await.map(|()| true)
    }

    /// The items of a page of a shared list that may be the sequence's own (an item of the
    /// model's, or one named with its prefix): others' items are never judged, so that
    /// memory follows the sequence, not the size of the shared list.
    fn own_items(&self, op: &Op, items: Vec<Value>) -> Vec<Value> {
        let coll = self.coll(op.coll);
        items
            .into_iter()
            .filter(|o| {
                o.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| self.model.find(op.coll, id).is_some())
                    || self.own_named(coll, o)
            })
            .collect()
    }

    /// `tfe.page-size`: no item of page `page` (of `size`, answered at `index`) was read on
    /// an earlier page of the walk (`seen`: each item read, with its page).
    fn read_once(
        &mut self,
        index: usize,
        page: usize,
        size: usize,
        ids: Vec<String>,
        seen: &mut Vec<(String, usize)>,
    ) -> StepResult {
        for id in ids {
            if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
                let result = c::lists::read_twice(&id, *first, page, size);
                self.check(&c::TFE_PAGE_SIZE, Some(index), result)?;
            }
            seen.push((id, page));
        }
        Ok(())
    }

    /// Judges a whole walk against the model; its finding names the walk that showed it.
    async fn judge_walk(&mut self, op: &Op, parent: Option<usize>, w: Walked<'_>) -> StepResult {
        let Walked {
            index,
            list,
            env,
            walk,
            shared,
            seen,
            all,
        } = w;
        // A walk stopped with pages left: what it did not reach is not judged.
        let complete = !(shared && walk.cut_short());
        let size = walk.size();
        let pages = if shared {
            walk.page()
        } else {
            seen.iter().map(|(_, p)| *p).max().unwrap_or(1)
        };
        let missing_before = self.out.failure.is_none();
        let result = if shared {
            self.judge_shared_walk(op, parent, index, list, env, size, seen, all, complete)
                .await
        } else {
            self.compare_list(op, parent, index, all, complete, &c::TFE_PAGE_SIZE)
        };
        if missing_before {
            if let Some(f) = &mut self.out.failure {
                let repeated = walk.repeated().map(|page| (page, list.path.as_str()));
                f.message = c::lists::walked(f.message.clone(), pages, size, repeated);
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
    pub(super) async fn judge_shared_walk(
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
        // only a repeated item is asked whether it is the sequence's own
        let repeated = c::lists::repeated(seen).find(|(id, _, _)| own(self, id));
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
                    let result =
                        c::lists::read_twice(&id, first, again, size).map_err(|e| e.because(&why));
                    self.check(&c::TFE_PAGE_SIZE, Some(index), result)?;
                    return self.compare_list(op, parent, index, all, complete, &c::TFE_PAGE_SIZE);
                }
                let result = self.compare_list(op, parent, index, all, true, &c::TFE_PAGE_SIZE);
                if let Some(f) = &mut self.out.failure {
                    f.message = f.message.clone().because(&why);
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
    pub(super) async fn confirm_paging(
        &mut self,
        list: &Route,
        env: &Env,
        api_v2: bool,
        size: usize,
        id: &str,
    ) -> Result<Option<c::Message>, Stop> {
        for _ in 0..3 {
            let Some(before) = self.read_whole(list, env, api_v2).await? else {
                return Ok(None);
            };
            let at = before.iter().position(|i| i == id);
            let mut on = Vec::new();
            if let Some(p) = at {
                let expected = p / size + 1;
                let pages = before.len().div_ceil(size).max(1);
                for page in expected.saturating_sub(1).max(1)..=(expected + 1).min(pages) {
                    let query = Paging::of(self.profile).query(page, size);
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
            return Ok(c::lists::paging_confirmed(id, &before, &on, size));
        }
        Ok(None)
    }

    /// The ids of a whole list, read in pages of 100 (`None`: it could not be read, or it is
    /// longer than 20 such pages).
    pub(super) async fn read_whole(
        &mut self,
        list: &Route,
        env: &Env,
        api_v2: bool,
    ) -> Result<Option<Vec<String>>, Stop> {
        let whole = self.read_whole_kept(list, env, api_v2, |_, _| true).await?;
        Ok(whole.map(|(_, items)| c::item_ids(&items)))
    }

    /// The items of a whole list that `keep` keeps, read in pages of 100, and the index of
    /// the last page read (`None`: it could not be read, or it is longer than 20 such pages).
    pub(super) async fn read_whole_kept(
        &mut self,
        list: &Route,
        env: &Env,
        api_v2: bool,
        keep: impl Fn(&Self, &Value) -> bool,
    ) -> Result<Option<(usize, Vec<Value>)>, Stop> {
        let mut kept = Vec::new();
        let mut last = None;
        let mut walk = Walk::new(100, 20);
        while let Some(page) = walk.next_page() {
            let query = Paging::of(self.profile).query(page, 100);
            let index = self.send_route(list, env, api_v2, &query).await?;
            if !self.ex(index).is_success() {
                return Ok(None);
            }
            let doc = self.document(index)?;
            let items = walk.read(&doc);
            kept.extend(items.into_iter().filter(|o| keep(self, o)));
            self.out.exchanges[index].keep_evidence();
            last = Some(index);
        }
        Ok(last.filter(|_| !walk.cut_short()).map(|last| (last, kept)))
    }

    /// A list read from another document (a parent's relationship, a registry answer).
    pub(super) async fn read_list(&mut self, op: &Op, read: ListRead) -> StepResult {
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
        let check = if read.registry {
            &c::REGISTRY_READ
        } else {
            &c::LIST_CONTAINS
        };
        let status = self.ex(index).status();
        if read.absent_when_empty && status == Some(404) {
            let labels: Vec<String> = self
                .model
                .of(op.coll)
                .into_iter()
                .filter(|&i| self.listed_by(i, parent, &read))
                .map(|i| self.label(i))
                .collect();
            let what = labels.join(", ");
            let place = format!("{path} (it answered 404)");
            let result = c::lists::listed(labels.is_empty(), &what, &place, &[]);
            return self.check(check, Some(index), result);
        }
        self.expect_success(check, index, &format!("read {path}"))?;
        let doc = if read.registry {
            self.document(index)?
        } else {
            self.single(index, crate::catalog::Kind::Show)?
        };
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
        let listed = ListedRead {
            read: &read,
            parent,
            index,
            path: &path,
            keys: &keys,
            check,
        };
        self.judge_read_list(op, &listed)?;
        let known: Vec<String> = self
            .model
            .of(op.coll)
            .into_iter()
            .filter(|&i| self.model.items[i].parent == parent)
            .map(|i| self.read_key(i, &read))
            .collect();
        let extra = keys
            .iter()
            .find(|k| !known.contains(k))
            .map(|k| format!("`{k}`"));
        let result = c::lists::only_made(extra.as_deref(), &path);
        self.check(&c::LIST_EXACT, Some(index), result)
    }

    /// Whether the model holds item `i` listed by the read `read` of the list under `parent`:
    /// under it, live, and in the read's state where it names one.
    fn listed_by(&self, i: usize, parent: Option<usize>, read: &ListRead) -> bool {
        self.model.items[i].parent == parent
            && self.model.live(i)
            && read
                .only_state
                .as_deref()
                .is_none_or(|s| self.model.items[i].current_state().is_none_or(|st| st == s))
    }

    /// What names item `i` in the read's list: its remembered `field`, else its id.
    fn read_key(&self, i: usize, read: &ListRead) -> String {
        match &read.field {
            Some(f) => self.model.items[i]
                .fields
                .get(f)
                .cloned()
                .unwrap_or_default(),
            None => self.model.items[i].id.clone(),
        }
    }

    /// Each item of the model under the read's parent is listed (`check`), gone
    /// (`delete.then-gone`) or left out as the model says.
    fn judge_read_list(&mut self, op: &Op, l: &ListedRead<'_>) -> StepResult {
        for i in self.model.of(op.coll) {
            if self.model.items[i].parent != l.parent {
                continue;
            }
            let key = self.read_key(i, l.read);
            let holds = l.keys.contains(&key);
            let should = self.listed_by(i, l.parent, l.read);
            let unknown = self.model.live(i)
                && l.read.only_state.is_some()
                && self.model.items[i].current_state().is_none();
            if unknown || holds == should {
                continue;
            }
            let label = format!("{} (`{key}`)", self.label(i));
            let (check, result) = if should {
                let what = format!("{label}, made in step {}", self.model.items[i].step);
                (l.check, c::lists::listed(holds, &what, l.path, l.keys))
            } else if !self.model.live(i) {
                (
                    &c::DELETE_THEN_GONE,
                    c::lists::gone_from(holds, &label, l.path),
                )
            } else {
                let state = self.model.items[i].state.clone().unwrap_or_default();
                let what = format!("{label} in state `{state}`");
                (l.check, c::lists::left_out(holds, &what, l.path))
            };
            self.check(check, Some(l.index), result)?;
        }
        Ok(())
    }
}

/// A read of a list the model is compared with ([`Run::read_list`]).
struct ListedRead<'a> {
    read: &'a ListRead,
    parent: Option<usize>,
    /// The read's answer.
    index: usize,
    path: &'a str,
    /// What names each item the answer lists.
    keys: &'a [String],
    /// The check an item that should be listed is judged by.
    check: &'static Check,
}

/// A walk read to its end ([`Run::judge_walk`]).
struct Walked<'w> {
    /// The last page's answer.
    index: usize,
    list: &'w Route,
    env: &'w Env,
    walk: &'w Walk,
    /// The list holds others' items too (walked whole, only the sequence's own kept).
    shared: bool,
    /// The ids read, with their pages.
    seen: &'w [(String, usize)],
    /// The items read.
    all: &'w [Value],
}

/// The first page of a shared list (it holds others' items too) sizes its walk: it is
/// walked all, in at most about [`SHARED_WALK_PAGES`] pages (a larger page size for a long
/// list, once: `resized`). True when the walk starts again at that size.
fn sized_whole(walk: &mut Walk, doc: &Value, resized: &mut bool) -> bool {
    let size = walk.size();
    match pages::total_count(doc) {
        Some(total) if !*resized && total.div_ceil(size) > SHARED_WALK_PAGES => {
            *resized = true;
            walk.restart(total.div_ceil(SHARED_WALK_PAGES).min(100));
            return true;
        }
        Some(total) => walk.allow_pages(total.div_ceil(size) + 3),
        None => walk.allow_pages(SHARED_WALK_CAP),
    }
    false
}
