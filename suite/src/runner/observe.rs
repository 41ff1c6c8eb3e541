//! The list that holds a kind (`Catalog::list_of`), read in the canonical path form and
//! walked to an item: where a created item is listed, and, for a kind without a show (the
//! spec's variables), where what a create, update or delete did is seen.

use reqwest::Method;
use serde_json::Value;

use super::TestRun;
use crate::catalog::Endpoint;
use crate::fixtures::auth_for;
use crate::target::Request;

impl TestRun<'_> {
    /// The list endpoint that shows `kind` when it has no show of its own.
    pub(super) fn list_instead_of_show(&self, kind: &str) -> Option<Endpoint> {
        if self.ctx.catalog.show_of(kind).is_some() {
            return None;
        }
        self.ctx.catalog.list_of(kind).map(|(_, e)| e.clone())
    }

    /// Reads the list that holds `kind` (`Catalog::list_of`) for the item `id`: the index of
    /// the last page read and the item as a single-resource document (`None` when the list
    /// does not hold it). `None` when there is no such list, its request cannot be made or it
    /// does not succeed: then nothing is observed there (the list's own tests judge it).
    pub(super) async fn find_listed(
        &mut self,
        kind: &str,
        id: &str,
    ) -> Option<(usize, Option<Value>)> {
        let (_, list) = self.ctx.catalog.list_of(kind)?;
        let list = list.clone();
        let (mut url, filled) = self.canonical_url(&list).ok()?;
        let mut pairs = Vec::new();
        for q in &list.query {
            if let Some(value) = &q.value {
                pairs.push((
                    q.name.clone(),
                    self.ctx.fixtures.fill_text(value, &self.scope).ok()?,
                ));
            }
        }
        if !pairs.is_empty() {
            url.query_pairs_mut().extend_pairs(pairs);
        }
        let first = self
            .send(Request::new(Method::GET, url, auth_for(&filled)))
            .await;
        if !self.ex(first).is_success() {
            return None;
        }
        let doc = self.ex(first).json().ok()?;
        let (ids, last) = self.find_in_list(first, &doc, id).await;
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
