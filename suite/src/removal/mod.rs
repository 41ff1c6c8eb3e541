//! Removing what a run made, truthfully, for teardown and `conform sweep` alike.
//!
//! A resource counts as removed only on evidence: a delete answered 2xx and its show, a
//! route seen answering for that kind, no longer finds it (or the kind has no show), or no
//! delete form found it and its show does not find it either. A show route never seen
//! answering proves nothing: its 404 may be a router's "404 page not found". A 404 from a
//! delete alone proves nothing either (on a server without that route every resource "is
//! gone"), unless that delete route was seen answering 2xx. Routes seen answering are learned
//! in the pass, or taken from the run: teardown's from its tests, a sweep's from the ledger
//! ([`Remover::trust`]). Every delete
//! form the catalog knows is tried (both prefixes, the other spelling, the deprecated form).
//! What is not shown gone is a leftover, with the requests that say so. A kind without a show
//! is looked for in its list instead; where no read can see a kind at all, its delete's word
//! is not taken: it is [`Removed::Unseen`], "not confirmed", counted apart and never deleted.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Mutex;

use reqwest::Method;
use url::Url;

use crate::catalog::Catalog;
use crate::target::{Auth, Exchange, Request, Target};

mod batch;

pub use batch::Recheck;
use batch::{read_again, Deleted, Reread, Sight};

/// What one removal came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    /// Deleted now: the request that did it.
    Deleted(String),
    /// It was gone already: no delete form found it, and its show does not either.
    Gone,
    /// Not shown gone: why, with the requests.
    Left(String),
    /// Its show answered 404 (after a delete that succeeded, or after every delete form
    /// answered 404 too), and no show of its kind has answered yet: gone if the show route
    /// exists. [`Remover::settle`] decides at the end.
    Unconfirmed(String),
    /// No read can see it (no show, and its list did not answer or there is none): whatever
    /// its delete answered, nothing confirms it gone. A leftover of its own sort, never deleted.
    Unseen(String),
}

/// What a removal reads to tell whether the item is there: its show, else the list that
/// holds it (with the item's id, to look for).
#[derive(Debug, Clone, Copy)]
pub struct Reads<'r> {
    /// Its show.
    pub show: Option<&'r (Url, Auth)>,
    /// The list that holds it, and its id there, when it has no show.
    pub list: Option<(&'r (Url, Auth), &'r str)>,
}

impl<'r> Reads<'r> {
    /// The reads of an item: its show, else its list.
    pub fn of(show: Option<&'r (Url, Auth)>, list: Option<&'r (Url, Auth)>, id: &'r str) -> Self {
        Self {
            show,
            list: list.filter(|_| show.is_none()).map(|l| (l, id)),
        }
    }
}

/// Removes resources, learning which show and delete routes answer. Removals may run side by side
/// (teardown runs several at once): what one learns counts for the others.
pub struct Remover<'a> {
    target: &'a Target,
    catalog: &'a Catalog,
    /// Routes (the catalog test that judges each) that answered 2xx at least once: their
    /// 404 means "not there".
    shown: Mutex<BTreeSet<String>>,
    /// What reading again did in this pass: how many removals were shown gone only after
    /// waiting, and how many waited the whole window in vain.
    waits: batch::WaitTally,
}

impl<'a> Remover<'a> {
    /// A remover for a target and the catalog whose delete forms it tries.
    pub fn new(target: &'a Target, catalog: &'a Catalog) -> Self {
        Self {
            target,
            catalog,
            shown: Mutex::default(),
            waits: batch::WaitTally::default(),
        }
    }

