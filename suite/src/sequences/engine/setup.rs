//! A sequence's own organization: made before its first step, and what it made removed
//! after its last (through the fixtures' teardown, so the ledger and the guard know it).

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::json;

use super::Run;
use crate::removal::{Reads, Remover};
use crate::target::{Auth, Body, Request, TransportError};

/// A sequence's cleanup sends at most this many removals at once (it holds one of the run's
/// slots, and its items are a handful: seldom more than this).
const CLEANUP_AT_ONCE: usize = 4;

/// One removal of a sequence's cleanup: the item's kind and id, its delete, and the reads
/// that tell it gone.
struct Removal {
    kind: String,
    id: String,
    delete: Request,
    show: Option<(url::Url, Auth)>,
    search: Option<(url::Url, Auth)>,
}

impl<'a> Run<'a> {
    pub(super) async fn setup(&mut self) {
        let body = json!({"data":{"type":"organizations","attributes":{
            "name": self.org, "email": format!("{}@example.com", self.org)}}});
        let ex = self
            .ctx
            .target
            .send(
                Request::new(
                    Method::POST,
                    self.ctx.target.api_url(&self.organizations.collection),
                    Auth::User,
                )
                .with_body(Body::Json(body)),
            )
            .await;
        let connection = matches!(ex.response, Err(TransportError::Connection(_)));
        let ok = ex.is_success();
        let why = ex
            .response
            .as_ref()
            .map(|r| format!("answered {}", r.status))
            .unwrap_or_else(|e| e.to_string());
        self.out.exchanges.push(ex);
        self.out.setup.push(self.out.exchanges.len() - 1);
        if ok {
            // into the run's ledger (crash-safe) and the guard's ids, before going on
            self.remember_organization(self.org.clone());
        }
        if connection {
            self.out.unreachable = Some(format!("the target cannot be reached: {why}"));
        } else if !ok {
            self.out.error = Some(format!(
                "could not make the sequence's organization `{}`: POST {} {why}",
                self.org, self.organizations.collection
            ));
        }
    }

    /// The request that deletes an item at the end of the sequence: its collection's
    /// `cleanup` (things an organization's deletion does not take along, such as users), and,
    /// inside a given organization, the `delete` of every item of the organization's own
    /// collections (their children go with them).
    pub(super) fn cleanup_request(&self, index: usize) -> Option<(Method, url::Url, Auth)> {
        let item = &self.model.items[index];
        let coll = self.coll(item.coll);
        if coll.relation {
            return None;
        }
        let route = coll.cleanup.as_ref().or(coll
            .delete
            .as_ref()
            .filter(|_| self.given && coll.parent.is_none()))?;
        let env = self.env(Some(index), item.parent, None);
        let url = self.ctx.target.api_url(&env.fill(&route.path));
        let method = route.method.method();
        let auth = if coll.admin { Auth::Admin } else { Auth::User };
        Some((method, url, auth))
    }

    /// The request that shows one item (its collection's `show`, when that is a show and
    /// not a list search), for teardown to tell whether it is gone.
    pub(super) fn show_request(&self, index: usize) -> Option<(url::Url, Auth)> {
        let item = &self.model.items[index];
        let coll = self.coll(item.coll);
        if coll.show_list {
            return None;
        }
        let template = coll.show.as_ref()?;
        let env = self.env(Some(index), item.parent, None);
        let auth = if coll.admin { Auth::Admin } else { Auth::User };
        Some((self.ctx.target.api_url(&env.fill(template)), auth))
    }

    /// The list search that shows one item of a collection whose `show` is a search
    /// (`show_list`: an administrator's user search by email), for cleanup to look for it.
    pub(super) fn search_request(&self, index: usize) -> Option<(url::Url, Auth)> {
        let item = &self.model.items[index];
        let coll = self.coll(item.coll);
        let template = coll.show.as_ref().filter(|_| coll.show_list)?;
        let env = self.env(Some(index), item.parent, None);
        let auth = if coll.admin { Auth::Admin } else { Auth::User };
        Some((self.ctx.target.api_url(&env.fill(template)), auth))
    }

