//! Inside a given organization, a list narrowed to the sequence's own items: the collection's
//! documented name filter (`search` in cases/sequences, `search[name]` or `q`) set to the
//! sequence's name prefix, so that a read costs what the sequence made, not what the shared
//! list holds. A server that ignores the filter shows it: its answer holds an item whose name
//! does not start with the prefix, and the list is then walked whole instead.

use serde_json::Value;

use super::Run;
use crate::catalog::families::model::Coll;

impl<'a> Run<'a> {
    /// The query fragment that narrows a list of the collection to the sequence's names, for a
    /// shared list (see [`Run::shared_list`]) whose collection has a documented name filter.
    pub(super) fn own_filter(&self, coll: &Coll, parent: Option<usize>) -> Option<String> {
        let param = coll.search.as_deref()?;
        if !self.shared_list(coll, parent) {
            return None;
        }
        Some(
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair(param, &self.own_prefix())
                .finish(),
        )
    }

    /// The prefix of every name the sequence gives (`{ns}-`), which no other sequence's
    /// names start with.
    pub(super) fn own_prefix(&self) -> String {
        format!("{}-", self.ns.trim_end_matches('-'))
    }

    /// Whether a narrowed answer's items are all the sequence's own (by name, or an id its
    /// model knows): `false` shows the filter was ignored.
    pub(super) fn narrowed(&self, coll_index: usize, items: &[Value]) -> bool {
        let coll = self.coll(coll_index);
        items.iter().all(|o| {
            self.own_named(coll, o)
                || o.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| self.model.find(coll_index, id).is_some())
        })
    }
}