    /// The catalog whose delete forms and shows it knows.
    pub fn catalog(&self) -> &'a Catalog {
        self.catalog
    }

    /// Removes one resource of `kind`: shows it while its show route is not yet known to
    /// answer, tries each delete form until one succeeds, and shows it again, within the
    /// consistency window while it is still shown. `parent_gone`: what it lives in is known
    /// gone, so a delete that does not find it means it went along.
    pub async fn remove(
        &self,
        kind: &str,
        delete: &(Method, Url, Auth),
        reads: Reads<'_>,
        parent_gone: bool,
    ) -> Removed {
        self.remove_in_pass(kind, delete, reads, parent_gone, false)
            .await
            .0
    }

    /// [`Remover::remove`], where `defer` reads what a delete should have removed once: an
    /// item still there is answered [`Removed::Left`] with a [`Recheck`], to be read again
    /// with the rest of its pass within one shared window ([`Remover::recheck`]).
    pub async fn remove_in_pass(
        &self,
        kind: &str,
        delete: &(Method, Url, Auth),
        reads: Reads<'_>,
        parent_gone: bool,
        defer: bool,
    ) -> (Removed, Option<Recheck>) {
        let show = reads.show;
        // The show before the delete only proves its route answers: once one has, the
        // route's 404 means "not there", and no further show before a delete is needed.
        if let Some(show) = show.filter(|show| !self.proven(show)) {
            self.get(show).await;
        }
        let deleted = self.delete_forms(delete).await;
        // a delete may take effect a moment later (above all one answered 202 Accepted): a
        // show (or list) that still finds it after a delete that succeeded is read again
        // within the consistency window
        let Some(show) = show else {
            return self.judged_by_list(kind, reads.list, deleted, defer).await;
        };
        let done = deleted.done.clone();
        let (after, waited) = match done {
            Some(_) if !defer => self.get_until_gone(show).await,
            _ => (self.get(show).await, None),
        };
        let shown = after.is_some_and(|s| (200..300).contains(&s));
        // a delete that succeeded and a show that still finds it: read again with the pass
        let recheck = (defer && shown && done.is_some()).then(|| Recheck {
            kind: kind.to_string(),
            by: done,
            tried: deleted.tried.clone(),
            read: Reread::Show(show.clone()),
            seen: Sight::Show(after),
        });
        let removed = match &recheck {
            Some(recheck) => recheck.judged(recheck.seen, None),
            None => self.judged_by_show(kind, show, deleted, parent_gone, (after, waited)),
        };
        (removed, recheck)
    }

    /// Tries each delete form the catalog knows until one answers 2xx.
    async fn delete_forms(&self, delete: &(Method, Url, Auth)) -> Deleted {
        let mut tried = Vec::new();
        let mut done = None;
        let mut not_found = true;
        // a delete route seen answering 2xx answered 404: the resource is not there
        let mut absent_on_a_known_route = false;
        for (method, url) in self.forms(&delete.0, &delete.1) {
            let ex = self
                .target
                .send(Request::new(method.clone(), url.clone(), delete.2))
                .await;
            let what = format!("{method} {}", url.path());
            match ex.status() {
                Some(s) if (200..300).contains(&s) => {
                    self.learn(method.as_str(), &url);
                    done = Some(format!("{what} answered {s}"));
                    break;
                }
                status => {
                    let absent = matches!(status, Some(404 | 410));
                    not_found &= absent;
                    absent_on_a_known_route |= absent && self.answers(method.as_str(), &url);
                    tried.push(format!("{what} {}", answered(&ex, delete.2, self.target)));
                }
            }
        }
        Deleted {
            done,
            tried: tried.join("; "),
            not_found,
            absent_on_a_known_route,
        }
    }

    /// A removal of a kind with a show, judged by what the show answered after the deletes
    /// (and how long it was read again, when it was).
    fn judged_by_show(
        &self,
        kind: &str,
        show: &(Url, Auth),
        deleted: Deleted,
        parent_gone: bool,
        (after, waited): (Option<u16>, Option<std::time::Duration>),
    ) -> Removed {
        let Deleted {
            done,
            tried,
            not_found,
            absent_on_a_known_route,
        } = deleted;
        let proven = self.proven(show);
        let show_path = show.0.path();
        match (done, after) {
            (done, Some(s)) if (200..300).contains(&s) => Removed::Left(format!(
                "{}, the {kind} is still shown (GET {show_path}){}",
                done.unwrap_or(tried),
                read_again(waited)
            )),
            (Some(by), Some(404 | 410)) if proven => Removed::Deleted(by),
            (None, Some(404 | 410)) if parent_gone && not_found => Removed::Gone,
            (Some(by), Some(404 | 410)) => Removed::Unconfirmed(format!(
                "{by}, but GET {show_path} answered 404 and that route never answered for a {kind}: deleted, or neither route does anything here"
            )),
            (None, Some(404 | 410)) if absent_on_a_known_route || proven => Removed::Gone,
            (Some(by), other) => Removed::Left(format!(
                "{by}, but GET {show_path} {}: not shown gone",
                other.map_or("had no answer".into(), |s| format!("answered {s}"))
            )),
            (None, Some(404 | 410)) => Removed::Unconfirmed(format!(
                "{tried}; GET {show_path} answered 404 too, and that route never answered for a {kind}: gone, or neither route exists here"
            )),
            (None, _) => Removed::Left(tried),
        }
    }

    /// The end of a removal pass: an unconfirmed removal is gone when a show of its kind
    /// answered meanwhile (the route exists, so its 404 means "not there"), else left.
    pub fn settle(&self, show: Option<&(Url, Auth)>, removed: Removed) -> Removed {
        // (an unseen removal stays unseen: nothing a pass learns can show it)
        match removed {
            Removed::Unconfirmed(_) if show.is_some_and(|show| self.proven(show)) => Removed::Gone,
            Removed::Unconfirmed(why) => Removed::Left(why),
            other => other,
        }
    }

    /// A removal of a kind without a show, judged by its list: gone only where the list
    /// answers and no longer holds it (read again within the consistency window, or later
    /// with its pass when `defer`), else left; with no list that answers, not confirmed
    /// ([`Removed::Unseen`]).
    async fn judged_by_list(
        &self,
        kind: &str,
        list: Option<(&(Url, Auth), &str)>,
        deleted: Deleted,
        defer: bool,
    ) -> (Removed, Option<Recheck>) {
        let Deleted {
            done,
            tried,
            absent_on_a_known_route,
            ..
        } = deleted;
        let Some((list, id)) = list else {
            let removed = match done {
                None if absent_on_a_known_route => Removed::Gone,
                Some(by) => Removed::Unseen(format!("{by}; no read shows a {kind}: not confirmed")),
                None => Removed::Unseen(format!("{tried}; no read shows a {kind}: not confirmed")),
            };
            return (removed, None);
        };
        let (listed, waited) = match defer {
            true => (self.listed(list, id).await, None),
            false => self.listed_until_gone(list, id).await,
        };
        let recheck = Recheck {
            kind: kind.to_string(),
            by: done,
            tried,
            read: Reread::List(list.clone(), id.to_string()),
            seen: Sight::List(listed),
        };
        let removed = recheck.judged(Sight::List(listed), waited);
        (removed, (defer && listed == Some(true)).then_some(recheck))
    }

    /// Whether the list holds `id`, its pages followed (`None`: a page answered no list).
    pub async fn listed(&self, list: &(Url, Auth), id: &str) -> Option<bool> {
        let mut walk = crate::pages::Walk::new(100, crate::pages::MAX_PAGES);
        while let Some(page) = walk.next_page() {
            let mut url = list.0.clone();
            let query = crate::pages::Paging::Tfe.query(page, walk.size());
            let joined = match url.query() {
                Some(q) if !q.is_empty() => format!("{q}&{query}"),
                _ => query,
            };
            url.set_query(Some(&joined));
            let ex = self
                .target
                .send(Request::new(Method::GET, url, list.1))
                .await;
            let doc = ex.json().ok().filter(|_| ex.is_success())?;
            doc.get("data")?.as_array()?;
            if walk
                .read(&doc)
                .iter()
                .any(|item| item.get("id").and_then(|i| i.as_str()) == Some(id))
            {
                return Some(true);
            }
        }
        Some(false)
    }

    /// What a show answers now (its status; `None` when nothing answered), learning that its
    /// route answers: a sweep looks before it deletes, and a dry run only looks.
    pub async fn look(&self, show: &(Url, Auth)) -> Option<u16> {
        self.get(show).await
    }

    /// Takes routes seen answering elsewhere (a run's, from its ledger) as answering here:
    /// their 404 means "not there" from the first.
    pub fn trust(&self, routes: impl IntoIterator<Item = String>) {
        self.shown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(routes);
    }

    /// The routes known to answer (learned in this pass or trusted), for a ledger.
    pub fn answering(&self) -> Vec<String> {
        self.shown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// True when the route of this show has answered 2xx in this pass: its 404 means "not there".
    pub fn route_answers(&self, show: &(Url, Auth)) -> bool {
        self.proven(show)
    }

    /// The delete forms to try, the recorded one first (only on the target's own origin).
    fn forms(&self, method: &Method, url: &Url) -> Vec<(Method, Url)> {
        let root = self.target.config.root.path().trim_end_matches('/');
        let relative = url.path().strip_prefix(root).unwrap_or(url.path());
        if !self.target.same_origin(url) {
            return vec![(method.clone(), url.clone())];
        }
        self.catalog
            .forms_of(method.as_str(), relative)
            .into_iter()
            .filter_map(|(m, path)| {
                let mut form = self.target.url(&path);
                form.set_query(url.query());
                Some((Method::from_bytes(m.as_bytes()).ok()?, form))
            })
            .collect()
    }

    /// GETs a show; answers its status, and learns that its route answers.
    pub(crate) async fn get(&self, show: &(Url, Auth)) -> Option<u16> {
        let ex = self
            .target
            .send(Request::new(Method::GET, show.0.clone(), show.1))
            .await;
        if ex.is_success() {
            self.learn("GET", &show.0);
        }
        ex.status()
    }

    /// Learns that the route of `method url` answers.
    fn learn(&self, method: &str, url: &Url) {
        let route = self.route(method, url);
        self.shown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(route);
    }

    /// The route a request takes (the catalog test that judges it), or its method and path.
    fn route(&self, method: &str, url: &Url) -> String {
        let root = self.target.config.root.path().trim_end_matches('/');
        let relative = url.path().strip_prefix(root).unwrap_or(url.path());
        self.catalog
            .test_for(method, relative)
            .unwrap_or_else(|| format!("{method} {relative}"))
    }

    /// True when the route of `method url` has answered 2xx: its 404 means "not there".
    fn answers(&self, method: &str, url: &Url) -> bool {
        let route = self.route(method, url);
        self.shown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&route)
    }

    /// True when the route of this show has answered 2xx: its 404 means "not there".
    fn proven(&self, show: &(Url, Auth)) -> bool {
        self.answers("GET", &show.0)
    }
}