    /// Deletes what the sequence made: the items [`Run::cleanup_request`] names (each is in
    /// the run's ledger from its create on), whatever the model says of them (a deleted item
    /// answers 404, which counts as gone; a failed sequence's model may be wrong), then the
    /// sequence's own organization (or, for the organizations family, every organization the
    /// sequence made). What is not gone is left in the ledger: teardown (or `conform sweep`)
    /// deletes it. The items' removals are independent of one another (none is another's
    /// parent: an organization's go with it and are not named), and so are the
    /// organizations': [`CLEANUP_AT_ONCE`] are made at a time, so that at a distance they
    /// cost a round trip or two, not two per item.
    pub(super) async fn cleanup(&mut self) {
        let items: Vec<Removal> = (0..self.model.items.len())
            .filter_map(|i| {
                let (method, url, auth) = self.cleanup_request(i)?;
                let item = &self.model.items[i];
                Some(Removal {
                    kind: self.coll(item.coll).kind.clone(),
                    id: item.id.clone(),
                    delete: Request::new(method, url, auth),
                    show: self.show_request(i),
                    search: self.search_request(i),
                })
            })
            .collect();
        self.remove_all(items).await;
        let names: Vec<String> = if self.family.namespace {
            if self.given || self.out.setup.is_empty() || self.out.error.is_some() {
                return;
            }
            vec![self.org.clone()]
        } else {
            self.model.items.iter().map(|i| i.id.clone()).collect()
        };
        let organizations = names
            .into_iter()
            .map(|name| {
                let url = self.ctx.target.api_url(&self.organizations.named(&name));
                Removal {
                    kind: "organization".into(),
                    delete: Request::new(Method::DELETE, url.clone(), Auth::User),
                    show: Some((url, Auth::User)),
                    search: None,
                    id: name,
                }
            })
            .collect();
        self.remove_all(organizations).await;
    }

    /// Sends the removals side by side, [`CLEANUP_AT_ONCE`] at a time, and notes those seen
    /// gone as such; what is not gone now, teardown deletes (it is in the run's ledger).
    async fn remove_all(&self, removals: Vec<Removal>) {
        for batch in removals.chunks(CLEANUP_AT_ONCE) {
            let gone = join_all(batch.iter().map(|removal| self.remove(removal))).await;
            for (removal, gone) in batch.iter().zip(gone) {
                if gone {
                    self.ctx.fixtures.note_gone(&removal.kind, &removal.id);
                }
            }
        }
    }

    /// Sends one removal's delete and tells whether its item is seen gone after it.
    async fn remove(&self, removal: &Removal) -> bool {
        let ex = self.ctx.target.send(removal.delete.clone()).await;
        let reads = Reads::of(removal.show.as_ref(), removal.search.as_ref(), &removal.id);
        self.deleted(&ex, reads).await
    }

    /// Whether the delete answered by `ex` removed its item, by observation: after a 2xx or a
    /// 404, its show no longer finds it (or its list search no longer holds it), read once. A
    /// delete's word alone is not taken, and nothing is waited for here: what this read does
    /// not show gone stays in the run's ledger, and teardown removes it, waiting out the
    /// consistency window, and says what it saw ([`crate::removal`]).
    async fn deleted(&self, ex: &crate::target::Exchange, reads: Reads<'_>) -> bool {
        if !(ex.is_success() || ex.status() == Some(404)) {
            return false;
        }
        match (reads.show, reads.list) {
            (Some((url, auth)), _) => {
                let shown = self
                    .ctx
                    .target
                    .send(Request::new(Method::GET, url.clone(), *auth))
                    .await;
                matches!(shown.status(), Some(404 | 410))
            }
            (None, Some((list, id))) => {
                let remover = Remover::new(&self.ctx.target, &self.ctx.catalog);
                remover.listed(list, id).await == Some(false)
            }
            (None, None) => false,
        }
    }

    /// Records an organization the sequence made in the run's ledger; teardown deletes it
    /// again if the sequence's own cleanup did not (404 then counts as gone).
    pub(super) fn remember_organization(&self, name: String) {
        let url = self.ctx.target.api_url(&self.organizations.named(&name));
        self.ctx.fixtures.note_made(crate::ledger::Made {
            kind: "organization".into(),
            id: name,
            delete: Some((Method::DELETE, url.clone(), Auth::User)),
            show: Some((url, Auth::User)),
            list: None,
            parents: Vec::new(),
            after: Vec::new(),
        });
    }
}
