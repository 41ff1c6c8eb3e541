//! The list that holds a kind (`Catalog::list_of`), read in the canonical path form and
//! searched for an item: where a created item is listed, and, for a kind without a show (the
//! spec's variables), where what a create, update or delete did is seen. The run's own item
//! is looked for first through the list's documented filter (a `finds` query parameter of
//! `cases/`), so that a large shared list is not read whole; only when that does not show it
//! is the whole list walked, and walked once more before the item counts as absent (others
//! may change the list while it is paged, moving the item across a page boundary).

use reqwest::Method;
use serde_json::Value;
use url::Url;

use super::TestRun;
use crate::catalog::{Endpoint, QueryParam};
use crate::checks as c;
use crate::fixtures::auth_for;
use crate::target::Request;

/// Where an item was looked for in a list: the index of the last page read, and the item as
/// a single-resource document (`None` when the list does not hold it).
pub(super) type Listed = (usize, Option<Value>);

impl TestRun<'_> {
    /// The list endpoint that shows `kind` when it has no show of its own.
    pub(super) fn list_instead_of_show(&self, kind: &str) -> Option<Endpoint> {
        if self.ctx.catalog.show_of(kind).is_some() {
            return None;
        }
        self.ctx.catalog.list_of(kind).map(|(_, e)| e.clone())
    }

    /// Before the delete of a kind without a show: its list holds the item (`list.contains`),
    /// so that the item's absence afterwards is the delete's doing.
    pub(super) async fn listed_before_delete(&mut self) {
        let Some(kind) = self.endpoint.resource.clone() else {
            return;
        };
        let Some(id) = self.scope.get(&kind).map(|made| made.id.clone()) else {
            return;
        };
        if self.list_instead_of_show(&kind).is_none() {
            return;
        }
        if let Some(((index, item), waited)) = self.listed_until(&kind, &id, true).await {
            let ids: Vec<String> = item.iter().map(|_| id.clone()).collect();
            let result = c::lists::holds(&ids, &id, &kind);
            self.check(&c::LIST_CONTAINS, Some(index), c::waited(result, waited));
        }
    }

    /// Reads the list that holds `kind` (`Catalog::list_of`) for the item `id`: first narrowed
    /// by its filter, then whole, and whole once more when `second_look` (the item is expected
    /// there: absent twice, it counts as absent). `None` when there is no such list, its request cannot
    /// be made or it does not succeed: then nothing is observed there (the list's own tests
    /// judge it).
    pub(super) async fn find_listed(
        &mut self,
        kind: &str,
        id: &str,
        second_look: bool,
    ) -> Option<Listed> {
        let (_, list) = self.ctx.catalog.list_of(kind)?;
        let list = list.clone();
        let (mut url, filled) = self.canonical_url(&list).ok()?;
        let pairs = self.filled_query(&list, |q| q.value.as_deref())?;
        if !pairs.is_empty() {
            url.query_pairs_mut().extend_pairs(pairs);
        }
        let whole = Request::new(Method::GET, url, auth_for(&filled));
        if let Some(found) = self.find_by_filter(&list, &whole, id).await {
            return Some(found);
        }
        let found = self.look_in_list(whole.clone(), id).await?;
        if found.1.is_some() || !second_look {
            return Some(found);
        }
        // a second look: the first walk may have raced others' changes to the list
        self.look_in_list(whole, id).await.or(Some(found))
    }

    /// The item `id` found through the filters of `list` that narrow it to the run's own
    /// item, added to `whole` (the list's request); `None` when `list` has no such filter,
    /// its value cannot be filled, or the narrowed list does not show the item (which proves
    /// nothing: the whole list is read then).
    pub(super) async fn find_by_filter(
        &mut self,
        list: &Endpoint,
        whole: &Request,
        id: &str,
    ) -> Option<Listed> {
        let narrowed = self.narrowed(list, &whole.url)?;
        let mut request = whole.clone();
        request.url = narrowed;
        match self.look_in_list(request, id).await {
            Some((last, Some(item))) => Some((last, Some(item))),
            _ => None,
        }
    }

    /// `url` with the `finds` filters of `list` filled from the test's resources; `None`
    /// when the list has none or a value cannot be filled.
    fn narrowed(&self, list: &Endpoint, url: &Url) -> Option<Url> {
        let pairs = self.filled_query(list, |q| q.finds.as_deref())?;
        if pairs.is_empty() {
            return None;
        }
        let mut url = url.clone();
        url.query_pairs_mut().extend_pairs(pairs);
        Some(url)
    }

    /// The query parameters of `list` that `pick` gives a value, each value filled from the
    /// test's resources; `None` when one cannot be filled.
    fn filled_query(
        &self,
        list: &Endpoint,
        pick: fn(&QueryParam) -> Option<&str>,
    ) -> Option<Vec<(String, String)>> {
        let mut pairs = Vec::new();
        for q in &list.query {
            if let Some(value) = pick(q) {
                let filled = self.ctx.fixtures.fill_text(value, &self.scope).ok()?;
                pairs.push((q.name.clone(), filled));
            }
        }
        Some(pairs)
    }

    /// Sends `request` (a list's first page) and follows its pages to the item `id`.
    /// `None` when the list does not answer a document, or runs past the walk's bound
    /// without the item (`unobserved` says so).
    async fn look_in_list(&mut self, request: Request, id: &str) -> Option<Listed> {
        let first = self.send(request).await;
        if !self.ex(first).is_success() {
            return None;
        }
        let doc = self.ex(first).json().ok()?;
        let (ids, last) = self.find_in_list(first, &doc, id).await?;
        if !ids.iter().any(|i| i == id) {
            return Some((last, None));
        }
        let page = self.ex(last).json().ok()?;
        let item = page
            .get("data")
            .and_then(Value::as_array)?
            .iter()
            .find(|item| item.get("id").and_then(Value::as_str) == Some(id))?
            .clone();
        Some((last, Some(serde_json::json!({ "data": item }))))
    }
}