/// A resource and what it lives in, as a record names them: `(kind, id)`.
pub type Lineal = (String, String);

/// What removed resources live in, and which are known gone: a resource whose container is
/// gone went with it. Teardown and sweep each keep one.
#[derive(Debug, Default, Clone)]
pub struct Lineage {
    parents: HashMap<Lineal, Vec<Lineal>>,
    gone: HashSet<Lineal>,
}

impl Lineage {
    /// Notes what a resource lives in.
    pub fn note(&mut self, kind: &str, id: &str, parents: &[Lineal]) {
        self.parents
            .insert((kind.to_string(), id.to_string()), parents.to_vec());
    }

    /// Notes that a resource is gone.
    pub fn mark_gone(&mut self, kind: &str, id: &str) {
        self.gone.insert((kind.to_string(), id.to_string()));
    }

    /// Everything these parents are and live in (theirs, and so on, 16 levels at most).
    pub fn ancestors(&self, parents: &[Lineal]) -> HashSet<Lineal> {
        let mut all = HashSet::new();
        let mut next = parents.to_vec();
        for _ in 0..16 {
            next.retain(|p| all.insert(p.clone()));
            if next.is_empty() {
                break;
            }
            next = next
                .iter()
                .flat_map(|p| self.parents.get(p).cloned().unwrap_or_default())
                .collect();
        }
        all
    }

    /// Whether these parents, or what they live in, hold anything the run made (and so
    /// will take along what lives in them when it goes).
    pub fn within_made(&self, parents: &[Lineal]) -> bool {
        self.ancestors(parents)
            .iter()
            .any(|a| self.parents.contains_key(a))
    }

    /// The first of these parents (or theirs, ...) known gone.
    pub fn gone_parent(&self, parents: &[Lineal]) -> Option<&Lineal> {
        let mut next = parents.to_vec();
        for _ in 0..16 {
            if let Some(gone) = next.iter().find_map(|p| self.gone.get(p)) {
                return Some(gone);
            }
            next = next
                .iter()
                .flat_map(|p| self.parents.get(p).cloned().unwrap_or_default())
                .collect();
            if next.is_empty() {
                break;
            }
        }
        None
    }
}

/// What a failed delete answered, with a hint when it needed a token the run lacks.
fn answered(ex: &Exchange, auth: Auth, target: &Target) -> String {
    match (&ex.response, auth) {
        (Ok(r), Auth::Admin) if target.config.admin_token.is_none() => {
            format!(
                "answered {} (an administrator delete: give --admin-token)",
                r.status
            )
        }
        (Ok(r), _) => format!("answered {}", r.status),
        (Err(e), _) => format!("failed: {e}"),
    }
}
